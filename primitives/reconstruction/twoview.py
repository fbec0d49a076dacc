"""Relative pose of exactly two views from the essential matrix (OpenCV), with triangulated points.

Frame 0 defines the world (identity pose); the baseline has length 1 (scale is arbitrary, as in any
two-view reconstruction). Conventions: OpenCV camera frames, poses camera-to-world (4, 4), pixels with
integer coordinates at pixel centres. The result has the same form as ``sfm.SfmResult``.
"""

from __future__ import annotations

from functools import partial
from typing import cast

import numpy as np

from spatialclaw.primitives.motion.features import feature_scale, matched_points
from spatialclaw.primitives.motion.pair import refine_essential
from spatialclaw.primitives.reconstruction.sfm import SfmResult, nothing_registered
from spatialclaw.primitives.runtime.library_failures import guarded

__all__ = ["two_view"]

MIN_POINTS = 15
MAX_REPROJECTION_PX = 2.0


def two_view(images: list[np.ndarray], intrinsics: list[np.ndarray], seed: int = 0) -> SfmResult:
    """Pose of image 1 relative to image 0 and the triangulated matches; ``intrinsics`` (3, 3) pixels each.

    Small images are matched both at their own size and upsampled (``features.feature_scale``); when the
    two disagree, the one whose matches triangulate best (most points within 2 px reprojection error, then
    the lower median error) is kept and ``summary`` says both and why."""
    scale = feature_scale(max(images[0].shape, images[1].shape))
    candidates = [
        (guarded(partial(_two_view, images, intrinsics, s, seed), partial(_failed, intrinsics)), s)
        for s in ([1.0, scale] if scale > 1.0 else [1.0])
    ]
    ranked = sorted(
        candidates, key=lambda c: (-len(c[0].points), float(np.median(c[0].errors)) if len(c[0].errors) else 9.9)
    )
    best, best_scale = ranked[0]
    if len(candidates) > 1:
        (other, other_scale) = ranked[1]
        angle = _relative_angle(best, other)
        best.summary += (
            f"; features at {best_scale:.1f}x kept: {len(best.points)} points triangulate within "
            f"{MAX_REPROJECTION_PX:g} px (median error {_median(best.errors):.2f} px) against "
            f"{len(other.points)} (median {_median(other.errors):.2f} px) at {other_scale:.1f}x"
            + (f"; the two disagree by {angle:.1f} deg, trust the kept one" if angle is not None and angle > 2 else "")
        )
    return best


def _failed(intrinsics: list[np.ndarray], reason: str) -> SfmResult:
    return nothing_registered(2, intrinsics, f"the two-view fit failed: {reason}")


def _median(values: np.ndarray) -> float:
    return float(np.median(values)) if len(values) else float("nan")


def _relative_angle(a: SfmResult, b: SfmResult) -> float | None:
    if not (a.registered.all() and b.registered.all()):
        return None
    R = a.poses[1][:3, :3].T @ b.poses[1][:3, :3]
    return float(np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))


def _two_view(images: list[np.ndarray], intrinsics: list[np.ndarray], scale: float, seed: int) -> SfmResult:
    import cv2

    p0, p1, _ = matched_points(images[0], images[1], scale=scale)
    pairs = p0
    if len(pairs) < MIN_POINTS:
        return nothing_registered(2, intrinsics, f"only {len(pairs)} feature matches between the two views")
    K0, K1 = (np.asarray(K, dtype=np.float64) for K in intrinsics)
    n0 = cv2.undistortPoints(p0.reshape(-1, 1, 2), K0, None).reshape(-1, 2)
    n1 = cv2.undistortPoints(p1.reshape(-1, 1, 2), K1, None).reshape(-1, 2)
    threshold = 1.0 / np.mean([K0[0, 0], K0[1, 1], K1[0, 0], K1[1, 1]])  # one pixel in normalised units
    cv2.setRNGSeed(seed)
    E, mask = cv2.findEssentialMat(n0, n1, np.eye(3), method=cv2.RANSAC, prob=0.999, threshold=threshold)
    if E is None or E.shape != (3, 3):
        return nothing_registered(2, intrinsics, "no essential matrix fits the matches")
    _, R, t, mask = cv2.recoverPose(E, n0, n1, np.eye(3), mask=mask)
    inliers = mask.ravel() > 0
    if inliers.sum() < MIN_POINTS:  # a camera that only turned: no match triangulates in front of both
        return nothing_registered(2, intrinsics, f"only {int(inliers.sum())} matches fit a camera that moved")
    ones = np.ones((int(inliers.sum()), 1))
    R, t = refine_essential(R, t.ravel(), np.hstack([n0[inliers], ones]), np.hstack([n1[inliers], ones]))
    t = t.reshape(3, 1)
    P0 = np.hstack([np.eye(3), np.zeros((3, 1))])
    P1 = np.hstack([R, t.reshape(3, 1)])
    homogeneous = cv2.triangulatePoints(P0, P1, n0[inliers].T, n1[inliers].T)
    points = (homogeneous[:3] / homogeneous[3]).T
    in_cam1 = points @ R.T + t.ravel()
    error0 = np.linalg.norm(_project(points, K0) - p0[inliers], axis=1)
    error1 = np.linalg.norm(_project(in_cam1, K1) - p1[inliers], axis=1)
    good = (points[:, 2] > 0) & (in_cam1[:, 2] > 0) & (np.maximum(error0, error1) < MAX_REPROJECTION_PX)
    if good.sum() < MIN_POINTS:
        return nothing_registered(2, intrinsics, f"only {int(good.sum())} matches triangulate in front of both cameras")
    points = points[good]
    px0, px1 = p0[inliers][good], p1[inliers][good]
    rows = np.arange(len(points), dtype=float)
    poses = np.stack([np.eye(4), np.eye(4)])
    poses[1][:3, :3] = R.T
    poses[1][:3, 3] = -R.T @ t.ravel()
    cols = np.clip(np.round(px0).astype(int), 0, [images[0].shape[1] - 1, images[0].shape[0] - 1])
    colors = images[0][cols[:, 1], cols[:, 0]]
    errors = (error0[good] + error1[good]) / 2.0
    observations = [np.column_stack([px0, rows]), np.column_stack([px1, rows])]
    return SfmResult(
        poses,
        np.stack([K0, K1]),
        np.ones(2, dtype=bool),
        points,
        colors,
        errors,
        np.full(len(points), 2),
        observations,
        f"two-view: {len(points)} points from {len(pairs)} matches",
    )


def _project(points: np.ndarray, K: np.ndarray) -> np.ndarray:
    uv = points @ K.T
    return cast(np.ndarray, uv[:, :2] / uv[:, 2:3])
