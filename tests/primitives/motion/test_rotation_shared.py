"""One rotation estimate for ``motion`` and ``reconstruct``: an exact pan of a real photo (a Redwood frame,
640x480, rendered by ``virtual_camera``) is recovered step by step by both tools, with the same numbers,
and a frame reconstruct cannot place is "unregistered" with a reason, never a silent NaN pose."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from spatialclaw.primitives.motion.angles import yaw_pitch_roll
from spatialclaw.primitives.motion.estimate import motion
from spatialclaw.primitives.reconstruction.reconstruct import reconstruct

STEP_DEG = 4.0


def _pan(test_data, steps: int = 4) -> list[np.ndarray]:
    from tests.virtual_camera import redwood_frame, rotation_ypr, turning_sequence

    rgb, _, K = redwood_frame(test_data)
    return turning_sequence(rgb, K, [rotation_ypr(STEP_DEG * i) for i in range(steps + 1)], width=640)


def _relative_yaws(poses: np.ndarray) -> list[float]:
    """Yaw (degrees, positive = turning right) of each camera-to-world pose relative to the one before."""
    return [yaw_pitch_roll(poses[i - 1][:3, :3].T @ poses[i][:3, :3])[0] for i in range(1, len(poses))]


def _no_silent_nan(rec) -> None:
    for position, status in enumerate(rec.frame_status):
        if not np.isfinite(rec.poses[position]).all():
            assert status.status == "unregistered" and status.reason.strip(), status


def test_an_exact_4_degree_pan_at_640_px_is_recovered_by_motion_and_reconstruct(test_data):
    frames = _pan(test_data)
    assert frames[0].shape == (480, 640, 3)
    moved = motion(frames)  # no intrinsics: the focal length is self-calibrated from the rotation
    assert [step.kind for step in moved.steps] == ["rotation"] * 4
    assert [step.yaw_deg for step in moved.steps] == pytest.approx([STEP_DEG] * 4, abs=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unregistered frame warns: there must be none
        rec = reconstruct(frames, depth=None)
    _no_silent_nan(rec)
    assert rec.method == "rotation" and rec.registered.all() and np.isfinite(rec.poses).all()
    assert [s.status for s in rec.frame_status] == ["reference"] + ["rotation-only"] * 4
    yaws = _relative_yaws(rec.poses)
    assert yaws == pytest.approx([STEP_DEG] * 4, abs=0.5)
    # one estimator: reconstruct's steps are motion's steps, to rounding
    assert yaws == pytest.approx([step.yaw_deg for step in moved.steps], abs=1e-6)
    np.testing.assert_allclose(rec.poses[:, :3, 3], 0.0, atol=1e-9)


def test_a_frame_the_pan_does_not_reach_is_unregistered_with_a_reason(test_data):
    from PIL import Image

    frames = _pan(test_data, steps=3)
    other = sorted((test_data / "multiview-temple").glob("*.png"))[0]
    frames.append(np.asarray(Image.open(other).convert("RGB").resize((640, 480))))  # another scene
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = reconstruct(frames, depth=None)
    _no_silent_nan(rec)
    assert rec.method == "rotation" and rec.registered.tolist() == [True] * 4 + [False]
    assert _relative_yaws(rec.poses[:4]) == pytest.approx([STEP_DEG] * 3, abs=0.5)
    assert rec.frame_status[4].status == "unregistered" and "from frame 3" in rec.frame_status[4].reason
