"""find_color on a pale colour among other pale colours (issue 32, item 4): a pale green bag on pink walls
is found by the automatic threshold, and a search that finds nothing names its near misses."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from spatialclaw.primitives.display.color import find_color

BAG = (140, 120, 190, 195)  # x0, y0, x1, y1 px


def _pink_room() -> Image.Image:
    """A rendered 320x240 room: pink walls, a white ceiling, a brown floor and a pale green bag, with sensor
    noise, a slight blur and JPEG compression (as a phone photo has them)."""
    image = Image.new("RGB", (320, 240), (226, 196, 204))
    pen = ImageDraw.Draw(image)
    pen.rectangle([0, 0, 319, 40], fill=(236, 236, 232))
    pen.rectangle([0, 200, 319, 239], fill=(150, 130, 120))
    pen.rounded_rectangle(BAG, 8, fill=(196, 214, 192))
    noisy = np.asarray(image).astype(float) + np.random.default_rng(0).normal(0, 3, (240, 320, 3))
    blurred = Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(0.8))
    buffer = io.BytesIO()
    blurred.save(buffer, "JPEG", quality=80)
    return Image.open(buffer).convert("RGB")


def test_a_pale_green_bag_on_pink_walls_is_found_by_the_automatic_threshold():
    blobs = find_color(_pink_room(), "green")
    assert blobs, repr(blobs)
    x, y = blobs[0].centroid
    assert BAG[0] < x < BAG[2] and BAG[1] < y < BAG[3]
    assert blobs.thresholds["min_chroma"] <= 12  # the pink walls no longer raise the floor


def test_nothing_found_names_the_paler_regions_it_missed():
    blobs = find_color(_pink_room(), "green", min_chroma=20)
    assert not blobs and len(blobs.paler) == 1
    (x, y), area, chroma = blobs.paler[0]
    assert BAG[0] < x < BAG[2] and BAG[1] < y < BAG[3] and area > 2000 and 10 <= chroma < 20
    text = repr(blobs)
    assert text.startswith("ColorBlobs(no green blobs at chroma >= 20; 1 paler green region at chroma")
    assert "pass min_chroma=" in text


def test_no_near_misses_where_the_hue_is_absent():
    blobs = find_color(_pink_room(), "blue")
    assert not blobs and blobs.paler == [] and "no blue blobs found" in repr(blobs)
