"""Multi-view reconstruction: camera poses, intrinsics, per-frame metric depth and world points.

``reconstruct(frames)`` handles 1 to ``MAX_FRAMES`` frames:

- Poses: with metric depth given for every frame plus known intrinsics (an RGB-D sensor), frames are
  registered one by one by SIFT matching and PnP on the depth-lifted points (metric, "rgbd" method).
  Otherwise incremental structure from motion (pycolmap: SIFT, exhaustive matching, bundle adjustment;
  "sfm" method), which also estimates the focal length when none is given. One frame: identity pose.
- Scale: SfM alone has no scale. It is made metric with depth maps: user-given ones, or a learned metric
  depth model (``depth="auto"``, the default, uses ``depth.DEFAULT_MODEL`` when its weights are available).
  ``.metric`` and ``.scale_source`` say which; without depth the units are arbitrary.
- Small frames (benchmark key frames, 150-250 px wide): features are detected upsampled and mapped back to
  the original pixels and intrinsics.
- A camera that only turns (no parallax: SfM cannot triangulate): detected by the parallax test of
  ``motion`` and solved as rotation (a homography chain; focal from ``intrinsics``, ``fov_deg``, EXIF or
  self-calibration, as ``rec.notes`` says): method "rotation", camera centres all at the origin.
- Per frame, ``rec.frame_status`` says what happened (registered / rotation-only / unregistered), with
  the inliers, a confidence and the reason: partial results are returned, not an all-or-nothing error.
- World frame (DESIGN.md): metres, right-handed, gravity-aligned +Z up (floor plane by RANSAC, else the first
  camera's up), origin at the first registered camera, +Y its forward projected on the ground, +X its right.
  Poses are camera-to-world (4, 4), OpenCV camera axes (x right, y down, z forward).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.perception.depth import DepthResult, _load_rgb, edge_confidence
from spatialclaw.primitives.geometry.camera import as_intrinsics

__all__ = ["MAX_FRAMES", "FrameStatus", "Reconstruction", "ReconstructionError", "reconstruct"]

MAX_FRAMES = 64
MAX_POINTS = 300_000


class ReconstructionError(RuntimeError):
    """Not enough of the frames could be registered to build a reconstruction."""


@dataclass
class FrameStatus:
    """How one frame fared. frame: absolute index; status: "reference" (defines the world), "registered"
    (full pose), "rotation-only" (orientation; centre fixed at the reference's: the camera only turned) or
    "unregistered"; inliers: matches / 3D points supporting its pose; confidence in [0, 1] (inliers and
    their agreement; 1 for the reference); reason: plain words."""

    frame: int
    status: str
    inliers: int
    confidence: float
    reason: str

    def __str__(self) -> str:
        return f"frame {self.frame}: {self.status} ({self.inliers} inliers, confidence {self.confidence:.2f}; {self.reason})"


@dataclass
class Reconstruction:
    """Cameras and 3D points of a set of frames in the design world frame (metres when ``metric``).

    Attributes:
        poses: (N, 4, 4) camera-to-world, in the order of the input frames; NaN rows for frames that
            could not be registered (see ``registered``).
        intrinsics: (N, 3, 3) pixel intrinsics per frame (NaN where unknown).
        depth: per frame an (H, W) float32 depth map in metres (NaN = none), or None when no depth is known.
        points: (M, 3) world points (metres when ``metric``); dense from the depth maps when there are any,
            else the sparse SfM points.
        colors: (M, 3) uint8 RGB of each point.
        confidence: (M,) in [0, 1] per point (depth-edge heuristic for dense points; reprojection error and
            track length for sparse ones).
        point_frames: (M,) absolute index of the frame a dense point came from; -1 for triangulated points.
        frame_indices: (N,) absolute frame indices.
        registered: (N,) bool, which frames got a pose.
        metric: True when distances are in metres.
        scale_source: where the scale came from ("rgbd sensor depth", "given depth maps", "depth model X",
            or "none: arbitrary units ...").
        method: "rgbd", "sfm", "two-view" (essential matrix), "rotation" (a turning camera: homography
            chain, centres at the origin) or "single-frame".
        notes: plain-language remarks (unregistered frames, fallbacks, where the focal length came from).
        frame_status: one ``FrameStatus`` per frame (status, inliers, confidence, reason).
    """

    poses: np.ndarray
    intrinsics: np.ndarray
    depth: list[np.ndarray | None]
    points: np.ndarray
    colors: np.ndarray
    confidence: np.ndarray
    point_frames: np.ndarray
    frame_indices: np.ndarray
    registered: np.ndarray
    metric: bool
    scale_source: str
    method: str
    notes: list[str] = field(default_factory=list)
    frame_status: list[FrameStatus] = field(default_factory=list)

    def _position(self, frame_index: int) -> int:
        matches = np.flatnonzero(self.frame_indices == frame_index)
        if len(matches) == 0:
            raise KeyError(f"frame {frame_index} is not in this reconstruction; its frames are {self.frame_indices.tolist()}")
        position = int(matches[0])
        if not self.registered[position]:
            raise KeyError(f"frame {frame_index} could not be registered (no pose); registered frames: "
                           f"{self.frame_indices[self.registered].tolist()}")
        return position

    def pose(self, frame_index: int) -> np.ndarray:
        """(4, 4) camera-to-world pose of the frame with this ABSOLUTE index."""
        return self.poses[self._position(frame_index)]

    def camera_center(self, frame_index: int) -> np.ndarray:
        """(3,) world position of the camera of the frame with this absolute index (metres when metric)."""
        return self.pose(frame_index)[:3, 3].copy()

    @property
    def unregistered(self) -> list[int]:
        """Absolute indices of the frames without a pose."""
        return self.frame_indices[~self.registered].tolist()

    def __repr__(self) -> str:
        unit = "m" if self.metric else "units"
        centres = self.poses[self.registered][:, :3, 3]
        span = float(np.linalg.norm(centres.max(axis=0) - centres.min(axis=0))) if len(centres) else 0.0
        text = (f"Reconstruction({self.registered.sum()}/{len(self.registered)} frames registered, method={self.method}, "
                f"{len(self.points)} points, camera span {span:.3g} {unit}, metric={self.metric} ({self.scale_source})")
        if self.unregistered:
            text += f", unregistered frames {self.unregistered}"
        lines = [text + ")"] + [f"  {status}" for status in self.frame_status] + [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def bev(self, size: int = 640, max_points: int = 50_000, z_range: tuple[float, float] | None = None):
        """Bird's-eye view (PIL image): points seen from above (world X right, Y up on the page), coloured by
        their RGB, and each registered camera as a dot with an arrow along its forward direction, labelled
        with its absolute frame index. ``z_range`` (min, max) keeps only points in that height band (e.g.
        (-2, 0.5) hides the ceiling)."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        from spatialclaw.primitives.imaging import as_pil

        points, colors = self.points, self.colors
        if z_range is not None:
            keep = (points[:, 2] >= z_range[0]) & (points[:, 2] <= z_range[1])
            points, colors = points[keep], colors[keep]
        if len(points) > max_points:
            chosen = np.random.default_rng(0).choice(len(points), max_points, replace=False)
            points, colors = points[chosen], colors[chosen]
        unit = "m" if self.metric else "arbitrary units"
        fig, ax = plt.subplots(figsize=(size / 100, size / 100), dpi=100)
        if len(points):
            ax.scatter(points[:, 0], points[:, 1], c=colors / 255.0, s=1, linewidths=0)
        centres = self.poses[self.registered][:, :3, 3]
        forwards = self.poses[self.registered][:, :3, 2]
        extent = np.ptp(np.vstack([points[:, :2], centres[:, :2]]), axis=0).max() if len(points) else 1.0
        arrow = 0.08 * max(float(extent), 1e-6)
        for centre, forward, index in zip(centres, forwards, self.frame_indices[self.registered]):
            direction = forward[:2] / max(np.linalg.norm(forward[:2]), 1e-9)
            ax.plot(centre[0], centre[1], "o", color="red", markersize=4)
            ax.annotate("", xy=(centre[0] + arrow * direction[0], centre[1] + arrow * direction[1]),
                        xytext=(centre[0], centre[1]), arrowprops={"arrowstyle": "->", "color": "red"})
            ax.text(centre[0], centre[1], f" {index}", color="red", fontsize=7)
        ax.set_aspect("equal")
        ax.set_xlabel(f"X ({unit}), right of first camera")
        ax.set_ylabel(f"Y ({unit}), forward of first camera")
        ax.set_title("bird's-eye view (+Z up), cameras in red with frame index")
        ax.grid(True, linewidth=0.3)
        image = as_pil(fig)
        plt.close(fig)
        return image


# ---- inputs -----------------------------------------------------------------------------------------------


def _frames_as_arrays(frames: Any) -> tuple[list[np.ndarray], list[int], list[Any]]:
    if isinstance(frames, np.ndarray) and frames.ndim == 4:
        frames = list(frames)  # (N, H, W, 3) stack
    elif isinstance(frames, (str, Path)) or hasattr(frames, "shape") or hasattr(frames, "mode"):
        frames = [frames]  # one image
    items = list(frames)
    if not items:
        raise ValueError("reconstruct needs at least one frame; got an empty sequence")
    if len(items) > MAX_FRAMES:
        raise ValueError(
            f"reconstruct takes at most {MAX_FRAMES} frames, got {len(items)}; subsample first, e.g. "
            f"reconstruct(frames.sample(count=32)) or reconstruct(frames[::{int(np.ceil(len(items) / 32))}])"
        )
    arrays = [_load_rgb(item) for item in items]
    indices = []
    for position, item in enumerate(items):
        index = getattr(item, "index", None)
        indices.append(int(index) if isinstance(index, (int, np.integer)) else position)
    return arrays, indices, items


def _intrinsics_per_frame(intrinsics: Any, count: int) -> list[np.ndarray] | None:
    if intrinsics is None:
        return None
    array = np.asarray(intrinsics, dtype=np.float64)
    if array.shape == (3, 3):
        return [as_intrinsics(array, name="intrinsics")] * count
    if array.shape == (count, 3, 3):
        return [as_intrinsics(K, name=f"intrinsics[{i}]") for i, K in enumerate(array)]
    raise ValueError(f"intrinsics must be one (3, 3) matrix in pixels or one per frame ({count}, 3, 3); got shape {array.shape}")


def _given_depths(depth: Any, arrays: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray | None], list[np.ndarray]]:
    """Depth maps (metres), their intrinsics when they carry them, and confidences, from user input."""
    items = list(depth) if isinstance(depth, (list, tuple)) or (isinstance(depth, np.ndarray) and depth.ndim == 3) else None
    if items is None or len(items) != len(arrays):
        raise ValueError(f"depth must be None, 'auto', or one depth map per frame ({len(arrays)} of them: DepthResult "
                         f"or (H, W) arrays in metres)")
    maps, intrinsics, confidences = [], [], []
    for i, (item, rgb) in enumerate(zip(items, arrays)):
        if isinstance(item, DepthResult):
            values, K, confidence = item.depth, (item.intrinsics if item.intrinsics_source != "default-fov" else None), item.confidence
        else:
            values, K, confidence = np.asarray(item), None, None
            if values.dtype.kind in "ui":
                raise ValueError(f"depth[{i}] is an integer array ({values.dtype}); pass metres as floats, e.g. "
                                 f"millimetre PNGs / 1000.0 (TUM: / 5000.0)")
        if values.shape != rgb.shape[:2]:
            raise ValueError(f"depth[{i}] has shape {values.shape} but frame {i} is {rgb.shape[:2]} (H, W); resize the "
                             f"depth map to the frame (nearest neighbour) first")
        values = np.where(np.isfinite(values) & (values > 0), values, np.nan).astype(np.float32)
        maps.append(values)
        intrinsics.append(K)
        confidences.append(confidence if confidence is not None else edge_confidence(values))
    return maps, intrinsics, confidences


def _model_depths(arrays: list[np.ndarray], depth_model: str | None, notes: list[str]):
    from spatialclaw.primitives.perception import models
    from spatialclaw.primitives.perception.depth import _model_id, depth as estimate_depth

    try:
        results = [estimate_depth(rgb, model=depth_model) for rgb in arrays]
    except models.MissingWeightsError:
        notes.append(f"no metric depth model available ({_model_id(depth_model)}: weights missing), so the scale is "
                     f"arbitrary; pass depth maps or make the weights available for metres")
        return None
    return results


# ---- main -------------------------------------------------------------------------------------------------


def reconstruct(
    frames: Any,
    depth: Any = "auto",
    *,
    intrinsics: Any = None,
    depth_model: str | os.PathLike | None = None,
    fov_deg: float | None = None,
    max_image_size: int = 1600,
) -> Reconstruction:
    """Reconstruct cameras and 3D points from 1 to 64 frames of a static scene. Small frames (150-250 px)
    are matched upsampled; a camera that only turns is solved as rotations; ``print(rec)`` lists each
    frame's status (registered / rotation-only / unregistered, inliers, confidence, reason).

    Args:
        frames: ``Frames`` (or a list of ``Frame``, PIL images, (H, W, 3) uint8 arrays or image paths).
            Use a handful to a few dozen overlapping views; subsample long videos (``frames.sample(count=32)``).
        depth: "auto" (default: a learned metric depth model when its weights are available, for metric
            scale), None (no depth: arbitrary scale), or one depth map per frame: ``DepthResult`` objects or
            (H, W) float arrays in metres (e.g. RGB-D sensor depth; NaN or 0 = no depth).
        intrinsics: known (3, 3) pixel intrinsics (all frames) or (N, 3, 3); default: estimated by SfM (or,
            for a turning camera or two views, from ``fov_deg``, EXIF, self-calibration or an assumed 60 deg).
        fov_deg: a stated horizontal field of view in degrees, used when ``intrinsics`` is not given and
            SfM cannot estimate the focal length (two views, a camera that only turns).
        depth_model: the model for ``depth="auto"`` (alias, hub id or folder; see ``depth.MODEL_ALIASES``).
        max_image_size: longest image side in pixels used for feature extraction.

    Returns:
        ``Reconstruction`` (poses (N, 4, 4) camera-to-world in input order, intrinsics, depth, points, colors,
        confidence, frame_indices, registered, metric, scale_source, ``bev()``).

    Raises:
        ValueError: bad input (the message says what to pass).
        ReconstructionError: fewer than two frames could be registered (the message names the cause per
            pair: tiny frames, too few matches, no single motion, and what to do).

    Use ``motion(frames)`` instead when the question is only how the camera (or an object) moves: it is
    faster and reports rotation vs translation per pair; ``reconstruct`` is for 3D points and positions.
    """
    arrays, indices, items = _frames_as_arrays(frames)
    count = len(arrays)
    notes: list[str] = []
    known_K = _intrinsics_per_frame(intrinsics, count)
    depth_maps: list[np.ndarray] | None = None
    depth_confidences: list[np.ndarray] | None = None
    depth_K: list[np.ndarray | None] = [None] * count
    scale_source = "none: arbitrary units (no depth); pass depth maps or a metric depth model for metres"
    sensor_depth = False
    if isinstance(depth, str):
        if depth != "auto":
            raise ValueError(f"depth must be 'auto', None or a list of depth maps, got {depth!r}")
        results = _model_depths(arrays, depth_model, notes)
        if results is not None:
            depth_maps = [r.depth for r in results]
            depth_confidences = [r.confidence for r in results]
            depth_K = [r.intrinsics if r.intrinsics_source == "model" else None for r in results]
            scale_source = f"depth model {results[0].model}"
    elif depth is not None:
        depth_maps, depth_K, depth_confidences = _given_depths(depth, arrays)
        sensor_depth = True
        scale_source = "given depth maps"
    prior_K = None  # focal lengths estimated by a depth model: a starting point that SfM refines
    if known_K is None and all(K is not None for K in depth_K):
        if sensor_depth:
            known_K = list(depth_K)  # type: ignore[arg-type]
        else:
            prior_K = list(depth_K)

    rgbd_inliers = None
    if count == 1:
        poses, K_out, registered, sparse = _single_frame(arrays[0], known_K if known_K is not None else prior_K)
        method = "single-frame"
    elif sensor_depth and known_K is not None:
        poses, registered, K_out, rgbd_inliers = _rgbd(arrays, depth_maps, known_K)
        sparse, method = None, "rgbd"
        scale_source = "given depth maps (RGB-D)"
    elif count == 2 and _turning_pair(arrays, items, indices, known_K, prior_K, fov_deg):
        poses, registered, K_out, sparse, method = None, None, None, None, "rotation"
    elif count == 2:
        from spatialclaw.primitives.reconstruction.twoview import two_view

        K_pair, K_source = _fallback_intrinsics(arrays, items, known_K if known_K is not None else prior_K, fov_deg)
        sfm = two_view(arrays, K_pair)
        poses, registered, K_out, sparse = sfm.poses, sfm.registered, sfm.intrinsics, sfm
        method = "two-view"
        notes.append(f"two-view: {sfm.summary}")
        if known_K is None and prior_K is None:
            notes.append(f"two views cannot fix the focal length: {K_source} intrinsics were used, so rotations "
                         f"are approximate; pass intrinsics= or more views")
    else:
        from spatialclaw.primitives.reconstruction.sfm import run_sfm

        sfm = run_sfm(arrays, known_K if known_K is not None else prior_K, refine_intrinsics=known_K is None,
                      max_image_size=max_image_size)
        poses, registered, K_out, sparse = sfm.poses, sfm.registered, sfm.intrinsics, sfm
        method = "sfm"
    rotation_steps = None
    # a camera that only turns leaves SfM with few or no frames; a few unregistered frames are just unmatched
    if method == "rotation" or (method in ("sfm", "two-view") and registered.sum() <= max(1, count / 2)):
        chain = _rotation_chain(arrays, items, indices, known_K if known_K is not None else prior_K, fov_deg)
        rotation_steps = chain[3]
        if method == "rotation" or chain[1].sum() > max(int(registered.sum()), 1):
            if method != "rotation":
                notes.append(f"{method} registered {int(registered.sum())} of {count} frames; the camera only turns "
                             f"(no parallax), so the frames were solved as rotations instead")
            poses, registered, K_out, focal_source = chain[0], chain[1], chain[2], chain[4]
            sparse, method = None, "rotation"
            notes.append(f"rotation-only: camera centres are all at the first camera's; focal: {focal_source}")
    if method in ("sfm", "two-view") and registered.sum() < 2 and depth_maps is not None:
        # no initial pair (too little camera motion, weak texture); depth still allows PnP registration
        K_guess, K_source = _fallback_intrinsics(arrays, items, known_K, fov_deg)
        poses, registered, K_out, rgbd_inliers = _rgbd(arrays, depth_maps, K_guess)
        sparse, method = None, "rgbd"
        notes.append(f"SfM could not initialise (too little camera motion between the views); poses come from "
                     f"depth + PnP with {K_source} intrinsics")
    if rotation_steps is None and count >= 2 and registered.sum() < 2:
        rotation_steps = _rotation_chain(arrays, items, indices, known_K if known_K is not None else prior_K, fov_deg)[3]
    if registered.sum() < min(2, count):
        raise ReconstructionError(
            f"only {int(registered.sum())} of {count} frames could be registered (frames {indices}): "
            + "; ".join(f"frames {s.frame_a}->{s.frame_b}: {s.kind} ({s.reason})" for s in rotation_steps[:4])
            + f". {_advice(rotation_steps, arrays)}"
        )
    unregistered = [indices[i] for i in np.flatnonzero(~registered)]
    if unregistered:
        message = (f"frames {unregistered} could not be registered; their poses are NaN (see rec.frame_status for "
                   f"the reason per frame)")
        notes.append(message)
        warnings.warn(message, stacklevel=2)

    metric = depth_maps is not None
    if method in ("sfm", "two-view") and depth_maps is not None:
        scale = _metric_scale(sparse, depth_maps, registered)
        if scale is None:
            notes.append("depth maps and SfM points did not overlap enough to fix the scale; units are arbitrary")
            metric = False
            scale_source = "none: arbitrary units (depth and SfM points did not agree)"
        else:
            poses = poses.copy()
            poses[:, :3, 3] *= scale
            sparse.points = sparse.points * scale

    points, colors, confidence, point_frames = _points(arrays, indices, poses, K_out, registered,
                                                       depth_maps if metric else None, depth_confidences, sparse)
    poses, points = _gravity_align(poses, points, registered, metric)
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
        frame_status=_frame_status(method, indices, registered, sparse, rgbd_inliers, rotation_steps),
    )


def _rgbd(arrays, depth_maps, intrinsics):
    from spatialclaw.primitives.reconstruction.rgbd_poses import rgbd_poses

    found = rgbd_poses(arrays, depth_maps, intrinsics)
    return found.poses, found.registered, np.stack(intrinsics), found.inliers


def _fallback_intrinsics(arrays, items, known_K, fov_deg=None):
    from spatialclaw.primitives.geometry.focal_prior import prior_intrinsics

    if known_K is not None:
        return known_K, "the given"
    guesses = [prior_intrinsics(item, rgb.shape[1], rgb.shape[0], fov_deg) for item, rgb in zip(items, arrays)]
    return [K for K, _ in guesses], guesses[0][1] + "; pass intrinsics= for accuracy"


def _turning_pair(arrays, items, indices, known_K, prior_K, fov_deg) -> bool:
    """True when two frames show a camera that only turns (the parallax test of ``motion``)."""
    from spatialclaw.primitives.motion.estimate import motion

    if arrays[0].shape != arrays[1].shape:
        return False
    K = (known_K or prior_K or [None])[0]
    result = motion(_sourced(arrays, items, indices), intrinsics=K, fov_deg=None if K is not None else fov_deg)
    return result.steps[0].kind in ("rotation", "static")


def _rotation_chain(arrays, items, indices, K_list, fov_deg):
    """Poses of a camera that only turns, chaining consecutive rotation steps of ``motion``: (poses, registered,
    intrinsics (N, 3, 3), steps, focal source). A frame after a step that is not a rotation is unregistered."""
    from spatialclaw.primitives.motion.estimate import motion

    count = len(arrays)
    poses = np.full((count, 4, 4), np.nan)
    registered = np.zeros(count, dtype=bool)
    if len({a.shape for a in arrays}) != 1:
        return poses, registered, np.full((count, 3, 3), np.nan), [], "no focal (frames differ in size)"
    K = K_list[0] if K_list is not None else None
    result = motion(_sourced(arrays, items, indices), intrinsics=K, fov_deg=None if K is not None else fov_deg)
    poses[0], registered[0] = np.eye(4), True
    orientation = np.eye(3)
    for i, step in enumerate(result.steps, start=1):
        if step.kind not in ("rotation", "static") or not registered[i - 1]:
            continue
        orientation = poses[i - 1][:3, :3] @ step.geometry.R_ab
        poses[i] = np.eye(4)
        poses[i][:3, :3] = orientation
        registered[i] = True
    return poses, registered, np.stack([result.intrinsics] * count), result.steps, result.focal_source


@dataclass
class _Sourced:
    """A decoded frame with the file it came from (so ``motion`` can still read its EXIF focal length)."""

    array: np.ndarray
    source: Any
    index: int


def _sourced(arrays: list[np.ndarray], items: list[Any], indices: list[int]) -> list[_Sourced]:
    return [_Sourced(array, item if isinstance(item, (str, Path)) else getattr(item, "source", None), index)
            for array, item, index in zip(arrays, items, indices)]


def _advice(steps, arrays) -> str:
    small = max(arrays[0].shape[:2]) < 320
    reasons = " ".join(s.reason for s in steps)
    if "feature matches" in reasons:
        return ("The frames share too few features" + (f" (they are small, {arrays[0].shape[1]}x{arrays[0].shape[0]} px, "
                "already upsampled for matching)" if small else "") + ": use frames closer together in time or "
                "crops of the shared region; depth maps do not help matching")
    if "no single camera motion" in reasons:
        return "Moving objects or repeated texture dominate the matches: mask the moving object or use other frames"
    return "Try frames closer together in time, or give depth maps and intrinsics for an RGB-D reconstruction"


def _frame_status(method, indices, registered, sparse, rgbd_inliers, rotation_steps) -> list[FrameStatus]:
    out = []
    step_into = {s.frame_b: s for s in (rotation_steps or [])}
    for i, index in enumerate(indices):
        step = step_into.get(index)
        if i == 0 and registered[0] and method != "sfm":
            out.append(FrameStatus(index, "reference", 0, 1.0, "defines the world frame"))
        elif not registered[i]:
            reason = (f"{step.kind} from frame {step.frame_a}: {step.reason}" if step is not None
                      else "too few feature matches with the registered frames")
            out.append(FrameStatus(index, "unregistered", 0, 0.0, reason))
        elif method == "rotation":
            out.append(FrameStatus(index, "rotation-only", step.inliers, step.confidence,
                                   f"turned from frame {step.frame_a}: yaw {step.yaw_deg:+.1f}, pitch {step.pitch_deg:+.1f}, "
                                   f"roll {step.roll_deg:+.1f} deg; {step.reason}"))
        elif method == "rgbd":
            count = int(rgbd_inliers[i]) if rgbd_inliers is not None else 0
            out.append(FrameStatus(index, "registered", count, min(1.0, count / 100),
                                   "PnP on depth-lifted feature matches"))
        else:
            count = len(sparse.observations[i]) if sparse is not None else 0
            out.append(FrameStatus(index, "registered", count, min(1.0, count / 100),
                                   f"{method}: {count} triangulated points observed in this frame"))
    return out


def _single_frame(rgb, known_K):
    from spatialclaw.primitives.perception.depth import DEFAULT_HFOV_DEG, intrinsics_from_fov

    height, width = rgb.shape[:2]
    K = known_K[0] if known_K is not None else intrinsics_from_fov(width, height, DEFAULT_HFOV_DEG)
    return np.eye(4)[None], np.asarray(K)[None], np.array([True]), None


def _metric_scale(sfm, depth_maps: list[np.ndarray], registered: np.ndarray) -> float | None:
    """Median ratio of depth-map depth to SfM depth over the SfM points observed in each registered frame."""
    ratios = []
    for i in np.flatnonzero(registered):
        obs = sfm.observations[i]
        if len(obs) == 0:
            continue
        world = sfm.points[obs[:, 2].astype(int)]
        cam_from_world = np.linalg.inv(sfm.poses[i])
        z_sfm = world @ cam_from_world[2, :3] + cam_from_world[2, 3]
        depth = depth_maps[i]
        rows = np.clip(np.round(obs[:, 1]).astype(int), 0, depth.shape[0] - 1)
        cols = np.clip(np.round(obs[:, 0]).astype(int), 0, depth.shape[1] - 1)
        z_map = depth[rows, cols]
        ok = np.isfinite(z_map) & (z_sfm > 0)
        ratios.append(z_map[ok] / z_sfm[ok])
    values = np.concatenate(ratios) if ratios else np.zeros(0)
    if len(values) < 10:
        return None
    return float(np.median(values))


def _points(arrays, indices, poses, K_out, registered, depth_maps, depth_confidences, sparse):
    if depth_maps is None:
        if sparse is None or len(sparse.points) == 0:
            return np.zeros((0, 3)), np.zeros((0, 3), np.uint8), np.zeros(0), np.zeros(0, int)
        confidence = np.exp(-sparse.errors) * np.minimum(1.0, sparse.track_lengths / 3.0)
        return sparse.points, sparse.colors, confidence, np.full(len(sparse.points), -1)
    total_pixels = sum(d.size for d, ok in zip(depth_maps, registered) if ok)
    stride = max(1, int(np.ceil(np.sqrt(total_pixels / MAX_POINTS))))
    parts, colors, confidences, origins = [], [], [], []
    for i in np.flatnonzero(registered):
        pts, pixels = geom.backproject(depth_maps[i], K_out[i], pose=poses[i], stride=stride, return_pixels=True)
        xs, ys = pixels[:, 0].astype(int), pixels[:, 1].astype(int)
        parts.append(pts)
        colors.append(arrays[i][ys, xs])
        conf = depth_confidences[i] if depth_confidences is not None else edge_confidence(depth_maps[i])
        confidences.append(conf[ys, xs].astype(np.float64))
        origins.append(np.full(len(pts), indices[i]))
    return np.concatenate(parts), np.concatenate(colors).astype(np.uint8), np.concatenate(confidences), np.concatenate(origins)


def _gravity_align(poses, points, registered, metric):
    usable = poses[registered]
    if len(points):
        scale = 1.0 if metric else max(float(np.median(np.linalg.norm(points - usable[0, :3, 3], axis=1))), 1e-9)
    else:
        scale = 1.0
    sample = points
    if len(points) > 40_000:  # plenty for a floor plane, and RANSAC time grows with the point count
        sample = points[np.random.default_rng(0).choice(len(points), 40_000, replace=False)]
    T = geom.gravity_alignment(sample if len(sample) >= 3 else np.zeros((0, 3)), usable,
                               threshold=(0.02 if metric else 0.01) * scale)
    aligned = np.full_like(poses, np.nan)
    aligned[registered] = T @ usable
    moved = points @ T[:3, :3].T + T[:3, 3] if len(points) else points
    return aligned, moved
