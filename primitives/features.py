"""SIFT keypoints and ratio-test matching with OpenCV, shared by the two-view and RGB-D pose estimators.

Keypoints are pixel coordinates (x, y) with the origin top-left and integer coordinates at pixel centres.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sift_features", "match_features"]


def sift_features(rgb: np.ndarray, max_features: int = 4000) -> tuple[np.ndarray, np.ndarray | None]:
    """SIFT keypoints of an (H, W, 3) uint8 RGB image: (K, 2) float64 pixel positions and (K, 128) float32
    descriptors (None when the image has no keypoints)."""
    import cv2

    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    keypoints, descriptors = cv2.SIFT_create(nfeatures=max_features).detectAndCompute(gray, None)
    return np.array([kp.pt for kp in keypoints], dtype=np.float64).reshape(-1, 2), descriptors


def match_features(desc_a: np.ndarray | None, desc_b: np.ndarray | None, ratio: float = 0.8) -> np.ndarray:
    """(M, 2) int index pairs (row in a, row in b) passing Lowe's ratio test."""
    import cv2

    if desc_a is None or desc_b is None or len(desc_a) < 2 or len(desc_b) < 2:
        return np.zeros((0, 2), dtype=int)
    pairs = cv2.BFMatcher(cv2.NORM_L2).knnMatch(desc_a, desc_b, k=2)
    good = [(m.queryIdx, m.trainIdx) for m, n in (p for p in pairs if len(p) == 2) if m.distance < ratio * n.distance]
    return np.array(good, dtype=int).reshape(-1, 2)
