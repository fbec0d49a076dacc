"""Oriented 3D bounding boxes of point sets (part of ``geom``).

By default boxes are gravity-aware: the box stands upright on the world's XY plane (+Z up) and only
turns about +Z (yaw), which is what "how long / wide / tall is it" questions mean. A full PCA box that
may tilt is available with ``upright=False``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_points
from spatialclaw.primitives.geometry.plausibility import size_note

__all__ = ["OrientedBox", "oriented_box"]

_CORNER_SIGNS = np.array(
    [
        [-1, -1, -1],
        [1, -1, -1],
        [1, 1, -1],
        [-1, 1, -1],
        [-1, -1, 1],
        [1, -1, 1],
        [1, 1, 1],
        [-1, 1, 1],
    ],
    dtype=np.float64,
)


@dataclass(frozen=True)
class OrientedBox:
    """A box in the world frame of its points (metres).

    Attributes:
        center: (3,) box centre.
        size: (3,) edge lengths along the box axes. For an upright box: (length, width, height) with
            length >= width the two horizontal edges and height along +Z.
        rotation: (3, 3) whose columns are the box axes in world coordinates (right-handed);
            ``world = center + rotation @ local``.
        upright: True when the box only turns about +Z (gravity-aware); then ``yaw_deg`` is the angle of
            the long horizontal axis from +X towards +Y, in [0, 180).
    """

    center: np.ndarray
    size: np.ndarray
    rotation: np.ndarray
    upright: bool
    yaw_deg: float | None = None

    @property
    def corners(self) -> np.ndarray:
        """(8, 3) corners: bottom face (-z) first in the order (-,-), (+,-), (+,+), (-,+) of the box's
        first two axes, then the top face in the same order."""
        corners: np.ndarray = self.center + (_CORNER_SIGNS * (self.size / 2.0)) @ self.rotation.T
        return corners

    @property
    def volume(self) -> float:
        """Volume in cubic metres."""
        return float(np.prod(self.size))

    @property
    def footprint(self) -> np.ndarray:
        """(4, 2) XY corners of the bottom face, metres (the box seen from above)."""
        return self.corners[:4, :2]

    def contains(self, points: Any, margin: float = 0.0) -> np.ndarray:
        """(N,) bool: which (N, 3) points lie inside the box grown by ``margin`` metres."""
        local = (as_points(points) - self.center) @ self.rotation
        inside: np.ndarray = (np.abs(local) <= self.size / 2.0 + margin + 1e-12).all(axis=1)
        return inside

    def __repr__(self) -> str:
        c = ", ".join(f"{v:.3f}" for v in self.center)
        s = " x ".join(f"{v:.3f}" for v in self.size)
        kind = f"upright, yaw {self.yaw_deg:.1f} deg" if self.upright else "PCA"
        note = size_note(self.size)
        return f"OrientedBox(center=({c}) m, size={s} m, {kind}, volume={self.volume:.4f} m^3)" + (
            f" IMPLAUSIBLE? {note}" if note else ""
        )


def _min_area_rectangle(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Centre (2,), extents (2,) with extents[0] >= extents[1], angle (rad) of the long axis."""
    unique = np.unique(np.round(xy, 9), axis=0)
    candidates = [0.0]
    if len(unique) >= 3:
        from scipy.spatial import ConvexHull, QhullError

        try:
            hull = unique[ConvexHull(unique).vertices]
            edges = np.roll(hull, -1, axis=0) - hull
            candidates = np.arctan2(edges[:, 1], edges[:, 0]).tolist()
        except QhullError:
            candidates = []
    if len(candidates) == 0 or len(unique) < 3:
        centred = unique - unique.mean(axis=0)
        if len(unique) >= 2:
            _, _, vt = np.linalg.svd(centred, full_matrices=False)
            candidates = [float(np.arctan2(vt[0, 1], vt[0, 0]))]
    best: tuple[float, float, np.ndarray, np.ndarray, np.ndarray] | None = None
    for theta in candidates:
        c, s = np.cos(theta), np.sin(theta)
        axes = np.array([[c, s], [-s, c]])
        local = xy @ axes.T
        lo, hi = local.min(axis=0), local.max(axis=0)
        area = float(np.prod(hi - lo))
        if best is None or area < best[0] - 1e-15:
            best = (area, theta, lo, hi, axes)
    assert best is not None  # candidates is never empty (a single 0.0 or the PCA axis at least)
    _, theta, lo, hi, axes = best
    centre = ((lo + hi) / 2.0) @ axes
    extents = hi - lo
    if extents[1] > extents[0]:
        extents = extents[::-1]
        theta += np.pi / 2.0
    theta = float(np.mod(theta, np.pi))
    if np.isclose(theta, np.pi):
        theta = 0.0
    return centre, extents, theta


def oriented_box(points: Any, upright: bool = True) -> OrientedBox:
    """Tightest oriented box around a point set.

    Args:
        points: (N, 3) points in metres, in a gravity-aligned world frame (+Z up) when ``upright``.
        upright: True (default): yaw-only box, the minimum-area rectangle of the points seen from above,
            extruded from their lowest to highest Z. False: a box along the principal axes (PCA) of
            the points, which may tilt; size is then ordered by decreasing spread.

    Returns:
        An ``OrientedBox`` (centre, size, rotation, corners, volume; ``yaw_deg`` for upright boxes).
        Outlying points (depth noise at object edges) enlarge the box; filter them first if needed.
    """
    pts = as_points(points)
    if upright:
        centre_xy, extents, theta = _min_area_rectangle(pts[:, :2])
        z_lo, z_hi = pts[:, 2].min(), pts[:, 2].max()
        axis0 = np.array([np.cos(theta), np.sin(theta), 0.0])
        up = np.array([0.0, 0.0, 1.0])
        rotation = np.stack([axis0, np.cross(up, axis0), up], axis=1)
        centre = np.array([centre_xy[0], centre_xy[1], (z_lo + z_hi) / 2.0])
        size = np.array([extents[0], extents[1], z_hi - z_lo])
        return OrientedBox(centre, size, rotation, upright=True, yaw_deg=float(np.degrees(theta)))
    mean = pts.mean(axis=0)
    if len(pts) >= 2:
        _, _, vt = np.linalg.svd(pts - mean, full_matrices=False)
        rotation = np.eye(3)
        rotation[:, : vt.shape[0]] = vt.T
        if vt.shape[0] < 3:
            rotation[:, 2] = np.cross(rotation[:, 0], rotation[:, 1])
    else:
        rotation = np.eye(3)
    if np.linalg.det(rotation) < 0:
        rotation[:, 2] *= -1
    local = (pts - mean) @ rotation
    lo, hi = local.min(axis=0), local.max(axis=0)
    centre = mean + rotation @ ((lo + hi) / 2.0)
    return OrientedBox(centre, hi - lo, rotation, upright=False)
