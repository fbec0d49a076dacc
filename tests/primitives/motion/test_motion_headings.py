"""``motion(frames).headings()``: the heading sweep of a camera turning in place with its loop closure (issue 32:
models summed rotations about gravity by hand), on exact renders of a camera turning inside a room papered with
real photos (``tests.photo_room``), looking 20 deg down, at benchmark size (200 px) and full size (640 px)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from spatialclaw.primitives.motion.estimate import motion
from tests.photo_room import turning_in_room

LOOKING = -20.0


@pytest.mark.parametrize("width", [200, pytest.param(640, marks=pytest.mark.slow)])
def test_a_full_turn_in_eight_steps_comes_back_with_a_closed_loop(test_data, width):
    headings = [45.0 * i for i in range(9)]  # 0 .. 360: the last view is the first again
    frames, fov = turning_in_room(test_data, headings, pitch_deg=LOOKING, width=width)
    result = motion(frames, fov_deg=fov)  # no tilt given: about the vertical the turns fit
    sweep = result.headings()
    assert result.tilt_deg == pytest.approx(LOOKING, abs=3)
    assert sweep.step_yaw_deg == pytest.approx([45.0] * 8, abs=0.5)
    assert sweep.headings_deg == pytest.approx(headings, abs=1.0)
    assert all(0.0 < sd < 1.0 for sd in sweep.step_sd_deg)
    assert sweep.total_deg == pytest.approx(360.0, abs=1.5) and sweep.full_turns == 1
    assert sweep.came_back is True and abs(sweep.closure_error_deg) < 1.0
    text = repr(sweep)
    assert "came BACK to its starting heading after 1 full turn right" in text and "clockwise seen from above" in text


def test_six_key_frames_short_of_a_turn_end_left_of_the_start(test_data):
    """The usual benchmark clip: six key frames 60 deg apart, so the last faces 300 deg right of the first,
    which measured directly is 60 deg LEFT of it; with the tilt given, about gravity."""
    frames, fov = turning_in_room(test_data, [60.0 * i for i in range(6)], pitch_deg=LOOKING, width=200)
    sweep = motion(frames, fov_deg=fov, tilt_deg=LOOKING).headings()
    assert sweep.total_deg == pytest.approx(300.0, abs=1.5) and sweep.full_turns == 0
    assert sweep.direct_deg == pytest.approx(-60.0, abs=1.0) and sweep.came_back is False
    assert abs(sweep.closure_error_deg) < 1.0
    assert re.search(
        r"turned (299|300|301) deg right in all \(0 full turns and \d+ deg\) and ends 6\d\.\d deg left", repr(sweep)
    )
    assert "about the vertical of a first camera pitched -20 deg" in repr(sweep)


def test_a_camera_that_turns_and_turns_back_comes_back_without_a_full_turn(test_data):
    frames, fov = turning_in_room(test_data, [0.0, 40.0, 80.0, 40.0, 0.0], pitch_deg=LOOKING, width=200)
    sweep = motion(frames, fov_deg=fov).headings()
    assert sweep.headings_deg == pytest.approx([0.0, 40.0, 80.0, 40.0, 0.0], abs=1.0)
    assert sweep.full_turns == 0 and sweep.came_back is True
    assert "after no full turn (it turned back)" in repr(sweep)


def test_an_unknown_step_leaves_the_headings_after_it_and_the_closure_unknown(test_data):
    frames, fov = turning_in_room(test_data, [0.0, 30.0, 60.0, 90.0], pitch_deg=LOOKING, width=200)
    frames[2] = np.zeros_like(frames[2])  # a black frame: nothing to match
    sweep = motion(frames, fov_deg=fov).headings()
    assert sweep.step_yaw_deg[0] == pytest.approx(30.0, abs=1.0)
    assert sweep.step_yaw_deg[1] is None and sweep.headings_deg[2:] == [None, None]
    assert sweep.total_deg is None and "no total: a step is unknown" in repr(sweep)


def test_a_sweep_needs_consecutive_pairs(test_data):
    frames, fov = turning_in_room(test_data, [0.0, 20.0, 40.0], width=200)
    with pytest.raises(ValueError, match="consecutive frames"):
        motion(frames, fov_deg=fov, reference="first").headings()
