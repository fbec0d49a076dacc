"""The heading sweep of a camera turning in place, from a chain of ``motion`` steps (``Motion.headings()``):
the turn about the vertical per step with its uncertainty, the cumulative heading of each frame, and the loop
closure (did the camera come back to its starting heading, after how many full turns).

Headings are degrees about the vertical the steps are measured about (gravity with ``motion(tilt_deg=...)``,
else the vertical the turns fit, else the camera's own vertical axis), > 0 = turned RIGHT (clockwise seen from
above), relative to the first frame. A step's uncertainty (one standard deviation, degrees) combines the
matching noise (1.48 x the median reprojection error over the focal length, per square root of the agreeing
matches; at least ``MIN_SD_DEG``), the turn a translating step can trade against its direction (``CameraStep.turn_spread_deg``) and the
focal length: a turn's angle scales about inversely with it, so a self-calibrated focal length adds half its
plausible range (``Motion.fov_range_deg``) and an ASSUMED field of view a quarter of the angle. The focal part is
one error for the whole clip, so it adds linearly to the total.

Loop closure: for a chain of three or more frames ``motion`` also measures the first-to-last pair directly
(``Motion.span``). The steps' sum and that direct heading must differ by whole turns; what is left is the
closure error, and the number of whole turns says whether the camera completed 360 degrees. Without the direct
pair (the last frame shares no view with the first) only the sum speaks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class _Step(Protocol):
    """What the sweep reads of a ``result.CameraStep`` (structural: ``result`` imports this module)."""

    frame_a: int
    frame_b: int
    kind: str
    yaw_deg: float | None
    residual_px: float
    inliers: int
    turn_spread_deg: float


class _Motion(Protocol):
    """What the sweep reads of a ``result.Motion``."""

    focal_source: str
    tilt_deg: float | None
    fov_range_deg: tuple[float, float] | None

    @property
    def steps(self) -> Sequence[_Step]: ...

    @property
    def span(self) -> _Step | None: ...

    @property
    def intrinsics(self) -> np.ndarray: ...

    @property
    def layout(self) -> str: ...


__all__ = ["ASSUMED_FOCAL_SHARE", "BACK_DEG", "MIN_SD_DEG", "HeadingSweep", "heading_sweep"]

ASSUMED_FOCAL_SHARE = 0.25  # share of an angle an ASSUMED field of view leaves uncertain (one sd)
BACK_DEG = 3.0  # a direct heading within this (or two sd) of the start is "back at the starting heading"
MIN_SD_DEG = 0.1  # a step's least standard deviation: lens distortion and pixel rounding the noise term misses


@dataclass
class HeadingSweep:
    """A camera's heading frame by frame as it turns in place; ``print(sweep)`` reads it out.

    frames: absolute frame indices of the chain. step_yaw_deg / step_sd_deg: each step's turn about the
    vertical (> 0 right) and its standard deviation, None where the step is unknown. headings_deg: cumulative
    heading of each frame relative to the first (0 for the first; None from the first unknown step on).
    total_deg / total_sd_deg: the steps' sum and its standard deviation (None when a step is unknown).
    direct_deg / direct_sd_deg: the last frame's heading measured directly against the first (in (-180, 180];
    None when that pair was not measured). full_turns: whole turns the sum completes (one within two sd of
    360 counts). closure_error_deg: sum - direct, less the nearest whole number of turns. came_back:
    the direct heading is within ``BACK_DEG`` (or two sd) of the start; None without it. about: which vertical
    the headings are about. notes: caveats (translating steps, the focal length)."""

    frames: list[int]
    step_yaw_deg: list[float | None]
    step_sd_deg: list[float | None]
    headings_deg: list[float | None]
    total_deg: float | None
    total_sd_deg: float | None
    direct_deg: float | None
    direct_sd_deg: float | None
    full_turns: int | None
    closure_error_deg: float | None
    came_back: bool | None
    about: str
    notes: list[str]

    def _closure(self) -> str:
        if self.total_deg is None or self.total_sd_deg is None:
            return "no total: a step is unknown, so the loop closure cannot be measured"
        total = f"the steps sum to {self.total_deg:+.1f} +-{self.total_sd_deg:.1f} deg"
        if self.direct_deg is None or self.direct_sd_deg is None or self.closure_error_deg is None:
            turns = abs(self.total_deg) / 360.0
            return (
                f"{total} ({turns:.2f} of a full turn); the last frame could not be measured against the first "
                f"(they share no view, or the clip has two frames), so whether it came back rests on the sum alone"
            )
        turns, way = self.full_turns or 0, "right" if self.total_deg > 0 else "left"
        whole = f"{turns} full turn{'s' if turns != 1 else ''} {way}" if turns else "no full turn (it turned back)"
        rest = abs(self.total_deg) - 360.0 * turns
        back = (
            f"it came BACK to its starting heading after {whole}"
            if self.came_back
            else f"it turned {abs(self.total_deg):.0f} deg {way} in all ({turns} full turns and {rest:.0f} deg) and "
            f"ends {abs(self.direct_deg):.1f} deg {'right' if self.direct_deg > 0 else 'left'} of its starting heading"
        )
        agree = abs(self.closure_error_deg) <= 2 * math.hypot(self.total_sd_deg, self.direct_sd_deg)
        return (
            f"{total}; the last frame measured directly against the first faces {self.direct_deg:+.1f} "
            f"+-{self.direct_sd_deg:.1f} deg: {back}; loop closure error {self.closure_error_deg:+.1f} deg "
            f"({'within' if agree else 'OUTSIDE'} two standard deviations{'' if agree else ': a step is off'})"
        )

    def readout(self) -> str:
        steps = ", ".join(
            f"{a}->{b}: unknown" if yaw is None or sd is None else f"{a}->{b}: {yaw:+.1f} +-{sd:.1f}"
            for a, b, yaw, sd in zip(self.frames, self.frames[1:], self.step_yaw_deg, self.step_sd_deg, strict=False)
        )
        headings = ", ".join(
            f"{frame}: {'unknown' if h is None else f'{h:+.1f}'}"
            for frame, h in zip(self.frames, self.headings_deg, strict=True)
        )
        parts = [
            f"heading sweep about {self.about} (deg, > 0 = right, clockwise seen from above): steps {steps}",
            f"heading of each frame from the first: {headings}",
            self._closure(),
            *self.notes,
        ]
        return "; ".join(parts)

    def __repr__(self) -> str:
        return self.readout()


def _wrap(degrees: float) -> float:
    return (degrees + 180.0) % 360.0 - 180.0


def _focal_share(motion: _Motion) -> tuple[float, str | None]:
    """The focal length's share of an angle's uncertainty (one sd) and a note when it is not given."""
    if motion.focal_source.startswith("ASSUMED"):
        return ASSUMED_FOCAL_SHARE, (
            f"the angles rest on an ASSUMED field of view (their uncertainty includes {100 * ASSUMED_FOCAL_SHARE:.0f} "
            f"% for it): pass fov_deg= to measure them"
        )
    if motion.fov_range_deg is None:
        return 0.0, None
    width = 2.0 * (float(motion.intrinsics[0, 2]) + 0.5)
    focal = float(motion.intrinsics[0, 0])
    ends = [0.5 * width / math.tan(math.radians(fov) / 2.0) for fov in motion.fov_range_deg]
    share = max(abs(focal / end - 1.0) for end in ends) / 2.0
    low, high = motion.fov_range_deg
    return share, f"the focal length is self-calibrated ({low:.0f}-{high:.0f} deg field of view fit alike)"


def _step_sd(step: _Step, focal: float, share: float) -> float:
    assert step.yaw_deg is not None
    noise = math.hypot(MIN_SD_DEG, math.degrees(1.4826 * step.residual_px / focal / math.sqrt(max(step.inliers, 1))))
    return math.sqrt(noise**2 + step.turn_spread_deg**2 + (share * step.yaw_deg) ** 2)


def heading_sweep(motion: _Motion) -> HeadingSweep:
    """The heading sweep of ``motion``'s chain of consecutive steps (see the module doc); raises ValueError for
    pairs that do not form a chain."""
    if motion.layout != "chain":
        raise ValueError(
            "a heading sweep needs consecutive frames (motion(frames) with the default reference='previous')"
        )
    focal = float(motion.intrinsics[0, 0])
    share, focal_note = _focal_share(motion)
    frames = [motion.steps[0].frame_a] + [s.frame_b for s in motion.steps]
    yaws: list[float | None] = []
    sds: list[float | None] = []
    noise_sq, focal_sum = 0.0, 0.0
    for step in motion.steps:
        if step.kind == "unknown" or step.yaw_deg is None:
            yaws.append(None)
            sds.append(None)
            continue
        yaws.append(step.yaw_deg)
        sds.append(_step_sd(step, focal, share))
        noise_sq += _step_sd(step, focal, 0.0) ** 2  # the focal part is one error for the clip: summed below
        focal_sum += share * step.yaw_deg
    headings: list[float | None] = [0.0]
    for yaw in yaws:
        previous = headings[-1]
        headings.append(None if yaw is None or previous is None else previous + yaw)
    known = all(y is not None for y in yaws)
    total = headings[-1] if known else None
    total_sd = math.sqrt(noise_sq + focal_sum**2) if known else None
    span = motion.span
    direct = direct_sd = turns = error = None
    came_back = None
    if span is not None and span.kind != "unknown" and span.yaw_deg is not None:
        direct, direct_sd = _wrap(span.yaw_deg), _step_sd(span, focal, share)
        came_back = abs(direct) <= max(BACK_DEG, 2.0 * direct_sd)
        if total is not None:
            error = total - direct - 360.0 * round((total - direct) / 360.0)
    if total is not None and total_sd is not None:  # a sum within two sd of a whole turn completes it
        turns = int((abs(total) + 2.0 * total_sd) // 360.0)
    if motion.tilt_deg is None:
        about = "the camera's own vertical axis (camera axes; pass tilt_deg= for gravity)"
    else:
        about = f"the vertical of a first camera pitched {motion.tilt_deg:+.0f} deg"
    notes = []
    moving = [f"{s.frame_a}->{s.frame_b}" for s in motion.steps if s.kind == "translation"]
    if moving:
        notes.append(f"steps {', '.join(moving)} also translate: the camera is not exactly turning in place")
    if focal_note:
        notes.append(focal_note)
    return HeadingSweep(
        frames, yaws, sds, headings, total, total_sd, direct, direct_sd, turns, error, came_back, about, notes
    )
