"""Camera ego-motion and object motion between frames: ``motion(frames)``.

Use ``motion`` for "how does the camera move / turn / does it pan or walk / does the object move" questions
on a few frames: it works on small frames (150-250 px), reports per pair what it measured with its evidence,
and never needs the scene to be static beyond a majority of background. Use ``reconstruct`` when you need
3D points, camera positions in a common world frame or metric distances.

Per pair of frames (consecutive by default) it fits both a rotation-only model and an essential matrix to
SIFT matches and applies a parallax test (``pair_motion``): a turning or zooming camera moves all points by
one homography; a translating one moves near points more than far ones. Results:

- rotation as yaw / pitch / roll in degrees, of the later camera in the EARLIER camera's frame. Signs:
  yaw > 0 = turns RIGHT, pitch > 0 = tilts UP, roll > 0 = rolls clockwise as the camera sees it (the
  image content turns counter-clockwise). A pan is yaw, a tilt is pitch.
- translation: a direction only (forward / back / left / right / up / down in the earlier camera's frame);
  its length needs depth. ``kind`` says "rotation" (no detectable translation), "translation", "static"
  or "unknown" (with the reason).
- zoom: focal-length ratio (> 1 = zooms in), only when no translation is detected.
- confidence in [0, 1]: fraction of matches that agree with the reported motion, discounted below 30
  agreeing matches and when the parallax test was close to its threshold.

Angles need a focal length: ``intrinsics=`` (3, 3) pixels, else ``fov_deg=`` (horizontal field of view),
else EXIF, else it is estimated from the rotation itself when the camera turns enough (self-calibration),
else a 60 degree field of view is ASSUMED; ``result.focal_source`` says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from spatialclaw.primitives.motion.features import feature_scale, matched_keypoints, sift_features
from spatialclaw.primitives.geometry.focal_prior import prior_intrinsics
from spatialclaw.primitives.motion.pair import INLIER_PX, PairGeometry, estimate_pair, fit_rotation

__all__ = ["CameraStep", "ObjectStep", "Motion", "motion", "yaw_pitch_roll", "MAX_MOTION_FRAMES"]

MAX_MOTION_FRAMES = 64
_AXIS_WORDS = (("right", "left"), ("down", "up"), ("forward", "back"))


def yaw_pitch_roll(R_ab: np.ndarray) -> tuple[float, float, float]:
    """(yaw, pitch, roll) degrees of orientation ``R_ab`` (camera b in camera a's frame, OpenCV axes) with
    R_ab = Ry(yaw) Rx(pitch) Rz(roll): yaw > 0 turns right, pitch > 0 tilts up, roll > 0 clockwise."""
    yaw = math.degrees(math.atan2(R_ab[0, 2], R_ab[2, 2]))
    pitch = math.degrees(math.asin(float(np.clip(-R_ab[1, 2], -1.0, 1.0))))
    roll = math.degrees(math.atan2(R_ab[1, 0], R_ab[1, 1]))
    return yaw, pitch, roll


def direction_words(vector: np.ndarray, threshold: float = 0.35) -> str:
    """Plain words for a direction in camera axes (x right, y down, z forward): the components larger than
    ``threshold`` of its length, biggest first, e.g. "forward and left"."""
    unit = np.asarray(vector, float) / max(float(np.linalg.norm(vector)), 1e-12)
    order = np.argsort(-np.abs(unit))
    words = [_AXIS_WORDS[axis][0 if unit[axis] > 0 else 1] for axis in order if abs(unit[axis]) >= threshold]
    return " and ".join(words) if words else "nowhere in particular"


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
            return (f"{name} does not move relative to the background (shift {self.image_shift_px[0]:+.1f}, "
                    f"{self.image_shift_px[1]:+.1f} px, size x{self.scale:.3f})")
        text = (f"{name} moves {self.direction} relative to the background (image shift {self.image_shift_px[0]:+.1f}, "
                f"{self.image_shift_px[1]:+.1f} px, size x{self.scale:.3f})")
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
        turn = _turn_words(self.yaw_deg, self.pitch_deg, self.roll_deg)
        if self.kind == "static":
            text = "the camera does not move (no rotation, zoom or parallax)"
        elif self.kind == "rotation":
            text = f"the camera {turn or 'barely turns'}"
            if abs(self.zoom - 1) > 0.01:
                # Image scale change without parallax: a lens zoom, or a move along the view axis whose
                # parallax the scene's depth range made too small to measure. Say both.
                way = "forward" if self.zoom > 1 else "backward"
                text += (f", zooms {'in' if self.zoom > 1 else 'out'} x{self.zoom:.2f} without measurable parallax "
                         f"(a lens zoom, or the camera moving {way} towards a scene of little depth range)")
                text += f" (parallax {self.parallax_px:.2f} px)"
            else:
                text += f" and does not translate (parallax {self.parallax_px:.2f} px)"
        else:
            text = f"the camera moves {self.translation_words}" + (f" while it {turn}" if turn else " without turning")
            text += f" (parallax {self.parallax_px:.2f} px; distance unknown without depth)"
        text += f"; yaw {self.yaw_deg:+.1f}, pitch {self.pitch_deg:+.1f}, roll {self.roll_deg:+.1f} deg; " \
                f"confidence {self.confidence:.2f} ({self.inliers}/{self.matches} matches agree)"
        if self.object is not None:
            text += "; " + self.object.readout()
        return head + text


def _turn_words(yaw: float | None, pitch: float | None, roll: float | None, minimum: float = 0.5) -> str:
    if yaw is None:
        return ""
    parts = []
    if abs(yaw) >= minimum:
        parts.append(f"pans {'right' if yaw > 0 else 'left'} {abs(yaw):.1f} deg")
    if abs(pitch) >= minimum:
        parts.append(f"tilts {'up' if pitch > 0 else 'down'} {abs(pitch):.1f} deg")
    if abs(roll) >= minimum:
        parts.append(f"rolls {'clockwise' if roll > 0 else 'counter-clockwise'} {abs(roll):.1f} deg")
    return ", ".join(parts)


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
            turn = _turn_words(float(np.median(yaws)), float(np.median(pitches)),
                               float(np.median([s.roll_deg for s in known])))
            parts.append(f"the camera {'turns: it ' + turn + ' per step (median)' if turn else 'barely turns'} "
                         f"and does not translate")
        elif kinds == {"translation"} or kinds <= {"translation", "static"}:
            words = sorted({s.translation_words for s in known if s.translation_words})
            parts.append(f"the camera translates ({', '.join(words)})")
        else:
            moving = [f"{s.frame_a}->{s.frame_b}" for s in known if s.kind == "translation"]
            parts.append(f"the camera mostly turns but translates in steps {', '.join(moving)}")
        parts.append(f"total yaw {np.nansum(yaws):+.1f} deg, pitch {np.nansum(pitches):+.1f} deg over {len(known)} "
                     f"measured steps")
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
        lines = [f"Motion({len(self.steps)} steps; focal {self.intrinsics[0, 0]:.1f} px from {self.focal_source})",
                 "  " + self.readout]
        lines += ["  " + step.readout() for step in self.steps]
        return "\n".join(lines)


# ---- inputs ----------------------------------------------------------------------------------------------


def _frames(frames: Any) -> tuple[list[np.ndarray], list[int], list[Any]]:
    from spatialclaw.primitives.perception.inputs import frame_array, frame_index

    if isinstance(frames, np.ndarray) and frames.ndim == 3:
        raise ValueError("motion needs at least two frames, got one image; pass frames, frames[a:b] or [img_a, img_b]")
    items = list(frames)
    if len(items) < 2:
        raise ValueError(f"motion needs at least two frames, got {len(items)}")
    if len(items) > MAX_MOTION_FRAMES:
        raise ValueError(f"motion takes at most {MAX_MOTION_FRAMES} frames, got {len(items)}; subsample, e.g. "
                         f"frames[::{-(-len(items) // 16)}] or frames.sample(count=16)")
    arrays = [frame_array(item) for item in items]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(f"all frames must have the same size; got {sorted({a.shape[:2] for a in arrays})} (H, W)")
    return arrays, [frame_index(item, i) for i, item in enumerate(items)], items


def _pairs(pairs: Any, count: int, reference: str) -> list[tuple[int, int]]:
    if pairs is None:
        if reference == "previous":
            return [(i, i + 1) for i in range(count - 1)]
        if reference == "first":
            return [(0, i) for i in range(1, count)]
        raise ValueError(f"reference must be 'previous' or 'first', got {reference!r}")
    out = []
    for pair in pairs:
        a, b = (int(v) for v in pair)
        if not (0 <= a < count and 0 <= b < count) or a == b:
            raise ValueError(f"pair {pair} must hold two different positions in the frames given (0..{count - 1})")
        out.append((a, b))
    return out


def _object_region(obj: Any, position: int, shape: tuple[int, int]) -> np.ndarray | None:
    """(H, W) bool region of the object in the frame at ``position``: a Track's box/mask there, or the
    given box/mask/Instance (for the first frame; later frames get it moved by the measured motion)."""
    from spatialclaw.primitives.perception.inputs import as_box, as_mask

    height, width = shape
    if hasattr(obj, "instances"):  # a Track
        item = obj.instances[position]
        if item.score <= 0:
            return None
        obj = item
    mask = getattr(obj, "mask", None)
    if mask is not None or (isinstance(obj, np.ndarray) and obj.ndim == 2):
        return as_mask(mask if mask is not None else obj, height, width)
    x0, y0, x1, y1 = as_box(getattr(obj, "box", obj), width, height)
    region = np.zeros(shape, bool)
    region[max(int(round(y0)), 0):max(int(round(y1)), 0), max(int(round(x0)), 0):max(int(round(x1)), 0)] = True
    return region


# ---- object motion ---------------------------------------------------------------------------------------


def _object_step(geometry: PairGeometry, points_a: np.ndarray, points_b: np.ndarray, region: np.ndarray,
                 K: np.ndarray, frame_a: int, frame_b: int, heading_deg: float | None,
                 shift_px: float) -> ObjectStep | None:
    """Object motion from the matches (all of them, original pixels) inside ``region`` against the
    background's prediction there (the camera's homography, corrected by the nearby background's parallax)."""
    if geometry.homography is None or len(points_a) == 0:
        return None
    cols = np.clip(np.round(points_a[:, 0]).astype(int), 0, region.shape[1] - 1)
    rows = np.clip(np.round(points_a[:, 1]).astype(int), 0, region.shape[0] - 1)
    inside = region[rows, cols]
    if inside.sum() < 3:
        return None
    moved = np.column_stack([points_a, np.ones(len(points_a))]) @ geometry.homography.T
    predicted = moved[:, :2] / moved[:, 2:3]
    background = ~inside
    # what the rotation model misses near the object (parallax of a translating camera) is background too
    if background.sum() >= 5:
        centre = points_a[inside].mean(axis=0)
        nearest = np.argsort(np.linalg.norm(points_a[background] - centre, axis=1))[:15]
        predicted = predicted + np.median((points_b - predicted)[background][nearest], axis=0)
    a, observed, expected = points_a[inside], points_b[inside], predicted[inside]
    shift = np.median(observed - expected, axis=0)
    consistent = np.linalg.norm(observed - expected - shift, axis=1) <= max(3 * INLIER_PX, 0.1 * np.ptp(a, axis=0).max())
    a, observed, expected = a[consistent], observed[consistent], expected[consistent]
    scale = 1.0
    if len(a) >= 3:
        first, second = np.triu_indices(len(a), 1)
        spread_expected = np.linalg.norm(expected[first] - expected[second], axis=1)
        ok = spread_expected > 3.0
        if ok.sum() >= 3:
            spread_observed = np.linalg.norm(observed[first] - observed[second], axis=1)
            scale = float(np.median(spread_observed[ok] / spread_expected[ok]))
    focal = float(K[0, 0])
    lateral, vertical, depth_change = shift[0] / focal, shift[1] / focal, 1.0 / scale - 1.0
    vector = np.array([lateral, vertical, depth_change])
    moving = bool(np.hypot(*shift) > shift_px or abs(np.log(scale)) > 0.02)
    words = direction_words(vector).replace("forward", "away from the camera").replace("back", "towards the camera")
    step = ObjectStep(frame_a, frame_b, (float(shift[0]), float(shift[1])), scale, float(lateral), float(vertical),
                      float(depth_change), words if moving else "nowhere", moving, int(len(a)))
    if heading_deg is not None:
        h = math.radians(float(heading_deg))
        forward = lateral * math.sin(h) + depth_change * math.cos(h)
        right = lateral * math.cos(h) - depth_change * math.sin(h)
        step.heading_deg, step.own_forward, step.own_right = float(heading_deg), float(forward), float(right)
        own = np.array([right, 0.0, forward])
        step.own_direction = (direction_words(own).replace("back", "backward") if moving else "not moving")
    return step


# ---- focal self-calibration -------------------------------------------------------------------------------


def _self_calibrate(rotation_pairs: list[PairGeometry], K: np.ndarray) -> float | None:
    """The focal length (pixels) that best explains the rotation pairs' matches as pure rotations, when
    the data pins it down (the cost rises by 15 % or more at +-20 %); else None."""
    from scipy.optimize import minimize_scalar

    data = [(g.points_a[g.inlier_mask], g.points_b[g.inlier_mask]) for g in rotation_pairs]

    def cost(log_focal: float) -> float:
        trial = K.copy()
        trial[0, 0] = trial[1, 1] = math.exp(log_focal)
        total = 0.0
        for a, b in data:
            _, _, errors = fit_rotation(a, b, trial, trial)
            total += float(np.sum(np.minimum(errors, 3 * INLIER_PX) ** 2))
        return total

    width = 2 * (K[0, 2] + 0.5)
    found = minimize_scalar(cost, bounds=(math.log(0.3 * width), math.log(3.0 * width)), method="bounded",
                            options={"xatol": 0.005})
    best = float(found.fun)
    if min(cost(found.x + math.log(1.2)), cost(found.x - math.log(1.2))) < 1.15 * best:
        return None
    return math.exp(found.x)


# ---- main ------------------------------------------------------------------------------------------------


def motion(
    frames: Sequence[Any],
    *,
    pairs: Sequence[tuple[int, int]] | None = None,
    reference: str = "previous",
    intrinsics: Any = None,
    fov_deg: float | None = None,
    object: Any = None,
    object_heading_deg: float | None = None,
) -> Motion:
    """Camera motion between frames (pan/tilt/roll in degrees, or a translation direction, told apart by
    a parallax test) and optionally one object's motion relative to the background, with evidence per
    pair; ``print(m)`` reads it out. Use it for "does the camera pan or move, which way, how many degrees,
    does the object move" questions, small frames included; use ``reconstruct`` for 3D points and
    distances. Signs: yaw > 0 turns right, pitch > 0 tilts up, roll > 0 clockwise (later camera in the
    earlier camera's frame), decomposed as R = Ry(yaw) Rx(pitch) Rz(roll) in OpenCV camera axes: yaw first
    about the earlier camera's y axis, then pitch about the turned x axis, then roll about the view axis.

    Args:
        frames: 2 to 64 frames of the same size (``frames``, ``frames[::5]``, a list of ``Frame``, PIL
            images or (H, W, 3) uint8 arrays). Small frames are fine (features are found upsampled).
        pairs: positions (i, j) into ``frames`` to compare; default consecutive pairs (``reference=
            "previous"``) or each frame against the first (``reference="first"``).
        intrinsics: (3, 3) pixel intrinsics; else ``fov_deg`` (horizontal field of view in degrees); else
            EXIF; else self-calibrated from rotation pairs; else a 60 degree field of view is assumed.
        object: an object to follow relative to the background: a box (x0, y0, x1, y1) pixels or a mask in
            the first frame, an ``Instance``, or a ``Track`` (its per-frame regions are used). Its matches
            are kept out of the camera estimate.
        object_heading_deg: the object's heading on the ground, degrees from the camera's forward direction
            (> 0 towards the camera's right; 0 = facing away from the camera, 180 = facing it), to express
            its motion in its own frame (forward / backward / left / right).

    Returns:
        ``Motion``: ``print(m)`` for the readout; ``m.steps[k]`` has yaw_deg / pitch_deg / roll_deg
        (camera k+1 in camera k's frame; yaw > 0 = turns right, pitch > 0 = up, roll > 0 = clockwise),
        kind ("rotation" / "translation" / "static" / "unknown"), translation_words, zoom, parallax_px,
        inliers, confidence, reason, and ``object`` (an ``ObjectStep``) when an object was given.

    Example: ``m = motion(frames); print(m); m.yaw_deg`` (degrees per step).
    """
    arrays, indices, items = _frames(frames)
    height, width = arrays[0].shape[:2]
    chosen = _pairs(pairs, len(arrays), reference)
    if intrinsics is not None:
        from spatialclaw.primitives.geometry.camera import as_intrinsics

        K, source, calibrate = as_intrinsics(intrinsics, name="intrinsics"), "given intrinsics", False
    else:
        K, source = prior_intrinsics(items[0], width, height, fov_deg)
        calibrate = source.startswith("ASSUMED")
    regions: dict[int, np.ndarray | None] = {}
    if object is not None:
        regions[0] = _object_region(object, 0, (height, width))
        if hasattr(object, "instances"):
            for position in range(len(arrays)):
                regions[position] = _object_region(object, position, (height, width))
    scale = feature_scale(arrays[0].shape)
    used = sorted({position for pair in chosen for position in pair})
    features = {position: sift_features(arrays[position], scale=scale) for position in used}  # once per frame
    matches = {pair: (*matched_keypoints(features[pair[0]], features[pair[1]]), scale) for pair in chosen}
    if calibrate:
        first = {pair: estimate_pair(arrays[pair[0]], arrays[pair[1]], K, K, ignore_a=regions.get(pair[0]),
                                     matches=matches[pair]) for pair in chosen}
        turning = [g for g in first.values() if g.kind == "rotation"
                   and np.degrees(np.arccos(np.clip((np.trace(g.R_ab) - 1) / 2, -1, 1))) > 3.0]
        focal = _self_calibrate(turning, K) if turning else None
        if focal is not None:
            K = K.copy()
            K[0, 0] = K[1, 1] = focal
            hfov = math.degrees(2 * math.atan(0.5 * width / focal))
            source = f"self-calibrated from the camera's rotation ({hfov:.0f} degree field of view)"
    steps = []
    for (a, b) in chosen:  # in order: a box given in the first frame is carried along by the measured motion
        region = regions.get(a)
        geometry = estimate_pair(arrays[a], arrays[b], K, K, ignore_a=region, matches=matches[(a, b)])
        step = _camera_step(geometry, indices[a], indices[b])
        if object is not None and region is not None:
            step.object = _object_step(geometry, *matches[(a, b)][:2], region, K, indices[a], indices[b],
                                       object_heading_deg, shift_px=max(1.0, 0.01 * width))
            label = getattr(object, "label", None)
            if step.object is not None and isinstance(label, str) and label != "object":
                step.object.label = f"the {label}"
            if not hasattr(object, "instances") and b not in regions and step.object is not None:
                regions[b] = _moved_region(region, geometry, step.object)
        steps.append(step)
    return Motion(steps, K, source)


def _moved_region(region: np.ndarray, geometry: PairGeometry, obj: ObjectStep) -> np.ndarray:
    """The object's region carried into frame b: the background homography plus its own shift and scale."""
    import cv2

    ys, xs = np.nonzero(region)
    centre = np.array([xs.mean(), ys.mean(), 1.0])
    moved = geometry.homography @ centre
    target = moved[:2] / moved[2] + np.array(obj.image_shift_px)
    A = np.array([[obj.scale, 0, target[0] - obj.scale * centre[0]], [0, obj.scale, target[1] - obj.scale * centre[1]]])
    return cv2.warpAffine(region.astype(np.uint8), A, (region.shape[1], region.shape[0]), flags=cv2.INTER_NEAREST) > 0


def _camera_step(geometry: PairGeometry, frame_a: int, frame_b: int) -> CameraStep:
    if geometry.R_ab is None:
        return CameraStep(frame_a, frame_b, "unknown", None, None, None, None, None, None, 1.0, geometry.parallax_px,
                          geometry.matches, geometry.inliers, geometry.residual_px, 0.0, geometry.reason,
                          geometry=geometry)
    yaw, pitch, roll = yaw_pitch_roll(geometry.R_ab)
    angle = math.degrees(math.acos(float(np.clip((np.trace(geometry.R_ab) - 1) / 2, -1, 1))))
    words = direction_words(geometry.direction) if geometry.direction is not None else None
    return CameraStep(frame_a, frame_b, geometry.kind, yaw, pitch, roll, angle, geometry.direction, words,
                      geometry.zoom, geometry.parallax_px, geometry.matches, geometry.inliers, geometry.residual_px,
                      geometry.confidence, geometry.reason, geometry=geometry)
