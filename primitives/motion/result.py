"""Motion result types and their readouts: ``Motion`` (per-pair camera motion), ``CameraStep`` (one pair)
and ``ObjectStep`` (an object's motion relative to the background).

- rotation as yaw / pitch / roll in degrees, of the later camera in the EARLIER camera's frame. Signs:
  yaw > 0 = turns RIGHT, pitch > 0 = tilts UP, roll > 0 = rolls clockwise as the camera sees it (the
  image content turns counter-clockwise). A pan is yaw, a tilt is pitch.
- translation: a direction only (forward / back / left / right / up / down in the earlier camera's frame);
  its length needs depth. ``kind`` says "rotation" (no detectable translation), "translation", "static"
  or "unknown" (with the reason).
- zoom: focal-length ratio (> 1 = zooms in), only when no translation is detected.
- confidence in [0, 1]: fraction of matches that agree with the reported motion, discounted below 30
  agreeing matches and when the parallax test was close to its threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatialclaw.primitives.motion.angles import turn_words
from spatialclaw.primitives.motion.pair import PairGeometry

__all__ = ["CameraStep", "Motion", "ObjectStep"]


@dataclass
class ObjectStep:
    """An object's motion between two frames, relative to the background (the camera's motion removed).

    image_shift_px: (dx, dy) pixels the object moved in the image beyond what the camera motion explains
        (x right, y down). scale: its size ratio b / a beyond the camera's zoom (> 1 = it grew: approaching).
    lateral / vertical / depth_change: motion in units of the object's distance from the camera a:
        lateral = dx / f (> 0 = to the camera's right), vertical = dy / f (> 0 = down), depth_change =
        1 / scale - 1 (> 0 = moves away). direction: words for (lateral, vertical, depth_change).
    heading_deg: the object's heading given by the caller (its forward direction on the ground, degrees
        from the camera's forward, > 0 towards the camera's right; 180 = facing the camera), or None.
    own_forward / own_right: the motion in the object's own frame (units of its distance) when the heading
        is known; own_direction: words ("forward", "backward and left", ...). points: matches on the object.
    label: how the readout names it ("the car" for a Track or Instance labelled "car").
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

    def readout(self) -> str:
        name = self.label
        if not self.moving:
            return (
                f"{name} does not move relative to the background (shift {self.image_shift_px[0]:+.1f}, "
                f"{self.image_shift_px[1]:+.1f} px, size x{self.scale:.3f})"
            )
        text = (
            f"{name} moves {self.direction} relative to the background (image shift {self.image_shift_px[0]:+.1f}, "
            f"{self.image_shift_px[1]:+.1f} px, size x{self.scale:.3f})"
        )
        if self.own_direction is not None:
            text += f", i.e. {self.own_direction} in its own heading ({self.heading_deg:g} deg)"
        return text


@dataclass
class CameraStep:
    """The camera's motion from frame ``frame_a`` to frame ``frame_b`` (absolute indices); see the module doc.

    kind: "rotation" | "translation" | "static" | "unknown". yaw_deg / pitch_deg / roll_deg: rotation of
    camera b in camera a's frame (None when unknown). rotation_deg: total rotation angle. translation:
    (3,) unit direction in camera a's frame (x right, y down, z forward) or None; translation_words: e.g.
    "forward and left". zoom: focal ratio. parallax_px: the parallax statistic (pixels; > threshold means
    translation). matches / inliers / residual_px / confidence / reason: the evidence.
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

    def readout(self) -> str:
        head = f"frames {self.frame_a}->{self.frame_b}: "
        if self.kind == "unknown":
            return head + f"camera motion unknown ({self.reason})"
        turn = turn_words(self.yaw_deg, self.pitch_deg, self.roll_deg)
        if self.kind == "static":
            text = "the camera does not move (no rotation, zoom or parallax)"
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
                text += f" and does not translate (parallax {self.parallax_px:.2f} px)"
        else:
            text = f"the camera moves {self.translation_words}" + (f" while it {turn}" if turn else " without turning")
            text += f" (parallax {self.parallax_px:.2f} px; distance unknown without depth)"
        text += (
            f"; yaw {self.yaw_deg:+.1f}, pitch {self.pitch_deg:+.1f}, roll {self.roll_deg:+.1f} deg; "
            f"confidence {self.confidence:.2f} ({self.inliers}/{self.matches} matches agree)"
        )
        if self.object is not None:
            text += "; " + self.object.readout()
        return head + text


@dataclass
class Motion:
    """Per-pair camera (and object) motion; ``print(result)`` gives the plain-language readout.

    steps: one ``CameraStep`` per pair. intrinsics: (3, 3) pixels used; focal_source: where the focal
    length came from. ``readout`` summarises (e.g. "the camera pans right about 12 deg per step and does
    not translate"). ``yaw_deg`` etc.: (P,) arrays over the steps (NaN where unknown); ``orientations()``
    chains rotation steps into each frame's orientation in the first frame's camera frame.
    """

    steps: list[CameraStep]
    intrinsics: np.ndarray
    focal_source: str

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
    def readout(self) -> str:
        known = [s for s in self.steps if s.kind != "unknown"]
        if not known:
            return "the camera motion could not be measured: " + "; ".join(s.reason for s in self.steps[:3])
        kinds = {s.kind for s in known}
        yaws = np.array([s.yaw_deg for s in known])
        pitches = np.array([s.pitch_deg for s in known])
        parts = []
        if kinds <= {"rotation", "static"}:
            turn = turn_words(
                float(np.median(yaws)), float(np.median(pitches)), float(np.median([s.roll_deg for s in known]))
            )
            parts.append(
                f"the camera {'turns: it ' + turn + ' per step (median)' if turn else 'barely turns'} "
                f"and does not translate"
            )
        elif kinds == {"translation"} or kinds <= {"translation", "static"}:
            words = sorted({s.translation_words for s in known if s.translation_words})
            parts.append(f"the camera translates ({', '.join(words)})")
        else:
            moving = [f"{s.frame_a}->{s.frame_b}" for s in known if s.kind == "translation"]
            parts.append(f"the camera mostly turns but translates in steps {', '.join(moving)}")
        parts.append(
            f"total yaw {np.nansum(yaws):+.1f} deg, pitch {np.nansum(pitches):+.1f} deg over {len(known)} "
            f"measured steps"
        )
        missing = [f"{s.frame_a}->{s.frame_b}" for s in self.steps if s.kind == "unknown"]
        if missing:
            parts.append(f"unknown for steps {', '.join(missing)}")
        parts.append(f"focal: {self.focal_source}")
        return "; ".join(parts)

    def orientations(self) -> np.ndarray:
        """(P + 1, 3, 3) orientation of each step's later frame in the first frame's camera frame, chaining
        the steps (valid for consecutive pairs); NaN from the first unknown step on."""
        out = [np.eye(3)]
        for step in self.steps:
            R = step.geometry.R_ab if step.geometry is not None and step.geometry.R_ab is not None else None
            out.append(out[-1] @ R if R is not None and np.isfinite(out[-1]).all() else np.full((3, 3), np.nan))
        return np.stack(out)

    def __repr__(self) -> str:
        lines = [
            f"Motion({len(self.steps)} steps; focal {self.intrinsics[0, 0]:.1f} px from {self.focal_source})",
            "  " + self.readout,
        ]
        lines += ["  " + step.readout() for step in self.steps]
        return "\n".join(lines)
