"""find_color(frame, color, box=...) searches only inside a box of a real photo: blobs come back in full-frame
pixels, the readout gives the share of the box that shows the colour (with its range as the threshold varies)
and names paler near misses, and a box outside the frame or an empty one is a clear error."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.display.color import find_color
from tests.paths import DATA_ROOT

pytestmark = pytest.mark.skipif(
    not (DATA_ROOT / "rgbd-single").is_dir(), reason=f"real data not found at {DATA_ROOT} (set SPATIALCLAW_TEST_DATA)"
)
PATCH = (80, 300, 120, 330)  # x0, y0, x1, y1 px: a pale green card laid on the TUM photo's purple chair and grey floor
BOX = (40, 260, 240, 400)


@pytest.fixture(scope="module")
def office() -> np.ndarray:
    """The TUM office photo (640 x 480): a desk with a pale green bottle, a purple chair, a yellow chair, a grey
    floor."""
    return np.asarray(Image.open(DATA_ROOT / "rgbd-single/TUM_color.png").convert("RGB"))


def test_a_pale_colour_in_a_box_comes_back_in_full_frame_pixels_with_its_share(office: np.ndarray) -> None:
    image = office.copy()
    x0, y0, x1, y1 = PATCH
    image[y0:y1, x0:x1] = (176, 204, 168)  # pale green: Lab chroma about 17
    found = find_color(image, "green", box=BOX)
    assert found and found[0].box == PATCH  # full-frame pixels, not the crop's
    cx, cy = found[0].centroid
    assert cx == pytest.approx((x0 + x1 - 1) / 2, abs=1.0) and cy == pytest.approx((y0 + y1 - 1) / 2, abs=1.0)
    assert found.mask.shape == image.shape[:2] and found.mask[y0:y1, x0:x1].all()
    assert not found.mask[:, : BOX[0]].any() and not found.mask[: BOX[1]].any()  # nothing outside the box
    region = found.region
    patch_share = (x1 - x0) * (y1 - y0) / ((BOX[2] - BOX[0]) * (BOX[3] - BOX[1]))
    assert region.pixels == 200 * 140 and region.box == BOX and not region.clipped
    assert patch_share <= region.share <= patch_share + 0.01  # the card, and no more than a few stray pixels
    assert region.share_low <= region.share <= region.share_high
    assert "% of the box" in repr(found) and "(full-frame pixels)" in repr(found)
    filled = find_color(image, "green", box=(85, 305, 115, 325))  # a box the card fills: judged by the frame
    assert filled and filled.region.share > 0.95, repr(filled)


def test_a_box_names_paler_near_misses_beside_the_blobs_it_finds(office: np.ndarray) -> None:
    """The pale green bottle on the desk's shelf, with a strict floor: its most colourful parts are blobs, its
    paler parts near misses."""
    found = find_color(office, "green", box=(270, 20, 330, 110), min_chroma=25)
    assert found and 285 <= found[0].centroid[0] <= 315  # the bottle, in full-frame pixels
    assert found.paler and all(270 <= x < 330 and 20 <= y < 110 for (x, y), _, _ in found.paler)
    assert "near misses (paler green" in repr(found)


def test_a_box_outside_the_frame_or_empty_is_an_error_naming_the_frame_size(office: np.ndarray) -> None:
    with pytest.raises(ValueError, match="outside the frame, which is 640x480 pixels"):
        find_color(office, "green", box=(700, 10, 800, 50))
    with pytest.raises(ValueError, match="is empty: it needs x1 > x0 and y1 > y0"):
        find_color(office, "green", box=(50, 50, 50, 80))
    with pytest.raises(ValueError, match="640x480"):
        find_color(office, "green", box=(10, 10, 20))
    clipped = find_color(office, "green", box=(600, 400, 700, 500))
    assert clipped.region.clipped and clipped.region.box == (600, 400, 640, 480)
    assert "clipped to the frame" in repr(clipped)
