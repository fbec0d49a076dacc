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

from spatialclaw.primitives.geometry.plane_detect import (aspect_error, colour_distance_strength, find_candidates, is_convex, quad_checks,
                                side_support, smoothed)
from spatialclaw.primitives.geometry.plane_geometry import focal_for_aspect, quad_geometry
from spatialclaw.primitives.geometry.rectify import Rectified, homography_from_points, rectify_plane
from spatialclaw.primitives.imaging import as_rgb_array

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
    from spatialclaw.primitives.display.look import _color_mask, _color_space

    space = _color_space(array)
    mask, strength, _, _, _, _ = _color_mask(space, color, None, None)
    return mask, strength.astype(np.float64)


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
                samples: int = MONTE_CARLO_SAMPLES, strength: np.ndarray | None = None
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


def _orient(corners: np.ndarray, image_size: tuple[int, int], size: tuple[float, float], unit: str
            ) -> tuple[int, str, bool]:
    """(shift, note, ambiguous): roll the corners by ``shift`` so side quad[0]->quad[1] is ``size[0]``."""
    ratio = size[0] / size[1]
    if abs(np.log(ratio)) < 0.05:
        return 0, "orientation: a square reference, either way", False
    g = quad_geometry(corners, image_size)
    if g.focal_px is not None:
        aspect = g.aspect
        basis = (f"focal {g.focal_px:.0f} px (fov {g.fov_deg:.0f} deg) from the vanishing points gives "
                 f"side 0->1 / side 0->3 = {aspect:.2f} on the plane")
    else:
        # one side pair parallel in the image: ask which assignment implies a real camera at all
        (f_as, why_as), (f_swap, why_swap) = (focal_for_aspect(corners, image_size, r) for r in (ratio, 1 / ratio))
        if (f_as is None) != (f_swap is None):
            shift = 0 if f_as is not None else 1
            note = (f"orientation auto: only one side assignment implies a real camera: the {size[0]:g} {unit} side "
                    f"along the detected {'first' if shift == 0 else 'second'} side pair gives "
                    f"{why_as if shift == 0 else why_swap}, the other {why_swap if shift == 0 else why_as}")
            return shift, note, False
        aspect = g.image_aspect
        basis = (f"no focal from the vanishing points (a side pair is parallel in the image) and both side "
                 f"assignments imply a camera ({why_as}; {why_swap}), so the image side ratio {aspect:.2f} is used")
    error_as_found, error_swapped = abs(np.log(aspect / ratio)), abs(np.log(aspect * ratio))
    shift = 0 if error_as_found <= error_swapped else 1
    chosen, other = sorted((error_as_found, error_swapped))
    ambiguous = bool(other - chosen < np.log(1.15))
    note = (f"orientation auto: {basis}; the {size[0]:g} {unit} side taken along the detected "
            f"{'first' if shift == 0 else 'second'} side pair (aspect off {np.expm1(chosen):.0%}, the other way "
            f"off {np.expm1(other):.0%})")
    return shift, note, ambiguous


def _build(array: np.ndarray, corners: np.ndarray, samples: np.ndarray, residuals: Sequence[float],
           size: tuple[float, float], unit: str, px_per_unit: float | None, orientation: str,
           warnings: Sequence[str], alternative: Rectified | None = None) -> Rectified:
    rect = rectify_plane(array, corners, size=size, px_per_m=px_per_unit, corner_sigma_px=0.0)
    return Rectified(rect.image, rect.homography, rect.plane_homography, rect.px_per_m, rect.size_m,
                     quad=corners, corner_samples=samples, unit=unit, edge_rms_px=tuple(residuals),
                     orientation=orientation, warnings=tuple(warnings), alternative=alternative)


def _polygon_area(quad: np.ndarray) -> float:
    return float(0.5 * abs(np.sum(quad[:, 0] * np.roll(quad[:, 1], -1) - np.roll(quad[:, 0], -1) * quad[:, 1])))


def _detect(array: np.ndarray, size: tuple[float, float], color: Any, band_px: float | None, seed: int
            ) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Refine the best candidates of ``find_candidates`` and keep the most plausible fit."""
    mask, colour_strength = _strength_map(array, color if color is not None else "white")
    candidates = find_candidates(array, mask, size)
    if not candidates:
        raise ValueError("find_plane_reference found no region of that colour; pass color= (the sheet's or "
                         "border's colour) or quad= (its four corners, roughly, from a zoom)")
    smooth = smoothed(array)
    h, w = mask.shape
    best, best_score = None, -1.0
    fits = []
    for candidate in candidates:
        # the sides as drops of the requested colour's strength, and for a white (or brightness) reference,
        # which other bright surfaces resemble, also of the similarity to the region's own colour
        strengths = [colour_strength]
        if color is None or (isinstance(color, str) and color.lower() == "white"):
            strengths.insert(0, colour_distance_strength(array, candidate.colour))
        for strength in strengths:
            try:
                fits.append(refine_quad(array, candidate.quad, band_px=band_px, seed=seed, strength=strength))
            except ValueError:
                continue
    fits = [fit for fit in fits if is_convex(fit[0])]
    areas = [_polygon_area(fit[0]) for fit in fits]
    for fit, area in zip(fits, areas):
        corners, _, residuals = fit
        # sides on strong edges, the known aspect (within 3% is as good as exact), tight side fits, and
        # among equals the largest quad (one side following an occluder's edge cuts the sheet short; areas
        # within 3% count as equal), then the tightest fit
        error = aspect_error(corners, (w, h), size)
        score = (min(side_support(smooth, corners)) * np.exp(-max(0.0, error - 0.03) / 0.1)
                 * np.exp(-max(0.0, max(residuals) - 0.6) / 0.5) * np.sqrt(min(1.0, area / max(areas) / 0.97))
                 * np.exp(-0.1 * float(np.mean(residuals))))
        if score > best_score:
            best, best_score = fit, score
    if best is None or best_score < 0.1:
        where = "" if best is None else " (best fit: corners " + ", ".join(f"({x:.0f}, {y:.0f})" for x, y in best[0]) + ")"
        raise ValueError(f"find_plane_reference found no plausible {size[0]:g} x {size[1]:g} rectangle{where}: its "
                         f"sides are not on strong edges or its shape does not match the size; read its four corners "
                         f"off a zoom and pass them as quad= (rough is fine), or pass color=")
    return best


def find_plane_reference(
    frame: Any,
    size: tuple[float, float],
    color: Any = "white",
    quad: Any = None,
    unit: str = "m",
    px_per_unit: float | None = None,
    band_px: float | None = None,
    seed: int = 0,
    orientation: str = "auto",
) -> Rectified:
    """Find a planar rectangle of known size (a sheet, a square, a tape border), rectify its plane, and
    return a ``Rectified`` that measures in its units with uncertainties.

    Detection: regions of nearly one colour among the pixels of ``color`` (at several tolerances, so a
    sheet beside a brighter white surface separates from it; holes such as stickers filled), each convex
    outline reduced to four corners and scored by how much of each side lies on a strong edge and how well
    its true aspect matches ``size``; or the rough corners you pass as ``quad``. Refinement: each side is
    located to sub-pixel precision (steepest drop of the similarity to the sheet's colour, parabolic peak),
    then fitted by RANSAC + Tukey-weighted total least squares, so stretches hidden by an object or a
    shadow are ignored; corners = intersections of adjacent sides. The side fits' uncertainty is kept as
    corner samples, so every measurement has a sigma.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        size: (width, height) of the rectangle in ``unit``; width runs quad[0] -> quad[1] of the result.
        color: the reference's colour (a ``find_color`` name or (r, g, b)), or None to use brightness.
        quad: optional (4, 2) rough corners in order around the rectangle (skips the colour detection).
        unit: the unit of ``size`` ("m", "cm", "mm", "in", or "square" for a unit-less reference).
        px_per_unit: top-view resolution; default keeps about the source resolution.
        band_px: half-width of the edge search across each side, pixels.
        orientation: "auto" (default): which side pair is ``size[0]`` is decided from perspective, not
            image length (a sheet seen steeply shows its long side shorter): the focal length implied by
            the two vanishing points being orthogonal (principal point at the image centre, square pixels;
            a field of view outside 20-120 deg is rejected) gives the quad's true aspect, and the assignment
            closer to ``size`` wins; the result's ``orientation`` says which and why, and when both fit
            (within 15%) ``alternative`` holds the other and ``warnings`` say so. "as_given": keep the
            corner order (yours with ``quad=``; detected ones start top-left, clockwise).

    Returns:
        ``Rectified`` (``.quad`` refined corners px, ``.corner_samples``, ``.orientation``, ``.warnings``
        and ``.status``: "ok" or "suspect: ..." when a side fit has rms above 1 px, a side is not on a
        strong edge, the perspective implies no real camera or the rectified aspect is far from ``size``
        -- check the corners on a zoom then and pass ``quad=``), with ``length(a, b)``,
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
    if orientation not in ("auto", "as_given"):
        raise ValueError(f'orientation must be "auto" or "as_given", got {orientation!r}')
    if quad is None:
        corners, samples, residuals = _detect(array, (width, height), color, band_px, seed)
    else:
        rough = np.asarray(quad, dtype=np.float64)
        if rough.shape == (4, 2) and np.isfinite(rough).all() and not is_convex(rough):
            raise ValueError("quad= is not a convex quadrilateral in order: give the four corners in order around "
                             "the reference (e.g. top-left, top-right, bottom-right, bottom-left)")
        corners, samples, residuals = refine_quad(array, rough, color=color, band_px=band_px, seed=seed)
    warnings = quad_checks(array, corners, (width, height), residuals)
    h, w = array.shape[:2]
    if orientation == "auto":
        shift, note, ambiguous = _orient(corners, (w, h), (width, height), unit)
    else:
        shift, note, ambiguous = 0, "orientation as given: quad[0]->quad[1] is size[0]", False
    corners = np.roll(corners, -shift, axis=0)
    samples = np.roll(samples, -shift, axis=1)
    residuals = list(np.roll(np.asarray(residuals), -shift))
    alternative = None
    if ambiguous:
        alternative = _build(array, np.roll(corners, -1, axis=0), np.roll(samples, -1, axis=1),
                             list(np.roll(np.asarray(residuals), -1)), (width, height), unit, px_per_unit,
                             "the other orientation of the same corners", warnings)
        warnings = [*warnings, "orientation ambiguous (both side assignments fit the perspective): measure on "
                               ".alternative too and compare"]
    return _build(array, corners, samples, residuals, (width, height), unit, px_per_unit, note, warnings,
                  alternative)
