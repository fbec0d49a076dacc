"""show(sheet=True) honours min_side and zoom() takes a label (issue 32, item 4), in a real kernel on real
frames: a sheet of two 768 px zooms no longer shrinks them to 256 px cells."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw import Kernel
from spatialclaw.task import FrameSpec

DATA = Path(os.environ.get("SPATIALCLAW_TEST_DATA", Path(__file__).resolve().parents[4] / "shared" / "data"))


@pytest.fixture(scope="module")
def kernel():
    paths = [DATA / "rgbd-redwood" / "color" / f"0000{i}.jpg" for i in range(2)]
    if not all(p.is_file() for p in paths):
        pytest.skip(f"the rgbd-redwood frames are missing under {DATA} (set SPATIALCLAW_TEST_DATA)")
    with Kernel(videos=[FrameSpec.images(paths)]) as k:
        yield k


def _image(result):
    return Image.open(io.BytesIO(result.images[0].png)).convert("RGB")


def test_a_sheet_of_zooms_keeps_them_at_min_side(kernel):
    code = (
        "a = zoom(frames[0], (100, 100, 196, 172), label='the chair leg')\n"
        "b = zoom(frames[1], (300, 200, 396, 272), label='the door')\n"
        "show(a, b, sheet=True, min_side=768)"
    )
    result = kernel.execute(code)
    assert result.ok, result.error
    sheet = _image(result)
    assert sheet.width >= 2 * 768 and sheet.height >= 768  # each cell is min_side, not the 256 px default
    assert result.images[0].label == "contact sheet: the chair leg, the door"
    small = _image(kernel.execute("show(a, b, sheet=True)"))
    assert small.width < 2 * 300  # the default cells stay 256 px


def test_a_small_tile_is_upscaled_to_min_side_in_a_sheet(kernel):
    result = kernel.execute("show(frames[0].array[:40, :60], frames[1], sheet=True, min_side=512)")
    assert result.ok and _image(result).width >= 2 * 512


def test_zoom_takes_a_label_and_show_uses_it(kernel):
    result = kernel.execute("z = zoom(frames[0], (10, 10, 50, 40), label='the socket')\nprint(z.label)\nshow(z)")
    assert result.ok and result.stdout.strip() == "the socket"
    assert result.images[0].label.startswith("the socket")
