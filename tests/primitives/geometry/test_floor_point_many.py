"""geom.floor_point over many pixels at once (issue 32, item 4): an (N, 2) array gives N FloorPoints from
one camera set-up, each the same as its single call, on a real frame."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.geometry import floor
from spatialclaw.primitives.geometry.floor import FloorPoint, floor_point

DATA = Path(os.environ.get("SPATIALCLAW_TEST_DATA", Path(__file__).resolve().parents[4] / "shared" / "data"))


@pytest.fixture(scope="module")
def frame():
    path = DATA / "rgbd-redwood" / "color" / "00000.jpg"
    if not path.is_file():
        pytest.skip(f"{path} is missing (set SPATIALCLAW_TEST_DATA)")
    return Image.open(path).convert("RGB")


def test_an_array_of_pixels_gives_one_floor_point_each_as_single_calls_do(frame):
    pixels = np.array([[320.0, 400.0], [100.0, 450.0], [560.0, 380.0]])
    many = floor_point(pixels, frame, pitch_deg=-20.0)
    assert isinstance(many, list) and len(many) == 3 and all(isinstance(p, FloorPoint) for p in many)
    for pixel, placed in zip(pixels, many, strict=True):
        single = floor_point(tuple(pixel), frame, pitch_deg=-20.0)
        assert placed.pixel == tuple(pixel)
        np.testing.assert_allclose(placed.point, single.point, atol=1e-9)  # the nominal position is exact
        assert placed.distance_sigma_m == pytest.approx(single.distance_sigma_m, rel=0.1)
    assert many[0].camera is not None and all(many[0].camera.same_as(p.camera) for p in many[1:])
    first = floor_point(pixels[:1], frame, pitch_deg=-20.0)
    assert isinstance(first, list) and len(first) == 1  # an (1, 2) array is still a list


def test_the_tilt_estimated_from_a_frame_is_read_once_per_image(frame):
    floor._TILTS.clear()
    a = floor_point((320.0, 420.0), frame)
    assert len(floor._TILTS) == 1
    b = floor_point((300.0, 430.0), frame)
    assert len(floor._TILTS) == 1 and a.pitch_deg == b.pitch_deg and "estimated from the image" in b.assumed
    darker = Image.fromarray((np.asarray(frame) * 0.9).astype(np.uint8))
    floor_point((320.0, 420.0), darker)
    assert len(floor._TILTS) == 2  # another image, its own estimate


@pytest.mark.parametrize("bad", [np.zeros((2, 3)), np.zeros((0, 2)), np.array([[1.0, np.nan]]), "here"])
def test_pixels_that_are_not_x_y_pairs_are_refused(bad, frame):
    with pytest.raises(ValueError, match=r"\(N, 2\) array"):
        floor_point(bad, frame, pitch_deg=-20.0)
