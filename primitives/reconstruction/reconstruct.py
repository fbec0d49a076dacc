"""Multi-view reconstruction: camera poses, intrinsics, per-frame metric depth and world points.

``reconstruct(frames)`` handles 1 to ``MAX_FRAMES`` frames:

- Poses: with metric depth given for every frame plus known intrinsics (an RGB-D sensor), frames are
  registered one by one by SIFT matching and PnP on the depth-lifted points (metric, "rgbd" method).
  Otherwise incremental structure from motion (pycolmap: SIFT, exhaustive matching, bundle adjustment;
  "sfm" method), which also estimates the focal length when none is given. One frame: identity pose.
- Scale: SfM alone has no scale. It is made metric with depth maps: user-given ones, or a learned metric
  depth model (``depth="auto"``, the default, uses ``depth.DEFAULT_MODEL`` when its weights are available).
  ``.metric`` and ``.scale_source`` say which; without depth the units are arbitrary.
- Small frames (benchmark key frames, 150-250 px wide): features are detected upsampled (at a lower SIFT
  contrast threshold, for weak texture) and mapped back to the original pixels and intrinsics.
- Focal lengths (``rec.focal``): given, stated (``fov_deg``), EXIF, estimated by SfM from 3+ views, or
  ASSUMED; flagged when implausible (a field of view outside 15-120 deg, or far from the clip's others).
  Two views cannot fix it: their angles then rest on the assumption, are said to be no measurement, and are
  solved again at other fields of view to show how they scale.
- ``rec.orbit()``: angles between viewing directions, the angle swept around the scene's centre and the
  travel direction, each with its stated uncertainty (SfM: bundle-adjustment covariance).
- A camera that only turns (no parallax: SfM cannot triangulate): detected by the parallax test of
  ``motion`` and solved as rotation (a homography chain; focal from ``intrinsics``, ``fov_deg``, EXIF or
  self-calibration, as ``rec.notes`` says): method "rotation", camera centres all at the origin.
- Per frame, ``rec.frame_status`` says what happened (registered / rotation-only / unregistered), with
  the inliers, a confidence and the reason: partial results are returned, not an all-or-nothing error.
- A learned multi-view model (``backend="da3"`` or ``$SPATIALCLAW_MULTIVIEW_SOCKET``, see
  ``reconstruction.multiview``): depth, intrinsics and poses of all frames at once (method "learned"); the
  classical methods above are the fallback and, with ``cross_check=True``, a cross-check.
- World frame (DESIGN.md): metres, right-handed, gravity-aligned +Z up (floor plane by RANSAC; else, for a
  camera that only turns, the vertical ``motion`` measured its turns about, so both read one yaw and pitch;
  else the first camera's up), origin at the first registered camera, +Y its forward projected on the ground,
  +X its right. Poses are camera-to-world (4, 4), OpenCV camera axes (x right, y down, z forward).
"""

from __future__ import annotations

import os
import warnings
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from spatialclaw.primitives.reconstruction.da3 import SOCKET_ENV_VAR, Da3Backend, MultiViewServiceError
from spatialclaw.primitives.reconstruction.focal import describe_focal, focal_notes
from spatialclaw.primitives.reconstruction.inputs import (
    frames_as_arrays,
    given_depths,
    intrinsics_per_frame,
    model_depths,
)
from spatialclaw.primitives.reconstruction.multiview import MultiViewBackend, learned_reconstruction
from spatialclaw.primitives.reconstruction.multiview import cross_check as compare_poses
from spatialclaw.primitives.reconstruction.points import gravity_align, metric_scale, world_points
from spatialclaw.primitives.reconstruction.result import Reconstruction, ReconstructionError, advice, frame_status
from spatialclaw.primitives.reconstruction.rotation_only import leveled, only_turns, rotation_chain
from spatialclaw.primitives.runtime.library_failures import guarded

if TYPE_CHECKING:
    from spatialclaw.primitives.reconstruction.sfm import SfmResult

__all__ = ["reconstruct"]


# ---- main -------------------------------------------------------------------------------------------------


def reconstruct(
    frames: Any,
    depth: Any = "auto",
    *,
    intrinsics: Any = None,
    depth_model: str | os.PathLike[str] | None = None,
    fov_deg: float | None = None,
    max_image_size: int = 1600,
    backend: object = None,
    cross_check: bool = False,
) -> Reconstruction:
    """Reconstruct cameras and 3D points from 1 to 64 frames of a static scene; ``rec.orbit()`` reads the
    angles a camera travels around an object. Small frames (150-250 px) are matched upsampled; a camera that
    only turns is solved as rotations; ``print(rec)`` lists each frame's status (registered / rotation-only /
    unregistered, inliers, confidence, reason) and where the focal length came from.

    Args:
        frames: ``Frames`` (or a list of ``Frame``, PIL images, (H, W, 3) uint8 arrays or image paths).
            Use a handful to a few dozen overlapping views; subsample long videos (``frames.sample(count=32)``).
        depth: "auto" (default: a learned metric depth model when its weights are available, for metric
            scale), None (no depth: arbitrary scale), or one depth map per frame: ``DepthResult`` objects or
            (H, W) float arrays in metres (e.g. RGB-D sensor depth; NaN or 0 = no depth).
        intrinsics: known (3, 3) pixel intrinsics (all frames) or (N, 3, 3); default: estimated by SfM from
            3+ views (or, for a turning camera or two views, from ``fov_deg``, EXIF, self-calibration or an
            ASSUMED 60 deg: two views of an orbit cannot fix the focal length, and the angle between them grows
            with it; ``rec.focal`` and ``rec.orbit()`` say so and give the angle at other fields of view).
        fov_deg: a stated horizontal field of view in degrees, used when ``intrinsics`` is not given and
            SfM cannot estimate the focal length (two views, a camera that only turns).
        depth_model: the model for ``depth="auto"`` (alias, hub id or folder; see ``depth.MODEL_ALIASES``).
        max_image_size: longest image side in pixels used for feature extraction.
        backend: "classical" (the methods above), "da3" (Depth Anything 3 through its service at
            ``$SPATIALCLAW_MULTIVIEW_SOCKET``: depth, intrinsics and poses of all frames at once, method
            "learned") or a multi-view backend object (see ``reconstruction.multiview``); default "da3"
            when that variable is set, else "classical". When the learned backend fails, the classical path runs and ``notes`` says why.
        cross_check: with a learned backend, also run the classical path on its depth maps and intrinsics and
            add the per-frame pose disagreement (metres, degrees) to ``notes``.

    Returns:
        ``Reconstruction`` (poses (N, 4, 4) camera-to-world in input order, intrinsics, depth, points, colors,
        confidence, frame_indices, registered, metric, scale_source, focal, ``bev()``, ``orbit()``).

    Raises:
        ValueError: bad input (the message says what to pass).
        ReconstructionError: fewer than two frames could be registered (the message names the cause per
            pair: tiny frames, too few matches, no single motion, and what to do).

    Use ``motion(frames)`` instead when the question is only how the camera (or an object) moves: it is
    faster and reports rotation vs translation per pair; ``reconstruct`` is for 3D points and positions, and
    for a camera circling an object (``print(rec.orbit())``: total turn, swept angle, left/right).
    """
    arrays, indices, items = frames_as_arrays(frames)
    count = len(arrays)
    notes: list[str] = []
    known_K = intrinsics_per_frame(intrinsics, count)
    given_maps = depth is not None and not isinstance(depth, str)
    if given_maps and backend is not None and backend != "classical":
        raise ValueError("pass depth maps (RGB-D) or a learned backend, not both: use backend='classical'")
    learned = None if given_maps else _learned_backend(backend)  # RGB-D input: the classical path
    if learned is not None:
        try:
            rec = learned_reconstruction(arrays, indices, learned, known_K)
        except (MultiViewServiceError, ReconstructionError, ValueError) as error:
            message = f"the learned backend {learned.name} failed ({error}); the classical path was used instead"
            notes.append(message)
            warnings.warn(message, stacklevel=2)
        else:
            rec.focal = describe_focal(
                "learned", rec.intrinsics, _widths(arrays), rec.registered, indices, given=known_K is not None
            )
            if cross_check:
                rec.notes.extend(_cross_check(rec, arrays))
            return rec
    depth_maps: list[np.ndarray] | None = None
    depth_confidences: list[np.ndarray] | None = None
    depth_K: list[np.ndarray | None] = [None] * count
    scale_source = "none: arbitrary units (no depth); pass depth maps or a metric depth model for metres"
    sensor_depth = False
    if isinstance(depth, str):
        if depth != "auto":
            raise ValueError(f"depth must be 'auto', None or a list of depth maps, got {depth!r}")
        results = model_depths(arrays, depth_model, notes)
        if results is not None:
            depth_maps = [r.depth for r in results]
            depth_confidences = [r.confidence for r in results]
            depth_K = [r.intrinsics if r.intrinsics_source == "model" else None for r in results]
            scale_source = f"depth model {results[0].model}"
    elif depth is not None:
        depth_maps, depth_K, depth_confidences = given_depths(depth, arrays)
        sensor_depth = True
        scale_source = "given depth maps"
    prior_K: list[np.ndarray] | None = None  # focal lengths estimated by a depth model: SfM refines them
    if known_K is None and all(K is not None for K in depth_K):
        if sensor_depth:
            known_K = [K for K in depth_K if K is not None]
        else:
            prior_K = [K for K in depth_K if K is not None]

    rgbd_inliers: np.ndarray | None = None
    sparse: SfmResult | None
    chain = None  # the rotation chain (motion's steps), once computed
    focal_words = ""  # where an assumed, stated or EXIF focal length came from (two views, rotation, PnP)
    given_K = known_K if known_K is not None else prior_K
    if count == 1:
        poses, K_out, registered, sparse = _single_frame(arrays[0], given_K)
        method = "single-frame"
    elif sensor_depth and known_K is not None and depth_maps is not None:
        poses, registered, K_out, rgbd_inliers = _rgbd(arrays, depth_maps, known_K, indices, notes)
        sparse, method = None, "rgbd"
        scale_source = "given depth maps (RGB-D)"
    elif count == 2 and only_turns((pair := rotation_chain(arrays, items, indices, given_K, fov_deg))[3], count):
        # motion's pair estimator found the step a pure rotation: the same rotation as motion(frames)
        chain = pair
        poses, registered, K_out, sparse, method = pair[0], pair[1], pair[2], None, "rotation"
    elif count == 2:
        from spatialclaw.primitives.reconstruction.twoview import two_view

        chain = pair  # motion's step, measured just above
        K_pair, focal_words = _fallback_intrinsics(arrays, items, given_K, fov_deg)
        sfm = two_view(arrays, K_pair)
        poses, registered, K_out, sparse = sfm.poses, sfm.registered, sfm.intrinsics, sfm
        method = "two-view"
        notes.append(f"two-view: {sfm.summary}")
    else:
        from spatialclaw.primitives.reconstruction.sfm import nothing_registered, run_sfm

        sfm = guarded(
            partial(run_sfm, arrays, given_K, refine_intrinsics=known_K is None, max_image_size=max_image_size),
            lambda reason: nothing_registered(count, given_K, f"SfM failed: {reason}"),
        )
        if not sfm.registered.any():
            notes.append(sfm.summary)
        poses, registered, K_out, sparse = sfm.poses, sfm.registered, sfm.intrinsics, sfm
        method = "sfm"
    rotation_steps = None
    if method in ("sfm", "two-view") and chain is None:
        chain = rotation_chain(arrays, items, indices, given_K, fov_deg)  # motion's steps, one estimator for both
    # a camera that only turns leaves SfM with few frames, or frames that see no 3D point (their poses are
    # arbitrary): when motion measured no translation, or SfM placed at most half the frames, motion's
    # rotation chain wins if it registers more (or as many as point-less SfM); a few unregistered frames of a
    # moving camera are just unmatched
    if method == "rotation" or (method in ("sfm", "two-view") and chain is not None):
        assert chain is not None  # computed for every input of two or more frames without sensor depth
        turned = not any(step.kind == "translation" for step in chain[3])
        few = bool(registered.sum() <= max(1, count / 2))
        pointless = sparse is not None and any(len(sparse.observations[i]) == 0 for i in np.flatnonzero(registered))
        better = chain[1].sum() > max(int(registered.sum()), 1) or (pointless and chain[1].sum() >= 2)
        if method != "rotation" and (turned or few) and better:
            notes.append(
                f"{method} registered {int(registered.sum())} of {count} frames; the camera only turns "
                f"(no parallax), so the frames were solved as rotations instead"
            )
            method = "rotation"
        if method == "rotation" or few:
            rotation_steps = chain[3]  # the reasons of frames SfM could not place
        if method == "rotation":
            poses, registered, K_out, focal_words = chain[0], chain[1], chain[2], chain[4]
            sparse = None
            notes.append(f"rotation-only: camera centres are all at the first camera's; focal: {focal_words}")
    if method in ("sfm", "two-view") and registered.sum() < 2 and depth_maps is not None:
        # no initial pair (too little camera motion, weak texture); depth still allows PnP registration
        K_guess, focal_words = _fallback_intrinsics(arrays, items, known_K, fov_deg)
        poses, registered, K_out, rgbd_inliers = _rgbd(arrays, depth_maps, K_guess, indices, notes)
        sparse, method = None, "rgbd"
        notes.append(
            f"SfM could not initialise (too little camera motion between the views); poses come from "
            f"depth + PnP with {focal_words} intrinsics"
        )
    if rotation_steps is None and count >= 2 and registered.sum() < 2:
        rotation_steps = rotation_chain(arrays, items, indices, given_K, fov_deg)[3]
    if registered.sum() < min(2, count):
        assert rotation_steps is not None  # computed just above whenever fewer than two frames are registered
        raise ReconstructionError(
            f"only {int(registered.sum())} of {count} frames could be registered (frames {indices}): "
            + "; ".join(f"frames {s.frame_a}->{s.frame_b}: {s.kind} ({s.reason})" for s in rotation_steps[:4])
            + f". {advice(rotation_steps, arrays)}"
        )
    unregistered = [indices[i] for i in np.flatnonzero(~registered)]
    if unregistered:
        message = (
            f"frames {unregistered} could not be registered; their poses are NaN (see rec.frame_status for "
            f"the reason per frame)"
        )
        notes.append(message)
        warnings.warn(message, stacklevel=2)

    metric = depth_maps is not None
    if method in ("sfm", "two-view") and depth_maps is not None and sparse is not None:
        scale = metric_scale(sparse, depth_maps, registered)
        if scale is None:
            notes.append("depth maps and SfM points did not overlap enough to fix the scale; units are arbitrary")
            metric = False
            scale_source = "none: arbitrary units (depth and SfM points did not agree)"
        else:
            poses = poses.copy()
            poses[:, :3, 3] *= scale
            sparse.points = sparse.points * scale

    points, colors, confidence, point_frames = world_points(
        arrays, indices, poses, K_out, registered, depth_maps if metric else None, depth_confidences, sparse
    )
    poses, points = gravity_align(poses, points, registered, metric)
    if method == "rotation" and not len(points) and chain is not None and chain.tilt_deg is not None:
        poses = leveled(poses, chain.tilt_deg)  # no floor: up is the vertical motion measured the turns about
        notes.append(
            f"up: the vertical the camera turns about (motion measured the first camera pitched "
            f"{chain.tilt_deg:+.0f} deg), as motion's angles are"
        )
    focal = describe_focal(  # given focal lengths are all checked, estimated ones where a frame registered
        method,
        np.stack(known_K) if known_K is not None else K_out,
        _widths(arrays),
        np.ones(count, dtype=bool) if known_K is not None else registered,
        indices,
        given=known_K is not None,
        sensor=sensor_depth,
        prior=prior_K is not None,
        words=focal_words,
        sfm_views=sparse.focal_views if method == "sfm" and sparse is not None else 0,
        sfm_sd=sparse.focal_sd if method == "sfm" and sparse is not None else float("nan"),
    )
    notes.extend(focal_notes(focal, method, arrays, poses, registered, K_out))
    return Reconstruction(
        poses=poses,
        intrinsics=K_out,
        depth=list(depth_maps) if depth_maps is not None and metric else [None] * count,
        points=points,
        colors=colors,
        confidence=confidence,
        point_frames=point_frames,
        frame_indices=np.array(indices),
        registered=registered,
        metric=metric,
        scale_source=scale_source,
        method=method,
        notes=notes,
        frame_status=frame_status(method, indices, registered, sparse, rgbd_inliers, rotation_steps),
        focal=focal,
        rotation_sd_deg=sparse.rotation_sd_deg if method == "sfm" and sparse is not None else None,
    )


def _widths(arrays: list[np.ndarray]) -> list[int]:
    return [int(rgb.shape[1]) for rgb in arrays]


def _learned_backend(backend: object) -> MultiViewBackend | None:
    if backend is None:
        return Da3Backend() if os.environ.get(SOCKET_ENV_VAR) else None
    if isinstance(backend, str):
        if backend == "classical":
            return None
        if backend == "da3":
            return Da3Backend()
        raise ValueError(f"backend must be 'classical', 'da3' or a MultiViewBackend, got {backend!r}")
    if not isinstance(backend, MultiViewBackend):
        raise ValueError(f"backend must be 'classical', 'da3' or a MultiViewBackend, got {type(backend).__name__}")
    return backend


def _cross_check(rec: Reconstruction, arrays: list[np.ndarray]) -> list[str]:
    depth = [d for d in rec.depth if d is not None] if rec.metric else None
    try:
        classical = reconstruct(arrays, depth=depth, intrinsics=rec.intrinsics, backend="classical")
    except (ReconstructionError, ValueError) as error:
        return [f"cross-check: the classical path could not run on these frames ({error})"]
    shift, turn, lines = compare_poses(rec, classical)
    head = f"cross-check with the classical {classical.method} path: largest rotation difference {turn:.2f} deg"
    head += f", largest camera-centre difference {shift:.3f} m" if np.isfinite(shift) else ""
    return [head] + [f"cross-check {line}" for line in lines]


def _rgbd(
    arrays: list[np.ndarray],
    depth_maps: list[np.ndarray],
    intrinsics: list[np.ndarray],
    indices: list[int],
    notes: list[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from spatialclaw.primitives.reconstruction.rgbd_poses import rgbd_poses

    found = rgbd_poses(arrays, depth_maps, intrinsics)
    notes.extend(f"frame {indices[i]} not registered: {reason}" for i, reason in sorted(found.failures.items()))
    return found.poses, found.registered, np.stack(intrinsics), found.inliers


def _fallback_intrinsics(
    arrays: list[np.ndarray], items: list[Any], known_K: list[np.ndarray] | None, fov_deg: float | None = None
) -> tuple[list[np.ndarray], str]:
    from spatialclaw.primitives.geometry.focal_prior import prior_intrinsics

    if known_K is not None:
        return known_K, "the given"
    guesses = [
        prior_intrinsics(item, rgb.shape[1], rgb.shape[0], fov_deg) for item, rgb in zip(items, arrays, strict=True)
    ]
    return [K for K, _ in guesses], guesses[0][1] + "; pass intrinsics= for accuracy"


def _single_frame(rgb: np.ndarray, known_K: list[np.ndarray] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, None]:
    from spatialclaw.primitives.perception.depth import DEFAULT_HFOV_DEG, intrinsics_from_fov

    height, width = rgb.shape[:2]
    K = known_K[0] if known_K is not None else intrinsics_from_fov(width, height, DEFAULT_HFOV_DEG)
    return np.eye(4)[None], np.asarray(K)[None], np.array([True]), None
