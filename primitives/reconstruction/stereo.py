"""Classical metric depth from a rectified stereo pair (OpenCV semi-global block matching), no weights.

Rectified means corresponding points lie on the same image row, and a point at pixel x in the left image is
at x - disparity in the right one. Depth in metres along the left camera's z axis (OpenCV camera frame):
``depth = focal_px * baseline_m / (disparity_px + doffs_px)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spatialclaw.primitives.perception import cache
from spatialclaw.primitives.perception.depth import DepthResult, _load_rgb

__all__ = ["disparity_sgbm", "stereo_depth"]

_MODEL_ID = "stereo-sgbm"
_VERSION = "1"


def disparity_sgbm(
    left_rgb: np.ndarray,
    right_rgb: np.ndarray,
    num_disparities: int,
    block_size: int = 5,
    min_disparity: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Left-image disparity (H, W) float32 pixels (NaN where matching failed) and a left-right consistency
    confidence (H, W) float32 in [0, 1] (1: the right-to-left match agrees within 0.5 px, falling to 0 at
    a 2 px disagreement)."""
    import cv2

    matcher = cv2.StereoSGBM.create(
        minDisparity=min_disparity,
        numDisparities=num_disparities,
        blockSize=block_size,
        P1=8 * 3 * block_size**2,
        P2=32 * 3 * block_size**2,
        disp12MaxDiff=-1,
        uniquenessRatio=10,
        speckleWindowSize=100,
        speckleRange=2,
        preFilterCap=63,
        mode=cv2.STEREO_SGBM_MODE_SGBM_3WAY,
    )
    left_disp = matcher.compute(left_rgb, right_rgb).astype(np.float32) / 16.0
    # the right image's disparity, by matching the mirrored pair (right becomes a "left" image)
    right_disp = (
        matcher.compute(np.ascontiguousarray(right_rgb[:, ::-1]), np.ascontiguousarray(left_rgb[:, ::-1])).astype(
            np.float32
        )[:, ::-1]
        / 16.0
    )
    matched = left_disp >= min_disparity
    _height, width = left_disp.shape
    target = np.clip(np.arange(width)[None, :] - np.round(np.where(matched, left_disp, 0)).astype(int), 0, width - 1)
    back = np.take_along_axis(right_disp, target, axis=1)
    disagreement = np.abs(left_disp - back)
    confidence = np.clip((2.0 - disagreement) / 1.5, 0.0, 1.0)
    confidence = np.where(matched & (back >= min_disparity), confidence, 0.0).astype(np.float32)
    disparity = np.where(confidence > 0, left_disp, np.nan).astype(np.float32)
    return disparity, confidence


def stereo_depth(
    left: Any,
    right: Any,
    focal_px: float,
    baseline_m: float,
    doffs: float = 0.0,
    *,
    num_disparities: int | None = None,
    block_size: int = 5,
    cx: float | None = None,
    cy: float | None = None,
) -> DepthResult:
    """Metric depth of the LEFT image of a rectified stereo pair.

    Args:
        left, right: rectified images (``Frame``, PIL, (H, W, 3) uint8 array or path), same size.
        focal_px: focal length in pixels (of these images, after any resizing).
        baseline_m: distance between the two camera centres in metres (e.g. 193.001 mm -> 0.193001).
        doffs: x-difference of the principal points (right minus left) in pixels, 0 for most rigs.
        num_disparities: disparity search range in pixels (rounded up to a multiple of 16); default W / 8.
        block_size: matching window side in pixels (odd, 3 to 11).
        cx, cy: principal point in pixels; default the image centre.

    Returns:
        ``DepthResult`` with ``.depth`` (H, W) metres (NaN where matching failed or was inconsistent),
        ``.confidence`` the left-right consistency in [0, 1], ``.intrinsics`` from ``focal_px``,
        ``.extras["disparity"]`` (H, W) pixels.
    """
    left_rgb, right_rgb = _load_rgb(left), _load_rgb(right)
    if left_rgb.shape != right_rgb.shape:
        raise ValueError(
            f"left and right images must have the same size, got {left_rgb.shape[1::-1]} and {right_rgb.shape[1::-1]}"
        )
    if focal_px <= 0 or baseline_m <= 0:
        raise ValueError(
            f"focal_px and baseline_m must be positive (got {focal_px} px, {baseline_m} m); baseline is in metres"
        )
    if block_size % 2 == 0 or not 1 <= block_size <= 21:
        raise ValueError(f"block_size must be an odd number of pixels between 1 and 21, got {block_size}")
    height, width = left_rgb.shape[:2]
    if num_disparities is None:
        num_disparities = max(16, width // 8)
    num_disparities = int(np.ceil(num_disparities / 16.0) * 16)
    key = cache.cache_key(_MODEL_ID, _VERSION, num_disparities, block_size, left_rgb, right_rgb)
    disparity, confidence = cache.cached(
        "stereo", key, lambda: disparity_sgbm(left_rgb, right_rgb, num_disparities, block_size)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        depth_m = (focal_px * baseline_m / (disparity + doffs)).astype(np.float32)
    depth_m = np.where(np.isfinite(depth_m) & (depth_m > 0), depth_m, np.nan).astype(np.float32)
    confidence = np.where(np.isfinite(depth_m), confidence, 0.0).astype(np.float32)
    K = np.array(
        [
            [focal_px, 0.0, (width - 1) / 2.0 if cx is None else cx],
            [0.0, focal_px, (height - 1) / 2.0 if cy is None else cy],
            [0.0, 0.0, 1.0],
        ]
    )
    return DepthResult(
        depth=depth_m,
        intrinsics=K,
        confidence=confidence,
        frame_index=getattr(left, "index", None),
        model=_MODEL_ID,
        intrinsics_source="user",
        extras={"disparity": disparity},
    )
