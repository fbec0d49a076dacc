"""motion() on a camera that looks down and turns about the vertical (exact virtual cameras over a real
Redwood photo): the turn is measured about the vertical, not rejected as a roll, with and without the
camera's tilt; a true roll is still a roll."""

from __future__ import annotations

import pytest

from spatialclaw.primitives.motion.estimate import motion

FOV = 62.7  # the Redwood camera's horizontal field of view (focal 525 px at 640 px)


def _turns_while_looking_down(test_data, turn_deg: float, tilt_deg: float = -42.0, lift_deg: float = 0.0):
    """Three frames of a camera pitched ``tilt_deg`` (looking down) turning ``turn_deg`` about gravity per
    frame (and raising its pitch by ``lift_deg``), orientations in the middle frame's camera frame."""
    from tests.virtual_camera import redwood_frame, rotation_ypr, turning_sequence

    rgb, _, K = redwood_frame(test_data)
    level = rotation_ypr(0, tilt_deg)  # the middle (original) photo's camera in a level frame
    orientations = [level.T @ rotation_ypr(turn_deg * k, tilt_deg + lift_deg * k) for k in (-1, 0, 1)]
    return turning_sequence(rgb, K, orientations, width=320)


def test_a_camera_looking_down_that_turns_is_not_rejected_as_a_roll(test_data):
    # 42 deg down, 55 deg per frame about gravity: in camera axes yaw 39, roll 34 (over the 30 deg gate);
    # before, every step was "unknown: a roll of 34 deg between key frames"
    frames = _turns_while_looking_down(test_data, 55.0)
    m = motion(frames, fov_deg=FOV)
    assert [s.kind for s in m.steps] == ["rotation", "rotation"], m
    assert [s.yaw_deg for s in m.steps] == pytest.approx([55.0, 55.0], abs=1.5)
    assert [s.roll_deg for s in m.steps] == pytest.approx([0.0, 0.0], abs=1.5)
    assert m.tilt_deg == pytest.approx(-42.0, abs=3.0)  # the vertical the turns fit: said, not hidden
    assert "looking about 4" in m.readout and "deg down" in m.readout and "tilt_deg=" in m.readout
    assert "roll of" not in repr(m)


def test_with_the_tilt_given_the_turn_and_the_change_of_pitch_are_measured_about_gravity(test_data):
    frames = _turns_while_looking_down(test_data, 25.0, lift_deg=4.0)
    m = motion(frames, fov_deg=FOV, tilt_deg=-46.0)  # the first frame's pitch: 42 - 4 deg
    assert m.tilt_deg == -46.0 and "about gravity for a first camera pitched 46 deg down" in m.readout
    assert [s.yaw_deg for s in m.steps] == pytest.approx([25.0, 25.0], abs=1.0)
    assert [s.pitch_deg for s in m.steps] == pytest.approx([4.0, 4.0], abs=1.0)
    assert [s.roll_deg for s in m.steps] == pytest.approx([0.0, 0.0], abs=1.0)
    net = m.net()
    assert net is not None and net == pytest.approx((50.0, 8.0, 0.0), abs=1.5)
    # without the tilt, one vertical for the clip (between its pitches): the turn is still the turn about it
    found = motion(frames, fov_deg=FOV)
    assert found.tilt_deg == pytest.approx(-44.0, abs=4.0)
    assert [s.yaw_deg for s in found.steps] == pytest.approx([25.0, 25.0], abs=1.5)


def test_a_true_roll_is_still_rejected(test_data):
    from tests.virtual_camera import redwood_frame, rotation_ypr, turning_sequence

    rgb, _, K = redwood_frame(test_data)
    frames = turning_sequence(rgb, K, [rotation_ypr(0, 0, 0), rotation_ypr(0, 0, 36)], width=320)
    m = motion(frames, fov_deg=FOV)
    assert m.steps[0].kind == "unknown" and "a roll of 36 deg" in m.steps[0].reason
