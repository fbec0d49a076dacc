"""Motion result types and their readouts: ``Motion`` (per-pair camera motion), ``CameraStep`` (one pair)
and ``ObjectStep`` (an object's motion relative to the background).

- rotation as yaw / pitch / roll in degrees, of the later camera in the EARLIER camera's frame. Signs:
  yaw > 0 = turns RIGHT, pitch > 0 = tilts UP, roll > 0 = rolls clockwise as the camera sees it (the
  image content turns counter-clockwise). A pan is yaw, a tilt is pitch.
- translation: a direction only (forward / back / left / right / up / down in the earlier camera's frame);
  its length needs depth. Only the words that every motion fitting the matches about as well shares are
  said; when they share none (a sideways move or a turn plus another move, at a small baseline), the
  step says which way cannot be told and lists them (``ways``). ``kind`` says "rotation" (no detectable
  translation), "translation", "static" or "unknown" (with the reason). "No detectable translation" is a
  limit, not a measurement of zero: the readout says how large a move could hide below the parallax
  threshold (``hidden_move``). Without a field of view, a step that is a turn at another one is unknown
  with "turn or move: cannot tell without the field of view" (``turn_or_move``), never a translation.
- zoom: focal-length ratio (> 1 = zooms in), only when no translation is detected.
- confidence in [0, 1]: fraction of matches that agree with the reported motion, discounted below 30
  agreeing matches and when the parallax test was close to its threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from spatialclaw.primitives.motion.angles import level_angles, turn_words, yaw_pitch_roll
from spatialclaw.primitives.motion.focal import TURN_OR_MOVE
from spatialclaw.primitives.motion.headings import HeadingSweep, heading_sweep
from spatialclaw.primitives.motion.pair import PairGeometry
from spatialclaw.primitives.motion.regions import RegionStep
from spatialclaw.primitives.motion.verdict import clip_verdict, reversals, turn_dominates

_ANGLES = ("yaw_deg", "pitch_deg", "roll_deg")

__all__ = ["HIDDEN_FORWARD_FACTOR", "HIDDEN_SIDEWAYS_PX", "CameraStep", "Motion", "ObjectStep", "hidden_move"]

# How far a camera can move before the parallax test sees it, as a fraction of the distance to the nearest
# surfaces: about HIDDEN_SIDEWAYS_PX / focal sideways and HIDDEN_FORWARD_FACTOR times that forward. Measured
# on the real Redwood RGB-D room (nearest surfaces 1.0 m, median 1.9 m) rendered at 200 px (focal 164 px):
# sideways moves of 2 cm and forward moves of 5 cm stayed below the 0.6 px threshold, 3 and 8 cm did not.
HIDDEN_SIDEWAYS_PX = 4.2
HIDDEN_FORWARD_FACTOR = 3.0


def hidden_move(focal_px: float) -> tuple[float, float]:
    """(sideways, forward): the largest camera moves, as fractions of the distance to the nearest surfaces,
    that the parallax test would not see in a room-like scene (depths varying by 2-3x); in a flat scene
    (one wall) no move shows."""
    sideways = HIDDEN_SIDEWAYS_PX / max(float(focal_px), 1e-6)
    return sideways, HIDDEN_FORWARD_FACTOR * sideways


@dataclass
class ObjectStep:
    """An object's motion between two frames, relative to the background (the camera's motion removed).

    image_shift_px: (dx, dy) pixels the object moved in the image beyond what the background there did
        (x right, y down). scale: its size ratio b / a beyond the background's (``scale_reference``: the
        background around it, or the camera's zoom when too few background matches lie near it); > 1 = it
        grew: approaching.
    lateral / vertical / depth_change: motion in units of the object's distance from the camera a:
        lateral = dx / f (> 0 = to the camera's right), vertical = dy / f (> 0 = down), depth_change =
        1 / scale - 1 (> 0 = moves away). direction: words for (lateral, vertical, depth_change).
    moving: the shift or the size change is above what can be measured (``shift_limit_px``, or a size
        change of ``size_limit`` as a ratio); when False, nothing is claimed beyond those limits.
    heading_deg: the object's heading given by the caller (its forward direction on the ground, degrees
        from the camera's forward, > 0 towards the camera's right; 180 = facing the camera), or None.
    own_forward / own_right: the motion in the object's own frame (units of its distance) when the heading
        is known; own_direction: words ("forward", "backward and left", ...). points: the object's area in frame a
        (pixels). size_px: its size (square root of its area, pixels) in frames a and b; image_move_px:
        (dx, dy) pixels its centre moved in the image (the camera's motion included).
    follows: the object moved across the background but kept its place in the image (the camera follows it).
    camera_translates: the camera moved in this step, so "relative to the background" means relative to the
        background around the object (something nearer or farther than it seems to move too).
    label: how the readout names it ("the car" for a Track or Instance labelled "car").
    lost_track: its tracked region moved with the background although the background there moved well over
        the shift limit: either it is still, or the track followed the background (flow tracks of small or
        thin objects do); the readout warns.
    """

    frame_a: int
    frame_b: int
    image_shift_px: tuple[float, float]
    scale: float
    lateral: float
    vertical: float
    depth_change: float
    direction: str
    moving: bool
    points: int
    heading_deg: float | None = None
    own_forward: float | None = None
    own_right: float | None = None
    own_direction: str | None = None
    label: str = "the object"
    size_px: tuple[float, float] = (float("nan"), float("nan"))
    image_move_px: tuple[float, float] = (0.0, 0.0)
    shift_limit_px: float = float("nan")
    size_limit: float = 1.05
    scale_reference: str = "the camera's zoom"
    follows: bool = False
    camera_translates: bool = False
    lost_track: bool = False

    def readout(self) -> str:
        name = self.label
        evidence = (
            f"shift {self.image_shift_px[0]:+.1f}, {self.image_shift_px[1]:+.1f} px beyond the background's, "
            f"size {self.size_px[0]:.0f} -> {self.size_px[1]:.0f} px, x{self.scale:.2f} beyond "
            f"{self.scale_reference}"
        )
        caveat = (
            "; the camera moves, so this is relative to the background around it: something nearer or farther "
            "than that background would seem to move too"
            if self.camera_translates
            else ""
        )
        if not self.moving:
            lost = (
                f"; WARNING: its tracked region moved with the background ({math.hypot(*self.image_move_px):.1f} px "
                f"in the image): either it is still, or the track lost it and followed the background (flow tracks "
                f"of small or thin objects do): look at its box in a few frames, or pass one box per frame"
                if self.lost_track
                else ""
            )
            return (
                f"{name} shows no measurable motion relative to the background ({evidence}; a shift under about "
                f"{self.shift_limit_px:.1f} px or a size change under {100 * (self.size_limit - 1):.0f} % would "
                f"not show){caveat}{lost}"
            )
        text = f"{name} moves {self.direction} relative to the background ({evidence}){caveat}"
        if self.follows:
            own = math.hypot(*self.image_move_px)
            text += f"; it stays near its place in the image (moves {own:.1f} px) because the camera follows it"
        if self.own_direction is not None:
            text += f", i.e. {self.own_direction} in its own heading ({self.heading_deg:g} deg)"
        return text


@dataclass
class CameraStep:
    """The camera's motion from frame ``frame_a`` to frame ``frame_b`` (absolute indices); see the module doc.

    kind: "rotation" | "translation" | "static" | "unknown". yaw_deg / pitch_deg / roll_deg: rotation of
    camera b in camera a's frame (None when unknown). rotation_deg: total rotation angle. translation:
    (3,) unit direction in camera a's frame (x right, y down, z forward) or None; translation_words: e.g.
    "forward and left": only the words that every motion fitting the matches about as well shares (None,
    and translation None, when they share none: ``ways`` then lists them, e.g. "right (no turn)" and
    "forward (pans right 1.2 deg)", and the angles are the best fit's); turn_spread_deg: how far (degrees)
    the turns of those motions lie from the best fit's, said in the readout from 0.5 deg. zoom: focal ratio.
    parallax_px: the parallax statistic (pixels; > threshold means translation). matches / inliers /
    residual_px / confidence / reason: the evidence. image_motion_px: (turn, move) median pixels the agreeing
    matches move by the best pure turn and by what is left (the move); the larger dominates the images.
    With a vertical (``Motion.tilt_deg``) the angles are about it: yaw about gravity, pitch its change.
    """

    frame_a: int
    frame_b: int
    kind: str
    yaw_deg: float | None
    pitch_deg: float | None
    roll_deg: float | None
    rotation_deg: float | None
    translation: np.ndarray | None
    translation_words: str | None
    zoom: float
    parallax_px: float
    matches: int
    inliers: int
    residual_px: float
    confidence: float
    reason: str
    object: ObjectStep | None = None
    geometry: PairGeometry | None = field(default=None, repr=False)
    warnings: list[str] = field(default_factory=list)
    hidden_move: tuple[float, float] | None = None
    ways: list[str] = field(default_factory=list)
    turn_spread_deg: float = 0.0
    image_motion_px: tuple[float, float] = (float("nan"), float("nan"))

    def _limit(self) -> str:
        if self.hidden_move is None:
            return "a small move would not show"
        sideways, forward = self.hidden_move
        return (
            f"a move under about {100 * sideways:.0f} % (sideways) or {100 * forward:.0f} % (forward) of the "
            f"distance to the nearest surfaces would not show, nor any move against one flat wall"
        )

    @property
    def turn_or_move(self) -> bool:
        """Unknown because, without a field of view, a turn and a move past a distant or flat scene fit alike."""
        return self.kind == "unknown" and self.reason.startswith(TURN_OR_MOVE)

    @property
    def status(self) -> str:
        """ "measured" (the numbers passed every plausibility gate) or "unknown" (``reason`` says why)."""
        return "unknown" if self.kind == "unknown" else "measured"

    def readout(self) -> str:
        head = f"frames {self.frame_a}->{self.frame_b}: "
        if self.kind == "unknown":
            return head + (self.reason if self.turn_or_move else f"camera motion unknown ({self.reason})")
        turn = turn_words(self.yaw_deg, self.pitch_deg, self.roll_deg)
        if self.kind == "static":
            text = (
                f"no measurable camera motion (turn {self.rotation_deg or 0.0:.2f} deg, zoom x{self.zoom:.3f}, "
                f"parallax {self.parallax_px:.2f} px: {self._limit()})"
            )
        elif self.kind == "rotation":
            text = f"the camera {turn or 'barely turns'}"
            if abs(self.zoom - 1) > 0.01:
                # Image scale change without parallax: a lens zoom, or a move along the view axis whose
                # parallax the scene's depth range made too small to measure. Say both.
                way = "forward" if self.zoom > 1 else "backward"
                text += (
                    f", zooms {'in' if self.zoom > 1 else 'out'} x{self.zoom:.2f} without measurable parallax "
                    f"(a lens zoom, or the camera moving {way} towards a scene of little depth range)"
                )
                text += f" (parallax {self.parallax_px:.2f} px)"
            else:
                text += f", with no measurable translation (parallax {self.parallax_px:.2f} px: {self._limit()})"
        elif self.translation_words is None:
            text = (
                f"the camera moves, but which way cannot be told: {' or '.join(self.ways)} fit the matches "
                f"alike (parallax {self.parallax_px:.2f} px)"
            )
        else:
            text = f"the camera moves {self.translation_words}" + (
                f" while it {turn}" if turn else " with no turn over 0.5 deg"
            )
            spread = self.turn_spread_deg  # the matches can trade some of the turn against the direction
            text += f" ({f'the turn is uncertain by up to {spread:.1f} deg; ' if spread >= 0.5 else ''}"
            text += f"parallax {self.parallax_px:.2f} px; distance unknown without depth)"
        best = "best fit: " if self.kind == "translation" and self.translation_words is None else ""
        text += (
            f"; {best}yaw {self.yaw_deg:+.1f}, pitch {self.pitch_deg:+.1f}, roll {self.roll_deg:+.1f} deg; "
            f"confidence {self.confidence:.2f} ({self.inliers}/{self.matches} matches agree)"
        )
        for warning in self.warnings:
            text += f"; WARNING: {warning}"
        if self.object is not None:
            text += "; " + self.object.readout()
        return head + text


@dataclass
class Motion:
    """Per-pair camera (and object) motion; ``print(result)`` gives the plain-language readout.

    steps: one ``CameraStep`` per pair. intrinsics: (3, 3) pixels used; focal_source: where the focal
    length came from. ``readout`` summarises (e.g. "the camera pans right about 12 deg per step, with no
    measurable translation in any step") with totals that count measured steps only: for consecutive pairs
    the sum of the steps and the net first-to-last rotation (unknown when a step is), for pairs against the first frame
    the last pair itself (they are already cumulative). ``yaw_deg`` etc.: (P,) arrays over the steps (NaN
    where unknown); ``net()`` the first-to-last rotation; ``orientations()`` chains consecutive steps.
    notes: sentences about the whole call (letterbox bars masked, how the object was followed). span: the
    first-to-last pair of a chain of 3+ frames, read into one clip verdict (``verdict.clip_verdict``).
    tilt_deg: the first camera's pitch (degrees, > 0 up) the angles are measured about gravity from (given,
    or the vertical the turns fit best; ``notes`` says which), or None: camera axes. regions: one
    ``RegionStep`` per pair when ``motion(..., regions=...)`` asked for the image motion per region.
    fov_range_deg: (low, high) horizontal fields of view that fit the turns about as well as the one used, when
    the focal length was self-calibrated (else None). ``headings()``: the heading sweep of a camera turning in
    place, with its loop closure.
    """

    steps: list[CameraStep]
    intrinsics: np.ndarray
    focal_source: str
    notes: list[str] = field(default_factory=list)
    span: CameraStep | None = None
    tilt_deg: float | None = None
    regions: list[RegionStep] = field(default_factory=list)
    fov_range_deg: tuple[float, float] | None = None

    @property
    def yaw_deg(self) -> np.ndarray:
        return np.array([np.nan if s.yaw_deg is None else s.yaw_deg for s in self.steps])

    @property
    def pitch_deg(self) -> np.ndarray:
        return np.array([np.nan if s.pitch_deg is None else s.pitch_deg for s in self.steps])

    @property
    def roll_deg(self) -> np.ndarray:
        return np.array([np.nan if s.roll_deg is None else s.roll_deg for s in self.steps])

    @property
    def kinds(self) -> list[str]:
        return [s.kind for s in self.steps]

    @property
    def layout(self) -> str:
        """ "chain" (each pair starts where the last ended: consecutive frames), "star" (every pair starts at
        the same frame: ``reference="first"``) or "pairs" (anything else)."""
        if len(self.steps) > 1 and all(s.frame_a == self.steps[0].frame_a for s in self.steps):
            return "star"
        if all(s.frame_a == p.frame_b for p, s in zip(self.steps, self.steps[1:], strict=False)):
            return "chain"
        return "pairs"

    def net(self) -> tuple[float, float, float] | None:
        """(yaw, pitch, roll) degrees of the last frame's camera in the first frame's camera frame (same
        signs as the steps), or None when it is not measured: a chain with an unknown step, a star whose
        last pair is unknown, or unrelated pairs."""
        if self.layout == "star":
            last = self.steps[-1]
            return None if last.yaw_deg is None else (last.yaw_deg, last.pitch_deg or 0.0, last.roll_deg or 0.0)
        if self.layout != "chain":
            return None
        final = self.orientations()[-1]
        if not np.isfinite(final).all():
            return None
        return yaw_pitch_roll(final) if self.tilt_deg is None else level_angles(final, self.tilt_deg)

    def _totals(self, known: list[CameraStep]) -> str:
        missing = [f"{s.frame_a}->{s.frame_b}" for s in self.steps if s.kind == "unknown"]
        first, last = self.steps[0].frame_a, self.steps[-1].frame_b
        net = self.net()
        net_text = (
            f"net {first}->{last}: yaw {net[0]:+.1f}, pitch {net[1]:+.1f}, roll {net[2]:+.1f} deg"
            if net is not None
            else f"net {first}->{last} unknown"
        )
        if self.layout == "star":
            return net_text + " (each pair is measured against the first frame, so nothing is summed)"
        if self.layout != "chain":
            return "the pairs do not form a chain, so there is no total"
        yaws = sum(s.yaw_deg or 0.0 for s in known)
        pitches = sum(s.pitch_deg or 0.0 for s in known)
        if missing:
            return (
                f"the {len(known)} measured steps sum to yaw {yaws:+.1f}, pitch {pitches:+.1f} deg, a partial "
                f"total: {net_text} because steps {', '.join(missing)} are unknown"
            )
        return f"total yaw {yaws:+.1f} deg, pitch {pitches:+.1f} deg over {len(known)} steps; {net_text}"

    @property
    def readout(self) -> str:
        known = [s for s in self.steps if s.kind != "unknown"]
        if not known and all(s.turn_or_move for s in self.steps):
            what = "; ".join(dict.fromkeys(s.reason.split("): ", 1)[-1] for s in self.steps))
            return f"{TURN_OR_MOVE} in any step: {what}; focal: {self.focal_source}"
        if not known:
            reasons = "; ".join(dict.fromkeys(s.reason for s in self.steps[:3]))
            return "the camera motion could not be measured: " + reasons
        kinds = {s.kind for s in known}
        parts = []
        star = self.layout == "star"
        reversed_at = self.reversals()
        net = self.net()
        if kinds == {"static"}:
            where = "from the first frame in any pair" if star else "in any step"
            parts.append(
                f"the camera is still: no measurable camera motion {where} (see a step for how large a move could hide)"
            )
        elif kinds <= {"rotation", "static"}:
            turn = turn_words(
                float(np.median([s.yaw_deg for s in known])),
                float(np.median([s.pitch_deg for s in known])),
                float(np.median([s.roll_deg for s in known])),
            )
            net_turn = turn_words(*net) if net is not None else ""
            if star:
                parts.append(
                    f"the camera {net_turn or 'barely turns'} from the first frame to the last, with no measurable "
                    f"translation from the first frame"
                )
            elif reversed_at:
                parts.append(
                    f"the camera {'turns: net ' + net_turn if net_turn else 'ends about where it started'} from the "
                    f"first frame to the last, with no measurable translation in any step; " + "; ".join(reversed_at)
                )
            else:
                parts.append(
                    f"the camera {'turns: it ' + turn + ' per step (median)' if turn else 'barely turns'}, "
                    f"with no measurable translation in any step (see a step for how large a move could hide)"
                )
        elif kinds <= {"translation", "static"}:
            words = sorted({s.translation_words for s in known if s.translation_words})
            unclear = [
                f"{s.frame_a}->{s.frame_b}" for s in known if s.kind == "translation" and not s.translation_words
            ]
            moves = " (" + ", ".join(words) + ")" if words else ""
            if turn_dominates(known):  # a 14 deg pan moves the images more than a short step forward does
                turn = turn_words(*(float(np.median([getattr(s, a) for s in known])) for a in _ANGLES))
                parts.append(
                    f"the camera mostly turns (it {turn or 'turns'} per step, median) while it also translates{moves}: "
                    f"the turn moves the images more than the move does"
                )
            else:
                parts.append("the camera translates" + moves)
            if unclear:
                parts.append(f"which way cannot be told in steps {', '.join(unclear)}")
        else:
            moving = [f"{s.frame_a}->{s.frame_b}" for s in known if s.kind == "translation"]
            parts.append(f"the camera mostly turns but translates in steps {', '.join(moving)}")
        verdict = clip_verdict(self.steps, self.span) if self.layout == "chain" else None
        if verdict is not None:
            parts.insert(0, verdict)
        parts.append(self._totals(known))
        missing = [f"{s.frame_a}->{s.frame_b}" for s in self.steps if s.kind == "unknown" and not s.turn_or_move]
        if missing:
            parts.append(f"unknown (left out of every total) for steps {', '.join(missing)}")
        either = [f"{s.frame_a}->{s.frame_b}" for s in self.steps if s.turn_or_move]
        if either:
            parts.append(f"{TURN_OR_MOVE} for steps {', '.join(either)} (left out of every total; pass fov_deg=)")
        warned = [f"{s.frame_a}->{s.frame_b}" for s in known if s.warnings]
        if warned:
            parts.append(f"WARNINGS for steps {', '.join(warned)} (see each step)")
        parts += self.notes
        parts.append(f"focal: {self.focal_source}")
        return "; ".join(parts)

    def headings(self) -> HeadingSweep:
        """The heading sweep of a camera turning in place (``print(m.headings())``): each step's turn about the
        vertical (degrees, > 0 right = clockwise seen from above) +- its standard deviation, each frame's
        cumulative heading from the first, and the loop closure: the steps' sum against the last frame measured
        directly against the first (whole turns, closure error, whether it came back to its starting heading).
        Needs consecutive frames (the default pairs); pass ``tilt_deg=`` to ``motion`` for headings about gravity.
        Returns ``HeadingSweep`` (``.headings_deg``, ``.total_deg``, ``.full_turns``, ``.came_back``)."""
        return heading_sweep(self)

    def reversals(self) -> list[str]:
        """Where a pan or tilt changes direction along the chain (``verdict.reversals``)."""
        return reversals(self.steps) if self.layout == "chain" else []

    def orientations(self) -> np.ndarray:
        """(P + 1, 3, 3) orientation of each step's later frame in the first frame's camera frame, chaining
        the steps (valid for consecutive pairs); NaN from the first unknown step on."""
        out = [np.eye(3)]
        for step in self.steps:
            R = step.geometry.R_ab if step.kind != "unknown" and step.geometry is not None else None
            out.append(out[-1] @ R if R is not None and np.isfinite(out[-1]).all() else np.full((3, 3), np.nan))
        return np.stack(out)

    def __repr__(self) -> str:
        lines = [
            f"Motion({len(self.steps)} steps; focal {self.intrinsics[0, 0]:.1f} px from {self.focal_source})",
            "  " + self.readout,
        ]
        lines += ["  " + step.readout() for step in self.steps]
        lines += ["  " + step.readout() for step in self.regions]
        return "\n".join(lines)
