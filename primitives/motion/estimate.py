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
else EXIF, else it is estimated from the rotation itself when the camera turns enough (self-calibration,
one focal length for the clip: :mod:`spatialclaw.primitives.motion.focal`), else a 60 degree field of view
is ASSUMED; ``result.focal_source`` says which. Without a given focal length, a step whose parallax would
vanish at another field of view is "turn or move: cannot tell without the field of view", not a translation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from itertools import pairwise
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.geometry.focal_prior import prior_intrinsics
from spatialclaw.primitives.motion.angles import (
    clip_tilt,
    direction_words,
    least_roll,
    level_angles,
    pitched,
    yaw_pitch_roll,
)
from spatialclaw.primitives.motion.checks import (
    evidence_warnings,
    image_motion,
    implausible,
    letterbox_mask,
    lit_share,
    rate_outliers,
)
from spatialclaw.primitives.motion.features import NO_FEATURES, feature_scale, frame_features, matched_keypoints
from spatialclaw.primitives.motion.focal import (
    FocalEstimate,
    HomographyFit,
    estimate_focal,
    fov_of_focal,
    homography_fit,
    rotation_parallax,
    turn_or_move,
)
from spatialclaw.primitives.motion.object_motion import object_regions, object_step
from spatialclaw.primitives.motion.pair import PARALLAX_PX, PairGeometry, estimate_pair, rotation_homography
from spatialclaw.primitives.motion.regions import region_masks, region_step
from spatialclaw.primitives.motion.result import CameraStep, Motion, hidden_move
from spatialclaw.primitives.motion.translation import shared_words, ways
from spatialclaw.primitives.runtime.library_failures import guarded

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
    tilt_deg: float | None = None,
    regions: Any = None,
    K: Any = None,
    hfov_deg: float | None = None,
) -> Motion:
    """Camera (and object) motion per frame pair: turn in degrees or move direction, parallax by region, heading sweep.

    Pan/tilt/roll in degrees or a translation direction, told apart by a parallax test, and optionally one
    object's motion relative to the background, with evidence per pair; ``print(m)`` reads it out;
    ``regions=`` compares the image motion of regions (near vs far: parallax), ``m.headings()`` gives a
    turning camera's heading sweep and loop closure. Use it for "does the camera pan or move, which way, how many degrees,
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
            EXIF; else self-calibrated from the clip's turns (``focal_source`` says how well); else a 60 degree
            field of view is assumed, and a step that is a turn at another one is "unknown": "turn or move:
            cannot tell without the field of view" (``step.turn_or_move``).
        object: the object to measure relative to the background, located in EVERY frame: a ``Track`` (or
            the one-element list ``track`` returns for a list prompt), a list with one box (x0, y0, x1, y1)
            pixels / (H, W) mask / ``Instance`` per frame (None where absent), or one box / mask /
            ``Instance`` in the first frame, which is then followed with ``track(method="flow")``. Its
            motion comes from its centre and size in each frame; its pixels are kept out of the camera
            estimate.
        object_heading_deg: the object's heading on the ground, degrees from the camera's forward direction
            (> 0 towards the camera's right; 0 = facing away from the camera, 180 = facing it), to express
            its motion in its own frame (forward / backward / left / right); how to judge it: ``manual("facing")``.
        tilt_deg: the first frame's camera pitch in degrees (> 0 up; ``geom.camera_tilt``): yaw is then the
            turn about gravity, pitch the change of pitch. Without it, when the turns read as rolls in camera
            axes (a camera looking down that turns), they are measured about the vertical that explains them
            with the least roll (the readout says which pitch); else in camera axes.
        regions: also measure the image motion per region of the frame, to compare near and far (parallax):
            "bands" (top / middle / bottom thirds), "columns" (left / centre / right), or a dict of name -> box
            (x0, y0, x1, y1) pixels or (H, W) bool mask in the first frame of each pair (near and far from a
            depth map: ``{"near": d < 2, "far": d > 4}``, metres). ``m.regions`` then holds one ``RegionStep``
            per pair and ``print(m)`` reads them: each region's median flow (pixels, x right, y down) with its
            standard error, spread and number of points ("unknown" under 6 points), and the verdict: regions
            that move alike (a turn) or PARALLAX (the camera translates: nearer things move more, against its
            travel; the travel, and the way round a near thing it keeps in view, if that region is nearer).
        K, hfov_deg: the ``geom`` tools' names for ``intrinsics`` and ``fov_deg`` (either name works; both
            at once is an error).

    Returns:
        ``Motion``: ``print(m)`` for the readout; ``m.steps[k]`` has yaw_deg / pitch_deg / roll_deg
        (camera k+1 in camera k's frame; yaw > 0 = turns right, pitch > 0 = up, roll > 0 = clockwise),
        kind ("rotation" / "translation" / "static" / "unknown"; "rotation" and "static" mean no MEASURABLE
        translation, and the step says how large a move could hide), translation_words (None, with the
        candidates in ``ways``, when the matches cannot tell which way it moved), zoom, parallax_px,
        inliers, confidence, reason, status ("measured" / "unknown"), warnings (where the agreeing
        matches lie: one region, a still border), and ``object`` (an ``ObjectStep``) when an object was
        given. A pair the feature or pose fit fails on (degenerate matches, a library error) is "unknown"
        with that reason and the others are still measured. A fit that fails a plausibility gate (the
        frames cannot share that view, a roll over 30 deg, confidence < 0.3, < 15 agreeing matches) is
        "unknown" with the reason and enters no total, as does a low-confidence step that turns far faster
        than the clip's other steps (``checks.rate_outliers``).
        ``m.headings()``: the heading sweep of a camera turning in place, with each step's uncertainty and the
        loop closure (``HeadingSweep``). ``m.net()``: first-to-last rotation; totals in the readout sum consecutive steps only (pairs
        against the first frame are already cumulative). Black letterbox bars are masked.
        Sign note: one convention in every tool (``manual('conventions')``): pitch > 0 tilts UP, here as in
        ``geom.camera_tilt`` and ``geom.floor_point`` (an absolute tilt there, relative here).

    Example: ``m = motion(frames); print(m); m.yaw_deg`` (degrees per step).
    """
    if K is not None:
        if intrinsics is not None:
            raise ValueError("motion: pass the intrinsics once, as intrinsics= or K= (the same thing), not both")
        intrinsics = K
    if hfov_deg is not None:
        if fov_deg is not None:
            raise ValueError("motion: pass the field of view once, as fov_deg= or hfov_deg= (the same), not both")
        fov_deg = hfov_deg
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
    followed = None if object is None else guarded(partial(object_regions, object, arrays), partial(_lost, notes))
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
    features = {position: _features(arrays[position], scale, indices[position], notes) for position in used}
    matches = {pair: (*_matches(features[pair[0]], features[pair[1]]), scale) for pair in chosen}
    fits: dict[tuple[int, int], HomographyFit] = {}
    fov_range: tuple[float, float] | None = None
    if calibrate:  # no focal length given: estimate one for the clip from its turns (``focal``)
        fits = {pair: _homography(*matches[pair][:2], width, height, ignored(pair[0])) for pair in chosen}
        found = guarded(partial(estimate_focal, list(fits.values()), K, width), partial(_no_focal, notes))
        if found.focal_px is not None and found.fov_range_deg is not None:
            K = K.copy()
            K[0, 0] = K[1, 1] = found.focal_px
            low, high = fov_range = found.fov_range_deg
            source = (
                f"{'ROUGHLY ' if found.rough else ''}self-calibrated {fov_of_focal(found.focal_px, width):.0f} degree "
                f"field of view ({found.reason}; {low:.0f}-{high:.0f} fit about as well; angles are at this estimate)"
            )
        elif found.steps:
            source += f"; not estimated from the motion: {found.reason}"

    def step_of(a: int, b: int) -> CameraStep:
        geometry = estimate_pair(arrays[a], arrays[b], K, K, ignore_a=ignored(a), matches=matches[(a, b)])
        step = _camera_step(geometry, indices[a], indices[b], width, height)
        if step.kind == "translation":  # is the parallax real? (``focal``: a test that needs no focal length)
            fit = fits.get((a, b)) or homography_fit(*matches[(a, b)][:2], width, height, ignored(a))
            if _outside_rigid(geometry, fit, K):  # the parallax sits in matches that no rigid scene explains
                kept = (fit.points_a[fit.support], fit.points_b[fit.support], scale)
                again = estimate_pair(arrays[a], arrays[b], K, K, matches=kept)
                if again.kind != "translation":
                    left = len(fit.points_a) - len(kept[0])
                    again.reason += f"; {left} matches that no single rigid scene explains (moving things?) left out"
                    geometry, step = again, _camera_step(again, indices[a], indices[b], width, height)
            if calibrate and step.kind == "translation" and (other := turn_or_move(fit, K, width)) is not None:
                step = _unknown(geometry, indices[a], indices[b], other)  # a turn at another focal length fits
        if step.kind != "unknown":
            step.hidden_move = hidden_move(float(K[0, 0]))
            step.warnings = evidence_warnings(geometry, width, height, lit_share(arrays[a]))
        if followed is not None and step.kind != "unknown":
            region_a, region_b = followed.regions[a], followed.regions[b]
            if region_a is not None and region_b is not None:
                step.object = object_step(
                    geometry,
                    region_a,
                    region_b,
                    K,
                    indices[a],
                    indices[b],
                    object_heading_deg,
                    max(1.0, 0.01 * width),
                    tracked=followed.source != "one region per frame",
                )
                if step.object is not None:
                    step.object.label = followed.label
        return step

    steps = [guarded(partial(step_of, a, b), partial(_failed, indices[a], indices[b])) for a, b in chosen]
    span = None
    if pairs is None and reference == "previous" and len(arrays) > 2:  # the larger baseline (``verdict``)
        last = len(arrays) - 1

        def span_of() -> CameraStep | None:
            kept = (*_matches(features[0], features[last]), scale)
            geometry = estimate_pair(arrays[0], arrays[last], K, K, ignore_a=ignored(0), matches=kept)
            span = _camera_step(geometry, indices[0], indices[last], width, height)
            if calibrate and span.kind == "translation":
                fit = homography_fit(*kept[:2], width, height, ignored(0))
                return None if turn_or_move(fit, K, width) is not None else span
            return span

        span = guarded(span_of, partial(_failed, indices[0], indices[last]))
    tilt = _about_vertical(steps, span, tilt_deg, notes)
    for step in [*steps, span]:  # which moves the images more: the turn or the move (``verdict``)
        if step is not None and step.kind != "unknown" and step.geometry is not None:
            step.image_motion_px = image_motion(step.geometry, K)
    result = Motion(steps, K, source, notes, span=span, tilt_deg=tilt, fov_range_deg=fov_range)
    if regions is not None:  # the image motion per region of the frame (``regions``)
        masks = region_masks(regions, height, width)
        masks = masks if bars is None else {name: mask & ~bars for name, mask in masks.items()}
        result.regions = [
            region_step(indices[a], indices[b], masks, *matches[(a, b)][:2], _turn_homography(step, K))
            for (a, b), step in zip(chosen, steps, strict=True)
        ]
    return result


def _turn_homography(step: CameraStep, K: np.ndarray) -> np.ndarray | None:
    """Pixels of a -> b under the step's measured turn alone (a translating step's turn from its essential
    matrix, a turning step's with its zoom), or None for an unknown step."""
    geometry = step.geometry
    if step.kind == "unknown" or geometry is None or geometry.R_ab is None:
        return None
    return geometry.homography if step.kind != "translation" else rotation_homography(K, K, geometry.R_ab.T)


def _about_vertical(
    steps: list[CameraStep], span: CameraStep | None, tilt_deg: float | None, notes: list[str]
) -> float | None:
    """Leave steps that turn far faster than the clip out (``rate_outliers``), then measure the measured
    steps' angles about gravity (``tilt_deg`` given) or the clip's vertical (``angles.clip_tilt``); the
    first frame's pitch used (None: camera axes). A chain tracks the pitch from step to step."""
    for k, reason in rate_outliers(steps).items():
        old = steps[k]
        assert old.geometry is not None  # a measured step carries its geometry
        steps[k] = _unknown(old.geometry, old.frame_a, old.frame_b, reason)
    turns = [
        s.geometry.R_ab for s in steps if s.kind != "unknown" and s.geometry is not None and s.geometry.R_ab is not None
    ]
    tilt = tilt_deg if tilt_deg is not None else clip_tilt(turns)
    if tilt is None:
        return None
    chain = all(s.frame_a == p.frame_b for p, s in pairwise(steps))
    orientation, pitch = pitched(tilt), float(tilt)
    for step in steps:
        R = step.geometry.R_ab if step.kind != "unknown" and step.geometry is not None else None
        if R is not None:
            step.yaw_deg, step.pitch_deg, step.roll_deg = level_angles(R, pitch if chain else float(tilt))
        if chain:
            orientation = orientation @ R if R is not None else orientation
            pitch = yaw_pitch_roll(orientation)[1] if R is not None else pitch
    if span is not None and span.kind != "unknown" and span.geometry is not None and span.geometry.R_ab is not None:
        span.yaw_deg, span.pitch_deg, span.roll_deg = level_angles(span.geometry.R_ab, float(tilt))
    looking = f"{abs(tilt):.0f} deg {'down' if tilt < 0 else 'up'}"
    notes.append(
        f"angles are about gravity for a first camera pitched {looking} (tilt_deg)"
        if tilt_deg is not None
        else f"angles are about the camera's vertical measured from the turns: they fit a camera looking about "
        f"{looking} that turns about the vertical (in camera axes they read as rolls); pass tilt_deg= "
        f"(geom.camera_tilt) to measure about gravity"
    )
    return float(tilt)


def _features(array: np.ndarray, scale: float, index: int, notes: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """The frame's SIFT features; none (and a note) when the library fails on it."""
    found, failure = frame_features(array, scale=scale)
    if failure is not None:
        notes.append(f"frame {index}: no features ({failure})")
    return found


def _matches(
    features_a: tuple[np.ndarray, np.ndarray | None], features_b: tuple[np.ndarray, np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one matches of two frames' features; none when the library fails on them (the step then says
    it has too few)."""
    return guarded(partial(matched_keypoints, features_a, features_b), lambda _: (NO_FEATURES[0], NO_FEATURES[0]))


def _homography(
    points_a: np.ndarray, points_b: np.ndarray, width: int, height: int, ignore_a: np.ndarray | None
) -> HomographyFit:
    """``homography_fit``, or no fit (it then enters no focal estimate) when the library fails on the pair."""
    return guarded(
        partial(homography_fit, points_a, points_b, width, height, ignore_a),
        lambda _: homography_fit(points_a[:0], points_b[:0], width, height),
    )


def _lost(notes: list[str], reason: str) -> None:
    notes.append(f"the object could not be followed, so no object motion is measured: {reason}")


def _no_focal(notes: list[str], reason: str) -> FocalEstimate:
    notes.append(f"the focal length was not estimated from the motion: {reason}")
    return FocalEstimate(None, False, None, None, 0, reason)


def _failed(frame_a: int, frame_b: int, reason: str) -> CameraStep:
    """The step of a pair whose measurement a library failed on: unknown, with the library's reason."""
    return _unknown(None, frame_a, frame_b, f"not measured: {reason}")


def _outside_rigid(geometry: PairGeometry, fit: HomographyFit, K: np.ndarray) -> bool:
    """A clear translation verdict (parallax over twice the threshold) that the matches one rigid scene
    explains contradict: one homography and the rotation model at ``K`` both fit them to the threshold."""
    return geometry.parallax_px > 2 * PARALLAX_PX and fit.fits and rotation_parallax(fit, K) <= PARALLAX_PX


def _unknown(geometry: PairGeometry | None, frame_a: int, frame_b: int, reason: str) -> CameraStep:
    """An unknown step, with the pair's evidence where it was measured (``geometry``; None: nothing was)."""
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
        geometry.parallax_px if geometry else float("nan"),
        geometry.matches if geometry else 0,
        geometry.inliers if geometry else 0,
        geometry.residual_px if geometry else float("nan"),
        0.0,
        reason,
        geometry=geometry,
    )


def _camera_step(geometry: PairGeometry, frame_a: int, frame_b: int, width: int, height: int) -> CameraStep:
    """The step as read out: unknown when the fit is missing or fails a plausibility gate (``checks``)."""
    if geometry.R_ab is None:
        return _unknown(geometry, frame_a, frame_b, geometry.reason)
    yaw, pitch, roll = yaw_pitch_roll(geometry.R_ab)
    angle = _angle_deg(geometry.R_ab)
    problem = implausible(geometry, least_roll(geometry.R_ab)[1], width, height, turn_deg=angle)
    if problem is not None:
        return _unknown(geometry, frame_a, frame_b, problem)
    translation, words, options, spread = geometry.direction, None, [], 0.0
    if translation is not None:  # state only the direction words every plausible motion shares (``translation``)
        words = shared_words(geometry.plausible) if geometry.plausible else direction_words(translation)
        if words is None:
            translation, options = None, ways(geometry.plausible)
        spread = max((_angle_deg(geometry.R_ab.T @ R) for _, R in geometry.plausible), default=0.0)
    return CameraStep(
        frame_a,
        frame_b,
        geometry.kind,
        yaw,
        pitch,
        roll,
        angle,
        translation,
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
        ways=options,
        turn_spread_deg=spread,
    )


def _angle_deg(R: np.ndarray) -> float:
    """The angle (degrees) of a rotation matrix."""
    return math.degrees(math.acos(float(np.clip((np.trace(R) - 1) / 2, -1, 1))))
