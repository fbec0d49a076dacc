"""find_color's colour names: everyday names with documented hue ranges, grass and pale mint in a colourful photo."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import skimage.data

from spatialclaw.primitives.display.color import find_color
from spatialclaw.primitives.display.color_mask import color_space
from spatialclaw.primitives.display.color_names import COLOR_NAMES, color_names_table


def _grass_photo(seed: int = 0) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int, int]]:
    """Blue sky over grass whose hue runs from olive (48 deg, the grass of the issue: hue ~56) to green
    (100 deg) in 4-px patches, dark as grass is (HSV value 0.3..0.55), with a white card carrying a pale
    mint sticker (189, 252, 201). Returns (rgb, grass mask, sticker box x0, y0, x1, y1)."""
    rng = np.random.default_rng(seed)
    h, w = 240, 320
    hsv = np.zeros((h, w, 3), np.float32)
    hsv[:100, :, 0] = 105
    hsv[:100, :, 1] = np.linspace(0.25, 0.55, 100)[:, None]
    hsv[:100, :, 2] = 0.9

    def blocks(low: float, high: float) -> np.ndarray:
        return np.kron(rng.uniform(low, high, ((h - 100) // 4, w // 4)), np.ones((4, 4)))

    hsv[100:, :, 0] = blocks(48, 100) / 2
    hsv[100:, :, 1] = blocks(0.45, 0.8)
    hsv[100:, :, 2] = blocks(0.3, 0.55)
    rgb = cv2.cvtColor((hsv * [1, 255, 255]).astype(np.uint8), cv2.COLOR_HSV2RGB)
    grass = np.zeros((h, w), bool)
    grass[100:] = True
    rgb[150:210, 40:140] = (245, 245, 240)
    rgb[165:195, 70:110] = (189, 252, 201)
    grass[150:210, 40:140] = False
    return rgb, grass, (70, 165, 110, 195)


def test_green_covers_olive_and_green_grass_but_not_the_sky() -> None:
    rgb, grass, _ = _grass_photo()
    hue = color_space(rgb).hue
    found = find_color(rgb, "green")
    olive = grass & (hue < 72)  # the yellow-hued part of the grass (hue 50..72)
    assert olive.sum() > 5000
    assert found.mask[grass].mean() > 0.85
    assert found.mask[olive].mean() > 0.75
    assert found.mask[:100].mean() == 0.0  # sky
    assert found.mask[150:210, 40:140][:, :25].mean() == 0.0  # white card


def test_pale_mint_sticker_is_green_and_mint_in_a_colourful_photo() -> None:
    rgb, _, (x0, y0, x1, y1) = _grass_photo()
    for name in ("green", "mint"):
        blobs = find_color(rgb, name)
        sticker = [b for b in blobs if b.box == (x0, y0, x1, y1)]
        assert sticker, f"{name}: no blob on the mint sticker in {blobs!r}"
        assert abs(sticker[0].centroid[0] - (x0 + x1 - 1) / 2) < 0.5
        assert abs(sticker[0].centroid[1] - (y0 + y1 - 1) / 2) < 0.5
    mint = find_color(rgb, "mint")
    assert mint.mask[100:150].mean() < 0.01  # the dark grass is green, not mint


EVERYDAY = {
    "brown": (120, 72, 30),
    "beige": (225, 205, 170),
    "tan": (200, 160, 110),
    "gold": (220, 170, 30),
    "olive": (110, 110, 30),
    "lime": (160, 230, 50),
    "mint": (180, 240, 200),
    "teal": (0, 115, 110),
    "navy": (20, 30, 95),
    "maroon": (110, 20, 35),
    "violet": (140, 70, 200),
    "green": (40, 150, 60),
    "red": (210, 30, 30),
    "blue": (30, 80, 220),
}


@pytest.mark.parametrize("name", sorted(EVERYDAY))
def test_everyday_name_finds_its_patch_on_grey(name: str) -> None:
    image = np.full((120, 160, 3), 128, np.uint8)
    image[40:80, 60:100] = EVERYDAY[name]
    blobs = find_color(image, name)
    assert blobs, f"{name} not found: {blobs!r}"
    assert blobs[0].box == (60, 40, 100, 80)
    assert name in color_names_table()


def test_names_that_must_not_confuse() -> None:
    image = np.full((120, 320, 3), 128, np.uint8)
    for i, name in enumerate(["brown", "navy", "mint", "beige"]):
        image[40:80, 20 + 75 * i : 60 + 75 * i] = EVERYDAY[name]
    brown_box, navy_box, mint_box, beige_box = ((20 + 75 * i, 40, 60 + 75 * i, 80) for i in range(4))
    assert [b.box for b in find_color(image, "navy")] == [navy_box]
    assert [b.box for b in find_color(image, "mint")] == [mint_box]
    assert [b.box for b in find_color(image, "brown")] == [brown_box]
    assert beige_box in [b.box for b in find_color(image, "beige")]
    assert brown_box not in [b.box for b in find_color(image, "beige")]


def test_unknown_name_lists_the_everyday_names() -> None:
    with pytest.raises(ValueError, match="teal"):
        find_color(np.zeros((8, 8, 3), np.uint8), "chartreuse")
    assert set(EVERYDAY) <= set(COLOR_NAMES)


@pytest.mark.parametrize("photo", ["chelsea", "coffee", "astronaut"])
def test_real_photos_without_grass_have_almost_no_green(photo: str) -> None:
    """Real photos (scikit-image): a tabby cat, a cup of coffee, an astronaut: the olive band for grass must not turn
    their brown fur, coffee or dark helmet green."""
    found = find_color(getattr(skimage.data, photo)(), "green")
    assert found.mask.mean() < 0.002


def test_real_photo_brown_is_the_cat_and_the_coffee() -> None:
    assert find_color(skimage.data.chelsea(), "brown").mask.mean() > 0.2
    assert find_color(skimage.data.coffee(), "brown").mask.mean() > 0.3


def _dots_among_specks(color: tuple[int, int, int], seed: int = 0) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """A sky (blue, noisy, blurred) over foliage (leaf-green and dark-green speckle), 25 soft specks of a
    paler tint of ``color`` 5-8 px wide, and three solid 10-px dots of ``color`` at known sub-pixel centres."""
    rng = np.random.default_rng(seed)
    h, w = 240, 320
    hsv = np.zeros((h, w, 3), np.float32)
    hsv[..., 0] = 108 + rng.normal(0, 3, (h, w))
    hsv[..., 1] = 0.35 + 0.25 * rng.random((h, w))
    hsv[..., 2] = 0.85
    rgb = cv2.cvtColor((np.clip(hsv, 0, [179, 1, 1]) * [1, 255, 255]).astype(np.uint8), cv2.COLOR_HSV2RGB)
    rgb = cv2.GaussianBlur(rgb, (0, 0), 1.5)
    leaves = rng.random((h // 3, w)) < 0.5
    foliage = np.where(leaves[..., None], (70, 110, 40), (40, 60, 30)).astype(np.uint8)
    rgb[2 * h // 3 :] = cv2.GaussianBlur(foliage, (0, 0), 1.0)
    specks = np.zeros((h, w), np.float32)
    for _ in range(25):
        x, y, r = int(rng.integers(8, w - 8)), int(rng.integers(8, h - 8)), float(rng.uniform(2.5, 3.5))
        cv2.ellipse(specks, (x, y), (int(r + 1), int(r)), float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    layer = cv2.GaussianBlur(specks, (0, 0), 0.8)[..., None]
    rgb = np.clip(rgb * (1 - 0.85 * layer) + np.float32(color) * 0.85 * layer, 0, 255).astype(np.uint8)
    centres = [(60.3, 50.7), (250.6, 120.2), (160.1, 200.4)]  # one in the sky, one at its edge, one in the foliage
    for cx, cy in centres:
        cv2.circle(rgb, (round(cx * 16), round(cy * 16)), 5 * 16, color, -1, cv2.LINE_AA, 4)
    return rgb, centres


@pytest.mark.parametrize(("name", "color"), [("blue", (30, 90, 230)), ("green", (40, 170, 60)), ("red", (230, 40, 40))])
def test_dots_rank_above_sky_and_leaf_specks(name: str, color: tuple[int, int, int]) -> None:
    """A blue dot on blue sky and a green dot on foliage merge with their background in the colour mask;
    ``shape="dot"`` must still return the three real dots first, at their centres."""
    rgb, centres = _dots_among_specks(color)
    blobs = find_color(rgb, name, shape="dot")
    for blob in blobs[:3]:
        error = min(float(np.hypot(blob.centroid[0] - x, blob.centroid[1] - y)) for x, y in centres)
        assert error < 0.4, f"{name}: {blob!r} is not one of the dots {centres}"
        assert blob.compactness > 0.9
    assert all(b.match < min(top.match for top in blobs[:3]) for b in blobs[3:])
