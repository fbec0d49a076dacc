"""Seeing the inputs: ``show`` upscales tiny images (and says so), tiles many frames into one labelled
contact sheet, and shows dark frames with auto contrast without touching their pixels."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from spatialclaw import Kernel
from spatialclaw.task import FrameSpec


@pytest.fixture(scope="module")
def frames_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frames")
    paths = []
    for i, value in enumerate((10, 20, 30)):  # dark gradients, each with one bright pixel at (3, 2)
        ramp = np.linspace(value, value + 30, 32).astype(np.uint8)
        array = np.repeat(np.repeat(ramp[None, :, None], 24, axis=0), 3, axis=2)
        array[2, 3] = (60, 200, 60)
        paths.append(folder / f"f{i}.png")
        Image.fromarray(array).save(paths[-1])
    return paths


@pytest.fixture(scope="module")
def kernel(frames_dir):
    with Kernel(videos=[FrameSpec.images(frames_dir, indices=[16, 32, 48])]) as k:
        yield k


def _image(result, number=0):
    return Image.open(io.BytesIO(result.images[number].png)).convert("RGB")


def test_a_tiny_image_is_upscaled_by_a_whole_factor_and_the_label_says_so(kernel):
    result = kernel.execute("show(frames[0])")
    image = _image(result)
    assert image.size == (32 * 8, 24 * 8)  # 8x brings the longer side to 256 px
    assert result.images[0].label == "frame 16 [8x upscale of 32x24]"
    assert image.getpixel((3 * 8 + 4, 2 * 8 + 4)) == (60, 200, 60)  # nearest neighbour: the pixel stays sharp
    assert _image(kernel.execute("show(frames[0], min_side=0)")).size == (32, 24)


def test_a_contact_sheet_labels_every_frame_with_its_absolute_index(kernel):
    result = kernel.execute("show(frames, sheet=True)")
    assert len(result.images) == 1
    assert result.images[0].label == "contact sheet: frame 16, frame 32, frame 48"
    sheet = _image(result)
    assert sheet.width > 3 * 32 and sheet.height > 24


def test_auto_contrast_brightens_a_dark_frame_for_viewing_only(kernel):
    result = kernel.execute(
        "before = frames[0].array.copy()\nshow(frames[0], contrast='auto', min_side=0)\n"
        "print(np.array_equal(before, frames[0].array))"
    )
    shown = np.asarray(_image(result))
    assert result.images[0].label == "frame 16 [auto contrast]"
    plain = np.asarray(_image(kernel.execute("show(frames[0], min_side=0)")))
    assert plain.mean() < 30 and shown.mean() > 100  # the dark frame becomes visible
    assert result.stdout.strip() == "True"  # the frame's own pixels are untouched
    bad = kernel.execute("show(frames[0], contrast='max')")
    assert bad.error.type == "ValueError" and "'auto'" in bad.error.message
