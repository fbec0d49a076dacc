"""Measurements on a rectified plane, with uncertainties: the ``Measurement`` and ``PlanePoint`` result
types and the Monte Carlo sampling of plane points behind ``Rectified``'s ``length``, ``angle``,
``ratio``, ``point`` and ``area`` (part of ``geom``).

Each measurement maps its image points (pixels (x, y)) to the plane with the estimated homography and
with one homography per corner sample of the reference (``Rectified.corner_samples``), adding the pixel
uncertainty of the points; the value is the estimate's, the sigma the standard deviation of the samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.homography import homography_from_points

__all__ = ["MONTE_CARLO_SAMPLES", "Measurement", "PlanePoint", "angle_deg", "measurement", "sample_plane_points"]

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
        return (
            f"PlanePoint(x={self.xy[0]:.4g} ± {self.sigma[0]:.2g}, y={self.xy[1]:.4g} ± {self.sigma[1]:.2g} "
            f"{self.unit})"
        )


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


def plane_homographies(rect: Any) -> np.ndarray:
    """(S + 1, 3, 3) image-pixel -> plane homographies of a ``Rectified``: the estimate first, then one per corner sample."""
    H = [rect.plane_homography]
    if rect.corner_samples is not None:
        w, h = rect.size_m
        target = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64)
        H += [homography_from_points(corners, target) for corners in rect.corner_samples]
    return np.stack(H)


def _map(H: np.ndarray, pixels: np.ndarray) -> np.ndarray:
    """(S, 3, 3) homographies and (S, N, 2) pixels -> (S, N, 2) plane points."""
    homogeneous = np.concatenate([pixels, np.ones(pixels.shape[:2] + (1,))], axis=2) @ np.transpose(H, (0, 2, 1))
    points: np.ndarray = homogeneous[..., :2] / homogeneous[..., 2:3]
    return points


def sample_plane_points(rect: Any, pixels: Any, point_sigma_px: float, seed: int = 0) -> np.ndarray:
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
    angles: np.ndarray = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    return angles
