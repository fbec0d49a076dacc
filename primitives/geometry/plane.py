"""Planes: RANSAC plane fitting, the floor, and gravity alignment of a world frame (part of ``geom``).

The design world frame (DESIGN.md): metric, right-handed, +Z up (normal of the floor), origin at the
first camera's centre, +Y = the first camera's forward direction projected onto the ground, +X its right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics, as_points, as_pose, backproject

__all__ = ["Plane", "camera_up_vectors", "find_floor", "fit_plane", "frame_from_up", "gravity_alignment"]


@dataclass(frozen=True)
class Plane:
    """A plane ``normal · x + offset = 0`` in the frame of the points it was fitted to (metres).

    Attributes:
        normal: (3,) unit normal.
        offset: scalar ``d`` in metres, so the signed distance of ``x`` is ``normal · x + offset``.
        inliers: (N,) bool mask over the input points within the RANSAC threshold.
        rms_m: root-mean-square distance of the inliers to the plane, metres.
        threshold_m: the inlier threshold used, metres.
    """

    normal: np.ndarray
    offset: float
    inliers: np.ndarray = field(repr=False)
    rms_m: float
    threshold_m: float

    @property
    def inlier_count(self) -> int:
        """Number of inlier points."""
        return int(self.inliers.sum())

    @property
    def point(self) -> np.ndarray:
        """(3,) the point of the plane closest to the origin, metres."""
        return -self.offset * self.normal

    def signed_distance(self, points: Any) -> np.ndarray:
        """(N,) signed distances in metres of (N, 3) points; positive on the side the normal points to."""
        distances: np.ndarray = as_points(points) @ self.normal + self.offset
        return distances

    def project(self, points: Any) -> np.ndarray:
        """(N, 3) orthogonal projections of (N, 3) points onto the plane, metres."""
        pts = as_points(points)
        return pts - np.outer(pts @ self.normal + self.offset, self.normal)

    def flipped(self) -> Plane:
        """The same plane with the normal reversed."""
        return Plane(-self.normal, -self.offset, self.inliers, self.rms_m, self.threshold_m)

    def __repr__(self) -> str:
        n = (np.round(self.normal, 4) + 0.0).tolist()
        return (
            f"Plane(normal={n}, offset={self.offset:.4f} m, inliers={self.inlier_count}/{len(self.inliers)}, "
            f"rms={self.rms_m * 100:.2f} cm)"
        )


def _least_squares_plane(points: np.ndarray) -> tuple[np.ndarray, float]:
    centre = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - centre, full_matrices=False)
    normal = vt[-1]
    return normal, float(-normal @ centre)


def fit_plane(
    points: Any,
    threshold: float = 0.02,
    iterations: int = 500,
    seed: int = 0,
    max_score_points: int = 20000,
) -> Plane:
    """Fit the dominant plane of a point cloud by RANSAC, then refine it by least squares on the inliers.

    Args:
        points: (N, 3) points in metres, N >= 3.
        threshold: inlier distance in metres (default 2 cm).
        iterations: RANSAC hypotheses (random point triples).
        seed: random seed; the same input and seed give the same plane.
        max_score_points: hypotheses are scored on a random subset of at most this many points; the final
            inliers are computed on all points.

    Returns:
        A ``Plane`` (unit normal, offset, inlier mask over all N points, inlier rms). The normal's sign is
        arbitrary; use ``plane.flipped()`` or ``find_floor`` for an upward normal.

    Raises:
        ValueError: fewer than 3 points, all points (nearly) collinear, or no plane with 3 inliers.
    """
    pts = as_points(points)
    if len(pts) < 3:
        raise ValueError(f"fit_plane needs at least 3 points, got {len(pts)}")
    if threshold <= 0:
        raise ValueError(f"threshold must be a positive distance in metres, got {threshold}")
    spread = np.linalg.svd(pts - pts.mean(axis=0), compute_uv=False)
    if spread[1] <= 1e-9 * max(spread[0], 1e-12) or spread[0] == 0:
        raise ValueError(
            "degenerate input for fit_plane: the points are (nearly) collinear or identical, so no plane is defined"
        )
    rng = np.random.default_rng(seed)
    score_pts = pts if len(pts) <= max_score_points else pts[rng.choice(len(pts), max_score_points, replace=False)]
    triples = rng.integers(0, len(pts), size=(iterations, 3))
    a, b, c = pts[triples[:, 0]], pts[triples[:, 1]], pts[triples[:, 2]]
    normals = np.cross(b - a, c - a)
    lengths = np.linalg.norm(normals, axis=1)
    good = lengths > 1e-12
    normals, a = normals[good] / lengths[good, None], a[good]
    if len(normals) == 0:
        raise ValueError("fit_plane found no non-degenerate point triple; the points may be collinear")
    offsets = -np.einsum("ij,ij->i", normals, a)
    best_count, best = -1, 0
    for start in range(0, len(normals), 64):
        dist = np.abs(score_pts @ normals[start : start + 64].T + offsets[start : start + 64])
        counts = (dist <= threshold).sum(axis=0)
        i = int(np.argmax(counts))
        if counts[i] > best_count:
            best_count, best = int(counts[i]), start + i
    normal, offset = normals[best], float(offsets[best])
    inliers = np.abs(pts @ normal + offset) <= threshold
    for _ in range(3):
        if inliers.sum() < 3:
            break
        normal, offset = _least_squares_plane(pts[inliers])
        refined = np.abs(pts @ normal + offset) <= threshold
        if refined.sum() < 3 or np.array_equal(refined, inliers):
            inliers = refined if refined.sum() >= 3 else inliers
            break
        inliers = refined
    if inliers.sum() < 3:
        raise ValueError(
            f"fit_plane found no plane with at least 3 points within {threshold} m; try a larger threshold"
        )
    rms = float(np.sqrt(np.mean((pts[inliers] @ normal + offset) ** 2)))
    return Plane(normal=normal, offset=offset, inliers=inliers, rms_m=rms, threshold_m=float(threshold))


def camera_up_vectors(camera_poses: Any) -> np.ndarray:
    """(N, 3) world-frame "up" of each camera: the negated y axis (OpenCV y points down) of each pose."""
    poses = _as_pose_stack(camera_poses)
    return -poses[:, :3, 1]


def _as_pose_stack(camera_poses: Any) -> np.ndarray:
    poses = np.asarray(camera_poses, dtype=np.float64)
    if poses.shape == (4, 4):
        poses = poses[None]
    if poses.ndim != 3 or poses.shape[1:] != (4, 4) or len(poses) == 0:
        raise ValueError(
            f"camera_poses must be an (N, 4, 4) stack of camera-to-world matrices, got shape {poses.shape}"
        )
    for i, pose in enumerate(poses):
        as_pose(pose, name=f"camera_poses[{i}]")
    return poses


def _mean_up(poses: np.ndarray) -> np.ndarray:
    ups = -poses[:, :3, 1]
    mean = ups.mean(axis=0)
    norm = np.linalg.norm(mean)
    up: np.ndarray = ups[0] / np.linalg.norm(ups[0]) if norm < 1e-6 else mean / norm
    return up


def find_floor(
    points: Any,
    camera_poses: Any,
    threshold: float = 0.02,
    max_planes: int = 5,
    min_fraction: float = 0.05,
    max_tilt_deg: float = 60.0,
    seed: int = 0,
) -> Plane | None:
    """Find the floor (or the dominant horizontal support plane) among the large planes of a point cloud.

    Planes are peeled off by repeated RANSAC (``max_planes`` at most, each holding at least
    ``min_fraction`` of the points). Each plane's normal is oriented along the cameras' average up
    direction (the mean of the poses' -y axes). A plane qualifies when that normal is within
    ``max_tilt_deg`` of the cameras' up AND the cameras are above it (their mean signed distance is
    positive): this rejects ceilings and the wall in front of a camera pitched down. The qualifying plane
    most aligned with the cameras' up is returned with its upward normal; None when none qualifies.

    Args:
        points: (N, 3) points in metres, same world frame as the poses; non-finite rows are ignored.
        camera_poses: (M, 4, 4) camera-to-world poses (OpenCV cameras).
        threshold: RANSAC inlier distance, metres.
    """
    poses = _as_pose_stack(camera_poses)
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim == 2 and pts.shape[1] == 3:
        pts = pts[np.isfinite(pts).all(axis=1)]
    pts = as_points(pts)
    up = _mean_up(poses)
    centres = poses[:, :3, 3]
    remaining = np.arange(len(pts))
    best: Plane | None = None
    best_cos = np.cos(np.radians(max_tilt_deg))
    for _ in range(max_planes):
        if len(remaining) < max(3, min_fraction * len(pts)):
            break
        try:
            plane = fit_plane(pts[remaining], threshold=threshold, seed=seed)
        except ValueError:
            break
        if plane.inlier_count < min_fraction * len(pts):
            break
        full = np.zeros(len(pts), dtype=bool)
        full[remaining[plane.inliers]] = True
        oriented = Plane(plane.normal, plane.offset, full, plane.rms_m, plane.threshold_m)
        if oriented.normal @ up < 0:
            oriented = oriented.flipped()
        cos = float(oriented.normal @ up)
        cameras_above = float(np.mean(centres @ oriented.normal + oriented.offset)) > 0
        if cos >= best_cos and cameras_above:
            best, best_cos = oriented, cos
        remaining = remaining[~plane.inliers]
    return best


def _depth_to_world_points(depths: Sequence[Any], poses: np.ndarray, intrinsics: Any, stride: int) -> np.ndarray:
    if intrinsics is None:
        raise ValueError(
            "gravity_alignment got per-frame depth maps but no intrinsics; pass intrinsics=(3, 3) or (N, 3, 3)"
        )
    Ks = np.asarray(intrinsics, dtype=np.float64)
    if Ks.shape == (3, 3):
        Ks = np.repeat(Ks[None], len(depths), axis=0)
    if Ks.shape != (len(depths), 3, 3):
        raise ValueError(
            f"intrinsics must be (3, 3) or ({len(depths)}, 3, 3) for {len(depths)} depth maps, got {Ks.shape}"
        )
    if len(depths) != len(poses):
        raise ValueError(f"got {len(depths)} depth maps but {len(poses)} camera poses; pass one pose per depth map")
    clouds = [
        backproject(d, as_intrinsics(K), pose=p, stride=stride) for d, K, p in zip(depths, Ks, poses, strict=True)
    ]
    return np.concatenate(clouds, axis=0)


def gravity_alignment(
    points: Any,
    camera_poses: Any,
    intrinsics: Any = None,
    threshold: float = 0.02,
    stride: int = 4,
    max_tilt_deg: float = 60.0,
    seed: int = 0,
    max_points: int = 300_000,
) -> np.ndarray:
    """Transform that maps an arbitrary metric world frame into the design world frame (+Z up).

    Up (+Z) is the upward normal of the floor found by RANSAC (``find_floor``: among the large planes
    below the cameras and within ``max_tilt_deg`` of their average up, i.e. the mean of the poses' -y
    axes, the most aligned one); when no such plane exists it falls back to the first camera's up (-y of
    its pose). Origin: the first camera's centre.
    +Y: the first camera's forward (+z) projected onto the ground plane (its up projected instead when it
    looks straight down). +X = +Y x +Z (its right). Right-handed, metres (no scaling).

    Args:
        points: (N, 3) world points in metres (non-finite rows ignored), OR per-frame depth maps: a list
            of (H, W) arrays or an (M, H, W) array in metres, one per camera (then ``intrinsics`` is needed).
        camera_poses: (M, 4, 4) camera-to-world poses in the input world frame; camera 0 is the "first".
        intrinsics: (3, 3) or (M, 3, 3) pixel intrinsics, only for depth-map input.
        threshold: RANSAC inlier distance for the floor, metres.
        stride: pixel subsampling for depth-map input.
        max_points: larger inputs are randomly subsampled (seeded) to this many points for the floor search.

    Returns:
        (4, 4) rigid transform ``T`` with ``design_point = T @ input_point`` (homogeneous); new poses are
        ``T @ pose``.
    """
    poses = _as_pose_stack(camera_poses)
    if isinstance(points, (list, tuple)) or (np.ndim(points) == 3):
        pts = _depth_to_world_points(list(points), poses, intrinsics, stride)
    else:
        pts = np.asarray(points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise ValueError(
                f"points must be (N, 3) world points or per-frame (H, W) depth maps, got shape {pts.shape}"
            )
        pts = pts[np.isfinite(pts).all(axis=1)]
    if len(pts) > max_points:
        pts = pts[np.random.default_rng(seed).choice(len(pts), max_points, replace=False)]
    floor = None
    if len(pts) >= 3:
        floor = find_floor(pts, poses, threshold=threshold, max_tilt_deg=max_tilt_deg, seed=seed)
    up = floor.normal if floor is not None else -poses[0, :3, 1] / np.linalg.norm(poses[0, :3, 1])
    return frame_from_up(up, poses[0])


def frame_from_up(up: Any, first_pose: Any) -> np.ndarray:
    """(4, 4) transform into the design frame given the world ``up`` (3,) and the first camera's pose."""
    up = np.asarray(up, dtype=np.float64)
    up = up / np.linalg.norm(up)
    pose = as_pose(first_pose, name="first_pose")
    forward = pose[:3, 2] - (pose[:3, 2] @ up) * up
    if np.linalg.norm(forward) < 1e-6:
        image_up = -pose[:3, 1]
        forward = image_up - (image_up @ up) * up
    y_axis = forward / np.linalg.norm(forward)
    x_axis = np.cross(y_axis, up)
    rotation = np.stack([x_axis, y_axis, up])
    T = np.eye(4)
    T[:3, :3] = rotation
    T[:3, 3] = -rotation @ pose[:3, 3]
    return T
