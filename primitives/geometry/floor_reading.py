"""The result of ``geom.floor_point``: where a floor pixel is on the floor, how well that is known, what was
assumed, and the plain-language readout (``FloorPoint``). Units: metres, degrees, pixels; the world frame is
``floor``'s (+Z up, origin at the camera, floor at z = -camera_height_m).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatialclaw.primitives.geometry.floor_camera import FloorCamera
from spatialclaw.primitives.geometry.floor_tilt import PitchReading
from spatialclaw.primitives.geometry.plausibility import floor_notes

__all__ = ["FloorPoint"]


@dataclass(frozen=True)
class FloorPoint:
    """Where a floor pixel is on the floor.

    Attributes:
        pixel: (x, y) pixels asked. point: (3,) world position, metres (see the module's frame: origin at
            the camera, +Y its forward on the ground, +X right, +Z up, floor at z = -camera_height_m).
        covariance: (3, 3) m^2 from the assumed ranges (height, pitch, roll, field of view, pixel).
        distance_m / distance_sigma_m: distance from the camera centre to the point along the ray, metres
            (what ``scene.add_bearing(distance=...)`` takes) and its robust standard deviation.
        ground_distance_m: horizontal distance from the point under the camera, metres.
        camera_height_m, pitch_deg, roll_deg: the values used (nominal). K: (3, 3) intrinsics used.
        pose: (4, 4) camera-to-world pose used. assumed: what was assumed ("" if nothing).
        camera: the ``FloorCamera`` (assumptions and ranges) that ``floor_samples`` draws jointly.
        p_on_floor: fraction of the uncertainty samples whose ray still meets the floor (< 1 near the
            horizon: the distance is then poorly known).
        below_horizon_deg: the ray's angle below the horizon, degrees (a few degrees: ill-conditioned).
        pitch_sensitivity_m: how far (metres, along the ground) 1 degree more or less camera pitch
            moves the point (inf when it would put it above the horizon).
        pitch_readings: when the image supports two pitches, what each says (``.pitch_deg``, ``.weight``
            given this pixel is on the floor, ``.distance_m``, NaN when ruled out), else (). The point is
            at the estimate unless only the rival keeps it on the floor; the covariance covers both.
    """

    pixel: tuple[float, float]
    point: np.ndarray
    covariance: np.ndarray = field(repr=False)
    distance_m: float
    distance_sigma_m: float
    ground_distance_m: float
    camera_height_m: float
    pitch_deg: float
    roll_deg: float
    K: np.ndarray = field(repr=False)
    pose: np.ndarray = field(repr=False)
    assumed: str = ""
    p_on_floor: float = 1.0
    camera: FloorCamera | None = field(default=None, repr=False)
    below_horizon_deg: float = 90.0
    pitch_sensitivity_m: float = 0.0
    pitch_readings: tuple[PitchReading, ...] = ()

    @property
    def distance_known(self) -> bool:
        """False when the distance's sigma exceeds the distance itself: then it is unknown, not measured."""
        return bool(self.distance_sigma_m <= self.distance_m)

    @property
    def sigma_m(self) -> np.ndarray:
        """(3,) standard deviations of x, y, z, metres."""
        return np.asarray(np.sqrt(np.clip(np.diag(self.covariance), 0.0, None)))

    @property
    def notes(self) -> str:
        """Plausibility notes ("" if none): a floor distance beyond room scale, a ray within 5 degrees of
        the horizon (with what 1 degree of pitch does to it), or a distance known worse than half its size."""
        return "; ".join(
            floor_notes(
                self.ground_distance_m,
                self.distance_m,
                self.distance_sigma_m,
                self.below_horizon_deg,
                self.pitch_sensitivity_m,
            )
        )

    @property
    def text(self) -> str:
        """E.g. "floor point at (0.42, 3.10, -1.50) m ± (0.2, 0.9, 0.25): 3.4 ± 0.9 m from the camera ..." """
        x, y, z = self.point
        sx, sy, sz = self.sigma_m
        unknown = "" if self.distance_known else "distance unknown (its sigma exceeds it): "
        out = (
            f"floor point of pixel ({self.pixel[0]:.1f}, {self.pixel[1]:.1f}) at ({x:.2f}, {y:.2f}, {z:.2f}) m "
            f"± ({sx:.2f}, {sy:.2f}, {sz:.2f}): {unknown}{self.distance_m:.2f} ± {self.distance_sigma_m:.2f} m "
            f"from the camera along the ray, {self.ground_distance_m:.2f} m on the ground"
        )
        if self.pitch_readings:
            out += "; the camera tilt is ambiguous: " + ", ".join(r.text for r in self.pitch_readings)
        if self.p_on_floor < 0.99:
            out += f"; near the horizon ({100 * (1 - self.p_on_floor):.0f}% of the assumed tilts put it above)"
        if self.notes:
            out += f"; IMPLAUSIBLE? {self.notes}"
        return out + (f" (assumed: {self.assumed})" if self.assumed else "")

    def __repr__(self) -> str:
        return self.text
