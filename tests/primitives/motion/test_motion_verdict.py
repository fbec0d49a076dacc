"""The clip verdict and the gates over a clip (``motion.verdict``, ``motion.checks.rate_outliers``), on steps
written by hand (first: fast) and measured from exact virtual cameras over a real Redwood photo: a still camera is "still", an unknown
first-to-last pair gives no verdict, each still / turn / move wording with its evidence, a turn that moves
the images more than the move leads the readout, a low-confidence step far faster than the clip is left out,
and a tracked object that moves exactly with the background is flagged as a possibly lost track."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from spatialclaw.primitives.motion.checks import rate_outliers
from spatialclaw.primitives.motion.estimate import motion
from spatialclaw.primitives.motion.result import CameraStep, Motion
from spatialclaw.primitives.motion.verdict import clip_verdict, reversals, turn_dominates

FOV = 62.7


def _step(
    a: int,
    b: int,
    kind: str,
    yaw: float | None = 0.0,
    pitch: float | None = 0.0,
    parallax: float = 0.4,
    words: str | None = None,
    image: tuple[float, float] = (float("nan"), float("nan")),
) -> CameraStep:
    """A step as ``motion`` reports it, written by hand: the verdicts read only these fields."""
    return CameraStep(
        frame_a=a,
        frame_b=b,
        kind=kind,
        yaw_deg=yaw,
        pitch_deg=pitch,
        roll_deg=0.0,
        rotation_deg=None,
        translation=None,
        translation_words=words,
        zoom=1.0,
        parallax_px=parallax,
        matches=100,
        inliers=90,
        residual_px=0.5,
        confidence=0.8,
        reason="",
        image_motion_px=image,
    )


def test_a_pan_or_tilt_that_changes_sign_is_said_to_reverse_where_it_does():
    right, left = _step(0, 4, "rotation", yaw=2.0), _step(4, 8, "rotation", yaw=2.5)
    back = _step(8, 12, "rotation", yaw=-2.0)
    assert reversals([right, left, back]) == ["the pan reverses: right through step 4->8, left from step 8->12"]
    assert reversals([_step(0, 1, "rotation", yaw=-1.0), _step(1, 2, "rotation", yaw=1.0)]) == [
        "the pan reverses: left through step 0->1, right from step 1->2"
    ]
    # a step under 0.5 deg between them: the last turn the first way is named, and the steps between said
    pause = _step(4, 8, "rotation", yaw=0.3)
    assert reversals([right, pause, back]) == [
        "the pan reverses: right through step 0->4, left from step 8->12 (it turns back in the steps between)"
    ]
    down, up = _step(0, 1, "rotation", pitch=-0.5), _step(1, 2, "rotation", pitch=0.5)  # 0.5 deg counts
    assert reversals([down, up]) == ["the tilt reverses: down through step 0->1, up from step 1->2"]
    assert reversals([_step(0, 1, "rotation", pitch=0.49), _step(1, 2, "rotation", pitch=-3.0)]) == []
    unknown = _step(1, 2, "unknown", yaw=None, pitch=float("nan"))
    assert reversals([right, unknown, _step(2, 3, "rotation", yaw=4.0)]) == []  # unmeasured steps have no sign
    assert reversals([]) == []


def test_a_turn_dominates_when_its_image_motion_summed_over_the_moving_steps_is_over_twice_the_moves():
    first, second = _step(0, 1, "translation", image=(1.0, 1.0)), _step(1, 2, "translation", image=(10.0, 1.0))
    assert not turn_dominates([first]) and turn_dominates([first, second])  # 11 px against 2 x 2 px
    assert not turn_dominates(
        [_step(0, 1, "translation", image=(3.0, 1.0)), _step(1, 2, "translation", image=(3.0, 2.0))]
    )
    assert turn_dominates([_step(0, 1, "translation", image=(3.1, 1.0)), _step(1, 2, "translation", image=(3.0, 2.0))])
    turning = _step(1, 2, "rotation", image=(100.0, 1.0))  # a turning step's image motion is not the move's
    assert not turn_dominates([first, turning])
    assert not turn_dominates([first, dataclasses.replace(turning, kind="unknown")])  # nor an unmeasured step's


def test_each_clip_verdict_over_written_steps():
    move = _step(0, 1, "translation", words="forward")
    turn = _step(1, 2, "rotation", yaw=3.0)
    span = _step(0, 2, "translation", yaw=3.0, parallax=1.234, words="forward", image=(1.0, 1.0))
    assert clip_verdict([move, _step(1, 2, "translation")], span) == (
        "clip verdict: the camera MOVES forward (the first-to-last pair 0->2 shows parallax 1.23 px; every step agrees)"
    )
    assert clip_verdict([move, turn, _step(2, 3, "unknown")], span) == (
        "clip verdict: the camera MOVES forward (the first-to-last pair 0->2 shows parallax 1.23 px), although 1 of "
        "2 steps alone show no measurable translation (small moves add up below each step's parallax threshold): "
        "trust the first-to-last pair, not the per-step turn-or-move labels"
    )
    blind = dataclasses.replace(span, translation_words=None, image_motion_px=(2.1, 1.0))
    assert clip_verdict([move], blind) == (
        "clip verdict: the camera MOVES in a direction that cannot be told while it pans right 3.0 deg, the larger "
        "motion in the images (the first-to-last pair 0->2 shows parallax 1.23 px; every step agrees)"
    )
    turned = _step(0, 2, "rotation", yaw=3.0, parallax=0.456)
    assert clip_verdict([turn, _step(2, 3, "static")], turned) == (
        "clip verdict: the camera only turns (the first-to-last pair 0->2 shows no measurable translation "
        "(parallax 0.46 px); every step agrees)"
    )
    assert clip_verdict([move, turn], turned) == (
        "clip verdict: the camera turns without a measurable net move (the first-to-last pair 0->2 shows no "
        "measurable translation (parallax 0.46 px)), although steps 0->1 alone read as moves: those may be noise "
        "or moves that cancel out; the larger baseline is preferred"
    )
    still = _step(0, 2, "static")
    assert clip_verdict([_step(0, 1, "static"), _step(1, 2, "static")], still) == (
        "clip verdict: the camera is STILL (the first-to-last pair 0->2 shows no measurable turn or move; every "
        "step agrees)"
    )
    assert clip_verdict([_step(0, 1, "static"), turn], still) == (
        "clip verdict: the camera turns and ends where it started (the first-to-last pair 0->2 shows no "
        "measurable turn or move; steps 1->2 turn)"
    )
    assert clip_verdict([move, turn], still) is not None and "although steps 0->1 alone read as moves" in (
        clip_verdict([move, turn], still) or ""
    )


def test_a_long_clip_whose_every_step_moves_agrees_with_its_first_to_last_pair():
    # 300 steps: a 30 s clip sampled at 10 fps; counts past 256 are not cached ints in CPython
    steps = [_step(i, i + 1, "translation", words="forward") for i in range(300)]
    span = _step(0, 300, "translation", parallax=9.5, words="forward", image=(1.0, 1.0))
    assert clip_verdict(steps, span) == (
        "clip verdict: the camera MOVES forward (the first-to-last pair 0->300 shows parallax 9.50 px; every step "
        "agrees)"
    )


def test_no_clip_verdict_without_a_measured_first_to_last_pair_or_a_measured_step():
    # dropping the unknown-pair check made motion say "the camera only turns" over steps that measured a move
    moves = [_step(0, 1, "translation", words="forward"), _step(1, 2, "translation", words="forward")]
    assert clip_verdict(moves, _step(0, 2, "unknown", yaw=None, pitch=None)) is None
    assert clip_verdict(moves, None) is None
    assert clip_verdict([_step(0, 1, "unknown"), _step(1, 2, "unknown")], _step(0, 2, "translation")) is None


@pytest.fixture(scope="module")
def redwood(test_data):
    from tests.virtual_camera import redwood_frame

    return redwood_frame(test_data)


@pytest.fixture(scope="module")
def pan(redwood) -> Motion:
    """A camera panning right 3 deg per frame over 4 frames: 3 rotation steps and a rotation span."""
    from tests.virtual_camera import rotation_ypr, turning_sequence

    rgb, _, K = redwood
    return motion(turning_sequence(rgb, K, [rotation_ypr(3.0 * k) for k in range(4)], width=320), fov_deg=FOV)


@pytest.fixture(scope="module")
def walk(redwood) -> Motion:
    """A camera walking forward and left 5 cm per frame while panning right 2 deg: 2 translation steps."""
    from tests.virtual_camera import rotation_ypr, translating_sequence

    rgb, depth, K = redwood
    centres = [np.array([-0.03, 0.0, 0.05]) * k for k in range(3)]
    frames = translating_sequence(rgb, depth, K, centres, [rotation_ypr(2.0 * k) for k in range(3)], width=320)
    return motion(frames, fov_deg=FOV)


def test_the_fixtures_measure_what_they_render(pan, walk):
    assert pan.kinds == ["rotation"] * 3 and pan.span is not None and pan.span.kind == "rotation"
    assert walk.kinds == ["translation"] * 2 and walk.span is not None and walk.span.kind == "translation"


def test_a_still_camera_is_called_still(redwood):
    from tests.virtual_camera import turning_sequence

    rgb, _, K = redwood
    m = motion(turning_sequence(rgb, K, [np.eye(3)] * 3, width=320), fov_deg=FOV)
    assert m.kinds == ["static", "static"] and m.span is not None and m.span.kind == "static"
    # before: "clip verdict: the camera only turns (...; every step agrees)"
    assert m.readout.startswith("clip verdict: the camera is STILL (the first-to-last pair 0->2 shows no measurable")
    assert "every step agrees" in m.readout and "the camera is still: no measurable camera motion" in m.readout
    assert "turns" not in m.readout.split("; total")[0]


def test_an_unknown_first_to_last_pair_gives_no_verdict(walk):
    span = dataclasses.replace(walk.steps[0], frame_a=0, frame_b=2, kind="unknown", reason="too few matches")
    assert clip_verdict(walk.steps, span) is None
    assert clip_verdict(walk.steps, None) is None
    unknown = Motion(walk.steps, walk.intrinsics, walk.focal_source, span=span)
    assert "clip verdict" not in unknown.readout and "only turns" not in unknown.readout
    assert unknown.readout.startswith("the camera translates") or unknown.readout.startswith("the camera mostly")
    nothing = [dataclasses.replace(s, kind="unknown") for s in walk.steps]
    assert clip_verdict(nothing, walk.span) is None


def test_the_verdict_words_each_case_with_its_evidence(pan, walk):
    moves, turns = walk.steps, pan.steps
    assert walk.span is not None and pan.span is not None
    agree = clip_verdict(moves, dataclasses.replace(walk.span, image_motion_px=(0.0, 1.0)))  # the move dominates
    assert agree is not None and agree.startswith(f"clip verdict: the camera MOVES {walk.span.translation_words} (")
    assert f"the first-to-last pair 0->2 shows parallax {walk.span.parallax_px:.2f} px; every step agrees)" in agree
    mixed = clip_verdict([moves[0], turns[1]], walk.span)
    assert mixed is not None and "although 1 of 2 steps alone show no measurable translation" in mixed
    assert "trust the first-to-last pair" in mixed
    only = clip_verdict(turns, pan.span)
    assert only == (
        "clip verdict: the camera only turns (the first-to-last pair 0->3 shows no measurable translation "
        f"(parallax {pan.span.parallax_px:.2f} px); every step agrees)"
    )
    noisy = clip_verdict([turns[0], moves[1]], pan.span)
    assert noisy is not None and noisy.startswith("clip verdict: the camera turns without a measurable net move")
    assert "although steps 1->2 alone read as moves" in noisy
    still = dataclasses.replace(pan.span, kind="static")
    back = clip_verdict(turns, still)
    assert back == (
        "clip verdict: the camera turns and ends where it started (the first-to-last pair 0->3 shows no "
        "measurable turn or move; steps 0->1, 1->2, 2->3 turn)"
    )
    assert clip_verdict([dataclasses.replace(t, kind="static") for t in turns], still) == (
        "clip verdict: the camera is STILL (the first-to-last pair 0->3 shows no measurable turn or move; every "
        "step agrees)"
    )
    moving_still = clip_verdict(moves, dataclasses.replace(walk.span, kind="static"))
    assert moving_still is not None and "although steps 0->1, 1->2 alone read as moves" in moving_still


def test_a_turn_that_moves_the_images_more_than_the_move_is_said_first(walk):
    span = walk.span
    assert span is not None
    turn_px, move_px = span.image_motion_px
    assert turn_px > 0 and move_px > 0
    turning = dataclasses.replace(span, image_motion_px=(2.1 * move_px, move_px))
    verdict = clip_verdict(walk.steps, turning)
    assert verdict is not None and f"while it pans right {span.yaw_deg:.1f} deg, the larger motion" in verdict
    moving = dataclasses.replace(span, image_motion_px=(move_px, 2.0 * move_px))
    assert "the larger motion" not in (clip_verdict(walk.steps, moving) or "")
    assert turn_dominates([turning]) and not turn_dominates([moving]) and not turn_dominates([])
    assert not turn_dominates([dataclasses.replace(turning, kind="rotation")])  # only moving steps count
    assert not turn_dominates([dataclasses.replace(turning, image_motion_px=(float("nan"), 1.0))])
    comparable = dataclasses.replace(span, image_motion_px=(2.0 * move_px, move_px))  # not clearly larger
    assert not turn_dominates([comparable])


@pytest.mark.slow
def test_a_full_resolution_pan_or_roll_with_a_short_move_leads_with_the_turn(redwood):
    # a 14 deg pan (or a 10 deg roll) with an 8 cm step forward and 5 cm left at 640 px: before, the
    # readout began "the camera translates (forward and left)"
    from tests.virtual_camera import rotation_ypr, translating_sequence

    rgb, depth, K = redwood
    for yaw, roll, words in ((14.0, 0.0, "pans right 14"), (0.0, 10.0, "rolls clockwise 10")):
        frames = translating_sequence(
            rgb, depth, K, [np.zeros(3), np.array([-0.05, 0, 0.08])], [np.eye(3), rotation_ypr(yaw, 0, roll)], width=640
        )
        m = motion(frames, intrinsics=K)
        assert m.kinds == ["translation"], m
        assert m.readout.startswith(f"the camera mostly turns (it {words}"), m.readout
        assert "while it also translates (forward and left)" in m.readout
    still = translating_sequence(rgb, depth, K, [np.zeros(3), np.array([-0.05, 0, 0.08])], width=640)
    assert motion(still, intrinsics=K).readout.startswith("the camera translates (forward and left)")


def test_a_low_confidence_step_far_faster_than_the_clip_is_left_out(pan):
    steps = list(pan.steps)
    wild = dataclasses.replace(steps[1], rotation_deg=137.7, confidence=0.33)  # the field's 137.7 deg "pan"
    flagged = rate_outliers([steps[0], wild, steps[2]])
    assert list(flagged) == [1]
    assert flagged[1].startswith("a turn of 137.7 deg over 1 frame(s) is 46 times the clip's median rate (3.0 deg")
    assert "at confidence 0.33 (< 0.5)" in flagged[1] and "left out of every total" in flagged[1]
    assert rate_outliers([steps[0], dataclasses.replace(wild, confidence=0.5), steps[2]]) == {}  # well supported
    assert rate_outliers([steps[0], wild]) == {}  # one other step is no rate
    assert rate_outliers([steps[0], wild, dataclasses.replace(steps[2], kind="unknown")]) == {}
    slow = dataclasses.replace(wild, rotation_deg=19.9)  # under the 20 deg floor
    assert rate_outliers([steps[0], slow, steps[2]]) == {}
    near = dataclasses.replace(wild, rotation_deg=4.0 * 3.0 * 2 - 0.5, frame_a=1, frame_b=3)  # two frames apart
    assert rate_outliers([steps[0], near, steps[2]]) == {}
    assert list(rate_outliers([steps[0], dataclasses.replace(near, rotation_deg=25.0), steps[2]])) == [1]
    star = [dataclasses.replace(s, frame_a=0) for s in (steps[0], wild, steps[2])]
    assert rate_outliers(star) == {}  # pairs against the first frame are cumulative, not rates


def test_an_object_track_that_moves_with_the_background_is_flagged(redwood):
    # a thin figure the camera follows (it stays in place while the background pans by 14 px per frame);
    # a track that lost it and followed the background reads "no measurable motion": now with a warning
    from spatialclaw.primitives.perception.instances import Instance
    from spatialclaw.primitives.perception.track_result import Track
    from tests.virtual_camera import rotation_ypr, turning_sequence

    rgb, _, K = redwood
    frames = [f.copy() for f in turning_sequence(rgb, K, [rotation_ypr(-3.0 * k) for k in range(3)], width=320)]
    for f in frames:
        f[120:142, 155:159] = (40, 40, 45)
    clean = motion(frames, fov_deg=FOV)
    boxes = []
    for k in range(3):  # where the background under the first box went: the camera's homography
        H = np.eye(3)
        for step in clean.steps[:k]:
            assert step.geometry is not None and step.geometry.homography is not None
            H = step.geometry.homography @ H
        corners = H @ np.array([[150.0, 120.0, 1.0], [164.0, 142.0, 1.0]]).T
        x0, y0, x1, y1 = (corners[:2] / corners[2]).T.ravel()
        boxes.append(Instance("person", 0.9, (x0, y0, x1, y1), frame_index=k))
    lost = motion(frames, fov_deg=FOV, object=Track("person", boxes, "flow", 0))
    for step in lost.steps:
        assert step.object is not None and not step.object.moving and step.object.lost_track
        assert "WARNING: its tracked region moved with the background" in step.object.readout()
    given = motion(frames, fov_deg=FOV, object=[b.box for b in boxes])  # boxes the caller vouches for
    assert all(s.object is not None and not s.object.lost_track for s in given.steps)
    followed = motion(frames, fov_deg=FOV, object=(150, 120, 164, 142))  # the flow track keeps it
    assert all(s.object is not None and s.object.moving and not s.object.lost_track for s in followed.steps)
