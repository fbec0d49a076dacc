"""Relative camera motion between two frames, with a parallax test that tells rotation from translation.

Two models are fitted to the same SIFT matches (found at an upsampled scale for small frames):

- a *rotation* model, ``x_b ~ K_b diag(z, z, 1) R K_a^-1 x_a`` (the homography of a camera that only turns,
  with a focal-length ratio ``z`` for zoom), started from a RANSAC homography and refined by robust
  least squares;
- an *essential matrix* (RANSAC, OpenCV), which also explains translation; for a translating camera its
  direction is then searched over every way of moving (:mod:`spatialclaw.primitives.motion.translation`),
  since a sideways move and a pan plus a move along the view axis look alike at small baselines.

The parallax test: the 75th percentile of the rotation model's reprojection error over the essential
matrix's inliers. A camera that only turns (or zooms) moves every point by the same homography, whatever its
depth, so that error stays at the matching noise (a few tenths of a pixel); a camera that translates moves
near points more than far ones, and the rotation model cannot follow. Above ``PARALLAX_PX`` the pair is
"translation" (its direction, with the others that fit about as well; its length is unobservable without
depth), else "rotation" (or "static" when the rotation and zoom are negligible).

Conventions: pixels (x, y) at pixel centres; OpenCV camera axes (x right, y down, z forward); ``R_ab``: camera
b's orientation in a's frame (columns: b's axes in a's coordinates); ``direction``: unit vector a -> b in a's frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from spatialclaw.primitives.motion.features import matched_points
from spatialclaw.primitives.motion.translation import fit_translation, ransac_essential, sampson, skew
from spatialclaw.primitives.runtime.library_failures import guarded

__all__ = [
    "INLIER_PX",
    "MIN_MATCHES",
    "PARALLAX_PX",
    "PairGeometry",
    "estimate_pair",
    "fit_rotation",
    "refine_essential",
    "rotation_homography",
]

PARALLAX_PX = 0.6  # 75th-percentile rotation-model error (original pixels) above which the camera translated
INLIER_PX = 1.5  # reprojection error (original pixels) for a match to count as consistent with a model
MIN_MATCHES = 12
STATIC_DEG = 0.15
STATIC_ZOOM = 0.004
FULL_SUPPORT = 30  # inliers for full confidence


@dataclass
class PairGeometry:
    """What two frames say about the camera motion between them (see the module doc for the frames).

    kind: "rotation" (turns and/or zooms, no detectable translation), "translation" (moves; may also turn),
        "static", or "unknown" (could not be measured: ``reason`` says why).
    R_ab: (3, 3) orientation of camera b in camera a's frame (identity for "static"; None when unknown).
    zoom: focal-length ratio f_b / f_a from the rotation model (1 = none; > 1 = zoomed in).
    direction: (3,) unit vector a -> b in a's camera frame for "translation", else None.
    matches / inliers: feature matches, and how many agree with the reported model (pixels <= INLIER_PX).
    parallax_px: the parallax test's statistic (75th-percentile rotation-model error, original pixels).
    residual_px: median error of the reported model over its inliers (pixels; Sampson distance for the
        essential matrix).
    confidence: in [0, 1]: inlier fraction x min(1, inliers / 30) x (0.5 + 0.5 x how clearly the parallax
        test decided: 1 when the statistic is 4 times off the threshold, either way).
    points_a / points_b / inlier_mask: the matches (original pixels) and which support the model.
    homography: (3, 3) rotation-model homography, pixels of a -> pixels of b (the background motion of a
        turning camera; an approximation when it translates).
    feature_scale: the upsampling factor used for feature detection.
    plausible: for "translation", [(direction, R_ab)] of the motions that explain the matches about as well
        as the best (the best first; ``translation.fit_translation``): which way it moved is only as
        certain as the direction words they share.
    """

    kind: str
    R_ab: np.ndarray | None
    zoom: float
    direction: np.ndarray | None
    matches: int
    inliers: int
    parallax_px: float
    residual_px: float
    confidence: float
    reason: str
    points_a: np.ndarray
    points_b: np.ndarray
    inlier_mask: np.ndarray
    homography: np.ndarray | None
    feature_scale: float
    plausible: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)


def rotation_homography(K_a: np.ndarray, K_b: np.ndarray, R_m: np.ndarray, zoom: float = 1.0) -> np.ndarray:
    """Pixels of a -> pixels of b for a camera that turns by ``R_m`` (rays of a -> rays of b) and zooms."""
    return np.asarray(K_b @ np.diag([zoom, zoom, 1.0]) @ R_m @ np.linalg.inv(K_a))


def _apply(H: np.ndarray, points: np.ndarray) -> np.ndarray:
    moved = np.column_stack([points, np.ones(len(points))]) @ H.T
    return np.asarray(moved[:, :2] / moved[:, 2:3])


def _nearest_scaled_rotation(M: np.ndarray) -> tuple[np.ndarray, float]:
    """(R, zoom) with M ~ diag(zoom, zoom, 1) R (up to scale), by row norms and an SVD projection."""
    M = M / np.cbrt(np.linalg.det(M)) if np.linalg.det(M) > 0 else -M / np.cbrt(-np.linalg.det(M))
    rows = np.linalg.norm(M, axis=1)
    zoom = float((rows[0] + rows[1]) / 2.0 / max(rows[2], 1e-12))
    U, _, Vt = np.linalg.svd(np.diag([1 / zoom, 1 / zoom, 1.0]) @ M)
    R = U @ Vt
    if np.linalg.det(R) < 0:
        R = U @ np.diag([1, 1, -1]) @ Vt
    return R, zoom


def fit_rotation(
    points_a: np.ndarray,
    points_b: np.ndarray,
    K_a: np.ndarray,
    K_b: np.ndarray,
    start: tuple[np.ndarray, float] | None = None,
) -> tuple[np.ndarray, float, np.ndarray]:
    """Robust least-squares rotation + zoom: (R_m rays a -> rays b, zoom, (M,) pixel errors of all matches)."""
    import cv2
    from scipy.optimize import least_squares

    if start is None:
        H = guarded(
            lambda: cv2.findHomography(points_a, points_b, cv2.RANSAC, INLIER_PX, maxIters=2000, confidence=0.999)[0],
            lambda _: None,  # no homography to start from: the identity start below
        )
        if H is None:
            R0, z0 = np.eye(3), 1.0
        else:
            R0, z0 = _nearest_scaled_rotation(np.linalg.inv(K_b) @ H @ K_a)
    else:
        R0, z0 = start
    params = np.r_[cv2.Rodrigues(R0)[0].ravel(), np.log(max(z0, 1e-6))]

    def errors_of(params: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        H = rotation_homography(K_a, K_b, cv2.Rodrigues(params[:3])[0], float(np.exp(params[3])))
        return np.asarray(_apply(H, a) - b)

    def residuals(params: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return errors_of(params, a, b).ravel()

    for gate in (4 * INLIER_PX, 2 * INLIER_PX):  # refit on the matches near the current model, twice
        near = np.linalg.norm(errors_of(params, points_a, points_b), axis=1) <= gate
        if near.sum() < 4:
            break
        a, b = points_a[near], points_b[near]
        params = least_squares(
            residuals, params, args=(a, b), loss="huber", f_scale=INLIER_PX, method="trf", max_nfev=100
        ).x
    R = cv2.Rodrigues(params[:3])[0]
    zoom = float(np.exp(params[3]))
    errors = np.linalg.norm(errors_of(params, points_a, points_b), axis=1)
    return R, zoom, errors


def refine_essential(R: np.ndarray, t: np.ndarray, ha: np.ndarray, hb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares (R, unit t) over the epipolar inliers' Sampson distances (the 5-point RANSAC answer is
    a minimal-sample fit; on narrow fields of view its rotation and translation trade off by a degree or two)."""
    import cv2
    from scipy.optimize import least_squares

    if len(ha) < 8:
        return R, t

    def unpack(params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        theta, phi = params[3], params[4]
        return cv2.Rodrigues(params[:3])[0], np.array(
            [np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)]
        )

    t = t / np.linalg.norm(t)
    start = np.r_[cv2.Rodrigues(R)[0].ravel(), np.arccos(np.clip(t[2], -1, 1)), np.arctan2(t[1], t[0])]
    fit = least_squares(
        lambda p: sampson(skew(unpack(p)[1]) @ unpack(p)[0], ha, hb),
        start,
        loss="huber",
        f_scale=float(np.median(sampson(skew(t) @ R, ha, hb))) * 2 + 1e-9,
        max_nfev=100,
    )
    return unpack(fit.x)


def _empty(kind_reason: str, points_a: np.ndarray, points_b: np.ndarray, scale: float) -> PairGeometry:
    return PairGeometry(
        "unknown",
        None,
        1.0,
        None,
        len(points_a),
        0,
        float("nan"),
        float("nan"),
        0.0,
        kind_reason,
        points_a,
        points_b,
        np.zeros(len(points_a), bool),
        None,
        scale,
    )


def estimate_pair(
    rgb_a: np.ndarray,
    rgb_b: np.ndarray,
    K_a: np.ndarray,
    K_b: np.ndarray,
    *,
    ignore_a: np.ndarray | None = None,
    parallax_px: float = PARALLAX_PX,
    seed: int = 0,
    matches: tuple[np.ndarray, np.ndarray, float] | None = None,
) -> PairGeometry:
    """The camera motion from frame a to frame b ((H, W, 3) uint8 each; ``K_a``/``K_b`` (3, 3) pixels).

    ``ignore_a``: an (H, W) bool mask of frame a whose matches are left out (a moving object), so only the
    background measures the camera. ``matches``: precomputed (points_a, points_b, scale) to reuse."""
    points_a, points_b, scale = matches if matches is not None else matched_points(rgb_a, rgb_b)
    if ignore_a is not None and len(points_a):
        cols = np.clip(np.round(points_a[:, 0]).astype(int), 0, ignore_a.shape[1] - 1)
        rows = np.clip(np.round(points_a[:, 1]).astype(int), 0, ignore_a.shape[0] - 1)
        keep = ~ignore_a[rows, cols]
        points_a, points_b = points_a[keep], points_b[keep]
    height, width = rgb_a.shape[:2]
    if len(points_a) < MIN_MATCHES:
        small = max(height, width) < 320
        hint = (
            f"the frames are small ({width}x{height} px; features were detected at {scale:.1f}x)"
            if small
            else "the views share too little texture"
        )
        return _empty(
            f"only {len(points_a)} feature matches (need {MIN_MATCHES}): {hint}; use frames closer "
            f"together in time or a larger crop of the shared region",
            points_a,
            points_b,
            scale,
        )
    R_m, zoom, rotation_errors = fit_rotation(points_a, points_b, K_a, K_b)
    failures: list[str] = []  # a fit the library failed on (the rotation model then decides alone)
    essential = guarded(
        partial(ransac_essential, points_a, points_b, K_a, K_b, INLIER_PX, seed),
        partial(_failed_fit, failures, "the essential-matrix fit"),
    )
    if essential is not None and essential[2].sum() >= MIN_MATCHES:
        e_inliers = essential[2]
        parallax = float(np.percentile(rotation_errors[e_inliers], 75))
    else:
        e_inliers, parallax = None, float(np.percentile(rotation_errors, 75))
    margin = float(np.clip(abs(np.log(max(parallax, 1e-6) / parallax_px)) / np.log(4.0), 0.0, 1.0))
    H = rotation_homography(K_a, K_b, R_m, zoom)
    moving_box = None
    if parallax > parallax_px and e_inliers is not None:  # a compact group breaking the model: a moving object?
        moving_box = _compact_group(points_a[e_inliers & (rotation_errors > INLIER_PX)], width, height)
        rest = e_inliers & ~_inside(points_a, moving_box) if moving_box is not None else e_inliers
        if moving_box is not None and rest.sum() >= MIN_MATCHES:  # the "parallax" sits on one compact group:
            parallax = float(np.percentile(rotation_errors[rest], 75))  # an object moving on its own
        else:  # no group, or nothing left outside it: it cannot be told from the background
            moving_box = None
    if parallax > parallax_px and essential is not None and e_inliers is not None:
        fit = fit_translation(points_a, points_b, K_a, K_b, R_m, INLIER_PX, essential)
        inliers = fit.inliers
        support = int(inliers.sum())
        confidence = support / len(points_a) * min(1.0, support / FULL_SUPPORT) * (0.5 + 0.5 * margin)
        return PairGeometry(
            "translation",
            fit.R.T,
            1.0,
            fit.direction,
            len(points_a),
            support,
            parallax,
            float(np.median(fit.sampson_px[inliers])),
            float(confidence),
            f"parallax {parallax:.2f} px > {parallax_px:g} px: the camera moved (the rotation-only "
            f"model leaves depth-dependent motion)",
            points_a,
            points_b,
            inliers,
            H,
            scale,
            fit.plausible,
        )
    inliers = rotation_errors <= INLIER_PX
    support = int(inliers.sum())
    if support < MIN_MATCHES:
        return _empty(
            f"no single camera motion explains the matches ({support} of {len(points_a)} agree with a "
            f"rotation, none with an essential matrix): moving objects or repeated texture dominate"
            + "".join(f"; {failure}" for failure in failures),
            points_a,
            points_b,
            scale,
        )
    confidence = support / len(points_a) * min(1.0, support / FULL_SUPPORT) * (0.5 + 0.5 * margin)
    angle = float(np.degrees(np.arccos(np.clip((np.trace(R_m) - 1) / 2, -1, 1))))
    static = angle < STATIC_DEG and abs(np.log(zoom)) < STATIC_ZOOM
    kind = "static" if static else "rotation"
    reason = (
        f"parallax {parallax:.2f} px <= {parallax_px:g} px: one rotation{' and zoom' if abs(zoom - 1) > 0.01 else ''} "
        f"homography explains {support} of {len(points_a)} matches, so no translation is detectable"
    )
    if moving_box is not None:
        reason += (
            f"; a compact group of matches in box ({moving_box[0]:.0f}, {moving_box[1]:.0f}, {moving_box[2]:.0f}, "
            f"{moving_box[3]:.0f}) px moves on its own (a moving object?), left out of the camera motion"
        )
    return PairGeometry(
        kind,
        R_m.T,
        zoom,
        None,
        len(points_a),
        support,
        parallax,
        float(np.median(rotation_errors[inliers])),
        float(confidence),
        reason,
        points_a,
        points_b,
        inliers,
        H,
        scale,
    )


def _failed_fit(failures: list[str], what: str, reason: str) -> None:
    failures.append(f"{what} failed: {reason}")


def _inside(points: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    return (points[:, 0] >= box[0]) & (points[:, 0] <= box[2]) & (points[:, 1] >= box[1]) & (points[:, 1] <= box[3])


def _compact_group(points: np.ndarray, width: int, height: int) -> tuple[float, float, float, float] | None:
    """The box (x0, y0, x1, y1) of the points breaking the rotation model when they are one compact group (>= 8
    points, 5-95 % box under 12 % of the image; camera parallax spreads over the image), else None."""
    if len(points) < 8:
        return None
    low, high = np.percentile(points, 5, axis=0), np.percentile(points, 95, axis=0)
    if (high - low).prod() > 0.12 * width * height:
        return None
    margin = 0.25 * (high - low) + 2.0
    return (
        float(low[0] - margin[0]),
        float(low[1] - margin[1]),
        float(high[0] + margin[0]),
        float(high[1] + margin[1]),
    )
