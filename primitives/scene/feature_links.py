"""Correspondences between two views found by matching features, for ``scene.link_views(a, b)`` without
named landmarks (``link_by_features``).

SIFT (upsampled for small frames) with Lowe's ratio test both ways (mutual matches), then one camera
motion that the matches must agree with: an essential matrix from the views' intrinsics, fitted by
several RANSAC variants and refined, the candidate kept that explains the most matches with points in
front of both cameras (robust Sampson cost, a point behind a camera counting as an outlier). The turn
and its uncertainty come from the fit's profile over the yaw (``turn_profile``): on a narrow field of
view or a shallow scene, turning trades for sideways motion, and the sigma says how far. A handful of
agreeing matches spread over view a (a grid) are kept, each with its distance from both cameras
(triangulated, relative: median 1) when the cameras are at different places. A camera that only turned (the rotation-only model explains the matches within
``PARALLAX_PX``, the test ``motion`` uses) gives bearings without distances.

Views that share nothing give a ``problem`` ("no reliable matches") instead of correspondences: too few
mutual matches, too few (or too small a share) agreeing with one camera motion, or a turn the matches
cannot pin down.

Pixels (x, y): origin top-left, integer coordinates at pixel centres; OpenCV camera axes (x right, y
down, z forward); ``R_ab`` is camera b's orientation in camera a's frame, ``yaw_deg`` its turn about a's
vertical axis (> 0 = b looks further right), as in ``motion``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from spatialclaw.primitives.motion.angles import yaw_pitch_roll
from spatialclaw.primitives.motion.features import feature_scale, one_to_one_matches, sift_features
from spatialclaw.primitives.motion.pair import PARALLAX_PX, fit_rotation, refine_essential
from spatialclaw.primitives.runtime.library_failures import guarded
from spatialclaw.primitives.scene.turn_profile import profile_turn, sampson_px, triangulate

__all__ = ["FeatureLink", "link_by_features"]

MIN_MATCHES = 20  # mutual ratio-test matches needed before a camera motion is fitted
MIN_AGREEING = 20  # matches agreeing with one camera motion for the link to count
MIN_AGREEING_SHARE = 0.3  # ... and at least this share of the matches
FEW_AGREEING = 40  # below this the link is kept with a warning
SMALL_REGION = 0.05  # agreeing matches whose 5-95 % box covers less of view a than this: one small region
MAX_YAW_SIGMA_DEG = 20.0  # a turn less certain than this is no link
GRID = (4, 3)  # cells across and down view a from which the kept correspondences are drawn
EPIPOLAR_PX = 1.0  # Sampson distance (pixels) for a match to agree with a camera motion


@dataclass
class FeatureLink:
    """What matching two views found.

    pixels_a / pixels_b: (N, 2) kept correspondences, pixels of each view (N = 0 when ``problem`` is set).
    distances_a / distances_b: (N,) their distances from each camera along the ray, relative (median 1),
        or None when the camera only turned (no parallax, so no distances).
    distance_sigmas: (N,) relative sigmas of those distances (from the triangulation angle), or None.
    matches: mutual ratio-test matches; agreeing: how many agree with the kept camera motion.
    cover: share of view a inside the 5-95 % box (``box_a``, pixels x0, y0, x1, y1) of the agreeing matches.
    moved: True when the cameras are at different places (parallax), False when one only turned.
    parallax_px: 75th-percentile error of the rotation-only model over the agreeing matches (pixels).
    R_ab: (3, 3) camera b's orientation in camera a's frame, or None. yaw_deg / yaw_sigma_deg: its turn
        about a's vertical axis (> 0 = b looks further right) and that turn's uncertainty, degrees.
    problem: why there is no reliable link (a sentence), or None. warnings: sentences about a weak link.
    """

    pixels_a: np.ndarray
    pixels_b: np.ndarray
    matches: int
    agreeing: int
    distances_a: np.ndarray | None = None
    distances_b: np.ndarray | None = None
    distance_sigmas: np.ndarray | None = None
    cover: float = 0.0
    box_a: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    moved: bool = False
    parallax_px: float = float("nan")
    R_ab: np.ndarray | None = field(default=None, repr=False)
    yaw_deg: float | None = None
    yaw_sigma_deg: float | None = None
    problem: str | None = None
    warnings: list[str] = field(default_factory=list)


def _mutual_matches(
    rgb_a: np.ndarray, rgb_b: np.ndarray, max_features: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(points a, points b, (M,) descriptor distances) of the one-to-one matches that pass the ratio test both
    ways (``features.one_to_one_matches``)."""
    scale = feature_scale(max(rgb_a.shape, rgb_b.shape))
    features_a = sift_features(rgb_a, max_features, scale)
    features_b = sift_features(rgb_b, max_features, scale)
    pairs, strength = one_to_one_matches(features_a, features_b, ratio_both_ways=True)
    return features_a[0][pairs[:, 0]], features_b[0][pairs[:, 1]], strength


@dataclass
class _Candidate:
    R: np.ndarray
    t: np.ndarray
    agree: np.ndarray  # (M,) bool: Sampson error <= EPIPOLAR_PX and in front of both cameras
    cost: float


def _candidate(R: np.ndarray, t: np.ndarray, rays_a: np.ndarray, rays_b: np.ndarray, focal: float) -> _Candidate:
    """Refine (R, t) on its agreeing matches, pick the sign of t that puts most of them in front, and score
    it: sum over all matches of min(error, 2 x EPIPOLAR_PX)^2, a point behind a camera counting in full."""
    cap, t = 2 * EPIPOLAR_PX, np.asarray(t, float).ravel()
    near = sampson_px(R, t, rays_a, rays_b, focal) <= cap
    if near.sum() >= 8:
        R, t = refine_essential(R, t, rays_a[near], rays_b[near])
    t = t / np.linalg.norm(t)
    errors = sampson_px(R, t, rays_a, rays_b, focal)
    fronts = []
    for sign in (1.0, -1.0):
        s, u, _ = triangulate(rays_a, rays_b, R, sign * t)
        fronts.append((s > 0) & (u > 0))
    sign = 1.0 if fronts[0].sum() >= fronts[1].sum() else -1.0
    front = fronts[0] if sign > 0 else fronts[1]
    cost = float(np.sum(np.where(front, np.minimum(errors, cap), cap) ** 2))
    return _Candidate(R, sign * t, (errors <= EPIPOLAR_PX) & front, cost)


def _candidates(
    rays_a: np.ndarray, rays_b: np.ndarray, focal: float, R_turn: np.ndarray, seed: int
) -> list[_Candidate]:
    import cv2

    out = []
    for method, offset in ((cv2.RANSAC, 0), (cv2.RANSAC, 1), (cv2.USAC_ACCURATE, 0), (cv2.USAC_MAGSAC, 0)):
        # a variant the library fails on (degenerate matches) gives no candidate; the others still do
        out += guarded(partial(_essential_candidates, rays_a, rays_b, focal, method, seed + offset), lambda _: [])
    rows = np.cross(rays_a @ R_turn.T, rays_b)  # the rotation model's turn, translation solved linearly
    out.append(_candidate(R_turn, np.linalg.svd(rows)[2][-1], rays_a, rays_b, focal))
    return out


def _essential_candidates(
    rays_a: np.ndarray, rays_b: np.ndarray, focal: float, method: int, seed: int
) -> list[_Candidate]:
    """Up to three candidates from one RANSAC variant's essential matrices."""
    import cv2

    n_a, n_b = rays_a[:, :2], rays_b[:, :2]
    cv2.setRNGSeed(seed)
    E, mask = cv2.findEssentialMat(
        n_a, n_b, np.eye(3), method=method, prob=0.999, threshold=EPIPOLAR_PX / focal, maxIters=5000
    )
    if E is None or E.ndim != 2 or E.shape[1] != 3 or E.shape[0] % 3:
        return []
    out = []
    for E_k in E.reshape(-1, 3, 3)[:3]:
        _, R, t, _ = cv2.recoverPose(E_k, n_a, n_b, np.eye(3), mask=mask.copy())
        out.append(_candidate(R, t, rays_a, rays_b, focal))
    return out


def _spread(points: np.ndarray, score: np.ndarray, width: int, height: int, count: int) -> np.ndarray:
    """Indices of up to ``count`` points spread over the image: the best-scoring (lowest) point of each
    grid cell first, then the next best of each cell, round after round."""
    cols = np.clip((points[:, 0] / width * GRID[0]).astype(int), 0, GRID[0] - 1)
    rows = np.clip((points[:, 1] / height * GRID[1]).astype(int), 0, GRID[1] - 1)
    cells: dict[int, list[int]] = {}
    for i in np.argsort(score):
        cells.setdefault(int(rows[i] * GRID[0] + cols[i]), []).append(int(i))
    chosen: list[int] = []
    while len(chosen) < count and any(cells.values()):
        for members in cells.values():
            if members and len(chosen) < count:
                chosen.append(members.pop(0))
    return np.array(chosen, dtype=int)


def link_by_features(
    rgb_a: np.ndarray,
    rgb_b: np.ndarray,
    K_a: np.ndarray,
    K_b: np.ndarray,
    max_points: int = 12,
    max_features: int = 4000,
    seed: int = 0,
    name_a: str = "a",
) -> FeatureLink:
    """Correspondences between view a and view b ((H, W, 3) uint8 each; ``K_a``/``K_b`` (3, 3) pixels) for
    the floor-plan solve; see the module doc. ``max_points``: how many spread correspondences to keep;
    ``name_a``: how the warnings name view a."""
    import cv2

    points_a, points_b, strength = _mutual_matches(rgb_a, rgb_b, max_features)
    matches = len(points_a)
    if matches < MIN_MATCHES:
        return FeatureLink(
            np.zeros((0, 2)),
            np.zeros((0, 2)),
            matches,
            0,
            problem=f"only {matches} features match both ways (need {MIN_MATCHES})",
        )
    rays_a = np.column_stack(
        [cv2.undistortPoints(points_a.reshape(-1, 1, 2), K_a, None).reshape(-1, 2), np.ones(matches)]
    )
    rays_b = np.column_stack(
        [cv2.undistortPoints(points_b.reshape(-1, 1, 2), K_b, None).reshape(-1, 2), np.ones(matches)]
    )
    focal = float(np.mean([K_a[0, 0], K_a[1, 1], K_b[0, 0], K_b[1, 1]]))
    R_turn, _, rotation_errors = fit_rotation(points_a, points_b, K_a, K_b)
    candidates = _candidates(rays_a, rays_b, focal, R_turn, seed)
    best = min(candidates, key=lambda c: c.cost)
    agree, count = best.agree, int(best.agree.sum())
    if count < max(MIN_AGREEING, MIN_AGREEING_SHARE * matches):
        return FeatureLink(
            np.zeros((0, 2)),
            np.zeros((0, 2)),
            matches,
            count,
            problem=(
                f"only {count} of {matches} matches agree with one camera motion with points in front of both "
                f"cameras (need {MIN_AGREEING} and {100 * MIN_AGREEING_SHARE:.0f} %)"
            ),
        )
    parallax = float(np.percentile(rotation_errors[agree], 75))
    moved = parallax > PARALLAX_PX
    R, t = best.R, best.t
    if moved:
        R, t, yaw, sigma = profile_turn(best.R, best.t, rays_a[agree], rays_b[agree], focal)
    else:  # a camera that only turned: the rotation model holds, the essential matrix is degenerate
        agree = rotation_errors <= 1.5 * EPIPOLAR_PX
        R, yaw, sigma = R_turn, yaw_pitch_roll(R_turn.T)[0], 0.0
    sigma = max(sigma, float(np.degrees(1.0 / focal)))  # never finer than a pixel's angle
    if sigma > MAX_YAW_SIGMA_DEG:
        return FeatureLink(
            np.zeros((0, 2)),
            np.zeros((0, 2)),
            matches,
            count,
            problem=(f"the {count} agreeing matches do not pin the turn down (yaw {yaw:+.0f}° ± {sigma:.0f}°)"),
        )
    height, width = rgb_a.shape[:2]
    inside = np.flatnonzero(agree)
    low, high = np.percentile(points_a[inside], 5, axis=0), np.percentile(points_a[inside], 95, axis=0)
    cover = float(np.prod(high - low) / (width * height))
    chosen = inside[_spread(points_a[inside], strength[inside], width, height, max_points)]
    link = FeatureLink(
        points_a[chosen],
        points_b[chosen],
        matches,
        int(agree.sum()),
        cover=cover,
        box_a=(float(low[0]), float(low[1]), float(high[0]), float(high[1])),
        moved=moved,
        parallax_px=parallax,
        R_ab=R.T,
        yaw_deg=yaw,
        yaw_sigma_deg=sigma,
    )
    if moved:
        s, u, angle = triangulate(rays_a[chosen], rays_b[chosen], R, t)
        norm = float(np.median(np.r_[s, u]))
        link.distances_a, link.distances_b = s / norm, u / norm
        link.distance_sigmas = np.clip(1.0 / focal / np.maximum(np.sin(angle), 1e-6), 0.02, 0.5)
    if link.agreeing < FEW_AGREEING:
        link.warnings.append(f"only {link.agreeing} matches agree: a weak link")
    if sigma > 5.0:
        link.warnings.append(
            f"the matches pin the turn only to ± {sigma:.0f}° (a narrow field of view or a shallow scene lets "
            f"turning trade for sideways motion)"
        )
    if cover < SMALL_REGION:
        link.warnings.append(
            f"the agreeing matches sit in one small region of view {name_a} (box {low[0]:.0f}, {low[1]:.0f}, "
            f"{high[0]:.0f}, {high[1]:.0f} px, {100 * cover:.0f} % of the view): the heading rests on that "
            f"region alone (a moving thing or a repeated pattern would mislead it)"
        )
    return link
