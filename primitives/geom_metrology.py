"""Planar metrology: find a planar reference of known size, rectify it, measure in its units (part of ``geom``).

Workflow for "a sheet / square / tape border of known size lies on the table; how long / what angle /
what ratio": ``plane = geom.find_plane_reference(frame, size=(0.297, 0.210), color="white")`` finds the
reference's outline (a colour region, its four sides located to sub-pixel precision along the image
gradient and fitted robustly, so an object covering part of a side does not bend it), rectifies the
plane, and returns a ``Rectified`` whose ``length``, ``angle``, ``ratio``, ``point`` and ``area``
give values in the plane's units (those of ``size``) with a standard deviation that propagates the side
fits' uncertainty and the pixel uncertainty of the measured points. Blobs from
``find_color(frame, ..., rectified=plane)`` carry plane coordinates. Points must lie ON the plane.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .geom_rectify import Rectified, homography_from_points, rectify_plane
from .imaging import as_rgb_array

__all__ = ["Measurement", "PlanePoint", "find_plane_reference", "refine_quad"]

MONTE_CARLO_SAMPLES = 256


@dataclass(frozen=True)
class Measurement:
    """A measured value with its standard deviation.

    Attributes:
        value: the estimate (in ``unit``). sigma: one standard deviation, same unit. unit: e.g. "m",
            "deg", "" (ratios), "m^2". what: what was measured (for the readout).
    """

    value: float
    sigma: float
    unit: str
    what: str = ""

    @property
    def text(self) -> str:
        """E.g. "length 0.2101 ± 0.0004 m"."""
        digits = max(2, min(6, int(-np.floor(np.log10(self.sigma))) + 1)) if self.sigma > 0 else 4
        unit = f" {self.unit}" if self.unit else ""
        name = f"{self.what} " if self.what else ""
        return f"{name}{self.value:.{digits}f} ± {self.sigma:.{digits}f}{unit}"

    def __float__(self) -> float:
        return float(self.value)

    def __repr__(self) -> str:
        return f"Measurement({self.text})"


@dataclass(frozen=True)
class PlanePoint:
    """An image point located on the plane: ``xy`` (2,) plane coordinates, ``sigma`` (2,) their standard
    deviations, ``unit`` the plane's unit."""

    xy: tuple[float, float]
    sigma: tuple[float, float]
    unit: str

    def __repr__(self) -> str:
        return (f"PlanePoint(x={self.xy[0]:.4g} ± {self.sigma[0]:.2g}, y={self.xy[1]:.4g} ± {self.sigma[1]:.2g} "
                f"{self.unit})")


# ---- measurements on a Rectified plane (called by its methods) ------------------------------------
def _as_pixels(points: Any, name: str) -> np.ndarray:
    if hasattr(points, "centroid"):
        points = [points]
    if isinstance(points, (list, tuple)):
        points = [getattr(p, "centroid", p) for p in points]
    array = np.asarray(points, dtype=np.float64)
    if array.shape == (2,):
        array = array[None]
    if array.ndim != 2 or array.shape[1] != 2 or not np.isfinite(array).all():
        raise ValueError(f"{name} must be image pixels (x, y), an (N, 2) array, or Blobs, got shape {array.shape}")
    return array


def plane_homographies(rect: Rectified) -> np.ndarray:
    """(S + 1, 3, 3) image-pixel -> plane homographies: the estimate first, then one per corner sample."""
    H = [rect.plane_homography]
    if rect.corner_samples is not None:
        w, h = rect.size_m
        target = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64)
        H += [homography_from_points(corners, target) for corners in rect.corner_samples]
    return np.stack(H)


def _map(H: np.ndarray, pixels: np.ndarray) -> np.ndarray:
    """(S, 3, 3) homographies and (S, N, 2) pixels -> (S, N, 2) plane points."""
    homogeneous = np.concatenate([pixels, np.ones(pixels.shape[:2] + (1,))], axis=2) @ np.transpose(H, (0, 2, 1))
    return homogeneous[..., :2] / homogeneous[..., 2:3]


def sample_plane_points(rect: Rectified, pixels: Any, point_sigma_px: float, seed: int = 0) -> np.ndarray:
    """(S + 1, N, 2) plane points: row 0 the estimate, the others with the corner and pixel noise applied."""
    pts = _as_pixels(pixels, "points")
    H = plane_homographies(rect)
    samples = np.repeat(pts[None], len(H), axis=0)
    if len(H) > 1 and point_sigma_px > 0:
        noise = np.random.default_rng(seed).normal(0.0, point_sigma_px, size=samples[1:].shape)
        samples[1:] += noise
    return _map(H, samples)


def measurement(values: np.ndarray, unit: str, what: str) -> Measurement:
    """Row 0 = the estimate, the rest = samples (their standard deviation is the sigma)."""
    sigma = float(np.std(values[1:])) if len(values) > 2 else 0.0
    return Measurement(float(values[0]), sigma, unit, what)


def angle_deg(a: np.ndarray, vertex: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angles in degrees, 0..180, at ``vertex`` between the rays to ``a`` and ``b`` ((..., 2) arrays)."""
    u, v = a - vertex, b - vertex
    cos = np.sum(u * v, axis=-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


# ---- finding the reference -------------------------------------------------------------------------
def _strength_map(array: np.ndarray, color: Any) -> tuple[np.ndarray, np.ndarray]:
    """(region mask, strength map) where the strength is high inside the reference and low outside."""
    from .look import _color_mask, _color_space

    space = _color_space(array)
    mask, strength, _, _, _, _ = _color_mask(space, color, None, None)
    return mask, strength.astype(np.float64)


def _order_corners(corners: np.ndarray) -> np.ndarray:
    """Clockwise in the image (x right, y down) starting at the corner nearest the top-left."""
    centre = corners.mean(axis=0)
    angles = np.arctan2(corners[:, 1] - centre[1], corners[:, 0] - centre[0])
    ordered = corners[np.argsort(angles)]
    start = int(np.argmin(ordered.sum(axis=1)))
    return np.roll(ordered, -start, axis=0)


def _initial_quad(mask: np.ndarray) -> np.ndarray:
    import cv2
    from scipy.ndimage import binary_fill_holes

    count, components, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if count < 2:
        raise ValueError("find_plane_reference found no region of that colour; pass color= (the sheet's or "
                         "border's colour) or quad= (its four corners, roughly, from a zoom)")
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    region = binary_fill_holes(components == largest).astype(np.uint8)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    hull = cv2.convexHull(max(contours, key=cv2.contourArea))
    perimeter = cv2.arcLength(hull, True)
    for fraction in np.linspace(0.005, 0.2, 60):
        approx = cv2.approxPolyDP(hull, fraction * perimeter, True)
        if len(approx) <= 4:
            break
    if len(approx) != 4:
        raise ValueError(f"the largest region of that colour is not a quadrilateral (its outline has {len(approx)} "
                         f"corners); pass quad= (four rough corners) to fit its sides from there")
    return _order_corners(approx.reshape(4, 2).astype(np.float64))


def _edge_points(strength: np.ndarray, p: np.ndarray, q: np.ndarray, inside: np.ndarray, band: float,
                 step: float = 0.25) -> np.ndarray:
    """Sub-pixel edge points along the side p->q: the steepest inside-to-outside drop of ``strength``
    along each normal profile (parabolic peak of the derivative)."""
    from scipy.ndimage import map_coordinates

    direction = (q - p) / np.linalg.norm(q - p)
    normal = np.array([-direction[1], direction[0]])
    if normal @ (inside - (p + q) / 2) > 0:
        normal = -normal                      # the normal points outward
    length = float(np.linalg.norm(q - p))
    count = int(np.clip(length / 1.5, 12, 400))
    ts = np.linspace(0.08, 0.92, count)
    offsets = np.arange(-band, band + step / 2, step)
    centres = p[None] + ts[:, None] * (q - p)[None]
    coords = centres[:, None, :] + offsets[None, :, None] * normal[None, None, :]
    profiles = map_coordinates(strength, [coords[..., 1].ravel(), coords[..., 0].ravel()], order=1,
                               mode="nearest").reshape(len(ts), len(offsets))
    drop = -np.gradient(profiles, step, axis=1)
    peak = np.argmax(drop, axis=1)
    strong = drop[np.arange(len(ts)), peak]
    keep = (peak > 0) & (peak < len(offsets) - 1) & (strong > 0.25 * np.median(strong))
    rows = np.nonzero(keep)[0]
    left, mid, right = drop[rows, peak[rows] - 1], drop[rows, peak[rows]], drop[rows, peak[rows] + 1]
    curvature = left - 2 * mid + right
    shift = np.where(np.abs(curvature) > 1e-12, 0.5 * (left - right) / curvature, 0.0)
    position = offsets[peak[rows]] + np.clip(shift, -0.5, 0.5) * step
    return centres[rows] + position[:, None] * normal[None]


@dataclass(frozen=True)
class _Line:
    point: np.ndarray      # (2,) centroid of the inliers
    direction: np.ndarray  # (2,) unit
    sigma_px: float        # rms perpendicular residual of the inliers
    spread: float          # sum of squared positions of the inliers along the line
    count: int


def _fit_line(points: np.ndarray, seed: int, threshold: float = 1.0) -> _Line:
    """RANSAC, then total least squares with Tukey reweighting: tolerant to occluded stretches."""
    if len(points) < 6:
        raise ValueError(f"only {len(points)} edge points on one side of the reference (too occluded or too "
                         f"blurred); pass quad= with four rough corners, or a larger view")
    rng = np.random.default_rng(seed)
    best, best_count = None, -1
    for _ in range(200):
        i, j = rng.choice(len(points), 2, replace=False)
        d = points[j] - points[i]
        if np.linalg.norm(d) < 1e-6:
            continue
        n = np.array([-d[1], d[0]]) / np.linalg.norm(d)
        count = int((np.abs((points - points[i]) @ n) <= threshold).sum())
        if count > best_count:
            best, best_count = (points[i], n), count
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
    return a_point + t[..., None] * a_dir


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


def refine_quad(frame: Any, quad: Any, color: Any = None, band_px: float | None = None, seed: int = 0,
                samples: int = MONTE_CARLO_SAMPLES) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Sub-pixel corners of a quadrilateral whose four sides are colour (or brightness) edges.

    Args:
        frame: the image. quad: (4, 2) rough corners (x, y) pixels in order around the shape (from
            ``find_plane_reference``'s detection or read off a ``zoom``), within about ``band_px`` of the
            true sides. color: the reference's colour (as in ``find_color``), or None for brightness.
        band_px: half-width of the search band across each side, pixels (default 4% of the shortest side,
            at least 3).

    Returns:
        (corners (4, 2) px, corner_samples (samples, 4, 2) px drawn from the side fits' uncertainty,
        per-side rms residual in px).
    """
    array = as_rgb_array(frame)
    rough = np.asarray(quad, dtype=np.float64)
    if rough.shape != (4, 2) or not np.isfinite(rough).all():
        raise ValueError(f"quad must be four (x, y) corners, shape (4, 2), got {rough.shape}")
    if color is None:
        strength = array.astype(np.float64).mean(axis=2)
        inside_mean = strength[tuple(np.clip(rough.mean(axis=0)[::-1].round().astype(int), 0, np.array(strength.shape) - 1))]
        if inside_mean < np.median(strength):
            strength = 255.0 - strength       # a dark reference on a bright surface
    else:
        _, strength = _strength_map(array, color)
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
    corners = np.stack([_intersect(lines[i - 1].point, lines[i - 1].direction, lines[i].point, lines[i].direction)
                        for i in range(4)])
    if not np.isfinite(corners).all() or np.abs(corners - rough).max() > 3 * band + 2:
        raise ValueError("the refined sides do not meet near the rough corners (parallel or wrong edges); "
                         "pass quad= closer to the reference's corners or a different color=")
    return corners, _corner_samples(lines, samples, seed), [line.sigma_px for line in lines]


def find_plane_reference(
    frame: Any,
    size: tuple[float, float],
    color: Any = "white",
    quad: Any = None,
    unit: str = "m",
    px_per_unit: float | None = None,
    band_px: float | None = None,
    seed: int = 0,
) -> Rectified:
    """Find a planar rectangle of known size (a sheet, a square, a tape border), rectify its plane, and
    return a ``Rectified`` that measures in its units with uncertainties.

    Detection: the largest region of ``color`` (holes such as stickers on the sheet filled), its convex
    outline reduced to four corners; or the rough corners you pass as ``quad``. Refinement: each side is
    located to sub-pixel precision (steepest colour/brightness drop across the side, parabolic peak),
    then fitted by RANSAC + Tukey-weighted total least squares, so stretches hidden by an object or a
    shadow are ignored; corners = intersections of adjacent sides. The side fits' uncertainty is kept as
    corner samples, so every measurement has a sigma.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        size: (width, height) of the rectangle in ``unit``; width runs quad[0] -> quad[1]. Auto-detected
            corners start at the top-left-most corner, clockwise, and the longer image side pair is taken as
            the width when width >= height (swap the order of ``size`` or pass ``quad`` if it is the other way).
        color: the reference's colour (a ``find_color`` name or (r, g, b)), or None to use brightness.
        quad: optional (4, 2) rough corners in order around the rectangle (skips the colour detection).
        unit: the unit of ``size`` ("m", "cm", "mm", "in", or "square" for a unit-less reference).
        px_per_unit: top-view resolution; default keeps about the source resolution.
        band_px: half-width of the edge search across each side, pixels.

    Returns:
        ``Rectified`` (``.quad`` refined corners px, ``.corner_samples``), with ``length(a, b)``,
        ``angle(a, vertex, b)``, ``ratio((a, b), (c, d))``, ``point(uv)``, ``area(polygon)`` and ``text``.

    Example::

        plane = geom.find_plane_reference(frames[0], size=(0.297, 0.210), color="white")
        dots = find_color(frames[0], "red", expected_size=0.02, rectified=plane)
        print(plane.length(dots[0], dots[1]).text, plane.angle(dots[0], dots[1], dots[2]).text)
    """
    array = as_rgb_array(frame)
    width, height = (float(v) for v in size)
    if not (width > 0 and height > 0):
        raise ValueError(f"size must be (width, height) with both > 0, got {size}")
    if quad is None:
        mask, _ = _strength_map(array, color if color is not None else "white")
        rough = _initial_quad(mask)
        pairs = np.linalg.norm(np.roll(rough, -1, axis=0) - rough, axis=1)
        first_pair, second_pair = pairs[0] + pairs[2], pairs[1] + pairs[3]
        if (first_pair < second_pair) == (width >= height):
            rough = np.roll(rough, -1, axis=0)
    else:
        rough = np.asarray(quad, dtype=np.float64)
    corners, samples, residuals = refine_quad(array, rough, color=color, band_px=band_px, seed=seed)
    rect = rectify_plane(array, corners, size=(width, height), px_per_m=px_per_unit, corner_sigma_px=0.0)
    return Rectified(rect.image, rect.homography, rect.plane_homography, rect.px_per_m, rect.size_m,
                     quad=corners, corner_samples=samples, unit=unit, edge_rms_px=tuple(residuals))
