"""Objects located from 2D evidence: image bearings (pixel -> ray) plus distance estimates (part of ``scene``).

A bearing is the ray from a camera through a pixel: ``K^-1 (x, y, 1)`` in the camera frame (OpenCV: x
right, y down, z forward), rotated into the world by the camera-to-world pose. With a distance estimate
along that ray (metres, with a standard deviation) one view locates an object; two or more views with
known poses triangulate it, with or without distances. The position is the weighted least-squares
solution (angular residuals weighted by the pixel uncertainty over the focal length, range residuals by
the distance sigma) and its 3x3 covariance is ``(J^T J)^-1`` at the solution, so the uncertainty of every
readout built on it is propagated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics, as_pose

__all__ = [
    "DEFAULT_DISTANCE_FRACTION",
    "DEFAULT_PIXEL_SIGMA_PX",
    "Bearing",
    "intrinsics_from_fov",
    "level_camera_pose",
    "locate",
]

DEFAULT_PIXEL_SIGMA_PX = 2.0
"""Default uncertainty of a pixel picked on an object (its centre), pixels."""
DEFAULT_DISTANCE_FRACTION = 0.25
"""Default distance sigma as a fraction of the distance, when only a distance guess is given."""


def intrinsics_from_fov(width_px: int, height_px: int, hfov_deg: float) -> np.ndarray:
    """(3, 3) pinhole K of a ``width_px`` x ``height_px`` image with horizontal field of view ``hfov_deg``
    (square pixels, principal point at the image centre)."""
    if not 1.0 < float(hfov_deg) < 179.0:
        raise ValueError(f"hfov_deg must be a horizontal field of view in degrees (1..179), got {hfov_deg}")
    f = (width_px / 2.0) / np.tan(np.radians(hfov_deg) / 2.0)
    return np.array([[f, 0.0, (width_px - 1) / 2.0], [0.0, f, (height_px - 1) / 2.0], [0.0, 0.0, 1.0]])


def level_camera_pose() -> np.ndarray:
    """(4, 4) camera-to-world pose of the design world's first camera: at the origin, level, facing +Y
    (camera x -> world +X, camera y (down) -> world -Z, camera z (forward) -> world +Y)."""
    pose = np.eye(4)
    pose[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    return pose


@dataclass(frozen=True)
class Bearing:
    """One image observation of an object.

    Attributes:
        pixel: (x, y) pixels of the object's centre in the image. frame: absolute frame index or None.
        K: (3, 3) intrinsics, pixels. pose: (4, 4) camera-to-world pose of that camera.
        pixel_sigma_px: uncertainty of ``pixel``, pixels.
        distance_m / distance_sigma_m: estimated distance from the camera centre along the ray and its
            standard deviation, metres (None: bearing only).
        assumed: what was assumed to build the ray (e.g. "60 deg horizontal field of view"), or "".
        floor: the ``geom.FloorPoint`` its distance came from (``add_bearing(on_floor=True)``), or None.
    """

    pixel: tuple[float, float]
    frame: int | None
    K: np.ndarray = field(repr=False)
    pose: np.ndarray = field(repr=False)
    pixel_sigma_px: float = DEFAULT_PIXEL_SIGMA_PX
    distance_m: float | None = None
    distance_sigma_m: float | None = None
    assumed: str = ""
    floor: Any = field(default=None, repr=False)

    @property
    def origin(self) -> np.ndarray:
        """(3,) the camera centre in the world, metres."""
        return self.pose[:3, 3]

    @property
    def ray(self) -> np.ndarray:
        """(3,) unit world direction from the camera centre through the pixel."""
        x, y = self.pixel
        cam = np.linalg.solve(self.K, np.array([x, y, 1.0]))
        world = self.pose[:3, :3] @ cam
        ray: np.ndarray = world / np.linalg.norm(world)
        return ray

    @property
    def angular_sigma_rad(self) -> float:
        """Uncertainty of the ray's direction, radians (pixel sigma over the focal length)."""
        return float(self.pixel_sigma_px / np.sqrt(self.K[0, 0] * self.K[1, 1]))


def make_bearing(
    pixel: Any,
    frame: int | None,
    K: np.ndarray,
    pose: Any,
    pixel_sigma_px: float | None,
    distance_m: float | None,
    distance_sigma_m: float | None,
    assumed: str,
) -> Bearing:
    """Validate the pieces of one observation (clear errors for the model) and build the ``Bearing``."""
    try:
        xy = np.asarray(getattr(pixel, "centroid", pixel), dtype=np.float64).ravel()
    except (TypeError, ValueError):
        xy = np.empty(0)
    if xy.shape != (2,) or not np.isfinite(xy).all():
        raise ValueError(f"pixel must be the object's (x, y) in the image, pixels, got {pixel!r}")
    sigma = DEFAULT_PIXEL_SIGMA_PX if pixel_sigma_px is None else float(pixel_sigma_px)
    if not sigma > 0:
        raise ValueError(f"pixel_sigma_px must be > 0 pixels, got {pixel_sigma_px}")
    if distance_m is not None:
        distance_m = float(distance_m)
        if not (np.isfinite(distance_m) and distance_m > 0):
            raise ValueError(
                f"distance must be a positive distance in metres (or None for a bearing only), got {distance_m}"
            )
        if distance_sigma_m is None:
            distance_sigma_m = DEFAULT_DISTANCE_FRACTION * distance_m
        distance_sigma_m = float(distance_sigma_m)
        if not distance_sigma_m > 0:
            raise ValueError(f"distance_sigma must be > 0 metres, got {distance_sigma_m}")
    elif distance_sigma_m is not None:
        raise ValueError("distance_sigma was given without distance; pass distance= too")
    bearing = Bearing(
        (float(xy[0]), float(xy[1])),
        frame,
        as_intrinsics(K),
        as_pose(pose),
        sigma,
        distance_m,
        distance_sigma_m,
        assumed,
    )
    if (np.linalg.solve(bearing.K, np.array([xy[0], xy[1], 1.0])) @ [0, 0, 1]) <= 0:
        raise ValueError("the pixel's ray points behind the camera; check K")
    return bearing


def _tangent_basis(ray: np.ndarray) -> np.ndarray:
    helper = np.array([0.0, 0.0, 1.0]) if abs(ray[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    b1 = np.cross(ray, helper)
    b1 /= np.linalg.norm(b1)
    return np.stack([b1, np.cross(ray, b1)])


def _residuals(x: np.ndarray, bearings: Sequence[Bearing]) -> np.ndarray:
    out = []
    for b in bearings:
        offset = x - b.origin
        r = np.linalg.norm(offset)
        u = offset / max(r, 1e-9)
        out.extend(_tangent_basis(b.ray) @ (u - b.ray) / b.angular_sigma_rad)
        if b.distance_m is not None and b.distance_sigma_m is not None:  # make_bearing sets both or neither
            out.append((r - b.distance_m) / b.distance_sigma_m)
    return np.asarray(out)


def _initial_guess(bearings: Sequence[Bearing]) -> np.ndarray:
    ranged = [b.origin + b.distance_m * b.ray for b in bearings if b.distance_m is not None]
    if ranged:
        mean: np.ndarray = np.mean(ranged, axis=0)
        return mean
    A, rhs = np.zeros((3, 3)), np.zeros(3)  # midpoint of the rays (least squares)
    for b in bearings:
        P = np.eye(3) - np.outer(b.ray, b.ray)
        A += P
        rhs += P @ b.origin
    return np.linalg.lstsq(A, rhs, rcond=None)[0]


def locate(bearings: Sequence[Bearing]) -> tuple[np.ndarray, np.ndarray, str]:
    """Fuse bearings into a world position (3,), its covariance (3, 3) in m^2, and a note on how.

    Raises ValueError when the evidence cannot fix a position (one bearing without a distance; parallel
    rays without distances)."""
    from scipy.optimize import least_squares

    if not bearings:
        raise ValueError("no observations to locate from")
    ranged = sum(b.distance_m is not None for b in bearings)
    if ranged == 0 and len(bearings) < 2:
        raise ValueError(
            "one bearing without a distance does not locate an object: pass distance= (metres, "
            "with distance_sigma=) or add a bearing of the same object from another view with its pose"
        )
    guess = _initial_guess(bearings)
    if ranged == 0:
        rays = np.stack([b.ray for b in bearings])
        spread = max(np.degrees(np.arccos(np.clip(rays @ ray, -1, 1))).max() for ray in rays)
        if spread < 0.5:
            raise ValueError(
                f"the bearings are (nearly) parallel ({spread:.2f} deg apart) and carry no distance, so "
                f"they cannot triangulate: add distance= or a view from a different place"
            )
    solution = least_squares(_residuals, guess, args=(bearings,), method="lm", x_scale="jac")
    J = solution.jac
    covariance = np.linalg.pinv(J.T @ J)
    views = len({(tuple(np.round(b.origin, 6)), b.frame) for b in bearings})
    how = f"{len(bearings)} bearing{'s' if len(bearings) != 1 else ''} from {views} view{'s' if views != 1 else ''}"
    how += f", {ranged} with a distance estimate" if ranged else ", triangulated (no distance estimates)"
    return solution.x, covariance, how
