"""Camera ego-motion and object motion between frames: ``motion(frames)``.

Use ``motion`` for "how does the camera move / turn / does it pan or walk / does the object move" questions
on a few frames: it works on small frames (150-250 px), reports per pair what it measured with its evidence,
and never needs the scene to be static beyond a majority of background. Use ``reconstruct`` when you need
3D points, camera positions in a common world frame or metric distances.

Per pair of frames (consecutive by default) it fits both a rotation-only model and an essential matrix to
SIFT matches and applies a parallax test (``pair_motion``): a turning or zooming camera moves all points by
one homography; a translating one moves near points more than far ones. What each step reports
(rotation, translation direction, zoom, confidence, status) and the sign conventions:
:mod:`spatialclaw.primitives.motion.result`.

Angles need a focal length: ``intrinsics=`` (3, 3) pixels, else ``fov_deg=`` (horizontal field of view),
else EXIF, else it is estimated from the rotation itself when the camera turns enough (self-calibration),
else a 60 degree field of view is ASSUMED; ``result.focal_source`` says which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.geometry.focal_prior import prior_intrinsics
from spatialclaw.primitives.motion.angles import direction_words, yaw_pitch_roll
from spatialclaw.primitives.motion.checks import evidence_warnings, implausible, letterbox_mask
from spatialclaw.primitives.motion.features import feature_scale, matched_keypoints, sift_features
from spatialclaw.primitives.motion.object_motion import object_regions, object_step
from spatialclaw.primitives.motion.pair import INLIER_PX, PairGeometry, estimate_pair, fit_rotation
from spatialclaw.primitives.motion.result import CameraStep, Motion

__all__ = ["MAX_MOTION_FRAMES", "motion"]

MAX_MOTION_FRAMES = 64


# ---- inputs ----------------------------------------------------------------------------------------------


def _frames(frames: Any) -> tuple[list[np.ndarray], list[int], list[Any]]:
    from spatialclaw.primitives.perception.inputs import frame_array, frame_index

    if isinstance(frames, np.ndarray) and frames.ndim == 3:
        raise ValueError("motion needs at least two frames, got one image; pass frames, frames[a:b] or [img_a, img_b]")
    items = list(frames)
    if len(items) < 2:
        raise ValueError(f"motion needs at least two frames, got {len(items)}")
    if len(items) > MAX_MOTION_FRAMES:
        raise ValueError(
            f"motion takes at most {MAX_MOTION_FRAMES} frames, got {len(items)}; subsample, e.g. "
            f"frames[::{-(-len(items) // 16)}] or frames.sample(count=16)"
        )
    arrays = [frame_array(item) for item in items]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(f"all frames must have the same size; got {sorted({a.shape[:2] for a in arrays})} (H, W)")
    # frame_index returns its default (the position, an int) for items without an absolute index
    return arrays, cast(list[int], [frame_index(item, i) for i, item in enumerate(items)]), items


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
    found = minimize_scalar(
        cost, bounds=(math.log(0.3 * width), math.log(3.0 * width)), method="bounded", options={"xatol": 0.005}
    )
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
        object: the object to measure relative to the background, located in EVERY frame: a ``Track`` (or
            the one-element list ``track`` returns for a list prompt), a list with one box (x0, y0, x1, y1)
            pixels / (H, W) mask / ``Instance`` per frame (None where absent), or one box / mask /
            ``Instance`` in the first frame, which is then followed with ``track(method="flow")``. Its
            motion comes from its centre and size in each frame; its pixels are kept out of the camera
            estimate.
        object_heading_deg: the object's heading on the ground, degrees from the camera's forward direction
            (> 0 towards the camera's right; 0 = facing away from the camera, 180 = facing it), to express
            its motion in its own frame (forward / backward / left / right).

    Returns:
        ``Motion``: ``print(m)`` for the readout; ``m.steps[k]`` has yaw_deg / pitch_deg / roll_deg
        (camera k+1 in camera k's frame; yaw > 0 = turns right, pitch > 0 = up, roll > 0 = clockwise),
        kind ("rotation" / "translation" / "static" / "unknown"), translation_words, zoom, parallax_px,
        inliers, confidence, reason, status ("measured" / "unknown"), warnings (where the agreeing
        matches lie: one region, a still border), and ``object`` (an ``ObjectStep``) when an object was
        given. A fit that fails a plausibility gate (the frames cannot share that view, a roll over 30
        deg, confidence < 0.3, < 15 agreeing matches) is "unknown" with the reason and enters no total.
        ``m.net()``: first-to-last rotation; totals in the readout sum consecutive steps only (pairs
        against the first frame are already cumulative). Black letterbox bars are masked.
        Sign note: motion's pitch > 0 tilts UP; ``camera_tilt``'s pitch > 0 is DOWN (an absolute tilt).

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
    notes: list[str] = []
    bars = letterbox_mask(arrays)
    if bars is not None:
        notes.append(f"letterbox bars masked ({100 * bars.mean():.0f} % of the frame): their edges do not move")
    followed = object_regions(object, arrays) if object is not None else None
    if followed is not None:
        lost = [indices[p] for p, r in enumerate(followed.regions) if r is None]
        notes.append(
            f"{followed.label} located from {followed.source}" + (f"; not found in frames {lost}" if lost else "")
        )

    def ignored(position: int) -> np.ndarray | None:
        region = followed.regions[position] if followed is not None else None
        if bars is None or region is None:
            return bars if region is None else region
        return np.asarray(bars | region, dtype=bool)

    scale = feature_scale(arrays[0].shape)
    used = sorted({position for pair in chosen for position in pair})
    features = {position: sift_features(arrays[position], scale=scale) for position in used}  # once per frame
    matches = {pair: (*matched_keypoints(features[pair[0]], features[pair[1]]), scale) for pair in chosen}
    if calibrate:
        first = {
            pair: estimate_pair(
                arrays[pair[0]], arrays[pair[1]], K, K, ignore_a=ignored(pair[0]), matches=matches[pair]
            )
            for pair in chosen
        }
        turning = [
            g
            for g in first.values()
            if g.kind == "rotation"
            and g.R_ab is not None
            and np.degrees(np.arccos(np.clip((np.trace(g.R_ab) - 1) / 2, -1, 1))) > 3.0
        ]
        focal = _self_calibrate(turning, K) if turning else None
        if focal is not None:
            K = K.copy()
            K[0, 0] = K[1, 1] = focal
            hfov = math.degrees(2 * math.atan(0.5 * width / focal))
            source = f"self-calibrated from the camera's rotation ({hfov:.0f} degree field of view)"
    steps = []
    for a, b in chosen:
        geometry = estimate_pair(arrays[a], arrays[b], K, K, ignore_a=ignored(a), matches=matches[(a, b)])
        step = _camera_step(geometry, indices[a], indices[b], width, height)
        if followed is not None and step.kind != "unknown":
            region_a, region_b = followed.regions[a], followed.regions[b]
            if region_a is not None and region_b is not None:
                step.object = object_step(
                    geometry, region_a, region_b, K, indices[a], indices[b], object_heading_deg, max(1.0, 0.01 * width)
                )
                if step.object is not None:
                    step.object.label = followed.label
        steps.append(step)
    return Motion(steps, K, source, notes)


def _unknown(geometry: PairGeometry, frame_a: int, frame_b: int, reason: str) -> CameraStep:
    return CameraStep(
        frame_a,
        frame_b,
        "unknown",
        None,
        None,
        None,
        None,
        None,
        None,
        1.0,
        geometry.parallax_px,
        geometry.matches,
        geometry.inliers,
        geometry.residual_px,
        0.0,
        reason,
        geometry=geometry,
    )


def _camera_step(geometry: PairGeometry, frame_a: int, frame_b: int, width: int, height: int) -> CameraStep:
    """The step as read out: unknown when the fit is missing or fails a plausibility gate (``checks``)."""
    if geometry.R_ab is None:
        return _unknown(geometry, frame_a, frame_b, geometry.reason)
    yaw, pitch, roll = yaw_pitch_roll(geometry.R_ab)
    problem = implausible(geometry, roll, width, height)
    if problem is not None:
        return _unknown(geometry, frame_a, frame_b, problem)
    angle = math.degrees(math.acos(float(np.clip((np.trace(geometry.R_ab) - 1) / 2, -1, 1))))
    words = direction_words(geometry.direction) if geometry.direction is not None else None
    return CameraStep(
        frame_a,
        frame_b,
        geometry.kind,
        yaw,
        pitch,
        roll,
        angle,
        geometry.direction,
        words,
        geometry.zoom,
        geometry.parallax_px,
        geometry.matches,
        geometry.inliers,
        geometry.residual_px,
        geometry.confidence,
        geometry.reason,
        geometry=geometry,
        warnings=evidence_warnings(geometry, width, height),
    )
