"""Reconstruction with a learned multi-view model: the backend interface and the conversion of its output
into a ``Reconstruction`` in the design world frame.

A learned multi-view backend (Depth Anything 3 first, see ``reconstruction.da3``; the interface is open to
Pi3 / MapAnything-class models) takes up to ``MAX_FRAMES`` images at once and returns, per frame, depth,
pinhole intrinsics, a camera-to-world pose in a world frame of its own choosing and a confidence map
(:class:`MultiViewOutput`). :func:`learned_reconstruction` turns that into the same ``Reconstruction``
the classical path returns: depth and intrinsics brought to each input image's resolution, poses re-anchored
on the first valid camera and then gravity-aligned exactly as the classical path does (design world frame:
metres, right-handed, +Z up, origin at the first registered camera, +Y its forward on the ground; OpenCV
camera axes; poses camera-to-world). :func:`cross_check` compares two reconstructions of the same frames
without depending on their world frames (relative poses only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from spatialclaw.primitives.reconstruction.points import gravity_align, world_points
from spatialclaw.primitives.reconstruction.result import FrameStatus, Reconstruction, ReconstructionError

__all__ = ["MultiViewBackend", "MultiViewOutput", "cross_check", "learned_reconstruction", "resize_to_image"]


@dataclass
class MultiViewOutput:
    """What a learned multi-view backend returns for N images (OpenCV camera axes: x right, y down, z forward).

    Attributes:
        depth: N (h, w) float arrays, depth along the camera z axis (metres when ``metric``; NaN/<=0 = none),
            at the model's processing resolution (a plain resize of the input image).
        intrinsics: (N, 3, 3) pixel intrinsics for the (h, w) of each depth map.
        poses: (N, 4, 4) camera-to-world in the backend's own world frame (any rigid frame; NaN = no pose).
        confidence: N (h, w) float arrays in [0, 1] (1 = trusted).
        metric: True when depth and translations are in metres.
        model: the model's id, for notes and ``scale_source``.
    """

    depth: list[np.ndarray]
    intrinsics: np.ndarray
    poses: np.ndarray
    confidence: list[np.ndarray]
    metric: bool
    model: str


@runtime_checkable
class MultiViewBackend(Protocol):
    """A learned multi-view model: ``run(images, intrinsics)`` for N (H, W, 3) uint8 RGB images (and, when
    known, their (N, 3, 3) pixel intrinsics) returns a :class:`MultiViewOutput`; ``name`` labels it."""

    name: str

    def run(self, images: list[np.ndarray], intrinsics: np.ndarray | None = None) -> MultiViewOutput: ...


def resize_to_image(
    depth: np.ndarray, confidence: np.ndarray, K: np.ndarray, width: int, height: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Depth (metres), confidence and (3, 3) intrinsics of an (h, w) processing resolution brought to the
    image's ``width`` x ``height`` pixels (the processed image is taken to be a plain resize of it; pixel
    centres at integer coordinates, so cx' = (cx + 0.5) * sx - 0.5)."""
    import cv2

    h, w = depth.shape
    sx, sy = width / w, height / h
    K = np.asarray(K, dtype=np.float64)
    scaled = np.array(
        [
            [K[0, 0] * sx, K[0, 1] * sx, (K[0, 2] + 0.5) * sx - 0.5],
            [0.0, K[1, 1] * sy, (K[1, 2] + 0.5) * sy - 0.5],
            [0.0, 0.0, 1.0],
        ]
    )
    depth = np.where(np.isfinite(depth) & (depth > 0), depth, np.nan).astype(np.float32)
    confidence = np.clip(np.nan_to_num(confidence.astype(np.float32)), 0.0, 1.0)
    if (h, w) != (height, width):
        # nearest keeps depth edges sharp (no mixed foreground/background depths) and NaN holes as they are
        depth = cv2.resize(depth, (width, height), interpolation=cv2.INTER_NEAREST)
        confidence = cv2.resize(confidence, (width, height), interpolation=cv2.INTER_LINEAR)
    confidence = np.where(np.isfinite(depth), confidence, 0.0).astype(np.float32)
    return depth, confidence, scaled


def learned_reconstruction(
    arrays: list[np.ndarray],
    indices: list[int],
    backend: MultiViewBackend,
    intrinsics: list[np.ndarray] | None = None,
    notes: list[str] | None = None,
) -> Reconstruction:
    """Run ``backend`` on the RGB ``arrays`` (absolute frame ``indices``) and return a ``Reconstruction`` in
    the design world frame, method ``"learned"``. ``intrinsics``: known (3, 3) pixel intrinsics per frame,
    passed to the backend (which may or may not use them)."""
    notes = list(notes or [])
    count = len(arrays)
    out = backend.run(arrays, None if intrinsics is None else np.stack(intrinsics))
    if len(out.depth) != count or len(out.poses) != count or len(out.intrinsics) != count:
        raise ValueError(
            f"the multi-view backend {out.model!r} returned {len(out.depth)} depth maps, {len(out.poses)} poses "
            f"and {len(out.intrinsics)} intrinsics for {count} frames"
        )
    depths, confidences, Ks = [], [], []
    for rgb, d, c, K in zip(arrays, out.depth, out.confidence, out.intrinsics, strict=True):
        d2, c2, K2 = resize_to_image(np.asarray(d), np.asarray(c), K, rgb.shape[1], rgb.shape[0])
        depths.append(d2)
        confidences.append(c2)
        Ks.append(K2)
    poses_in = np.asarray(out.poses, dtype=np.float64)
    registered = np.array([bool(np.isfinite(p).all()) for p in poses_in])
    if registered.sum() < min(2, count):
        raise ReconstructionError(
            f"the multi-view model {out.model!r} gave a pose for {int(registered.sum())} of {count} frames "
            f"(frames {indices}); use fewer, more overlapping frames or the classical path (backend='classical')"
        )
    first = int(np.flatnonzero(registered)[0])
    anchor = np.linalg.inv(poses_in[first])  # the first valid camera becomes the origin before gravity alignment
    poses = np.full_like(poses_in, np.nan)
    poses[registered] = anchor @ poses_in[registered]
    K_out = np.stack(Ks)
    points, colors, point_conf, point_frames = world_points(
        arrays, indices, poses, K_out, registered, depths, confidences, None
    )
    poses, points = gravity_align(poses, points, registered, out.metric)
    status = []
    for i, index in enumerate(indices):
        if not registered[i]:
            status.append(FrameStatus(index, "unregistered", 0, 0.0, f"{out.model} gave no pose"))
            continue
        valid = int(np.isfinite(depths[i]).sum())
        conf = float(np.median(confidences[i][np.isfinite(depths[i])])) if valid else 0.0
        kind, reason = ("reference", "defines the world frame") if i == first else ("registered", "")
        reason = reason or f"learned multi-view model {out.model}: pose and depth predicted jointly"
        status.append(FrameStatus(index, kind, valid, conf, reason))
    unit = f"multi-view model {out.model}"
    return Reconstruction(
        poses=poses,
        intrinsics=K_out,
        depth=list(depths) if out.metric else [None] * count,
        points=points,
        colors=colors,
        confidence=point_conf,
        point_frames=point_frames,
        frame_indices=np.array(indices),
        registered=registered,
        metric=out.metric,
        scale_source=unit if out.metric else f"none: arbitrary units ({out.model} is not a metric model)",
        method="learned",
        notes=notes + [f"learned: poses, intrinsics and depth from {backend.name} ({out.model})"],
        frame_status=status,
        backend=f"{backend.name} ({out.model})",
    )


def _angle_deg(R: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0))))


def cross_check(learned: Reconstruction, classical: Reconstruction) -> tuple[float, float, list[str]]:
    """Agreement of two reconstructions of the same frames, independent of their world frames: each frame's
    pose relative to the first frame both registered, compared. Returns (largest camera-centre difference,
    in metres when both are metric else NaN; largest rotation difference, degrees; one line per frame)."""
    both = learned.registered & classical.registered
    if both.sum() < 2:
        return float("nan"), float("nan"), ["cross-check: fewer than two frames registered by both methods"]
    first = int(np.flatnonzero(both)[0])
    metric = learned.metric and classical.metric
    worst_t, worst_r, lines = 0.0, 0.0, []
    for i in np.flatnonzero(both)[1:]:
        a = np.linalg.inv(learned.poses[first]) @ learned.poses[i]
        b = np.linalg.inv(classical.poses[first]) @ classical.poses[i]
        rotation = _angle_deg(a[:3, :3].T @ b[:3, :3])
        worst_r = max(worst_r, rotation)
        text = f"frame {int(learned.frame_indices[i])}: rotation differs by {rotation:.2f} deg"
        if metric:
            shift = float(np.linalg.norm(a[:3, 3] - b[:3, 3]))
            worst_t = max(worst_t, shift)
            text += f", camera centre by {shift:.3f} m"
        lines.append(text)
    return (worst_t if metric else float("nan")), worst_r, lines
