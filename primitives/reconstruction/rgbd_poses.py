"""Camera poses from RGB-D frames with known intrinsics: metric from the start, no scale ambiguity.

Each frame is registered against all frames registered before it: OpenCV SIFT matches (one-to-one) give
2D points in the new frame whose 3D world positions are known from the earlier frames' depth and poses;
RANSAC PnP (then Levenberg-Marquardt on the inliers) gives the new camera's pose. Frame 0 defines the world
(identity pose). Conventions: OpenCV camera frames, metres, poses camera-to-world (4, 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from spatialclaw.primitives.motion.features import feature_scale, frame_features, one_to_one_matches
from spatialclaw.primitives.runtime.library_failures import guarded

__all__ = ["RgbdPoses", "rgbd_poses"]

MIN_INLIERS = 20


@dataclass
class RgbdPoses:
    """poses: (N, 4, 4) camera-to-world (NaN where unregistered); registered: (N,) bool;
    inliers: (N,) PnP inlier counts (frame 0: its number of keypoints with depth); failures: position -> the
    library's reason, for frames whose matching or PnP it failed on (left unregistered)."""

    poses: np.ndarray
    registered: np.ndarray
    inliers: np.ndarray
    failures: dict[int, str] = field(default_factory=dict)


def _depth_at(depth: np.ndarray, xy: np.ndarray) -> np.ndarray:
    height, width = depth.shape
    cols = np.clip(np.round(xy[:, 0]).astype(int), 0, width - 1)
    rows = np.clip(np.round(xy[:, 1]).astype(int), 0, height - 1)
    values = depth[rows, cols].astype(np.float64)
    return np.where(np.isfinite(values) & (values > 0), values, np.nan)


def _lift(xy: np.ndarray, z: np.ndarray, K: np.ndarray) -> np.ndarray:
    x = (xy[:, 0] - K[0, 2]) * z / K[0, 0]
    y = (xy[:, 1] - K[1, 2]) * z / K[1, 1]
    return np.stack([x, y, z], axis=1)


def rgbd_poses(
    images: list[np.ndarray],
    depths: list[np.ndarray],
    intrinsics: list[np.ndarray],
    max_features: int = 4000,
    reprojection_px: float = 2.0,
    seed: int = 0,
) -> RgbdPoses:
    """Poses of RGB-D frames: ``images`` (H, W, 3) uint8, ``depths`` (H, W) metres (NaN/0 = none),
    ``intrinsics`` (3, 3) pixels per frame. Frame 0 gets the identity pose."""
    import cv2

    count = len(images)
    found_features = [frame_features(rgb, max_features, feature_scale(rgb.shape)) for rgb in images]
    features = [found for found, _ in found_features]  # small frames: upsampled
    failures = {i: reason for i, (_, reason) in enumerate(found_features) if reason is not None}
    camera_points = []
    for (xy, _), depth, K in zip(features, depths, intrinsics, strict=True):
        z = _depth_at(depth, xy)
        camera_points.append(_lift(xy, z, K))
    poses = np.full((count, 4, 4), np.nan)
    registered = np.zeros(count, dtype=bool)
    inliers = np.zeros(count, dtype=int)
    poses[0] = np.eye(4)
    registered[0] = True
    inliers[0] = int(np.isfinite(camera_points[0][:, 2]).sum())
    guarded(partial(cv2.setRNGSeed, seed), lambda _: None)  # unseeded, RANSAC still runs
    for i in range(1, count):
        register = partial(_register, i, features, camera_points, poses, registered, intrinsics[i], reprojection_px)
        found = guarded(register, partial(failures.__setitem__, i))
        if found is not None:
            poses[i], inliers[i] = found
            registered[i] = True
    return RgbdPoses(poses, registered, inliers, failures)


def _register(
    i: int,
    features: list[tuple[np.ndarray, np.ndarray | None]],
    camera_points: list[np.ndarray],
    poses: np.ndarray,
    registered: np.ndarray,
    K: np.ndarray,
    reprojection_px: float,
) -> tuple[np.ndarray, int] | None:
    """Frame i's camera-to-world pose (4, 4) and PnP inlier count against the frames registered so far, or None
    when too few matches agree."""
    import cv2

    object_points, image_points = [], []
    for j in np.flatnonzero(registered):
        pairs, _ = one_to_one_matches(features[i], features[j])
        if len(pairs) == 0:
            continue
        lifted = camera_points[j][pairs[:, 1]]
        ok = np.isfinite(lifted[:, 2])
        world = lifted[ok] @ poses[j][:3, :3].T + poses[j][:3, 3]
        object_points.append(world)
        image_points.append(features[i][0][pairs[ok, 0]])
    if not object_points or sum(len(p) for p in object_points) < MIN_INLIERS:
        return None
    obj = np.concatenate(object_points).astype(np.float64)
    img = np.concatenate(image_points).astype(np.float64)
    K = np.asarray(K, dtype=np.float64)
    found, rvec, tvec, idx = cv2.solvePnPRansac(
        obj,
        img,
        K,
        None,
        iterationsCount=2000,
        reprojectionError=reprojection_px,
        confidence=0.999,
        flags=cv2.SOLVEPNP_EPNP,
    )
    if not found or idx is None or len(idx) < MIN_INLIERS:
        return None
    idx = idx.ravel()
    rvec, tvec = cv2.solvePnPRefineLM(obj[idx], img[idx], K, None, rvec, tvec)
    rotation, _ = cv2.Rodrigues(rvec)
    world_from_cam = np.eye(4)
    world_from_cam[:3, :3] = rotation.T
    world_from_cam[:3, 3] = -rotation.T @ tvec.ravel()
    return world_from_cam, len(idx)
