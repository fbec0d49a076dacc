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

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.plane_detect import (
    aspect_error,
    colour_distance_strength,
    find_candidates,
    is_convex,
    quad_checks,
    side_support,
    smoothed,
)
from spatialclaw.primitives.geometry.plane_geometry import focal_for_aspect, quad_geometry
from spatialclaw.primitives.geometry.plausibility import size_note
from spatialclaw.primitives.geometry.quad_fit import refine_quad, strength_map
from spatialclaw.primitives.geometry.rectify import Rectified, rectify_plane
from spatialclaw.primitives.imaging import as_rgb_array
from spatialclaw.primitives.runtime.library_failures import or_refuse

__all__ = ["find_plane_reference"]


def _orient(
    corners: np.ndarray, image_size: tuple[int, int], size: tuple[float, float], unit: str
) -> tuple[int, str, bool]:
    """(shift, note, ambiguous): roll the corners by ``shift`` so side quad[0]->quad[1] is ``size[0]``."""
    ratio = size[0] / size[1]
    if abs(np.log(ratio)) < 0.05:
        return 0, "orientation: a square reference, either way", False
    g = quad_geometry(corners, image_size)
    if g.focal_px is not None:
        aspect = g.aspect
        basis = (
            f"focal {g.focal_px:.0f} px (fov {g.fov_deg:.0f} deg) from the vanishing points gives "
            f"side 0->1 / side 0->3 = {aspect:.2f} on the plane"
        )
    else:
        # one side pair parallel in the image: ask which assignment implies a real camera at all
        (f_as, why_as), (f_swap, why_swap) = (focal_for_aspect(corners, image_size, r) for r in (ratio, 1 / ratio))
        if (f_as is None) != (f_swap is None):
            shift = 0 if f_as is not None else 1
            note = (
                f"orientation auto: only one side assignment implies a real camera: the {size[0]:g} {unit} side "
                f"along the detected {'first' if shift == 0 else 'second'} side pair gives "
                f"{why_as if shift == 0 else why_swap}, the other {why_swap if shift == 0 else why_as}"
            )
            return shift, note, False
        aspect = g.image_aspect
        basis = (
            f"no focal from the vanishing points (a side pair is parallel in the image) and both side "
            f"assignments imply a camera ({why_as}; {why_swap}), so the image side ratio {aspect:.2f} is used"
        )
    error_as_found, error_swapped = abs(np.log(aspect / ratio)), abs(np.log(aspect * ratio))
    shift = 0 if error_as_found <= error_swapped else 1
    chosen, other = sorted((error_as_found, error_swapped))
    ambiguous = bool(other - chosen < np.log(1.15))
    note = (
        f"orientation auto: {basis}; the {size[0]:g} {unit} side taken along the detected "
        f"{'first' if shift == 0 else 'second'} side pair (aspect off {np.expm1(chosen):.0%}, the other way "
        f"off {np.expm1(other):.0%})"
    )
    return shift, note, ambiguous


def _build(
    array: np.ndarray,
    corners: np.ndarray,
    samples: np.ndarray,
    residuals: Sequence[float],
    size: tuple[float, float],
    unit: str,
    px_per_unit: float | None,
    orientation: str,
    warnings: Sequence[str],
    alternative: Rectified | None = None,
    color: str = "",
) -> Rectified:
    rect = rectify_plane(array, corners, size=size, px_per_m=px_per_unit, corner_sigma_px=0.0)
    return Rectified(
        rect.image,
        rect.homography,
        rect.plane_homography,
        rect.px_per_m,
        rect.size_m,
        quad=corners,
        corner_samples=samples,
        unit=unit,
        edge_rms_px=tuple(residuals),
        orientation=orientation,
        warnings=tuple(warnings),
        alternative=alternative,
        color=color,
    )


def _polygon_area(quad: np.ndarray) -> float:
    return float(0.5 * abs(np.sum(quad[:, 0] * np.roll(quad[:, 1], -1) - np.roll(quad[:, 0], -1) * quad[:, 1])))


def _detect(
    array: np.ndarray, size: tuple[float, float], color: Any, band_px: float | None, seed: int
) -> tuple[tuple[np.ndarray, np.ndarray, list[float]], float]:
    """Refine the best candidates of ``find_candidates`` and keep the most plausible fit (and its score,
    0..1: sides on strong edges, the known aspect, tight side fits)."""
    mask, colour_strength = strength_map(array, color if color is not None else "white")
    candidates = find_candidates(array, mask, size)
    if not candidates:
        raise ValueError(
            "find_plane_reference found no region of that colour; pass color= (the sheet's or "
            "border's colour) or quad= (its four corners, roughly, from a zoom)"
        )
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
    for fit, area in zip(fits, areas, strict=True):
        corners, _, residuals = fit
        # sides on strong edges, the known aspect (within 3% is as good as exact), tight side fits, and
        # among equals the largest quad (one side following an occluder's edge cuts the sheet short; areas
        # within 3% count as equal), then the tightest fit
        error = aspect_error(corners, (w, h), size)
        score = (
            min(side_support(smooth, corners))
            * np.exp(-max(0.0, error - 0.03) / 0.1)
            * np.exp(-max(0.0, max(residuals) - 0.6) / 0.5)
            * np.sqrt(min(1.0, area / max(areas) / 0.97))
            * np.exp(-0.1 * float(np.mean(residuals)))
        )
        if score > best_score:
            best, best_score = fit, score
    if best is None or best_score < 0.1:
        where = (
            "" if best is None else " (best fit: corners " + ", ".join(f"({x:.0f}, {y:.0f})" for x, y in best[0]) + ")"
        )
        raise ValueError(
            f"find_plane_reference found no plausible {size[0]:g} x {size[1]:g} rectangle{where}: its "
            f"sides are not on strong edges or its shape does not match the size; read its four corners "
            f"off a zoom and pass them as quad= (rough is fine), or pass color="
        )
    return best, float(best_score)


AUTO_COLORS = ("white", "red", "orange", "yellow", "green", "cyan", "blue", "purple", "magenta", "pink")
"""The colours ``color="auto"`` tries: a bright low-saturation sheet and the salient tape colours."""
_AUTO_MIN_SHARE = 0.002  # a colour covering less of the image holds no reference worth a try
_AUTO_REFINED = 2  # colours whose best rough candidates are refined at full resolution
_AUTO_ROUGH_SIDE_PX = 320  # the colours are ranked on a copy at most this many pixels on its longer side


def _by_area(found: list[tuple[float, float, str, Any]]) -> list[tuple[float, float, str, Any]]:
    """(score x sqrt(area / largest area), area, name, payload), best first: a small patch that happens
    to fit well loses to the whole reference."""
    largest = max((area for _, area, _, _ in found), default=1.0)
    weighed = [(score * np.sqrt(min(1.0, area / largest)), area, name, x) for score, area, name, x in found]
    return sorted(weighed, key=lambda f: -f[0])


def _detect_auto(
    array: np.ndarray, size: tuple[float, float], band_px: float | None, seed: int
) -> tuple[tuple[np.ndarray, np.ndarray, list[float]], str]:
    """``_detect`` for the colours of ``AUTO_COLORS`` present in the image: every colour's rough candidates
    are scored by their sides (the share of the weakest on a strong edge) and weighed by their area
    against the largest of all; the two colours with the best candidates that refine are kept, and the best refined fit,
    weighed the same way, wins."""
    import cv2

    from spatialclaw.primitives.display.color_mask import color_mask, color_space

    scale = min(1.0, _AUTO_ROUGH_SIDE_PX / max(array.shape[:2]))  # the rough look runs on a small copy
    small = array if scale == 1.0 else cv2.resize(array, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    space = color_space(small)
    rough = []
    for name in AUTO_COLORS:
        mask = color_mask(space, name, None, None)[0]
        if mask.mean() >= _AUTO_MIN_SHARE:
            # ranked by their sides alone: a tape border fills little of its quad, unlike a sheet
            rough += [(min(c.support), _polygon_area(c.quad), name, None) for c in find_candidates(small, mask, size)]
    found: list[tuple[float, float, str, Any]] = []
    for name in dict.fromkeys(name for _, _, name, _ in _by_area(rough)):  # colours, best candidate first
        if len(found) == _AUTO_REFINED:
            break
        try:
            fit, score = _detect(array, size, name, band_px, seed)
        except ValueError:
            continue
        found.append((score, _polygon_area(fit[0]), name, fit))
    if not found:
        raise ValueError(
            f"find_plane_reference(color='auto') found no {size[0]:g} x {size[1]:g} rectangle in any of the "
            f"colours {', '.join(AUTO_COLORS)}: read its four corners off a zoom and pass them as quad= "
            f"(rough is fine), or pass its colour as color=(r, g, b)"
        )
    ranked = _by_area(found)
    score, _, name, fit = ranked[0]
    others = ", ".join(f"{n} {s:.2f}" for s, _, n, _ in ranked[1:])
    return fit, f"{name} (auto: score {score:.2f} by fit and area" + (f"; also {others})" if others else ")")


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
        color: the reference's colour (a ``find_color`` name or (r, g, b)), None to use brightness, or
            "auto": try a bright sheet and every salient colour (``AUTO_COLORS``) and keep the best quad by
            fit and area (a small patch that fits loses to the whole reference); ``.color`` says which
            colour won and the others' scores.
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
    return or_refuse(
        partial(_reference, array, (width, height), color, quad, unit, px_per_unit, band_px, seed, orientation),
        "find_plane_reference could not read the image ({reason}); pass the rough corners as quad=",
    )


def _reference(
    array: np.ndarray,
    size: tuple[float, float],
    color: Any,
    quad: Any,
    unit: str,
    px_per_unit: float | None,
    band_px: float | None,
    seed: int,
    orientation: str,
) -> Rectified:
    """``find_plane_reference`` past its argument checks (see there)."""
    width, height = size
    chosen = ""
    if quad is None and isinstance(color, str) and color.lower() == "auto":
        (corners, samples, residuals), chosen = _detect_auto(array, (width, height), band_px, seed)
    elif quad is None:
        (corners, samples, residuals), _ = _detect(array, (width, height), color, band_px, seed)
    else:
        rough = np.asarray(quad, dtype=np.float64)
        if rough.shape == (4, 2) and np.isfinite(rough).all() and not is_convex(rough):
            raise ValueError(
                "quad= is not a convex quadrilateral in order: give the four corners in order around "
                "the reference (e.g. top-left, top-right, bottom-right, bottom-left)"
            )
        if isinstance(color, str) and color.lower() == "auto":
            color = None  # the rough corners say where: follow the brightness edges
        corners, samples, residuals = refine_quad(array, rough, color=color, band_px=band_px, seed=seed)
    warnings = quad_checks(array, corners, (width, height), residuals)
    metres = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254}.get(unit)
    note = size_note(max(width, height) * metres, "reference") if metres else ""
    if note:
        warnings.append(f"size {width:g} x {height:g} {unit}: {note}")
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
        alternative = _build(
            array,
            np.roll(corners, -1, axis=0),
            np.roll(samples, -1, axis=1),
            list(np.roll(np.asarray(residuals), -1)),
            (width, height),
            unit,
            px_per_unit,
            "the other orientation of the same corners",
            warnings,
            color=chosen,
        )
        warnings = [
            *warnings,
            "orientation ambiguous (both side assignments fit the perspective): measure on "
            ".alternative too and compare",
        ]
    return _build(
        array, corners, samples, residuals, (width, height), unit, px_per_unit, note, warnings, alternative, chosen
    )
