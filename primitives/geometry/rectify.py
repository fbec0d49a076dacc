"""Metric top views of planar surfaces from four image points (part of ``geom``).

Measuring on a rectified view is far more reliable than reading lengths off a perspective image: once
four image points of a rectangle of known size are given, every image point on that plane has metric
plane coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from spatialclaw.primitives.geometry.homography import homography_from_points
from spatialclaw.primitives.geometry.plane_measure import (
    MONTE_CARLO_SAMPLES,
    Measurement,
    PlanePoint,
    angle_deg,
    measurement,
    sample_plane_points,
)
from spatialclaw.primitives.imaging import as_rgb_array

__all__ = ["Rectified", "rectify_plane"]


def _apply_homography(H: np.ndarray, points: Any, name: str) -> np.ndarray:
    pts = np.asarray(points, dtype=np.float64)
    single = pts.shape == (2,)
    pts = pts.reshape(1, 2) if single else pts
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"{name} must be (N, 2) or (2,), got shape {np.shape(points)}")
    homogeneous = np.hstack([pts, np.ones((len(pts), 1))]) @ H.T
    out: np.ndarray = homogeneous[:, :2] / homogeneous[:, 2:3]
    return np.asarray(out[0]) if single else out


@dataclass(frozen=True)
class Rectified:
    """A metric top view of a plane and the mappings between it and the source image.

    Plane coordinates (metres): origin at ``quad[0]``, +x towards ``quad[1]``, +y towards ``quad[3]``;
    the rectangle spans [0, width_m] x [0, height_m]. Top-view pixel (u, v) has its centre at plane point
    ((u + 0.5) / px_per_m, (v + 0.5) / px_per_m).

    Attributes:
        image: the top view (PIL RGB), ``round(width_m * px_per_m)`` x ``round(height_m * px_per_m)`` px.
        homography: (3, 3) source-image pixels -> top-view pixels (homogeneous).
        plane_homography: (3, 3) source-image pixels -> plane metres.
        px_per_m: top-view pixels per metre (per ``unit``).
        size_m: (width_m, height_m) of the rectangle (in ``unit``).
        quad: (4, 2) the corners in the source image, pixels.
        corner_samples: (S, 4, 2) corner positions drawn from their uncertainty (side fits, or
            ``corner_sigma_px``); the measurements' sigmas come from them.
        unit: the unit of the plane coordinates ("m" unless another was given).
        edge_rms_px: per-side rms residual of the sub-pixel edge fit (``find_plane_reference``), pixels.
        orientation: how ``find_plane_reference`` decided which image side is ``size[0]`` (and why).
        warnings: reasons to distrust the reference (a side off a strong edge, a poor side fit, a
            rectified aspect far from the known size); empty when it looks right. See ``status``.
        alternative: where the orientation is ambiguous, the same corners with the other side taken as
            the width (measure on both and compare), else None.
        color: the colour the reference was found by (with ``color="auto"``: the one chosen and why), or "".

    Measuring (image pixels in, plane units out, each a ``Measurement`` with ``.value``, ``.sigma``,
    ``.text``): ``length(a, b)``, ``angle(a, vertex, b)`` (degrees), ``ratio((a, b), (c, d))``,
    ``area(polygon)``, ``point(uv)`` (a ``PlanePoint``); points may be (x, y) pairs or ``Blob``s.
    ``point_sigma_px`` (default 0.3 px) is the uncertainty of each measured image point.
    """

    image: Image.Image
    homography: np.ndarray
    plane_homography: np.ndarray
    px_per_m: float
    size_m: tuple[float, float]
    quad: np.ndarray | None = field(default=None, repr=False)
    corner_samples: np.ndarray | None = field(default=None, repr=False)
    unit: str = "m"
    edge_rms_px: tuple[float, ...] = ()
    orientation: str = ""
    warnings: tuple[str, ...] = ()
    alternative: Rectified | None = field(default=None, repr=False)
    color: str = ""

    @property
    def status(self) -> str:
        """ "ok", or "suspect: <the warnings>" when the reference may be wrong (check it on a zoom)."""
        return "ok" if not self.warnings else "suspect: " + "; ".join(self.warnings)

    @property
    def array(self) -> np.ndarray:
        """(H, W, 3) uint8 top view."""
        return np.asarray(self.image)

    def to_plane(self, uv_px: Any) -> np.ndarray:
        """Source-image pixels (N, 2) or (2,) (x, y) -> plane coordinates in metres, same shape."""
        return _apply_homography(self.plane_homography, uv_px, "uv_px")

    def to_image(self, xy_m: Any) -> np.ndarray:
        """Plane coordinates in metres (N, 2) or (2,) -> source-image pixels (x, y), same shape."""
        return _apply_homography(np.linalg.inv(self.plane_homography), xy_m, "xy_m")

    def top_view_to_plane(self, uv_top_px: Any) -> np.ndarray:
        """Top-view pixels (N, 2) or (2,) -> plane metres."""
        return (np.asarray(uv_top_px, dtype=np.float64) + 0.5) / self.px_per_m

    def distance_m(self, uv_a: Any, uv_b: Any) -> float:
        """Metric distance on the plane between two source-image pixels (x, y), metres."""
        return float(np.linalg.norm(self.to_plane(uv_a) - self.to_plane(uv_b)))

    def point(self, uv_px: Any, point_sigma_px: float = 0.3) -> PlanePoint:
        """Plane coordinates (in ``unit``) of one image point (x, y) px or ``Blob``, with their sigmas."""
        samples = sample_plane_points(self, uv_px, point_sigma_px)[:, 0]
        sigma = samples[1:].std(axis=0) if len(samples) > 2 else np.zeros(2)
        return PlanePoint((float(samples[0, 0]), float(samples[0, 1])), (float(sigma[0]), float(sigma[1])), self.unit)

    def length(self, a: Any, b: Any, point_sigma_px: float = 0.3) -> Measurement:
        """Distance on the plane between image points ``a`` and ``b`` ((x, y) px or Blobs), in ``unit``."""
        pts = sample_plane_points(self, [_pixel(a), _pixel(b)], point_sigma_px)
        return measurement(np.linalg.norm(pts[:, 0] - pts[:, 1], axis=1), self.unit, "length")

    def angle(self, a: Any, vertex: Any, b: Any, point_sigma_px: float = 0.3) -> Measurement:
        """Angle on the plane at ``vertex`` between the directions to ``a`` and ``b``, degrees (0..180)."""
        pts = sample_plane_points(self, [_pixel(a), _pixel(vertex), _pixel(b)], point_sigma_px)
        return measurement(angle_deg(pts[:, 0], pts[:, 1], pts[:, 2]), "deg", "angle")

    def ratio(self, first: Any, second: Any, point_sigma_px: float = 0.3) -> Measurement:
        """Length of segment ``first`` = (a, b) over length of segment ``second`` = (c, d), on the plane."""
        (a, b), (c, d) = first, second
        pts = sample_plane_points(self, [_pixel(a), _pixel(b), _pixel(c), _pixel(d)], point_sigma_px)
        top = np.linalg.norm(pts[:, 0] - pts[:, 1], axis=1)
        bottom = np.linalg.norm(pts[:, 2] - pts[:, 3], axis=1)
        return measurement(top / bottom, "", "ratio")

    def area(self, polygon_px: Any, point_sigma_px: float = 0.3) -> Measurement:
        """Area on the plane of an image polygon ((N, 2) px, in order), in ``unit`` squared."""
        pts = sample_plane_points(self, polygon_px, point_sigma_px)
        x, y = pts[..., 0], pts[..., 1]
        areas = 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1))
        return measurement(areas, f"{self.unit}^2", "area")

    @property
    def text(self) -> str:
        """One line: the reference's size, its corners in the image and the edge-fit residuals."""
        corners = (
            "" if self.quad is None else " corners " + ", ".join(f"({x:.1f}, {y:.1f})" for x, y in self.quad) + " px"
        )
        edges = f"; side fits rms {max(self.edge_rms_px):.2f} px" if self.edge_rms_px else ""
        orientation = f"; {self.orientation}" if self.orientation else ""
        orientation += f"; found by colour {self.color}" if self.color else ""
        status = f"; status {self.status}" if (self.warnings or self.edge_rms_px) else ""
        return (
            f"plane reference {self.size_m[0]:g} x {self.size_m[1]:g} {self.unit}:{corners}{edges}; "
            f"plane x along quad[0]->quad[1], y along quad[0]->quad[3]{orientation}{status}"
        )

    def _repr_png_(self) -> bytes:
        from spatialclaw.primitives.imaging import png_bytes

        return png_bytes(self.image)[0]

    def __repr__(self) -> str:
        return (
            f"Rectified({self.image.width}x{self.image.height} px top view of a {self.size_m[0]:g} x "
            f"{self.size_m[1]:g} {self.unit} plane, {self.px_per_m:.1f} px/{self.unit})"
        )


def _pixel(point: Any) -> np.ndarray:
    try:
        value = np.asarray(getattr(point, "centroid", point), dtype=np.float64)
    except (TypeError, ValueError):
        value = np.empty(0)
    if value.shape != (2,) or not np.isfinite(value).all():
        raise ValueError(f"a point must be image pixels (x, y) or a Blob, got {point!r}")
    return value


def _check_quad(quad: np.ndarray) -> None:
    if quad.shape != (4, 2) or not np.isfinite(quad).all():
        raise ValueError(f"quad must be 4 finite image points (x, y) as a (4, 2) array, got shape {quad.shape}")
    edges = np.roll(quad, -1, axis=0) - quad
    following = np.roll(edges, -1, axis=0)
    cross = edges[:, 0] * following[:, 1] - edges[:, 1] * following[:, 0]
    area = 0.5 * abs(np.sum(quad[:, 0] * np.roll(quad[:, 1], -1) - np.roll(quad[:, 0], -1) * quad[:, 1]))
    if area < 1.0:
        raise ValueError(f"quad is degenerate (area {area:.2f} px^2): the four points must span a real quadrilateral")
    if not (np.all(cross > 0) or np.all(cross < 0)):
        raise ValueError(
            "quad is not a convex quadrilateral in order: give the corners in order around the shape "
            "(e.g. top-left, top-right, bottom-right, bottom-left), not crossing"
        )


def rectify_plane(
    frame: Any,
    quad: Any,
    size: tuple[float, float],
    px_per_m: float | None = None,
    corner_sigma_px: float = 0.5,
    unit: str = "m",
) -> Rectified:
    """Warp a planar rectangle of known size to a metric top view.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        quad: (4, 2) image pixels (x, y) of the rectangle's corners, in order around it: plane origin,
            the corner along the width, the opposite corner, the corner along the height (for a sheet seen
            upright: top-left, top-right, bottom-right, bottom-left).
        size: (width_m, height_m): the rectangle's real size in metres (quad[0]->quad[1] is the width).
        px_per_m: top-view resolution; default keeps about the source resolution (the longer top-view
            side equals the longest quad edge in pixels, clamped to 64..2048 px).
        corner_sigma_px: how precisely the corners are known, pixels (0.5 for corners read off a zoom
            grid); the measurements' sigmas propagate it. ``geom.find_plane_reference`` finds and fits
            the corners itself, with their fitted uncertainty.
        unit: the unit of ``size`` ("m" by default).

    Returns:
        ``Rectified`` with ``image``, ``homography``, ``to_plane(uv_px)``, ``to_image(xy_m)`` and
        ``distance_m(uv_a, uv_b)``. Points off the plane (not on the surface) do not map to true metres.
    """
    import cv2

    quad = np.asarray(quad, dtype=np.float64)
    _check_quad(quad)
    width_m, height_m = (float(v) for v in size)
    if not (width_m > 0 and height_m > 0):
        raise ValueError(f"size must be (width_m, height_m) with both > 0 metres, got {size}")
    if px_per_m is None:
        longest = float(np.max(np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)))
        px_per_m = float(np.clip(longest, 64, 2048)) / max(width_m, height_m)
    if px_per_m <= 0:
        raise ValueError(f"px_per_m must be positive, got {px_per_m}")
    plane = np.array([[0, 0], [width_m, 0], [width_m, height_m], [0, height_m]], dtype=np.float64)
    H_plane = homography_from_points(quad, plane)
    to_top = np.array([[px_per_m, 0, -0.5], [0, px_per_m, -0.5], [0, 0, 1.0]])
    H_top = to_top @ H_plane
    out_w, out_h = max(1, int(round(width_m * px_per_m))), max(1, int(round(height_m * px_per_m)))
    source = as_rgb_array(frame)
    top = cv2.warpPerspective(source, H_top, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    samples = None
    if corner_sigma_px > 0:
        noise = np.random.default_rng(0).normal(0.0, float(corner_sigma_px), (MONTE_CARLO_SAMPLES, 4, 2))
        samples = quad[None] + noise
    return Rectified(
        Image.fromarray(top),
        H_top,
        H_plane,
        float(px_per_m),
        (width_m, height_m),
        quad=quad.copy(),
        corner_samples=samples,
        unit=unit,
    )
