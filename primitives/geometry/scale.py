"""Metric scale without a depth model: from an object of known size in the same view (part of ``geom``).

Pinhole camera, object roughly facing the camera (its measured extent perpendicular to the viewing
ray): an extent of ``S`` metres spanning ``s`` pixels at focal length ``f`` pixels lies at distance
``Z = f S / s`` metres, and at that distance one pixel spans ``S / s`` metres. The uncertainty of the
assumed size (a range such as a door's 1.9-2.1 m, read as uniform) and of the pixel extent propagates
to both (relative errors add in quadrature).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics
from spatialclaw.primitives.geometry.plane_measure import Measurement
from spatialclaw.primitives.geometry.plausibility import size_note

__all__ = ["KnownScale", "scale_from_known_size"]


@dataclass(frozen=True)
class KnownScale:
    """Scale from an object of known size.

    Attributes:
        size_m / size_sigma_m: the assumed real size and its standard deviation, metres.
        size_px / size_px_sigma: its measured image extent and that extent's uncertainty, pixels.
        metres_per_px: metres per pixel at the object's distance (for lengths beside it, facing the camera).
        relative_sigma: relative standard deviation of the scale (and of the distance).
        distance_m / distance_sigma_m: camera-to-object depth along the optical axis, metres (None
            without a focal length); for an object near the image centre this is also its distance along
            the ray, which ``scene.add_bearing(distance=...)`` takes (off-centre, divide by the cosine of
            the ray's angle to the axis).
        focal_px: the focal length used, pixels (None if unknown).
    """

    size_m: float
    size_sigma_m: float
    size_px: float
    size_px_sigma: float
    metres_per_px: float
    relative_sigma: float
    distance_m: float | None
    distance_sigma_m: float | None
    focal_px: float | None

    def measure(self, length_px: float) -> Measurement:
        """A length of ``length_px`` pixels at the same distance (facing the camera) in metres, with its sigma."""
        value = float(length_px) * self.metres_per_px
        return Measurement(value, abs(value) * self.relative_sigma, "m", "length")

    @property
    def text(self) -> str:
        """E.g. "a 2.0 ± 0.058 m object spans 180 px: 0.0111 m/px there; 4.4 ± 0.13 m from the camera"."""
        out = (
            f"a {self.size_m:.3g} ± {self.size_sigma_m:.2g} m object spans {self.size_px:.1f} px: "
            f"{self.metres_per_px:.4g} m/px at its distance (± {100 * self.relative_sigma:.0f}%)"
        )
        if self.distance_m is not None:
            out += f"; {self.distance_m:.2f} ± {self.distance_sigma_m:.2f} m from the camera"
        note = size_note(self.size_m)
        return out + (f"; IMPLAUSIBLE? {note}" if note else "")

    def __repr__(self) -> str:
        return f"KnownScale({self.text})"


def _extent_px(size_px: Any, axis: str) -> float:
    box = getattr(size_px, "box", size_px)
    if np.ndim(box) == 0:
        return float(box)
    box = np.asarray(box, dtype=np.float64).ravel()
    if box.shape != (4,):
        raise ValueError(f"size_px must be a pixel length or a box (x0, y0, x1, y1), got {size_px!r}")
    if axis not in ("height", "width"):
        raise ValueError(f"axis must be 'height' or 'width' for a box, got {axis!r}")
    return float(abs(box[3] - box[1]) if axis == "height" else abs(box[2] - box[0]))


def scale_from_known_size(
    size_px: Any,
    size_m: float | tuple[float, float],
    K: Any = None,
    hfov_deg: float | None = None,
    image_width: int | None = None,
    axis: str = "height",
    size_px_sigma: float = 1.0,
) -> KnownScale:
    """Metric scale and distance from an object of known real size in the same view (no depth model).

    Args:
        size_px: the object's extent in pixels along the known dimension, or its box (x0, y0, x1, y1)
            / a detection (its ``.box``) with ``axis`` saying which side is known.
        size_m: its real size in metres, or a (low, high) range (read as uniform: mean (low+high)/2,
            sigma (high-low)/sqrt(12)); e.g. a door 2.0 m or (1.9, 2.1), an A4 sheet 0.297, a person
            (1.55, 1.90), a car's length (4.0, 4.8).
        K: (3, 3) intrinsics (for the distance); or ``hfov_deg`` with ``image_width`` pixels.
        axis: "height" or "width" of a box.
        size_px_sigma: uncertainty of the pixel extent (default 1 px).

    Returns:
        ``KnownScale``: ``metres_per_px``, ``distance_m`` (with a focal length), their uncertainty, and
        ``measure(length_px)`` for other lengths beside the object. Feed the scene memory with
        ``scene.add_bearing(name, pixel, distance=s.distance_m, distance_sigma=s.distance_sigma_m, ...)``.
    """
    extent = _extent_px(size_px, axis)
    if not extent > 0:
        raise ValueError(f"the object's pixel extent must be > 0, got {extent}")
    if isinstance(size_m, (tuple, list, np.ndarray)):
        low, high = (float(v) for v in size_m)
        if not 0 < low <= high:
            raise ValueError(f"size_m range must be (low, high) metres with 0 < low <= high, got {size_m}")
        size, size_sigma = (low + high) / 2.0, (high - low) / np.sqrt(12.0)
    else:
        size, size_sigma = float(size_m), 0.0
        if not size > 0:
            raise ValueError(f"size_m must be a positive size in metres or a (low, high) range, got {size_m}")
    relative = float(np.hypot(size_sigma / size, float(size_px_sigma) / extent))
    focal = None
    if K is not None:
        Km = as_intrinsics(K)
        focal = float(Km[1, 1] if axis == "height" else Km[0, 0])
    elif hfov_deg is not None:
        if image_width is None:
            raise ValueError("hfov_deg needs image_width (pixels) to give a focal length")
        focal = (float(image_width) / 2.0) / np.tan(np.radians(float(hfov_deg)) / 2.0)
    distance = None if focal is None else focal * size / extent
    return KnownScale(
        size,
        float(size_sigma),
        extent,
        float(size_px_sigma),
        size / extent,
        relative,
        distance,
        None if distance is None else distance * relative,
        focal,
    )
