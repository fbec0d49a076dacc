"""Clip-level readouts of ``motion`` over a chain of steps: where a pan or tilt reverses, ONE still / turn /
move verdict that compares the consecutive steps with the first-to-last pair (small moves add up: each step's
parallax can stay under the threshold while the larger baseline shows the move), and which motion dominates
the images when the camera both turns and moves (the turn's image motion against the move's, in pixels)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class _Step(Protocol):
    """What the verdicts read of a ``result.CameraStep`` (kept structural: ``result`` imports this module)."""

    frame_a: int
    frame_b: int
    kind: str
    yaw_deg: float | None
    roll_deg: float | None
    pitch_deg: float | None
    parallax_px: float
    translation_words: str | None
    image_motion_px: tuple[float, float]


__all__ = ["DOMINANT", "clip_verdict", "reversals", "turn_dominates"]

# A turn "dominates" when it moves the images this many times more than the move: a 14 deg pan with an 8 cm
# step at 640 px measures 6.5 times, the real Redwood walk (2.4 cm up, 0.7 deg down per step) 1.2 (comparable)
DOMINANT = 2.0


def reversals(steps: Sequence[_Step]) -> list[str]:
    """Where a pan or tilt changes direction along consecutive steps, e.g. "the pan reverses: right through
    step 8->12, left from step 12->16"; empty when every turn over 0.5 deg keeps one sign."""
    out = []
    for axis, attribute, words in (("pan", "yaw_deg", ("right", "left")), ("tilt", "pitch_deg", ("up", "down"))):
        values = [getattr(s, attribute) for s in steps]
        signs = [(i, v > 0) for i, v in enumerate(values) if v is not None and np.isfinite(v) and abs(v) >= 0.5]
        change = next((i for i, sign in signs if sign != signs[0][1]), None) if signs else None
        if change is not None:
            last = max(i for i, sign in signs if i < change and sign == signs[0][1])
            before, after = (words[0], words[1]) if signs[0][1] else (words[1], words[0])
            text = (
                f"the {axis} reverses: {before} through step {steps[last].frame_a}->{steps[last].frame_b}, "
                f"{after} from step {steps[change].frame_a}->{steps[change].frame_b}"
            )
            out.append(text + (" (it turns back in the steps between)" if change > last + 1 else ""))
    return out


def _is_move(step: _Step) -> bool:
    return step.kind == "translation"


def turn_dominates(steps: Sequence[_Step]) -> bool:
    """True when the moving steps' images move clearly more by their turn than by their move: the turn's
    image motion (``image_motion_px[0]``) summed over the "translation" steps exceeds ``DOMINANT`` times the
    move's (``[1]``); False without a moving step with both measured, or when the two are comparable."""
    pairs = [s.image_motion_px for s in steps if _is_move(s) and all(np.isfinite(s.image_motion_px))]
    return bool(pairs) and sum(turn for turn, _ in pairs) > DOMINANT * sum(move for _, move in pairs)


def _turn(step: _Step) -> str:
    from spatialclaw.primitives.motion.angles import turn_words

    return turn_words(step.yaw_deg, step.pitch_deg, step.roll_deg)


def clip_verdict(steps: Sequence[_Step], span: _Step | None) -> str | None:
    """One still / turn / move verdict for the clip, with the evidence: the consecutive steps' kinds against
    the first-to-last pair (``span``). When they disagree, the larger baseline (the first-to-last pair) is
    preferred and the disagreement is said; a move whose turn moves the images more is said to turn as it
    moves (``turn_dominates``). None without a measured span or a measured step."""
    known = [s for s in steps if s.kind != "unknown"]
    if span is None or span.kind == "unknown" or not known:
        return None
    moving = [f"{s.frame_a}->{s.frame_b}" for s in known if _is_move(s)]
    where = f"{span.frame_a}->{span.frame_b}"
    if _is_move(span):
        way = span.translation_words or "in a direction that cannot be told"
        if turn_dominates([span]):
            way += f" while it {_turn(span)}, the larger motion in the images"
        evidence = f"the first-to-last pair {where} shows parallax {span.parallax_px:.2f} px"
        if len(moving) == len(known):
            return f"clip verdict: the camera MOVES {way} ({evidence}; every step agrees)"
        return (
            f"clip verdict: the camera MOVES {way} ({evidence}), although {len(known) - len(moving)} of "
            f"{len(known)} steps alone show no measurable translation (small moves add up below each step's "
            f"parallax threshold): trust the first-to-last pair, not the per-step turn-or-move labels"
        )
    if span.kind == "static" and not moving:
        still = f"the first-to-last pair {where} shows no measurable turn or move"
        turning = [f"{s.frame_a}->{s.frame_b}" for s in known if s.kind == "rotation"]
        if not turning:
            return f"clip verdict: the camera is STILL ({still}; every step agrees)"
        return f"clip verdict: the camera turns and ends where it started ({still}; steps {', '.join(turning)} turn)"
    evidence = f"the first-to-last pair {where} shows no measurable translation (parallax {span.parallax_px:.2f} px)"
    if not moving:
        return f"clip verdict: the camera only turns ({evidence}; every step agrees)"
    return (
        f"clip verdict: the camera turns without a measurable net move ({evidence}), although steps "
        f"{', '.join(moving)} alone read as moves: those may be noise or moves that cancel out; the larger "
        f"baseline is preferred"
    )
