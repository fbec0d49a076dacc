"""The turn between two views that an essential-matrix fit leaves uncertain, measured by its profile
(part of ``scene.link_views`` by matched features, ``feature_links``).

On a narrow field of view or a shallow scene, a turn about the vertical trades for sideways motion: many
(yaw, translation) pairs explain the matches almost equally well, and a minimum found by RANSAC can sit
anywhere along that valley. ``profile_turn`` fixes the yaw on a grid around a starting fit, refits the
pitch, roll and translation direction at each (squared Sampson distances), and reports the best yaw and
its sigma: the half-width of the range of yaws whose fit is worse than the best by less than
``PROFILE_CHI2`` residual variances (the turns the matches cannot tell apart).

Rays are (N, 3) ``K^-1 (x, y, 1)`` in OpenCV camera axes (x right, y down, z forward); x_b = R x_a + t;
yaw / pitch / roll as in ``motion``: R_ab = R^T = Ry(yaw) Rx(pitch) Rz(roll), yaw > 0 = b looks further right.
"""

from __future__ import annotations

import numpy as np

from spatialclaw.primitives.motion.angles import yaw_pitch_roll

__all__ = ["PROFILE_CHI2", "profile_turn", "rotation_ypr", "sampson_px", "triangulate"]

PROFILE_CHI2 = 4.0  # a turn whose best fit is worse than the best by less than this (x the residual variance)
PROFILE_OFFSETS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0)  # degrees either side


def triangulate(rays_a: np.ndarray, rays_b: np.ndarray, R: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, ...]:
    """(s, u, angle): distances along the (N, 3) rays from camera a and camera b (x_b = R x_a + t) of the
    rays' closest approach, and the angle between the rays (radians)."""
    centre_b = -R.T @ t
    d_a = rays_a / np.linalg.norm(rays_a, axis=1, keepdims=True)
    d_b = rays_b @ R  # camera b's rays in camera a's frame
    d_b = d_b / np.linalg.norm(d_b, axis=1, keepdims=True)
    c = np.sum(d_a * d_b, axis=1)
    along_a, along_b = d_a @ centre_b, d_b @ centre_b
    denom = np.maximum(1.0 - c**2, 1e-12)
    return (along_a - c * along_b) / denom, (c * along_a - along_b) / denom, np.arccos(np.clip(c, -1.0, 1.0))


def sampson_px(R: np.ndarray, t: np.ndarray, rays_a: np.ndarray, rays_b: np.ndarray, focal: float) -> np.ndarray:
    """Sampson distances (pixels, at focal length ``focal``) of (N, 3) ray pairs to the epipolar geometry
    x_b = R x_a + t."""
    tx = np.array([[0, -t[2], t[1]], [t[2], 0, -t[0]], [-t[1], t[0], 0]])
    E = tx @ R
    Ex, Etx = rays_a @ E.T, rays_b @ E
    numerator = np.sum(rays_b * Ex, axis=1) ** 2
    denominator = np.maximum(Ex[:, 0] ** 2 + Ex[:, 1] ** 2 + Etx[:, 0] ** 2 + Etx[:, 1] ** 2, 1e-30)
    return np.asarray(np.sqrt(numerator / denominator) * focal)


def rotation_ypr(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """R_ab = Ry(yaw) Rx(pitch) Rz(roll), degrees (the ``motion`` convention)."""
    a, b, c = np.radians([yaw, pitch, roll])
    Ry = np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])
    Rx = np.array([[1, 0, 0], [0, np.cos(b), -np.sin(b)], [0, np.sin(b), np.cos(b)]])
    Rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    return np.asarray(Ry @ Rx @ Rz)


def profile_turn(
    R: np.ndarray, t: np.ndarray, rays_a: np.ndarray, rays_b: np.ndarray, focal: float
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(R, t, yaw, yaw sigma): the turn's profile over the agreeing matches. For each yaw on a grid around
    the given (R, t)'s, the pitch, roll and translation direction that fit best (squared Sampson
    distances); the yaw is the grid's best and its sigma the half-width of the range of yaws whose fit is
    worse by less than ``PROFILE_CHI2`` (in units of the residual variance): turns the matches cannot
    tell apart. An unbounded range within the grid gives an infinite sigma."""
    from scipy.optimize import least_squares

    def unit(theta: float, phi: float) -> np.ndarray:
        return np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])

    def fit(yaw: float, start: np.ndarray) -> tuple[float, np.ndarray]:
        def residuals(x: np.ndarray) -> np.ndarray:
            return sampson_px(rotation_ypr(yaw, x[0], x[1]).T, unit(x[2], x[3]), rays_a, rays_b, focal)

        found = least_squares(residuals, start, max_nfev=200)
        return 2.0 * float(found.cost), found.x

    yaw0, pitch0, roll0 = yaw_pitch_roll(R.T)
    start = np.array([pitch0, roll0, np.arccos(np.clip(t[2], -1, 1)), np.arctan2(t[1], t[0])])
    cost0, start = fit(yaw0, start)
    variance = max(cost0 / max(len(rays_a) - 5, 1), 1e-6)
    grid = {0.0: (cost0, start)}
    for side in (-1.0, 1.0):
        previous = start
        for offset in PROFILE_OFFSETS:
            grid[side * offset] = fit(yaw0 + side * offset, previous)
            previous = grid[side * offset][1]
            if grid[side * offset][0] - cost0 > 4 * PROFILE_CHI2 * variance:
                break
    offsets = np.array(sorted(grid))
    chi2 = (np.array([grid[o][0] for o in offsets]) - min(c for c, _ in grid.values())) / variance
    centre = int(np.argmin(chi2))
    half = []
    for step in (-1, 1):
        k = centre
        while 0 <= k + step < len(offsets) and chi2[k + step] <= PROFILE_CHI2:
            k += step
        if not 0 <= k + step < len(offsets):
            half.append(np.inf)
            continue
        c_in, c_out = chi2[k], chi2[k + step]  # interpolate where the profile crosses PROFILE_CHI2
        edge = offsets[k] + (offsets[k + step] - offsets[k]) * (PROFILE_CHI2 - c_in) / max(c_out - c_in, 1e-9)
        half.append(abs(edge - offsets[centre]))
    yaw, x = yaw0 + float(offsets[centre]), grid[float(offsets[centre])][1]
    if 0 < centre < len(offsets) - 1:  # the vertex of the parabola through the grid's best and its neighbours
        (x0, x1, x2), (y0, y1, y2) = offsets[centre - 1 : centre + 2], chi2[centre - 1 : centre + 2]
        denom = (x0 - x1) * (x0 - x2) * (x1 - x2)
        A = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / denom
        B = (x2**2 * (y0 - y1) + x1**2 * (y2 - y0) + x0**2 * (y1 - y2)) / denom
        if A > 0:
            yaw = yaw0 + float(np.clip(-B / (2 * A), x0, x2))
            x = fit(yaw, x)[1]
    R, t = rotation_ypr(yaw, x[0], x[1]).T, unit(x[2], x[3])
    s, u, _ = triangulate(rays_a, rays_b, R, t)
    if np.sum((s < 0) & (u < 0)) > np.sum((s > 0) & (u > 0)):
        t = -t  # Sampson distances do not see the sign of t; the points in front do
    return R, t, yaw, float(np.mean(half))
