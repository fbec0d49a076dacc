"""The orbit readout of a reconstruction (``rec.orbit()``): how far a camera travels around what it looks at.

For the registered frames in input order it reads: the angle between consecutive viewing directions and
between the first and the last; the angle the camera centre sweeps around the scene's centre (the point the
optical axes pass closest to), about the orbit's axis, summed step by step (so it can exceed 180 degrees);
the direction of travel in each camera's own frame (left / right: the displacement along its x axis) and the
way it turns; the way round in the words questions use (clockwise / counterclockwise seen from above); each with a stated uncertainty, the unregistered frames that steps skip over, and, when the
first or last frames are unregistered, an extrapolation at the measured rate, labelled as such.

Angles are measurements only when the focal length is (``FocalReport.measured``); otherwise the readout says
so and gives the angle at other fields of view. Conventions: poses camera-to-world, OpenCV camera axes (x
right, y down, z forward); the viewing direction is the camera's z axis; degrees.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from spatialclaw.primitives.reconstruction import orbit_geometry as geo
from spatialclaw.primitives.reconstruction.covariance import stated_uncertainty_deg
from spatialclaw.primitives.reconstruction.focal import FocalReport

__all__ = ["Orbit", "OrbitStep", "orbit_readout"]

SWEEP_RATIO = 0.5  # viewing directions turning less than this share of the swept angle: suspect poses
TWO_VIEW_NARROW_HFOV_DEG = 15.0  # two views of a narrower view fix the rotation angle poorly (nearly parallel rays)


@dataclass
class OrbitStep:
    """One step between consecutive registered frames (absolute indices ``frame_a`` -> ``frame_b``).

    view_angle_deg: angle between the two viewing directions; uncertainty_deg: its stated uncertainty (NaN:
    none stated); swept_deg: the angle the camera centre turned around the orbit axis, signed (+ counter-
    clockwise seen from the axis' tip, "above"; NaN without a centre); travel: "right" / "left" (sideways in
    camera a's frame), "forward" / "back" / "up" / "down" (mostly along another axis) or "none" (the centre
    did not move); turn: "left" / "right" / "none" (which way the viewing direction turned, in camera a's
    frame); skipped: unregistered frames between the two; measured: False when the angle rests on an assumed
    focal length."""

    frame_a: int
    frame_b: int
    view_angle_deg: float
    uncertainty_deg: float
    swept_deg: float
    travel: str
    turn: str
    skipped: list[int]
    measured: bool

    def __str__(self) -> str:
        text = f"frames {self.frame_a}->{self.frame_b}: view turns {_pm(self.view_angle_deg, self.uncertainty_deg)}"
        if math.isfinite(self.swept_deg):
            text += f", sweeps {abs(self.swept_deg):.1f} deg around the centre"
        text += f", travels {self.travel}, turns {self.turn}"
        if self.skipped:
            text += f" (skips unregistered frames {self.skipped}: measured directly between the two)"
        return text + ("" if self.measured else " [NOT MEASURED: assumed focal length]")


@dataclass
class Orbit:
    """How a camera moved around the scene, from a ``Reconstruction`` (see the module doc; degrees).

    Attributes:
        frames: absolute indices of all input frames; unregistered: those without a pose.
        from_first_deg: per input frame, the angle between its viewing direction and the first registered
            frame's (NaN where unregistered).
        steps: ``OrbitStep`` per pair of consecutive registered frames.
        first, last: the first and last registered frames; first_to_last_deg (+- first_to_last_uncertainty_deg):
            the angle between their viewing directions.
        swept_deg (+- swept_uncertainty_deg): the angle swept around the centre from first to last, the
            signed steps summed, as a magnitude (can exceed 180); NaN when the camera did not move.
        travel: overall direction in the first camera's frame: "right", "left", "mixed" (steps disagree),
            "none" (the camera only turned) or "forward" / "back" / "up" / "down".
        direction: the way round the centre, "clockwise seen from above" or "counterclockwise seen from
            above" ("above": the side the cameras' up points to; travelling right while looking at the centre is
            counterclockwise), or why it cannot be told (no orbit, steps that disagree, a sweep within its
            uncertainty or under 5 deg).
        centre: (3,) world point the optical axes pass closest to (None when they are parallel); axis: (3,)
            unit orbit axis in world coordinates, oriented to the cameras' up.
        measured: False when the angles rest on an assumed focal length; focal: where it came from.
        alternatives: for an unmeasured focal, {horizontal field of view (deg): first-to-last angle (deg)}.
        extrapolated_first_to_last_deg, extrapolated_swept_deg, extrapolated_uncertainty_deg: when the first
            or last input frames are unregistered, the angles if the camera kept turning at its measured rate
            per key frame over them: an EXTRAPOLATION, not a measurement (None otherwise).
        notes: plain-language remarks.
    """

    frames: list[int]
    unregistered: list[int]
    from_first_deg: list[float]
    steps: list[OrbitStep]
    first: int
    last: int
    first_to_last_deg: float
    first_to_last_uncertainty_deg: float
    swept_deg: float
    swept_uncertainty_deg: float
    travel: str
    centre: np.ndarray | None
    axis: np.ndarray
    measured: bool
    focal: str
    alternatives: dict[float, float] = field(default_factory=dict)
    extrapolated_first_to_last_deg: float | None = None
    extrapolated_swept_deg: float | None = None
    extrapolated_uncertainty_deg: float | None = None
    notes: list[str] = field(default_factory=list)
    direction: str = "cannot be told: no orbit"

    def __str__(self) -> str:
        flag = "" if self.measured else " [NOT MEASURED: it rests on an assumed focal length; see other fields of view]"
        lines = [
            f"Orbit over frames {self.frames} (registered: {self.first}..{self.last}"
            + (f", unregistered {self.unregistered}" if self.unregistered else "")
            + ")",
            f"  first-to-last viewing directions (frames {self.first}->{self.last}): "
            f"{_pm(self.first_to_last_deg, self.first_to_last_uncertainty_deg)}{flag}",
        ]
        if math.isfinite(self.swept_deg):
            lines.append(
                f"  swept around the centre: {_pm(self.swept_deg, self.swept_uncertainty_deg)} (steps summed){flag}"
            )
        lines.append(f"  travel (first camera's frame): {self.travel}; around the centre: {self.direction}")
        lines.append(
            "  from the first viewing direction, per frame: "
            + ", ".join(
                f"{i}: {a:.1f}" if math.isfinite(a) else f"{i}: -"
                for i, a in zip(self.frames, self.from_first_deg, strict=True)
            )
        )
        if self.alternatives:
            lines.append(
                "  first-to-last at other fields of view: "
                + ", ".join(f"hfov {h:g} deg -> {a:.1f} deg" for h, a in sorted(self.alternatives.items()))
            )
        if self.extrapolated_first_to_last_deg is not None:
            swept = self.extrapolated_swept_deg
            lines.append(
                f"  EXTRAPOLATED over unregistered end frames at the measured rate (not a measurement): "
                f"first-to-last ~{self.extrapolated_first_to_last_deg:.1f}"
                + (f", swept ~{swept:.1f}" if swept is not None else "")
                + f" +- {self.extrapolated_uncertainty_deg:.1f} deg"
            )
        lines += [f"  {step}" for step in self.steps]
        lines.append(f"  {self.focal}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def _pm(value: float, uncertainty: float) -> str:
    return (
        f"{value:.1f} +- {uncertainty:.1f} deg"
        if math.isfinite(uncertainty)
        else f"{value:.1f} deg (no uncertainty stated)"
    )


def _uncertainty(method: str, angle: float, sd: float, focal: FocalReport, points: int) -> float:
    """The stated uncertainty (degrees) of an angle between two viewing directions, by method."""
    if method == "sfm":
        return stated_uncertainty_deg(angle, sd)
    if method == "two-view":
        # essential-matrix poses of the temple pairs at 224 px: errors up to 12 deg with 19 points
        narrow = np.nanmin(focal.hfov_deg) < TWO_VIEW_NARROW_HFOV_DEG
        return max(angle, 5.0) if narrow else 1.0 + 0.1 * angle + 150.0 / max(points, 1)
    if method in ("rgbd", "rotation"):
        return 0.5 + 0.03 * angle
    return math.nan  # a learned model states none


def orbit_readout(
    poses: np.ndarray,
    registered: np.ndarray,
    frame_indices: np.ndarray,
    method: str,
    focal: FocalReport,
    rotation_sd_deg: np.ndarray | None = None,
    inliers: list[int] | None = None,
) -> Orbit:
    """The ``Orbit`` of the registered camera ``poses`` (N, 4, 4, camera-to-world) reconstructed by
    ``method`` with focal lengths ``focal``; ``rotation_sd_deg`` (N, N) from SfM's covariance; ``inliers``:
    per frame, the points supporting its pose."""
    rows = [int(i) for i in np.flatnonzero(registered)]
    indices = [int(i) for i in frame_indices]
    if len(rows) < 2:
        raise ValueError(
            f"orbit() needs two registered frames; registered: {[indices[i] for i in rows]} of {indices} "
            f"(see rec.frame_status for why the others failed)"
        )
    sd = rotation_sd_deg if rotation_sd_deg is not None else np.full((len(indices),) * 2, np.nan)
    support = inliers or [0] * len(indices)
    views = poses[:, :3, 2]
    centres = poses[rows][:, :3, 3]
    scale = float(np.linalg.norm(np.ptp(centres, axis=0))) if len(centres) else 0.0
    moved = method != "rotation" and scale > 1e-9
    point = geo.fixation(centres, views[rows]) if moved else None
    ups = -poses[rows][:, :3, 1]
    axis = (
        geo.orbit_axis(centres, point, ups)
        if point is not None
        else ups.mean(axis=0) / np.linalg.norm(ups.mean(axis=0))
    )
    measured = focal.measured

    def uncertainty(a: int, b: int, angle: float, sd_deg: float | None = None) -> float:
        if not measured:  # the focal length, not the matches, decides this angle: see ``alternatives``
            return math.nan
        points = min(support[a], support[b]) or max(support[a], support[b])  # the reference frame counts none
        return _uncertainty(method, angle, float(sd[a, b]) if sd_deg is None else sd_deg, focal, points)

    steps: list[OrbitStep] = []
    for a, b in itertools.pairwise(rows):
        angle = geo.angle(views[a], views[b])
        swept = math.nan
        if point is not None:
            ra, rb = poses[a][:3, 3] - point, poses[b][:3, 3] - point
            swept = geo.signed_angle(ra - (ra @ axis) * axis, rb - (rb @ axis) * axis, axis)
        travel = geo.travel(poses[a], poses[b], scale) if method != "rotation" else "none"
        skipped = [indices[k] for k in range(a + 1, b)]
        steps.append(
            OrbitStep(
                indices[a],
                indices[b],
                angle,
                uncertainty(a, b, angle),
                swept,
                travel,
                geo.turn(poses[a], poses[b]),
                skipped,
                measured,
            )
        )
    first, last = rows[0], rows[-1]
    first_to_last = geo.angle(views[first], views[last])
    swept_steps = [s.swept_deg for s in steps]
    swept = abs(sum(swept_steps)) if point is not None else math.nan
    step_sds = [float(sd[a, b]) for a, b in itertools.pairwise(rows)]
    swept_sd = math.sqrt(sum(v**2 for v in step_sds)) if all(math.isfinite(v) for v in step_sds) else math.nan
    orbit = Orbit(
        frames=indices,
        unregistered=[indices[i] for i in range(len(indices)) if not registered[i]],
        from_first_deg=[geo.angle(views[first], views[i]) if registered[i] else math.nan for i in range(len(indices))],
        steps=steps,
        first=indices[first],
        last=indices[last],
        first_to_last_deg=first_to_last,
        first_to_last_uncertainty_deg=uncertainty(first, last, first_to_last),
        swept_deg=swept,
        swept_uncertainty_deg=uncertainty(first, last, swept, swept_sd) if point is not None else math.nan,
        travel=_overall_travel(steps, poses[first], poses[last], scale, method),
        centre=point,
        axis=axis,
        measured=measured,
        focal=str(focal),
    )
    _explain(orbit, steps, point, method, rows, len(indices), swept_steps, (views[first], views[last]))
    orbit.direction = _direction(swept_steps, orbit.swept_uncertainty_deg) if point is not None else orbit.direction
    if not measured and focal.alternatives:
        orbit.alternatives = {
            h: geo.angle(alt[first][:3, 2], alt[last][:3, 2])
            for h, alt in focal.alternatives.items()
            if np.isfinite(alt[first]).all() and np.isfinite(alt[last]).all()
        }
    return orbit


def _overall_travel(
    steps: list[OrbitStep], pose_first: np.ndarray, pose_last: np.ndarray, scale: float, method: str
) -> str:
    if method == "rotation":
        return "none"
    sideways = {s.travel for s in steps} & {"left", "right"}
    overall = geo.travel(pose_first, pose_last, scale)
    if len(sideways) > 1:
        return f"mixed (steps go both ways; first to last: {overall})"
    return overall


def _direction(swept_steps: list[float], uncertainty_deg: float) -> str:
    """The way round the orbit axis (oriented to the cameras' up) in plain words: "counterclockwise seen from
    above" for a positive signed sweep, "clockwise seen from above" for a negative one; why not, when steps
    over 2 deg disagree in sign or the summed sweep is within max(its uncertainty, 5 deg) of zero."""
    signs = {step > 0 for step in swept_steps if math.isfinite(step) and abs(step) > 2.0}
    if len(signs) > 1:
        return "cannot be told: the steps go both ways round"
    total = sum(step for step in swept_steps if math.isfinite(step))
    bound = max(uncertainty_deg, 5.0) if math.isfinite(uncertainty_deg) else 5.0
    if abs(total) <= bound:
        return f"cannot be told: the sweep ({total:+.1f} deg) is within {bound:.1f} deg of none"
    return f"{'counterclockwise' if total > 0 else 'clockwise'} seen from above"


def _disagree(view: float, swept: float) -> bool:
    """Cameras that keep one point in view turn by at most the angle they sweep around it, and by at least
    ``SWEEP_RATIO`` of it unless they look down more steeply than 60 degrees: outside that, suspect poses."""
    return math.isfinite(swept) and swept > 5.0 and (view < SWEEP_RATIO * swept or view > 1.1 * swept + 5.0)


def _explain(
    orbit: Orbit,
    steps: list[OrbitStep],
    point: np.ndarray | None,
    method: str,
    rows: list[int],
    count: int,
    swept_steps: list[float],
    ends: tuple[np.ndarray, np.ndarray],
) -> None:
    """Notes, and the extrapolation over unregistered frames at either end (``ends``: the first and last
    registered viewing directions)."""
    if method == "rotation":
        orbit.notes.append("the camera only turned (no travel): there is no orbit, only viewing-direction angles")
    elif point is None:
        orbit.notes.append("the optical axes are (nearly) parallel: the camera does not circle one point")
    if method == "learned":
        orbit.notes.append("a learned model states no uncertainty; reconstruct(..., cross_check=True) compares it")
    view, swept = orbit.first_to_last_deg, orbit.swept_deg
    if _disagree(view, swept):
        orbit.notes.append(
            f"SUSPECT: the viewing directions turn {view:.1f} deg but the camera centres sweep {swept:.1f} deg "
            f"around the point they look at; one of them (or the whole reconstruction) is wrong, so the stated "
            f"uncertainties are widened to the difference"
        )
        gap = abs(swept - view)
        orbit.first_to_last_uncertainty_deg = max(orbit.first_to_last_uncertainty_deg, gap)
        orbit.swept_uncertainty_deg = max(orbit.swept_uncertainty_deg, gap)
    orbiting = [s for s in steps if {s.travel, s.turn} == {"left", "right"}]  # travel one way, turn the other
    for step in steps:
        if _disagree(step.view_angle_deg, abs(step.swept_deg)):
            step.uncertainty_deg = max(step.uncertainty_deg, abs(abs(step.swept_deg) - step.view_angle_deg))
        if len(orbiting) > len(steps) / 2 and step.travel == step.turn:  # turned away from what the rest circle
            step.uncertainty_deg = max(step.uncertainty_deg, step.view_angle_deg)
            orbit.notes.append(
                f"SUSPECT step {step.frame_a}->{step.frame_b}: it travels {step.travel} and turns {step.turn}, away "
                f"from the point the other steps circle; its uncertainty is widened to its whole angle"
            )
    turns = {s.turn for s in steps}
    travels = {s.travel for s in steps}
    if point is not None and len(turns) == 1 and len(travels) == 1 and {*turns, *travels} == {"left", "right"}:
        orbit.notes.append(
            f"every step travels {steps[0].travel} while turning {steps[0].turn}: an orbit that keeps the object in view"
        )
    _extrapolate(orbit, steps, rows, count, swept_steps, ends)


def _extrapolate(
    orbit: Orbit,
    steps: list[OrbitStep],
    rows: list[int],
    count: int,
    swept_steps: list[float],
    ends: tuple[np.ndarray, np.ndarray],
) -> None:
    """Where the first or last input frames are unregistered: the angles if the camera kept its measured rate
    per key frame over them. With an orbit axis the end viewing directions are turned about it (so the angle
    between them folds past 180 degrees as it must); without one the angle grows linearly (at most 180)."""
    before, after = rows[0], count - 1 - rows[-1]
    if not before + after or not steps:
        return
    spans = [rows[k + 1] - rows[k] for k in range(len(rows) - 1)]
    rates = np.array([s.view_angle_deg / n for s, n in zip(steps, spans, strict=True)])
    spread = max(float(np.std(rates)), 0.15 * float(np.mean(rates)))
    if math.isfinite(orbit.swept_deg):
        sweep_rate = sum(swept_steps) / sum(spans)  # signed, about orbit.axis
        first = geo.rotate(ends[0], orbit.axis, -before * sweep_rate)
        last = geo.rotate(ends[1], orbit.axis, after * sweep_rate)
        orbit.extrapolated_first_to_last_deg = geo.angle(first, last)
        orbit.extrapolated_swept_deg = orbit.swept_deg + (before + after) * abs(sweep_rate)
    else:
        orbit.extrapolated_first_to_last_deg = min(
            180.0, orbit.first_to_last_deg + (before + after) * float(np.mean(rates))
        )
    orbit.extrapolated_uncertainty_deg = orbit.first_to_last_uncertainty_deg + (before + after) * spread
    orbit.notes.append(
        f"frames {orbit.unregistered} are unregistered; {before + after} step(s) at the ends are not measured (no "
        f"shared features: the view changed too much, or too little texture); the first-to-last angle above is "
        f"between frames {orbit.first} and {orbit.last}"
    )
