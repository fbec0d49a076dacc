"""SIFT keypoints and ratio-test matching with OpenCV, shared by the pose estimators (two-view, RGB-D, motion).

Keypoints are pixel coordinates (x, y) with the origin top-left and integer coordinates at pixel centres.
Small frames (benchmark key frames are often 150-250 px wide) give SIFT too few keypoints at their own
size, so ``matched_points`` upsamples them for detection (``feature_scale``) and maps the keypoints back to
the original pixels: callers always see original-image coordinates.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "TARGET_FEATURE_SIDE",
    "feature_scale",
    "match_features",
    "matched_keypoints",
    "matched_points",
    "sift_features",
]

TARGET_FEATURE_SIDE = 640  # frames whose longer side is shorter are upsampled to about this for detection
MAX_UPSAMPLE = 4.0


def feature_scale(shape: tuple[int, ...], target: int = TARGET_FEATURE_SIDE) -> float:
    """The upsampling factor (>= 1, at most 4) that brings an image of ``shape`` (H, W, ...) to a longer side
    of about ``target`` pixels for feature detection; 1 for images already that large."""
    return float(np.clip(target / max(shape[0], shape[1]), 1.0, MAX_UPSAMPLE))


def sift_features(
    rgb: np.ndarray, max_features: int = 4000, scale: float = 1.0
) -> tuple[np.ndarray, np.ndarray | None]:
    """SIFT keypoints of an (H, W, 3) uint8 RGB image: (K, 2) float64 pixel positions in the ORIGINAL image
    and (K, 128) float32 descriptors (None when the image has no keypoints). ``scale`` > 1 detects on the
    image upsampled by that factor (bicubic) and maps the positions back (x = (x_up + 0.5) / scale - 0.5)."""
    import cv2

    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    if scale != 1.0:
        gray = cv2.resize(
            gray, (round(gray.shape[1] * scale), round(gray.shape[0] * scale)), interpolation=cv2.INTER_CUBIC
        )
    keypoints, descriptors = cv2.SIFT.create(nfeatures=max_features).detectAndCompute(gray, None)
    xy = np.array([kp.pt for kp in keypoints], dtype=np.float64).reshape(-1, 2)
    if scale != 1.0:
        xy = (xy + 0.5) / scale - 0.5
    return xy, descriptors


def match_features(desc_a: np.ndarray | None, desc_b: np.ndarray | None, ratio: float = 0.8) -> np.ndarray:
    """(M, 2) int index pairs (row in a, row in b) passing Lowe's ratio test."""
    import cv2

    if desc_a is None or desc_b is None or len(desc_a) < 2 or len(desc_b) < 2:
        return np.zeros((0, 2), dtype=int)
    pairs = cv2.BFMatcher(cv2.NORM_L2).knnMatch(desc_a, desc_b, k=2)
    good = [(m.queryIdx, m.trainIdx) for m, n in (p for p in pairs if len(p) == 2) if m.distance < ratio * n.distance]
    return np.array(good, dtype=int).reshape(-1, 2)


def matched_points(
    rgb_a: np.ndarray, rgb_b: np.ndarray, scale: float | None = None, max_features: int = 4000
) -> tuple[np.ndarray, np.ndarray, float]:
    """Ratio-test SIFT matches between two images: (M, 2) points in a, (M, 2) in b (original pixels of each)
    and the detection scale used (``feature_scale`` of the larger image unless given)."""
    if scale is None:
        scale = feature_scale(max(rgb_a.shape, rgb_b.shape))
    a, b = sift_features(rgb_a, max_features, scale), sift_features(rgb_b, max_features, scale)
    return (*matched_keypoints(a, b), scale)


def matched_keypoints(
    features_a: tuple[np.ndarray, np.ndarray | None], features_b: tuple[np.ndarray, np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray]:
    """Ratio-test matches between two ``sift_features`` results (computed once per frame and reused):
    (M, 2) points in a and (M, 2) in b."""
    pairs = match_features(features_a[1], features_b[1])
    return features_a[0][pairs[:, 0]], features_b[0][pairs[:, 1]]
