"""look: zoom grids labelled in original pixels, overlays, contact sheets, colour blobs."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw

from spatialclaw.primitives.display.color import find_color
from spatialclaw.primitives.display.look import zoom
from spatialclaw.primitives.display.overlay import contact_sheet, draw


def coordinate_image(width: int = 300, height: int = 200) -> np.ndarray:
    """Each pixel encodes its own position: R = x, G = y, B = 0 (x, y < 256)."""
    image = np.zeros((height, width, 3), np.uint8)
    image[..., 0] = np.arange(width)[None, :]
    image[..., 1] = np.arange(height)[:, None]
    return image


def test_zoom_grid_labels_name_the_original_pixels_under_them():
    image = coordinate_image()
    z = zoom(image, (103, 47, 161, 90))
    assert z.box == (103, 47, 161, 90) and z.scale == 13  # 768 // 58 px
    out = z.array
    assert z.x_ticks and z.y_ticks
    for label, u in z.x_ticks:
        assert label % 5 == 0
        # Pixels right beside the grid line (same original column's block) encode x = label.
        assert out[z.offset[1] + 3, u + 1, 0] == label and out[z.offset[1] + 3, u - 1, 0] == label
        assert z.to_original(u, 0)[0] == pytest.approx(label, abs=0.5 / z.scale)
    for label, v in z.y_ticks:
        assert out[v + 1, z.offset[0] + 3, 1] == label and out[v - 1, z.offset[0] + 3, 1] == label
    u, v = z.to_zoom(130, 60)
    x, y = z.to_original(u, v)
    assert (x, y) == pytest.approx((130, 60))
    assert tuple(out[int(round(float(v))) + 2, int(round(float(u))) + 2, :2]) == (130, 60)


def test_zoom_clips_to_the_image_and_explains_bad_boxes():
    image = coordinate_image()
    z = zoom(image, (230, 190, 400, 300), scale=4)
    assert z.box == (230, 190, 300, 200)
    assert tuple(z.array[z.offset[1], z.offset[0], :2]) == (230, 190)
    assert zoom(image, (0, 0, 10, 10), grid=False).image.size == (320, 320)
    with pytest.raises(ValueError, match="outside the 300x200 image"):
        zoom(image, (400, 10, 500, 50))
    with pytest.raises(ValueError, match="empty"):
        zoom(image, (50, 50, 50, 60))


def test_find_color_finds_drawn_discs_at_their_centroids_and_areas():
    image = np.full((240, 320, 3), 235, np.uint8)
    discs = [
        ((80, 60), 25, (220, 30, 30)),
        ((240, 170), 15, (200, 20, 40)),
        ((250, 50), 12, (30, 60, 220)),
        ((150, 180), 20, (40, 180, 60)),
    ]
    for centre, radius, colour in discs:
        cv2.circle(image, centre, radius, colour, -1)
    expected_area = {
        r: int(np.count_nonzero(cv2.circle(np.zeros((240, 320), np.uint8), c, r, 1, -1))) for c, r, _ in discs
    }

    red = find_color(image, "red")
    assert [b.centroid for b in red] == [pytest.approx((80, 60), abs=1e-6), pytest.approx((240, 170), abs=1e-6)]
    assert [b.area for b in red] == [expected_area[25], expected_area[15]]
    assert abs(expected_area[25] - np.pi * 25**2) / (np.pi * 25**2) < 0.02
    assert red[0].box == (55, 35, 106, 86)
    assert red[0].mask.sum() == red[0].area
    blue = find_color(image, (30, 60, 220))
    assert len(blue) == 1 and blue[0].centroid == pytest.approx((250, 50), abs=1e-6)
    green = find_color(Image.fromarray(image), "green")
    assert len(green) == 1 and green[0].area == expected_area[20]
    assert len(find_color(image, "yellow")) == 0
    assert "no yellow blobs" in repr(find_color(image, "yellow"))
    assert len(find_color(image, "red", min_area=expected_area[15] + 1)) == 1
    with pytest.raises(ValueError, match="unknown colour 'chartreuse'"):
        find_color(image, "chartreuse")


def test_draw_puts_overlays_where_asked():
    image = np.zeros((100, 120, 3), np.uint8)
    mask = np.zeros((100, 120), bool)
    mask[60:90, 10:40] = True
    out = np.asarray(draw(image, boxes=[(50, 10, 100, 40)], labels=["cup"]))
    assert out[25, 50].any() and out[10, 75].any()  # box edges drawn
    assert not out[25, 75].any()  # box interior untouched
    out = np.asarray(draw(image, masks={"rug": mask}, points={"p": (110, 5)}, lines={"l": (0, 99, 119, 99)}))
    assert out[80, 35].any() and not out[50, 80].any()
    assert out[5, 110].any() and out[99, 20].any()
    assert np.asarray(image).sum() == 0  # the input is not modified
    with pytest.raises(ValueError, match="1 labels for 2 items"):
        draw(image, boxes=[(0, 0, 5, 5)], points=[(1, 1)], labels=["a"])
    with pytest.raises(ValueError, match=r"\(N, 4\)"):
        draw(image, boxes=[(0, 0, 5)])
    with pytest.raises(ValueError, match="does not match"):
        draw(image, masks=np.zeros((5, 5), bool))


def test_contact_sheet_tiles_crops_with_labels():
    crops = [np.full((40, 60, 3), v, np.uint8) for v in (50, 100, 150)]
    sheet = contact_sheet(crops, labels=["a", "b", "c"], cell_px=64)
    assert sheet.size == (2 * 68 + 4, 2 * (64 + 20 + 4) + 4)
    assert tuple(np.asarray(sheet)[4 + 32, 4 + 32]) == (50, 50, 50)
    assert tuple(np.asarray(sheet)[4 + 32, 4 + 68 + 32]) == (100, 100, 100)
    with pytest.raises(ValueError, match="3 images"):
        contact_sheet(crops, labels=["a"])


def test_zoom_and_find_color_on_a_kernel_frame(test_data):
    from spatialclaw import Kernel

    paths = [str(test_data / "rgbd-redwood" / "color" / "00000.jpg")]
    with Kernel(frames=paths) as kernel:
        result = kernel.execute("z = zoom(frames[0], (300, 100, 400, 180))\nshow(z, label='zoom')\nprint(z)")
        assert result.error is None, result.to_text(2000)
        assert result.stdout.startswith("Zoom(box=(300, 100, 400, 180) original px, scale=7x")
        assert len(result.images) == 1 and result.images[0].label == "zoom"
        blobs = kernel.execute("b = find_color(frames[0], 'white', min_area=500)\nprint(len(b) > 0, b[0].area > 5000)")
        assert blobs.stdout.strip() == "True True", blobs.to_text(2000)


def test_detections_can_be_drawn_and_zoomed_directly():
    from spatialclaw.primitives.perception.instances import Instance

    image = coordinate_image()
    cup = Instance(label="cup", score=0.9, box=(40, 30, 80, 60))
    z = zoom(image, cup, pad=5)
    assert z.box == (35, 25, 85, 65)
    drawn = np.asarray(draw(np.zeros((100, 120, 3), np.uint8), boxes=[cup]))
    assert drawn[45, 40].any() and not drawn[45, 60].any()


def test_draw_with_empty_overlays_returns_the_frame_unchanged():
    image = coordinate_image()
    for empty in (
        {"boxes": []},
        {"points": []},
        {"masks": []},
        {"lines": []},
        {"points": np.zeros((0, 2))},
        {"boxes": np.zeros((0, 4))},
        {"masks": np.zeros((0, 200, 300), bool)},
        {"boxes": [], "labels": []},
    ):
        out = draw(image, **empty)
        assert np.array_equal(np.asarray(out), image), empty


def _label_height(image: np.ndarray) -> int:
    out = np.asarray(
        draw(
            image,
            boxes={"chair": (image.shape[1] * 0.3, image.shape[0] * 0.4, image.shape[1] * 0.6, image.shape[0] * 0.8)},
        )
    )
    changed = np.any(out != image, axis=2)
    rows = np.nonzero(changed[: int(image.shape[0] * 0.4) - 1].any(axis=1))[0]  # the label sits above the box
    return int(rows.max() - rows.min() + 1)


def test_draw_scales_labels_and_lines_with_the_image():
    small, large = np.full((150, 200, 3), 90, np.uint8), np.full((3000, 4000, 3), 90, np.uint8)
    small_h, large_h = _label_height(small), _label_height(large)
    assert small_h <= 0.12 * 150  # a label does not cover a 200-px frame
    assert large_h >= 0.015 * 3000  # and stays legible on a 4000-px photo
    line = np.asarray(draw(large, lines=[(100, 1500, 3900, 1500)]))
    assert np.any(line[:, 2000] != 90, axis=1).sum() >= 8
    assert np.any(np.asarray(draw(small, lines=[(10, 75, 190, 75)]))[:, 100] != 90, axis=1).sum() <= 2


def test_zoom_smooth_interpolation_and_auto_contrast_for_looking():
    image = coordinate_image() * 8  # columns 8 grey levels apart
    nearest = zoom(image, (10, 10, 30, 30), scale=8, grid=False)
    smooth = zoom(image, (10, 10, 30, 30), scale=8, grid=False, interpolation="bicubic")
    assert len(np.unique(nearest.array[..., 0])) == 20  # 20 original columns -> 20 blocks
    assert len(np.unique(smooth.array[..., 0])) > 60  # interpolated in between
    assert smooth.to_original(*smooth.to_zoom(17, 23)) == pytest.approx((17, 23))
    dark = (np.random.default_rng(0).uniform(0, 30, (60, 80, 3))).astype(np.uint8)
    original = dark.copy()
    bright = zoom(dark, (0, 0, 80, 60), scale=2, grid=False, contrast="auto")
    assert np.median(bright.array) > 100 > np.median(dark)
    assert np.array_equal(dark, original)  # the frame's pixels are untouched
    assert "auto contrast" in repr(bright) and "bicubic" in repr(smooth)
    with pytest.raises(ValueError, match="interpolation must be one of"):
        zoom(image, (0, 0, 10, 10), interpolation="smooth")


MARKER_RGB = {"red": (230, 30, 30), "blue": (40, 90, 255), "green": (30, 200, 60)}
# Marker positions (640-px source pixels) on photos whose own bricks, walls and posters share the markers'
# hues: the dev set's perspective tasks on these photos ranked clutter above the dots.
MARKED_PHOTOS = {
    "tum": ("rgbd-single/TUM_color.png", {"red": (412, 408), "blue": (222, 405), "green": (142, 388)}),
    "nyu": ("rgbd-single/NYU_color.ppm", {"red": (492, 353), "blue": (132, 277), "green": (366, 340)}),
}


def marked_photo(test_data, name: str) -> tuple[Image.Image, dict[str, tuple[float, float]]]:
    """A real photo at 224 px wide with 10-px white-rimmed marker dots drawn on it (the dev set's style)."""
    path, points = MARKED_PHOTOS[name]
    photo = Image.open(test_data / path).convert("RGB")
    scale = 224 / photo.width
    small = photo.resize((224, round(photo.height * scale)), Image.LANCZOS)
    pen = ImageDraw.Draw(small)
    at = {}
    for colour, (u, v) in points.items():
        x, y = u * scale, v * scale
        pen.ellipse((x - 6, y - 6, x + 6, y + 6), fill=(255, 255, 255))
        pen.ellipse((x - 5, y - 5, x + 5, y + 5), fill=MARKER_RGB[colour])
        at[colour] = (x, y)
    return small, at


@pytest.mark.parametrize("photo", sorted(MARKED_PHOTOS))
def test_find_color_ranks_marker_dots_above_same_coloured_clutter(test_data, photo):
    image, dots = marked_photo(test_data, photo)
    for colour, (x, y) in dots.items():
        for how in ({"shape": "dot"}, {"shape": "dot", "expected_size": 10}, {"expected_size": 10}):
            blobs = find_color(image, colour, **how)
            assert len(blobs) >= 1
            best = blobs[0]
            assert np.hypot(best.centroid[0] - x, best.centroid[1] - y) < 2.5, (photo, colour, how, blobs)
            assert best.compactness > 0.7


def test_find_color_shape_keeps_area_order_by_default_and_rejects_unknown_shapes():
    image = np.full((120, 200, 3), 235, np.uint8)
    cv2.rectangle(image, (10, 10), (90, 40), (220, 30, 30), -1)  # a large red strip
    cv2.circle(image, (150, 80), 5, (220, 30, 30), -1)  # a small red dot
    by_area = find_color(image, "red")
    assert by_area[0].area > by_area[1].area  # unchanged default: largest first
    dots = find_color(image, "red", shape="dot")
    assert np.hypot(dots[0].centroid[0] - 150, dots[0].centroid[1] - 80) < 0.5
    assert dots[0].compactness > 0.85 > dots[1].compactness
    with pytest.raises(ValueError, match="shape must be"):
        find_color(image, "red", shape="circle")
