"""Pinhole camera geometry: backprojection, projection, rigid transforms (part of ``geom``).

Conventions: pixels (x, y) with origin top-left, integer coordinates at pixel centres (so ``cx = 319.5``
is the centre of a 640-wide image); camera frames OpenCV (x right, y down, z forward), metres; poses are
4x4 camera-to-world matrices (``world = R @ cam + t``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_intrinsics", "as_points", "as_pose", "backproject", "invert_pose", "project", "transform"]


def as_points(points: Any, name: str = "points", allow_single: bool = True) -> np.ndarray:
    """Validate and return ``points`` as a float64 (N, 3) array (a single (3,) point becomes (1, 3))."""
    array = np.asarray(getattr(points, "points", points), dtype=np.float64)
    if allow_single and array.shape == (3,):
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"{name} must be an (N, 3) array of metric 3D points, got shape {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(
            f"{name} is empty (0 points); check the mask/depth it came from (valid depth > 0 inside the mask?)"
        )
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        raise ValueError(
            f"{name} holds {int((~finite).sum())} non-finite points (NaN/inf); "
            f"drop them first: {name} = {name}[np.isfinite({name}).all(axis=1)]"
        )
    return array


def as_pose(pose: Any, name: str = "pose") -> np.ndarray:
    """Validate and return a (4, 4) float64 homogeneous transform; a (3, 4) [R|t] is completed."""
    array = np.asarray(pose, dtype=np.float64)
    if array.shape == (3, 4):
        array = np.vstack([array, [0.0, 0.0, 0.0, 1.0]])
    if array.shape != (4, 4):
        raise ValueError(f"{name} must be a (4, 4) camera-to-world matrix (or (3, 4) [R|t]), got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN/inf entries")
    return array


def as_intrinsics(K: Any, name: str = "K") -> np.ndarray:
    """Validate and return a (3, 3) pinhole intrinsic matrix [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] in pixels."""
    array = np.asarray(K, dtype=np.float64)
    if array.shape != (3, 3):
        raise ValueError(
            f"{name} must be a (3, 3) intrinsic matrix [[fx,0,cx],[0,fy,cy],[0,0,1]] in pixels, got shape {array.shape}"
        )
    if not (array[0, 0] > 0 and array[1, 1] > 0) or not np.isfinite(array).all():
        raise ValueError(f"{name} has non-positive or non-finite focal lengths (fx={array[0, 0]}, fy={array[1, 1]})")
    return array


def backproject(
    depth: Any,
    K: Any = None,
    pose: Any = None,
    mask: Any = None,
    stride: int = 1,
    return_pixels: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Lift a metric depth map to 3D points (vectorised).

    Args:
        depth: (H, W) depth in metres along the camera z axis; 0, negative, NaN or inf mean "no depth".
            A ``depth(...)`` result works too (its ``.depth``, and its ``.intrinsics`` when K is omitted).
        K: (3, 3) intrinsics in pixels.
        pose: optional (4, 4) camera-to-world pose; without it points stay in the camera frame (OpenCV).
        mask: optional (H, W) bool mask; only pixels inside it are lifted.
        stride: keep every ``stride``-th row and column (1 = all pixels).
        return_pixels: also return the (N, 2) pixel coordinates (x, y) of each point.

    Returns:
        (N, 3) float64 points in metres (world frame if ``pose`` is given, else camera frame), one per
        valid pixel in row-major order; with ``return_pixels`` a tuple (points, pixels).
    """
    if K is None:
        K = getattr(depth, "intrinsics", None)
        if K is None:
            raise ValueError("backproject needs intrinsics: pass K=(3, 3) pixels, or a depth result with .intrinsics")
    depth = np.asarray(getattr(depth, "depth", depth), dtype=np.float64)
    if depth.ndim != 2:
        raise ValueError(f"depth must be an (H, W) map in metres, got shape {depth.shape}")
    K = as_intrinsics(K)
    stride = int(stride)
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    valid = np.isfinite(depth) & (depth > 0)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.shape != depth.shape:
            raise ValueError(
                f"mask shape {mask.shape} does not match depth shape {depth.shape}; resize one of them first"
            )
        valid &= mask.astype(bool)
    if stride > 1:
        keep = np.zeros_like(valid)
        keep[::stride, ::stride] = True
        valid &= keep
    ys, xs = np.nonzero(valid)
    z = depth[ys, xs]
    fx, fy, cx, cy, skew = K[0, 0], K[1, 1], K[0, 2], K[1, 2], K[0, 1]
    y_cam = (ys - cy) * z / fy
    x_cam = ((xs - cx) - skew * (ys - cy) / fy) * z / fx
    points = np.stack([x_cam, y_cam, z], axis=1)
    if pose is not None:
        points = transform(points, as_pose(pose))
    if return_pixels:
        return points, np.stack([xs, ys], axis=1).astype(np.float64)
    return points


def project(points: Any, K: Any, pose: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Project 3D points into an image.

    Args:
        points: (N, 3) points in metres, world frame if ``pose`` is given, else camera frame.
        K: (3, 3) intrinsics in pixels.
        pose: optional (4, 4) camera-to-world pose of the camera.

    Returns:
        (uv, z): (N, 2) pixel coordinates (x, y), NaN for points at or behind the camera (z <= 0),
        and (N,) depth in metres along the camera z axis.
    """
    points = as_points(points)
    K = as_intrinsics(K)
    cam = points if pose is None else transform(points, invert_pose(pose))
    z = cam[:, 2]
    uv = np.full((len(cam), 2), np.nan)
    front = z > 0
    homogeneous = cam[front] @ K.T
    uv[front] = homogeneous[:, :2] / homogeneous[:, 2:3]
    return uv, z


def transform(points: Any, T: Any) -> np.ndarray:
    """Apply a (4, 4) (or (3, 4)) transform to (N, 3) or (3,) points; returns the same shape, metres."""
    array = np.asarray(points, dtype=np.float64)
    single = array.shape == (3,)
    pts = as_points(array, name="points")
    T = as_pose(T, name="T")
    out: np.ndarray = pts @ T[:3, :3].T + T[:3, 3]
    return np.asarray(out[0]) if single else out


def invert_pose(pose: Any) -> np.ndarray:
    """Inverse of a (4, 4) rigid transform (camera-to-world becomes world-to-camera, and back)."""
    T = as_pose(pose)
    R, t = T[:3, :3], T[:3, 3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-5):
        return np.linalg.inv(T)
    inverse = np.eye(4)
    inverse[:3, :3] = R.T
    inverse[:3, 3] = -R.T @ t
    return inverse
