"""World points of a reconstruction: the metric scale of SfM from depth maps, the dense (depth-lifted) or
sparse (triangulated) points with colours, confidences and source frames, and the gravity alignment into
the design world frame (+Z up, origin at the first registered camera)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.perception.depth import edge_confidence

if TYPE_CHECKING:
    from spatialclaw.primitives.reconstruction.sfm import SfmResult

__all__ = ["MAX_POINTS", "gravity_align", "metric_scale", "world_points"]

MAX_POINTS = 300_000


def metric_scale(sfm: SfmResult, depth_maps: list[np.ndarray], registered: np.ndarray) -> float | None:
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


def world_points(
    arrays: list[np.ndarray],
    indices: list[int],
    poses: np.ndarray,
    K_out: np.ndarray,
    registered: np.ndarray,
    depth_maps: list[np.ndarray] | None,
    depth_confidences: list[np.ndarray] | None,
    sparse: SfmResult | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """World points with colours, confidences and source frames (-1: triangulated): dense from the depth
    maps of the registered frames when given, else the sparse SfM points."""
    if depth_maps is None:
        if sparse is None or len(sparse.points) == 0:
            return np.zeros((0, 3)), np.zeros((0, 3), np.uint8), np.zeros(0), np.zeros(0, int)
        confidence = np.exp(-sparse.errors) * np.minimum(1.0, sparse.track_lengths / 3.0)
        return sparse.points, sparse.colors, confidence, np.full(len(sparse.points), -1)
    total_pixels = sum(d.size for d, ok in zip(depth_maps, registered, strict=True) if ok)
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
    return (
        np.concatenate(parts),
        np.concatenate(colors).astype(np.uint8),
        np.concatenate(confidences),
        np.concatenate(origins),
    )


def gravity_align(
    poses: np.ndarray, points: np.ndarray, registered: np.ndarray, metric: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Poses and points moved into the design world frame (+Z up; unregistered poses stay NaN)."""
    usable = poses[registered]
    if len(points):
        scale = 1.0 if metric else max(float(np.median(np.linalg.norm(points - usable[0, :3, 3], axis=1))), 1e-9)
    else:
        scale = 1.0
    sample = points
    if len(points) > 40_000:  # plenty for a floor plane, and RANSAC time grows with the point count
        sample = points[np.random.default_rng(0).choice(len(points), 40_000, replace=False)]
    T = geom.gravity_alignment(
        sample if len(sample) >= 3 else np.zeros((0, 3)), usable, threshold=(0.02 if metric else 0.01) * scale
    )
    aligned = np.full_like(poses, np.nan)
    aligned[registered] = T @ usable
    moved = points @ T[:3, :3].T + T[:3, 3] if len(points) else points
    return aligned, moved
