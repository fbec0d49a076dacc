"""Sub-pixel corners of a planar reference: each side of a rough quadrilateral located along the image
gradient and fitted robustly, corners at the sides' intersections, with samples of their uncertainty
(``refine_quad``, part of ``geom``; used by ``find_plane_reference``).

Pixels are (x, y), origin top-left. Each side's edge points are the steepest inside-to-outside drops of a
strength map (the similarity to the reference's colour, or brightness) along normal profiles, located to
sub-pixel precision; a RANSAC + Tukey-weighted total-least-squares line fit ignores stretches hidden by an
object or a shadow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.plane_measure import MONTE_CARLO_SAMPLES
from spatialclaw.primitives.imaging import as_rgb_array

__all__ = ["refine_quad"]


def strength_map(array: np.ndarray, color: Any) -> tuple[np.ndarray, np.ndarray]:
    """(region mask, strength map) where the strength is high inside the reference and low outside."""
    from spatialclaw.primitives.display.color_mask import color_mask, color_space

    space = color_space(array)
    mask, strength, _, _, _ = color_mask(space, color, None, None)
    return mask, strength.astype(np.float64)


def _edge_points(
    strength: np.ndarray, p: np.ndarray, q: np.ndarray, inside: np.ndarray, band: float, step: float = 0.25
) -> np.ndarray:
    """Sub-pixel edge points along the side p->q: the steepest inside-to-outside drop of ``strength``
    along each normal profile (parabolic peak of the derivative)."""
    from scipy.ndimage import map_coordinates

    direction = (q - p) / np.linalg.norm(q - p)
    normal = np.array([-direction[1], direction[0]])
    if normal @ (inside - (p + q) / 2) > 0:
        normal = -normal  # the normal points outward
    length = float(np.linalg.norm(q - p))
    count = int(np.clip(length / 1.5, 12, 400))
    ts = np.linspace(0.08, 0.92, count)
    offsets = np.arange(-band, band + step / 2, step)
    centres = p[None] + ts[:, None] * (q - p)[None]
    coords = centres[:, None, :] + offsets[None, :, None] * normal[None, None, :]
    profiles = map_coordinates(
        strength, [coords[..., 1].ravel(), coords[..., 0].ravel()], order=1, mode="nearest"
    ).reshape(len(ts), len(offsets))
    drop = -np.gradient(profiles, step, axis=1)
    peak = np.argmax(drop, axis=1)
    strong = drop[np.arange(len(ts)), peak]
    keep = (peak > 0) & (peak < len(offsets) - 1) & (strong > 0.25 * np.median(strong))
    rows = np.nonzero(keep)[0]
    left, mid, right = drop[rows, peak[rows] - 1], drop[rows, peak[rows]], drop[rows, peak[rows] + 1]
    curvature = left - 2 * mid + right
    shift = np.where(np.abs(curvature) > 1e-12, 0.5 * (left - right) / curvature, 0.0)
    position = offsets[peak[rows]] + np.clip(shift, -0.5, 0.5) * step
    edge_points: np.ndarray = centres[rows] + position[:, None] * normal[None]
    return edge_points


@dataclass(frozen=True)
class _Line:
    point: np.ndarray  # (2,) centroid of the inliers
    direction: np.ndarray  # (2,) unit
    sigma_px: float  # rms perpendicular residual of the inliers
    spread: float  # sum of squared positions of the inliers along the line
    count: int


def _fit_line(points: np.ndarray, seed: int, threshold: float = 1.0) -> _Line:
    """RANSAC, then total least squares with Tukey reweighting: tolerant to occluded stretches."""
    if len(points) < 6:
        raise ValueError(
            f"only {len(points)} edge points on one side of the reference (too occluded or too "
            f"blurred); pass quad= with four rough corners, or a larger view"
        )
    rng = np.random.default_rng(seed)
    best: tuple[np.ndarray, np.ndarray] | None = None
    best_count = -1
    for _ in range(200):
        i, j = rng.choice(len(points), 2, replace=False)
        d = points[j] - points[i]
        if np.linalg.norm(d) < 1e-6:
            continue
        n = np.array([-d[1], d[0]]) / np.linalg.norm(d)
        count = int((np.abs((points - points[i]) @ n) <= threshold).sum())
        if count > best_count:
            best, best_count = (points[i], n), count
    if best is None:
        raise ValueError(
            "the edge points on one side of the reference all coincide (no line to fit); pass quad= with four "
            "rough corners, or a larger view"
        )
    point, normal = best
    weights = (np.abs((points - point) @ normal) <= 3 * threshold).astype(np.float64)
    for _ in range(10):
        centre = (weights[:, None] * points).sum(axis=0) / weights.sum()
        centred = points - centre
        scatter = (weights[:, None] * centred).T @ centred
        _, vectors = np.linalg.eigh(scatter)
        normal, direction = vectors[:, 0], vectors[:, 1]
        residual = centred @ normal
        scale = max(1.4826 * np.median(np.abs(residual[weights > 0])), 0.05)
        u = residual / (4.685 * scale)
        weights = np.where(np.abs(u) < 1, (1 - u**2) ** 2, 0.0)
        if weights.sum() < 6:
            weights = (np.abs(residual) <= 3 * scale).astype(np.float64)
    inliers = weights > 0.1
    residual = (points[inliers] - centre) @ normal
    along = (points[inliers] - centre) @ direction
    sigma = float(np.sqrt(np.sum(residual**2) / max(1, inliers.sum() - 2)))
    return _Line(centre, direction, max(sigma, 0.02), float(np.sum(along**2)), int(inliers.sum()))


def _intersect(a_point: np.ndarray, a_dir: np.ndarray, b_point: np.ndarray, b_dir: np.ndarray) -> np.ndarray:
    """(..., 2) intersections of lines given by points and directions ((..., 2) arrays)."""
    cross = a_dir[..., 0] * b_dir[..., 1] - a_dir[..., 1] * b_dir[..., 0]
    delta = b_point - a_point
    t = (delta[..., 0] * b_dir[..., 1] - delta[..., 1] * b_dir[..., 0]) / cross
    crossing: np.ndarray = a_point + t[..., None] * a_dir
    return crossing


def _corner_samples(lines: Sequence[_Line], samples: int, seed: int) -> np.ndarray:
    """(samples, 4, 2) corners from lines perturbed by their fit uncertainty (offset and angle)."""
    rng = np.random.default_rng(seed)
    points, directions = [], []
    for line in lines:
        normal = np.array([-line.direction[1], line.direction[0]])
        offset = rng.normal(0.0, line.sigma_px / np.sqrt(line.count), samples)
        angle = rng.normal(0.0, line.sigma_px / np.sqrt(max(line.spread, 1e-9)), samples)
        points.append(line.point[None] + offset[:, None] * normal[None])
        c, s = np.cos(angle), np.sin(angle)
        d = line.direction
        directions.append(np.stack([c * d[0] - s * d[1], s * d[0] + c * d[1]], axis=1))
    corners = [_intersect(points[i - 1], directions[i - 1], points[i], directions[i]) for i in range(4)]
    return np.stack(corners, axis=1)


def refine_quad(
    frame: Any,
    quad: Any,
    color: Any = None,
    band_px: float | None = None,
    seed: int = 0,
    samples: int = MONTE_CARLO_SAMPLES,
    strength: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Sub-pixel corners of a quadrilateral whose four sides are colour (or brightness) edges.

    Args:
        frame: the image. quad: (4, 2) rough corners (x, y) pixels in order around the shape (from
            ``find_plane_reference``'s detection or read off a ``zoom``), within about ``band_px`` of the
            true sides. color: the reference's colour (as in ``find_color``), or None for brightness.
        band_px: half-width of the search band across each side, pixels (default 4% of the shortest side,
            at least 3).
        strength: optional (H, W) map, high inside the reference, low outside (overrides ``color``).

    Returns:
        (corners (4, 2) px, corner_samples (samples, 4, 2) px drawn from the side fits' uncertainty,
        per-side rms residual in px).
    """
    array = as_rgb_array(frame)
    rough = np.asarray(quad, dtype=np.float64)
    if rough.shape != (4, 2) or not np.isfinite(rough).all():
        raise ValueError(f"quad must be four (x, y) corners, shape (4, 2), got {rough.shape}")
    if strength is not None:
        strength = np.asarray(strength, dtype=np.float64)
    elif color is None:
        strength = array.astype(np.float64).mean(axis=2)
        inside_mean = strength[
            tuple(np.clip(rough.mean(axis=0)[::-1].round().astype(int), 0, np.array(strength.shape) - 1))
        ]
        if inside_mean < np.median(strength):
            strength = 255.0 - strength  # a dark reference on a bright surface
    else:
        _, strength = strength_map(array, color)
    from scipy.ndimage import gaussian_filter

    strength = gaussian_filter(strength, 0.7)
    sides = np.linalg.norm(np.roll(rough, -1, axis=0) - rough, axis=1)
    band = float(band_px) if band_px is not None else max(3.0, 0.04 * float(sides.min()))
    inside = rough.mean(axis=0)
    lines = []
    for i in range(4):
        points = _edge_points(strength, rough[i], rough[(i + 1) % 4], inside, band)
        lines.append(_fit_line(points, seed=seed + i))
    # corner i joins side i-1 (corner i-1 -> i) and side i (corner i -> i+1)
    corners = np.stack(
        [_intersect(lines[i - 1].point, lines[i - 1].direction, lines[i].point, lines[i].direction) for i in range(4)]
    )
    if not np.isfinite(corners).all() or np.abs(corners - rough).max() > 3 * band + 2:
        raise ValueError(
            "the refined sides do not meet near the rough corners (parallel or wrong edges); "
            "pass quad= closer to the reference's corners or a different color="
        )
    return corners, _corner_samples(lines, samples, seed), [line.sigma_px for line in lines]
