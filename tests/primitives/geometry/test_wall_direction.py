"""geom.wall_direction says which way a wall runs and faces relative to the camera, with a sigma that covers
the truth: on rendered rooms whose wall angles are exact (from the wall's horizontal lines and from its depth),
and on real RGB-D photos whose wall normal comes from the depth (the photo's own lines read)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.geometry import geom
from tests.paths import DATA_ROOT
from tests.primitives.geometry.tiled_room import tiled_room, true_facing, view, wall_box

K640 = np.array([[525.0, 0.0, 319.5], [0.0, 525.0, 239.5], [0.0, 0.0, 1.0]])
VIEWS = [(-40.0, -10.0), (-60.0, -15.0), (30.0, 0.0), (70.0, -5.0)]


def wrap(angle: float) -> float:
    return (angle + 180.0) % 360.0 - 180.0


@pytest.fixture(scope="module")
def rendered() -> list:
    return [view(heading, pitch) for heading, pitch in VIEWS]


def test_rendered_walls_from_their_lines_and_from_their_depth_match_the_truth(rendered: list) -> None:
    checked = 0
    for v in rendered:
        for wall in ("wall x-", "wall x+", "wall y+", "wall y-"):
            box = wall_box(v, wall)
            if box is None:
                continue
            truth = true_facing(v, wall)
            lines = geom.wall_direction(v.rgb, box, K=v.K)  # tilt read from the image
            assert abs(wrap(lines.facing_deg - truth)) <= 2 * lines.sigma_deg, (wall, truth, lines.text)
            assert lines.sigma_deg <= 6.0 and "horizontal edges" in lines.source
            fitted = geom.wall_direction(v.rgb, box, K=v.K, depth=v.depth)
            assert abs(wrap(fitted.facing_deg - truth)) <= 1.0 and fitted.sigma_deg <= 3.0, fitted.text
            assert fitted.run_deg == pytest.approx(abs(wrap(abs(wrap(truth - 90.0)) + 0.0)) % 180.0, abs=1.0) or (
                fitted.run_deg == pytest.approx(180.0 - abs(wrap(truth - 90.0)), abs=1.0)
            )
            checked += 1
    assert checked >= 6


def test_the_readout_names_the_side_and_the_assumptions(rendered: list) -> None:
    v = rendered[0]  # heading -40: wall x- on the left faces right-and-towards the camera (facing +130)
    reading = geom.wall_direction(v.rgb, wall_box(v, "wall x-"), K=v.K)
    assert reading.words == "right-and-towards the camera"
    assert "upright wall" in reading.assumed and "from the image's" in reading.assumed
    assert "faces right-and-towards the camera" in repr(reading)


def test_a_floor_box_with_depth_is_refused_as_not_upright(rendered: list) -> None:
    v = rendered[0]
    mask = v.label == tiled_room().labels.index("floor")
    ys, xs = np.nonzero(mask)
    floor_box = (np.percentile(xs, 30), np.percentile(ys, 60), np.percentile(xs, 70), np.percentile(ys, 95))
    depth = np.where(mask, v.depth, 0.0)
    with pytest.raises(ValueError, match="no upright plane"):
        geom.wall_direction(v.rgb, floor_box, K=v.K, depth=depth)


def test_a_box_without_wall_lines_is_refused_with_what_to_try() -> None:
    blank = np.full((168, 224, 3), 150, np.uint8)
    with pytest.raises(ValueError, match="depth="):
        geom.wall_direction(blank, (20, 20, 120, 120))
    with pytest.raises(ValueError, match="under 4x4 pixels"):
        geom.wall_direction(blank, (300, 20, 400, 120))


def _photo(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rgb, depth metres, floor up direction in the camera frame) of a real RGB-D photo (640 x 480, K640)."""
    colour, depth_path, kind = {
        "redwood0": ("rgbd-redwood/color/00000.jpg", "rgbd-redwood/depth/00000.png", "mm"),
        "sun": ("rgbd-single/SUN_color.jpg", "rgbd-single/SUN_depth.png", "sun"),
    }[name]
    raw = np.asarray(Image.open(DATA_ROOT / depth_path)).astype(np.uint32)
    if kind == "sun":
        raw = ((raw >> 3) | (raw << 13)) & 0xFFFF
    depth = raw / 1000.0
    points = geom.backproject(depth, K640)
    floor = geom.find_floor(points[points[:, 2] < 8.0], np.eye(4)[None])
    assert floor is not None
    up = floor.normal if floor.normal[1] < 0 else -floor.normal  # the camera's y axis points down
    return np.asarray(Image.open(DATA_ROOT / colour).convert("RGB")), depth, up


def _true_facing(depth: np.ndarray, up: np.ndarray, box: tuple[int, int, int, int]) -> float:
    """The facing (degrees clockwise from the viewing direction, seen from above) of the plane fitted by least
    squares to the depth points of a box that holds only the wall, turned to face the camera."""
    x0, y0, x1, y1 = box
    mask = np.zeros(depth.shape, bool)
    mask[y0:y1, x0:x1] = True
    points = geom.backproject(depth, K640, mask=mask)
    normal = np.linalg.svd(points - points.mean(axis=0), full_matrices=False)[2][2]
    forward = np.array([0.0, 0.0, 1.0]) - up[2] * up
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    normal = -normal if normal @ points.mean(axis=0) > 0 else normal  # out of the wall, towards the camera
    return float(np.degrees(np.arctan2(normal @ right, normal @ forward)))


@pytest.mark.skipif(not (DATA_ROOT / "rgbd-single").is_dir(), reason=f"real data not found at {DATA_ROOT}")
@pytest.mark.parametrize(
    ("name", "lines_box", "wall_only"),
    [
        ("sun", (130, 20, 240, 400), (135, 60, 175, 300)),  # the corridor's left wall, its door frames and foot
        ("redwood0", (300, 250, 600, 345), (300, 10, 600, 100)),  # the wall behind the chair: its skirting board
    ],
)
def test_real_walls_from_their_lines_match_the_depth_plane(name: str, lines_box: tuple, wall_only: tuple) -> None:
    rgb, depth, up = _photo(name)
    truth = _true_facing(depth, up, wall_only)
    lines = geom.wall_direction(rgb, lines_box, K=K640)
    assert abs(wrap(lines.facing_deg - truth)) <= 2 * lines.sigma_deg, (truth, lines.text)
    fitted = geom.wall_direction(rgb, lines_box, K=K640, depth=depth)
    assert abs(wrap(fitted.facing_deg - truth)) <= 2 * fitted.sigma_deg, (truth, fitted.text)
