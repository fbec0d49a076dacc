"""SIFT keypoints and one-to-one matching with OpenCV, shared by the pose estimators (two-view, RGB-D, motion,
feature links): every match a solver sees passes the ratio test, is mutual, and uses each place in each image once.

Keypoints are pixel coordinates (x, y) with the origin top-left and integer coordinates at pixel centres.
Small frames (benchmark key frames are often 150-250 px wide) give SIFT too few keypoints at their own
size, so ``matched_points`` upsamples them for detection (``feature_scale``) and maps the keypoints back to
the original pixels: callers always see original-image coordinates.
"""

from __future__ import annotations

import numpy as np

from spatialclaw.primitives.runtime.library_failures import guarded

__all__ = [
    "NO_FEATURES",
    "TARGET_FEATURE_SIDE",
    "feature_scale",
    "frame_features",
    "match_features",
    "matched_keypoints",
    "matched_points",
    "one_to_one_matches",
    "sift_features",
]

TARGET_FEATURE_SIDE = 640  # frames whose longer side is shorter are upsampled to about this for detection
MAX_UPSAMPLE = 4.0
DUPLICATE_PX = 0.25  # keypoints closer than this (original pixels) are one place: SIFT's duplicates coincide


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


NO_FEATURES: tuple[np.ndarray, np.ndarray | None] = (np.zeros((0, 2)), None)


def frame_features(
    rgb: np.ndarray, max_features: int = 4000, scale: float = 1.0
) -> tuple[tuple[np.ndarray, np.ndarray | None], str | None]:
    """``sift_features`` of one frame and None, or ``NO_FEATURES`` and the library's reason (one line) when it
    fails on the frame: the frame then matches nothing and the others go on."""
    return guarded(lambda: (sift_features(rgb, max_features, scale), None), lambda reason: (NO_FEATURES, reason))


def match_features(desc_a: np.ndarray | None, desc_b: np.ndarray | None, ratio: float = 0.8) -> np.ndarray:
    """(M, 2) int index pairs (row in a, row in b) passing Lowe's ratio test from a to b; not yet one-to-one
    (several rows of a can pick one row of b): solvers take ``one_to_one_matches``."""
    import cv2

    if desc_a is None or desc_b is None or len(desc_a) < 2 or len(desc_b) < 2:
        return np.zeros((0, 2), dtype=int)
    pairs = cv2.BFMatcher(cv2.NORM_L2).knnMatch(desc_a, desc_b, k=2)
    good = [(m.queryIdx, m.trainIdx) for m, n in (p for p in pairs if len(p) == 2) if m.distance < ratio * n.distance]
    return np.array(good, dtype=int).reshape(-1, 2)


def one_to_one_matches(
    features_a: tuple[np.ndarray, np.ndarray | None],
    features_b: tuple[np.ndarray, np.ndarray | None],
    ratio: float = 0.8,
    ratio_both_ways: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one matches between two ``sift_features`` results: ((M, 2) int index pairs (row in a, row in b),
    (M,) descriptor distances), the closest first. A match passes the ratio test from a to b (and from b to a
    with ``ratio_both_ways``) and is mutual: b's nearest keypoint in a sits where a's does. Keypoints that SIFT
    found more than once (one per orientation, or at two octaves, within ``DUPLICATE_PX``) count as one place,
    and each place in a and in b is used once, by its closest match. A solver fed duplicates or many-to-one
    matches draws degenerate minimal samples (OpenCV 5's five-point solver then fails an assertion)."""
    from scipy.spatial import cKDTree

    (xy_a, desc_a), (xy_b, desc_b) = features_a, features_b
    forward = match_features(desc_a, desc_b, ratio)
    if desc_a is None or desc_b is None or not len(forward):
        return np.zeros((0, 2), dtype=int), np.zeros(0)
    if ratio_both_ways:
        backward = match_features(desc_b, desc_a, ratio)
        nearest_in_a = np.full(len(xy_b), -1)
        nearest_in_a[backward[:, 0]] = backward[:, 1]
    else:
        nearest_in_a = _nearest(desc_b, desc_a)
    back = nearest_in_a[forward[:, 1]]
    mutual = (back >= 0) & (np.linalg.norm(xy_a[np.maximum(back, 0)] - xy_a[forward[:, 0]], axis=1) <= DUPLICATE_PX)
    pairs = forward[mutual]
    distances = np.linalg.norm(desc_a[pairs[:, 0]] - desc_b[pairs[:, 1]], axis=1)
    order = np.argsort(distances, kind="stable")
    pairs, distances = pairs[order], distances[order]
    near_a = cKDTree(xy_a[pairs[:, 0]]).query_ball_point(xy_a[pairs[:, 0]], DUPLICATE_PX) if len(pairs) else []
    near_b = cKDTree(xy_b[pairs[:, 1]]).query_ball_point(xy_b[pairs[:, 1]], DUPLICATE_PX) if len(pairs) else []
    taken = np.zeros(len(pairs), dtype=bool)
    keep = np.zeros(len(pairs), dtype=bool)
    for k in range(len(pairs)):  # closest first: a place already used in a or in b blocks every later match
        if not taken[k]:
            keep[k] = True
            taken[near_a[k]] = taken[near_b[k]] = True
    return pairs[keep], distances[keep]


def _nearest(desc_from: np.ndarray, desc_to: np.ndarray) -> np.ndarray:
    """(len(desc_from),) the row of ``desc_to`` nearest to each row of ``desc_from`` (L2)."""
    import cv2

    found = np.full(len(desc_from), -1)
    for match in cv2.BFMatcher(cv2.NORM_L2).match(desc_from, desc_to):
        found[match.queryIdx] = match.trainIdx
    return found


def matched_points(
    rgb_a: np.ndarray, rgb_b: np.ndarray, scale: float | None = None, max_features: int = 4000
) -> tuple[np.ndarray, np.ndarray, float]:
    """One-to-one SIFT matches between two images: (M, 2) points in a, (M, 2) in b (original pixels of each)
    and the detection scale used (``feature_scale`` of the larger image unless given)."""
    if scale is None:
        scale = feature_scale(max(rgb_a.shape, rgb_b.shape))
    a, b = sift_features(rgb_a, max_features, scale), sift_features(rgb_b, max_features, scale)
    return (*matched_keypoints(a, b), scale)


def matched_keypoints(
    features_a: tuple[np.ndarray, np.ndarray | None], features_b: tuple[np.ndarray, np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one matches (``one_to_one_matches``) between two ``sift_features`` results (computed once per
    frame and reused): (M, 2) points in a and (M, 2) in b."""
    pairs, _ = one_to_one_matches(features_a, features_b)
    return features_a[0][pairs[:, 0]], features_b[0][pairs[:, 1]]
