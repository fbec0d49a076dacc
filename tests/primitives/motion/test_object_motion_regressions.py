"""motion(..., object=...) regressions from issue 21: a box that leaves no background makes its own steps
unknown (never an IndexError that sinks the call), each frame's own box is used (never the first frame's
carried over), a shrinking object facing the camera moves backward in its own heading, and in a real kernel
what ``track`` returns (a list) is accepted for a runner the camera pans to follow. Real photos (Redwood
RGB-D, a temple photo cut out as the object) composited at known per-frame positions and sizes, 200 px wide."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.motion.estimate import motion
from tests.primitives.motion.test_motion import _paste
from tests.primitives.motion.test_motion_honesty import _runner
from tests.virtual_camera import redwood_frame, rotation_ypr, scaled_K, shrink, turning_sequence

WIDTH = 200


@pytest.fixture(scope="module")
def photo(test_data):
    rgb, _, K = redwood_frame(test_data, 0)
    return rgb, K, scaled_K(K, WIDTH / rgb.shape[1])


@pytest.fixture(scope="module")
def cutout(test_data):
    """A real textured object: the temple's columns cut from a real photo, 40 x 40 px."""
    image = np.asarray(Image.open(sorted((test_data / "multiview-temple").glob("*.png"))[2]).convert("RGB"))
    return cv2.resize(image[140:340, 200:400], (40, 40), interpolation=cv2.INTER_AREA)


def _box(centre: tuple[float, float], size: float) -> tuple[float, float, float, float]:
    return (centre[0] - size / 2, centre[1] - size / 2, centre[0] + size / 2, centre[1] + size / 2)


@pytest.mark.parametrize("covered", [0.93, 1.0])
def test_a_box_that_leaves_no_background_makes_its_steps_unknown_not_the_call_fail(photo, covered):
    rgb, K, K_small = photo
    frames = turning_sequence(rgb, K, [rotation_ypr(3.0 * i) for i in range(5)], width=WIDTH)
    height = frames[0].shape[0]
    boxes = [_box((100, 75), 40)] * 5
    boxes[2] = (0.0, 0.0, float(WIDTH), covered * height)  # frame 2's box: (nearly) the whole frame
    result = motion(frames, intrinsics=K_small, object=boxes)
    by_pair = {(s.frame_a, s.frame_b): s for s in result.steps}
    assert by_pair[(2, 3)].status == "unknown" and "feature matches" in by_pair[(2, 3)].reason
    for pair in [(0, 1), (1, 2), (3, 4)]:  # the other pairs are measured, objects included
        step = by_pair[pair]
        assert step.status == "measured" and step.yaw_deg == pytest.approx(3.0, abs=0.7), step.readout()
        assert step.object is not None
    assert "unknown (left out of every total) for steps 2->3" in result.readout


def test_a_textured_object_on_a_bare_background_gives_unknown_steps_with_reasons(cutout):
    water = np.full((150, 200, 3), (40, 80, 120), np.uint8)
    centres = [(60.0 + 20 * i, 75.0) for i in range(4)]
    frames = [_paste(water, cutout, c) for c in centres]
    result = motion(frames, fov_deg=60, object=[_box(c, 40) for c in centres])  # no background outside the box
    assert [s.status for s in result.steps] == ["unknown"] * 3
    assert all("feature matches" in s.reason and s.object is None for s in result.steps)
    assert "could not be measured" in result.readout


def test_each_frame_uses_its_own_box(photo, cutout):
    rgb, _, K_small = photo
    background = shrink(rgb, WIDTH)
    centres = [(60.0, 75.0), (92.0, 68.0), (126.0, 82.0), (150.0, 75.0)]
    sizes = [40.0, 46.0, 34.0, 40.0]
    frames = [_paste(background, cutout, c, s / 40) for c, s in zip(centres, sizes, strict=True)]
    boxes = [_box(c, s) for c, s in zip(centres, sizes, strict=True)]
    result = motion(frames, intrinsics=K_small, object=boxes)
    assert "located from one region per frame" in result.readout
    for k, step in enumerate(result.steps):
        assert step.kind == "static", step.readout()  # the still camera is measured without the object
        obj = step.object
        moved = np.subtract(centres[k + 1], centres[k])
        assert obj.image_move_px == pytest.approx(tuple(moved), abs=0.6)  # the first box reused: (0, 0)
        assert obj.image_shift_px == pytest.approx(tuple(moved), abs=1.0)
        assert obj.size_px == pytest.approx((sizes[k], sizes[k + 1]), abs=1.0)
        assert obj.scale == pytest.approx(sizes[k + 1] / sizes[k], rel=0.04) and obj.moving
    assert all("right" in s.object.direction for s in result.steps), [s.object.direction for s in result.steps]
    assert "towards the camera" in result.steps[0].object.direction  # it grew 40 -> 46 px
    assert "away from the camera" in result.steps[1].object.direction  # it shrank 46 -> 34 px


def test_a_shrinking_object_facing_the_camera_moves_backward_and_the_clip_reversed_forward(photo, cutout):
    rgb, _, K_small = photo
    background = shrink(rgb, WIDTH)
    sizes = [44.0, 38.0, 33.0, 29.0]  # it recedes: 12-13 % smaller per key frame
    frames = [_paste(background, cutout, (100, 75), s / 40) for s in sizes]
    boxes = [_box((100, 75), s) for s in sizes]
    receding = motion(frames, intrinsics=K_small, object=boxes, object_heading_deg=180)  # it faces the camera
    for step in receding.steps:
        obj = step.object
        assert obj.moving and obj.depth_change > 0.1 and obj.direction == "away from the camera", step.readout()
        assert obj.own_direction == "backward" and "backward in its own heading (180 deg)" in step.readout()
    reversed_clip = motion(frames[::-1], intrinsics=K_small, object=boxes[::-1], object_heading_deg=180)
    for step in reversed_clip.steps:
        assert step.object.direction == "towards the camera" and step.object.own_direction == "forward"
    facing_away = motion(frames, intrinsics=K_small, object=boxes, object_heading_deg=0)
    assert [s.object.own_direction for s in facing_away.steps] == ["forward"] * 3


def test_in_a_real_kernel_a_tracked_runner_the_camera_pans_to_follow_moves(photo, tmp_path):
    from spatialclaw import Kernel

    rgb, K, _ = photo
    backgrounds = turning_sequence(rgb, K, [rotation_ypr(3.0 * i) for i in range(6)], width=WIDTH)
    sizes = np.linspace(33, 20, 6)  # the camera keeps the runner in the middle while it shrinks 33 -> 20 px
    paths = []
    for i, (background, size) in enumerate(zip(backgrounds, sizes, strict=True)):
        paths.append(str(tmp_path / f"run_{i}.png"))
        Image.fromarray(_paste(background, _runner(size), (100, 75))).save(paths[-1])
    hfov = math.degrees(2 * math.atan(0.5 * WIDTH / (K[0, 0] * WIDTH / rgb.shape[1])))
    code = (
        "tracks = track(frames, boxes=[(83.5, 58.5, 116.5, 91.5)], method='flow', label='runner')\n"
        "print(type(tracks).__name__)\n"
        f"m = motion(frames, object=tracks, fov_deg={hfov:.3f})\n"
        "print(m)"
    )
    with Kernel(frames=paths) as kernel:
        result = kernel.execute(code)
    assert result.error is None, result.to_text(3000)
    out = result.stdout
    assert out.startswith("list") and "the runner located from its Track" in out, out
    steps = [line for line in out.splitlines() if line.strip().startswith("frames ")]
    with_runner = [line for line in steps if "the runner" in line]
    assert len(with_runner) >= 4 and all("pans right" in line for line in steps), out
    assert all("the runner moves" in line and "the camera follows it" in line for line in with_runner), out
    assert "no measurable motion" not in out and "does not move" not in out
