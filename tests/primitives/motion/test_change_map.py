"""``change_map(frame_a, frame_b)``: where two frames differ once the camera's motion is aligned away (issue 32:
models wrote frame-difference maps by hand), on a real Redwood photo turned exactly (``tests.virtual_camera``)
with a known patch changed, on the real Redwood walk (the camera moves 10 cm: parallax), and on frames of two
scenes (no alignment), at benchmark size (200 px) and full size (640 px)."""

from __future__ import annotations

import numpy as np
import pytest
import skimage.data
from PIL import Image

from spatialclaw.primitives.motion.change_map import change_map
from tests.primitives.reconstruction.test_reconstruct import read_redwood
from tests.virtual_camera import redwood_frame, rotation_ypr, shrink, turning_sequence


def _turned(test_data, width: int) -> tuple[np.ndarray, np.ndarray]:
    rgb, _, K = redwood_frame(test_data)
    a, b = turning_sequence(rgb, K, [rotation_ypr(0.0), rotation_ypr(4.0, 1.0)], width=width)
    return a, b


def _iou(box, other) -> float:
    x0, y0 = max(box[0], other[0]), max(box[1], other[1])
    x1, y1 = min(box[2], other[2]), min(box[3], other[3])
    inter = max(x1 - x0, 0) * max(y1 - y0, 0)
    area = (box[2] - box[0]) * (box[3] - box[1]) + (other[2] - other[0]) * (other[3] - other[1]) - inter
    return inter / area


@pytest.mark.parametrize("width", [200, 640])
def test_a_changed_patch_is_found_where_it_is_and_the_camera_turn_is_not_change(test_data, width):
    a, b = _turned(test_data, width)
    scale = width // 200
    truth = (60 * scale, 40 * scale, 90 * scale, 70 * scale)  # a 30 x 30 px (at 200 px) patch of another photo
    changed = a.copy()
    changed[truth[1] : truth[3], truth[0] : truth[2]] = shrink(skimage.data.astronaut()[100:300, 150:350], 30 * scale)
    cm = change_map(changed, b)
    assert cm.aligned and cm.error_px < 0.5, cm
    assert len(cm.regions) == 1 and _iou(cm.regions[0].box, truth) > 0.8, cm
    assert cm.regions[0].share == pytest.approx(0.03, abs=0.01)
    assert cm.mask.shape == a.shape[:2] and cm.mask[truth[1] + 5, truth[0] + 5]
    assert "1 changed region in frame a's pixels: box (" in repr(cm)
    assert cm.image.size == (a.shape[1], a.shape[0])
    unchanged = change_map(a, b)  # the same turn without the patch: nothing changed
    assert unchanged.aligned and unchanged.regions == [] and "NO CHANGE" in repr(unchanged), unchanged


@pytest.mark.parametrize("width", [200, 640])
def test_frames_of_two_scenes_fail_to_align_and_report_no_change(test_data, width):
    a, _ = _turned(test_data, width)
    tum = np.asarray(Image.open(test_data / "rgbd-single" / "TUM_color.png").convert("RGB"))
    other = shrink(tum, width)[: a.shape[0]]
    cm = change_map(a, other)
    assert not cm.aligned and cm.regions == [] and cm.changed_share is None
    assert "ALIGNMENT FAILED" in repr(cm) and "camera's motion, not a change" in repr(cm)


@pytest.mark.parametrize("width", [200, 640])
def test_a_camera_that_moves_past_a_deep_scene_is_warned_of_parallax(test_data, width):
    """The real Redwood walk, first to last frame (the camera rises about 10 cm): the room did not change, and
    the readout says that what differs may be near things' parallax."""
    colors, _, _, _ = read_redwood(test_data / "rgbd-redwood")
    cm = change_map(shrink(colors[0], width), shrink(colors[4], width))
    assert cm.aligned and cm.error_px > 1.0, cm
    assert "WARNING: the camera moved past things at several depths" in repr(cm)


def test_frames_of_different_sizes_are_refused(test_data):
    a, b = _turned(test_data, 200)
    with pytest.raises(ValueError, match="same size"):
        change_map(a, b[:100])
