"""Synthetic scenes with exact geometry for the geometry/scene tests: boxes, cameras, analytic depth."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in the world frame (metres)."""

    center: tuple[float, float, float]
    size: tuple[float, float, float]

    @property
    def lo(self) -> np.ndarray:
        return np.asarray(self.center) - np.asarray(self.size) / 2

    @property
    def hi(self) -> np.ndarray:
        return np.asarray(self.center) + np.asarray(self.size) / 2

    def surface_points(self, step: float = 0.05) -> np.ndarray:
        """Points on all six faces on the global lattice of spacing ``step`` (bounds must be multiples of it),
        so the sample is symmetric (centroid = centre) and faces of different boxes share (y, z) etc."""
        lo, hi = self.lo, self.hi
        axes = [np.round(np.arange(np.round(lo[i] / step), np.round(hi[i] / step) + 1) * step, 9) for i in range(3)]
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
        on_face = (np.isclose(grid, lo) | np.isclose(grid, hi)).any(axis=1)
        return grid[on_face]

    def distance_to_surface(self, points: np.ndarray) -> np.ndarray:
        """Unsigned distance of points to the box's surface."""
        q = np.abs(points - np.asarray(self.center)) - np.asarray(self.size) / 2
        outside = np.linalg.norm(np.maximum(q, 0), axis=1)
        inside = np.minimum(q.max(axis=1), 0)
        return np.abs(outside + inside)


def look_at(eye, target, up=(0.0, 0.0, 1.0), roll_deg: float = 0.0) -> np.ndarray:
    """(4, 4) camera-to-world pose of an OpenCV camera at ``eye`` looking at ``target`` (+Z up world)."""
    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    z = target - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    R = np.stack([x, y, z], axis=1)
    if roll_deg:
        c, s = np.cos(np.radians(roll_deg)), np.sin(np.radians(roll_deg))
        R = R @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = R, eye
    return pose


def intrinsics(width: int = 320, height: int = 240, focal: float = 260.0) -> np.ndarray:
    return np.array([[focal, 0, (width - 1) / 2], [0, focal, (height - 1) / 2], [0, 0, 1.0]])


def render_depth(
    K: np.ndarray, pose: np.ndarray, width: int, height: int, boxes: list[Box], floor_z: float | None = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact z-depth (metres) and the id of the hit (box index, -1 floor, -2 nothing) per pixel."""
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    rays_cam = np.stack([(xs - K[0, 2]) / K[0, 0], (ys - K[1, 2]) / K[1, 1], np.ones_like(xs)], axis=-1)
    rays = rays_cam.reshape(-1, 3) @ pose[:3, :3].T  # world direction per unit camera z
    origin = pose[:3, 3]
    best = np.full(len(rays), np.inf)
    ids = np.full(len(rays), -2)
    with np.errstate(divide="ignore", invalid="ignore"):
        for index, box in enumerate(boxes):
            t1 = (box.lo - origin) / rays
            t2 = (box.hi - origin) / rays
            t_near = np.nanmax(np.minimum(t1, t2), axis=1)
            t_far = np.nanmin(np.maximum(t1, t2), axis=1)
            hit = (t_near <= t_far) & (t_near > 0) & (t_near < best)
            best[hit], ids[hit] = t_near[hit], index
        if floor_z is not None:
            t = (floor_z - origin[2]) / rays[:, 2]
            hit = (t > 0) & (t < best)
            best[hit], ids[hit] = t[hit], -1
    depth = np.where(np.isfinite(best), best, 0.0)
    return depth.reshape(height, width), ids.reshape(height, width)
