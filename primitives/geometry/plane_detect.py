"""Finding a rectangle of known size in a photo, and judging whether a found quad is plausible (part of
``geom``, used by ``geom.find_plane_reference``).

Candidates are regions of nearly one colour (the reference's colour, measured from the image at several
tolerances, so a sheet next to a brighter white surface separates from it), each reduced to four
corners. A candidate scores by how much of each side lies on a strong colour edge, how completely the
region fills its quad, and how close its true aspect (from the focal length its perspective implies,
``geom_plane_geometry``) is to the known size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatialclaw.primitives.geometry.plane_geometry import focal_for_aspect, quad_geometry

__all__ = ["Candidate", "colour_distance_strength", "find_candidates", "quad_checks", "side_support"]

EDGE_CONTRAST = 12.0  # RGB distance across a side that counts as a strong edge (noise ~3 per channel)
TOLERANCES = (6.0, 9.0, 13.0, 19.0, 28.0)  # colour distances a region may span, RGB units
DETECT_SIDE_PX = 640  # candidates are found on a copy at most this many pixels on its longer side


@dataclass(frozen=True)
class Candidate:
    """A rough quad (4, 2) px, clockwise from the top-left, the mean RGB colour of its region, its score
    (0..1) and the per-side fraction on a strong edge (``side_support``)."""

    quad: np.ndarray
    colour: np.ndarray
    score: float
    support: tuple[float, ...]


def smoothed(array: np.ndarray, sigma: float = 1.0) -> np.ndarray:
    """(H, W, 3) float64 Gaussian-smoothed copy (``sigma`` pixels)."""
    import cv2

    return cv2.GaussianBlur(array.astype(np.float32), (0, 0), sigma, borderType=cv2.BORDER_REFLECT).astype(np.float64)


def colour_distance_strength(array: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """(H, W) minus the RGB distance to ``colour``: highest on the reference, lower off it whether the
    surface is darker or brighter."""
    strength: np.ndarray = -np.linalg.norm(array.astype(np.float64) - colour[None, None], axis=2)
    return strength


def order_corners(corners: np.ndarray) -> np.ndarray:
    """Clockwise in the image (x right, y down) starting at the corner nearest the top-left."""
    centre = corners.mean(axis=0)
    angles = np.arctan2(corners[:, 1] - centre[1], corners[:, 0] - centre[0])
    ordered = corners[np.argsort(angles)]
    start = int(np.argmin(ordered.sum(axis=1)))
    return np.roll(ordered, -start, axis=0)


def region_quad(region: np.ndarray) -> np.ndarray | None:
    """Four corners of a binary region's filled convex outline, or None when it is not four-sided."""
    import cv2
    from scipy.ndimage import binary_fill_holes

    filled = binary_fill_holes(region).astype(np.uint8)
    contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    hull = cv2.convexHull(max(contours, key=cv2.contourArea))
    perimeter = cv2.arcLength(hull, True)
    approx = hull
    for fraction in np.linspace(0.005, 0.2, 60):
        approx = cv2.approxPolyDP(hull, fraction * perimeter, True)
        if len(approx) <= 4:
            break
    if len(approx) != 4:
        return None
    return order_corners(approx.reshape(4, 2).astype(np.float64))


def is_convex(quad: np.ndarray) -> bool:
    edges = np.roll(quad, -1, axis=0) - quad
    following = np.roll(edges, -1, axis=0)
    cross = edges[:, 0] * following[:, 1] - edges[:, 1] * following[:, 0]
    return bool(np.all(cross > 0) or np.all(cross < 0))


def side_support(smooth: np.ndarray, quad: np.ndarray, offset: float = 2.0, count: int = 24) -> tuple[float, ...]:
    """Per side, the fraction of its middle 80% where the colour changes strongly across it (inside vs
    outside ``offset`` px either side)."""
    from scipy.ndimage import map_coordinates

    centre = quad.mean(axis=0)
    out = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        direction = (q - p) / max(np.linalg.norm(q - p), 1e-9)
        normal = np.array([-direction[1], direction[0]])
        if normal @ (centre - (p + q) / 2) > 0:
            normal = -normal
        ts = np.linspace(0.1, 0.9, count)
        points = p[None] + ts[:, None] * (q - p)[None]
        sample = []
        for sign in (-1.0, 1.0):
            at = points + sign * offset * normal[None]
            sample.append(
                np.stack(
                    [map_coordinates(smooth[..., c], [at[:, 1], at[:, 0]], order=1, mode="nearest") for c in range(3)],
                    axis=1,
                )
            )
        contrast = np.linalg.norm(sample[1] - sample[0], axis=1)
        out.append(float(np.mean(contrast > EDGE_CONTRAST)))
    return tuple(out)


def aspect_error(quad: np.ndarray, image_size: tuple[int, int], size: tuple[float, float]) -> float:
    """|log| of the quad's true aspect over the known one, for the better of the two side assignments.
    Where the vanishing points leave the focal open (a side pair parallel in the image), 0 when some
    assignment implies a real camera, else the image aspect's error."""
    geometry = quad_geometry(quad, image_size)
    ratio = size[0] / size[1]
    if geometry.focal_px is None and any(
        focal_for_aspect(quad, image_size, r)[0] is not None for r in (ratio, 1 / ratio)
    ):
        return 0.0
    return float(min(abs(np.log(geometry.aspect / ratio)), abs(np.log(geometry.aspect * ratio))))


def _score(
    smooth: np.ndarray, quad: np.ndarray, size: tuple[float, float], fill: float
) -> tuple[float, tuple[float, ...]]:
    h, w = smooth.shape[:2]
    if not is_convex(quad):
        return 0.0, (0.0,) * 4
    support = side_support(smooth, quad)
    error = aspect_error(quad, (w, h), size)
    perspective = 1.0 if quad_geometry(quad, (w, h)).focal_px is not None else 0.7
    return float(min(support) * min(fill, 1.0) * np.exp(-error / 0.15) * perspective), support


def find_candidates(
    array: np.ndarray, colour_mask: np.ndarray, size: tuple[float, float], limit: int = 8
) -> list[Candidate]:
    """Rough quads of nearly uniform regions of the reference's colour, best first (image pixels; found
    on a copy at most ``DETECT_SIDE_PX`` wide, as rough corners for the full-resolution side fits)."""
    import cv2

    scale = DETECT_SIDE_PX / max(array.shape[:2])
    if scale < 1:
        size_px = (max(1, round(array.shape[1] * scale)), max(1, round(array.shape[0] * scale)))
        small = cv2.resize(array, size_px, interpolation=cv2.INTER_AREA)
        small_mask = cv2.resize(colour_mask.astype(np.uint8), size_px, interpolation=cv2.INTER_NEAREST) > 0
        found = find_candidates(small, small_mask, size, limit)
        back = np.array([array.shape[1] / size_px[0], array.shape[0] / size_px[1]])
        return [Candidate((c.quad + 0.5) * back - 0.5, c.colour, c.score, c.support) for c in found]
    smooth = smoothed(array)
    h, w = colour_mask.shape
    min_area = max(150, int(0.005 * h * w))
    seeds = smooth[colour_mask]
    if len(seeds) < min_area:
        return []
    # the reference colours: the most common colours among the pixels of the requested colour
    bins = np.round(seeds / 8.0).astype(np.int64)
    _keys, inverse, counts = np.unique(bins, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    colours = [seeds[inverse == k].mean(axis=0) for k in np.argsort(counts)[::-1][:4]]
    regions: list[tuple[np.ndarray, np.ndarray]] = []
    legacy_count, legacy, stats, _ = cv2.connectedComponentsWithStats(colour_mask.astype(np.uint8), connectivity=8)
    if legacy_count > 1:
        largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        regions.append((legacy == largest, smooth[legacy == largest].mean(axis=0)))
    kernel = np.ones((3, 3), np.uint8)
    # colour change per pixel: cutting regions along it separates a sheet from a touching surface of
    # nearly its colour (a brighter counter) without splitting it where texture shows faintly through
    gradient = np.sqrt(sum(np.gradient(smooth[..., c], axis=axis) ** 2 for c in range(3) for axis in (0, 1)))
    for colour in colours:
        distance = np.linalg.norm(smooth - colour[None, None], axis=2)
        for tolerance in TOLERANCES:
            for cut in (None, 3.0, 5.0, 8.0):
                inside = distance < tolerance if cut is None else (distance < tolerance) & (gradient < cut)
                mask = cv2.morphologyEx(inside.astype(np.uint8), cv2.MORPH_OPEN, kernel)
                _count, components, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
                for label in 1 + np.argsort(stats[1:, cv2.CC_STAT_AREA])[::-1][:3]:
                    if stats[label, cv2.CC_STAT_AREA] >= min_area:
                        region = components == label
                        if cut is not None:
                            region = cv2.dilate(region.astype(np.uint8), kernel, iterations=2) > 0
                        regions.append((region, smooth[components == label].mean(axis=0)))
    candidates: list[Candidate] = []
    for region, colour in regions:
        quad = region_quad(region)
        if quad is None:
            continue
        polygon = 0.5 * abs(np.sum(quad[:, 0] * np.roll(quad[:, 1], -1) - np.roll(quad[:, 0], -1) * quad[:, 1]))
        if polygon < min_area:
            continue
        score, support = _score(smooth, quad, size, float(region.sum()) / polygon)
        if score > 0 and not any(np.abs(c.quad - quad).max() < 1.5 for c in candidates):
            candidates.append(Candidate(quad, colour, score, support))
    candidates.sort(key=lambda c: -c.score)
    return candidates[:limit]


def quad_checks(
    array: np.ndarray, quad: np.ndarray, size: tuple[float, float], edge_rms: list[float] | tuple[float, ...]
) -> list[str]:
    """Reasons to distrust a fitted quad: a side off a strong edge, a poor side fit, an implausible camera
    or a true aspect far from the known size. Empty when it looks right."""
    h, w = array.shape[:2]
    warnings = []
    if not is_convex(quad):
        return ["the quad is not convex (corners crossing or out of order)"]
    rough = [f"side {i} {rms:.2f} px" for i, rms in enumerate(edge_rms) if rms > 1.0]
    if rough:
        warnings.append(
            "side fits rms above 1 px (" + ", ".join(rough) + "): those sides may not follow the reference's edge"
        )
    weak = [f"side {i} {value:.0%}" for i, value in enumerate(side_support(smoothed(array), quad)) if value < 0.5]
    if weak:
        warnings.append("sides not on a strong edge along most of their length (" + ", ".join(weak) + ")")
    geometry = quad_geometry(quad, (w, h))
    error = aspect_error(quad, (w, h), size)
    ratio = size[0] / size[1]
    if geometry.focal_px is None and error > 0:
        sides = np.roll(quad, -1, axis=0) - quad
        cos = [abs(sides[i] @ sides[i + 2]) / (np.linalg.norm(sides[i]) * np.linalg.norm(sides[i + 2])) for i in (0, 1)]
        if min(cos) < np.cos(np.radians(4)):
            reasons = [focal_for_aspect(quad, (w, h), r)[1] for r in (ratio, 1 / ratio)]
            warnings.append(
                f"the quad's perspective implies no real camera ({reasons[0]} one way, {reasons[1]} the "
                f"other; a real camera has a 20-120 deg field of view): it is not the image of a "
                f"{size[0]:g} x {size[1]:g} rectangle"
            )
    if error > np.log(1.12):
        ratio = max(size) / min(size)
        found = max(geometry.aspect, 1 / geometry.aspect)
        warnings.append(f"the rectified aspect {found:.2f} is far from the known {ratio:.2f}")
    return warnings
