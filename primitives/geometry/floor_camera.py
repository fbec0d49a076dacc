"""The assumed camera of a ``floor_point`` call: intrinsics (fixed, or a horizontal field of view), pose,
height above the floor, and the uncertainty range of each, which ``floor_samples`` draws jointly for all
floor points of one photo (their shared error).

Units: pixels, degrees, metres; the pose is (4, 4) camera-to-world (see ``floor`` for the world frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatialclaw.primitives.geometry.tilt import rot_x, rot_z

__all__ = ["FloorCamera"]


@dataclass(frozen=True, eq=False)
class FloorCamera:
    """The assumed camera of a ``floor_point`` call and its uncertainty (what ``floor_samples`` draws).

    Attributes: K (fixed intrinsics) or width / height_px / hfov_deg / hfov_sigma_deg (pixels, degrees);
    pose (4, 4) camera-to-world; camera_height_m / height_sigma_m (metres); pitch_sigma_deg /
    roll_sigma_deg (degrees, about the pose); pixel_sigma_px (pixels)."""

    K: np.ndarray | None
    width: int
    height_px: int
    hfov_deg: float
    hfov_sigma_deg: float
    pose: np.ndarray
    camera_height_m: float
    height_sigma_m: float
    pitch_sigma_deg: float
    roll_sigma_deg: float
    pixel_sigma_px: float

    def _intrinsics(self, hfov: np.ndarray) -> np.ndarray:
        if self.K is not None:
            return np.repeat(self.K[None], len(hfov), axis=0)
        f = (self.width / 2.0) / np.tan(np.radians(np.clip(hfov, 5.0, 170.0)) / 2.0)
        out = np.zeros((len(hfov), 3, 3))
        out[:, 0, 0] = out[:, 1, 1] = f
        out[:, 0, 2], out[:, 1, 2], out[:, 2, 2] = (self.width - 1) / 2.0, (self.height_px - 1) / 2.0, 1.0
        return out

    @property
    def nominal_K(self) -> np.ndarray:
        return np.asarray(self._intrinsics(np.array([self.hfov_deg]))[0])

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n, 3, 3) intrinsics, (n, 3, 3) camera-to-world rotations, (n,) heights, drawn from the ranges."""
        heights = np.clip(self.camera_height_m + self.height_sigma_m * rng.standard_normal(n), 0.05, None)
        pitch = self.pitch_sigma_deg * rng.standard_normal(n)
        roll = self.roll_sigma_deg * rng.standard_normal(n)
        R0 = self.pose[:3, :3]
        rotations = np.stack([R0 @ rot_x(-dp) @ rot_z(dr) for dp, dr in zip(pitch, roll, strict=True)])
        fovs = self.hfov_deg + self.hfov_sigma_deg * rng.standard_normal(n)
        return self._intrinsics(fovs), rotations, heights

    def same_as(self, other: FloorCamera) -> bool:
        """The same camera and the same assumptions (so its errors are shared)."""
        if (self.K is None) != (other.K is None) or (
            self.K is not None and other.K is not None and not np.allclose(self.K, other.K)
        ):
            return False
        mine = (
            self.width,
            self.height_px,
            self.hfov_deg,
            self.hfov_sigma_deg,
            self.camera_height_m,
            self.height_sigma_m,
            self.pitch_sigma_deg,
            self.roll_sigma_deg,
        )
        theirs = (
            other.width,
            other.height_px,
            other.hfov_deg,
            other.hfov_sigma_deg,
            other.camera_height_m,
            other.height_sigma_m,
            other.pitch_sigma_deg,
            other.roll_sigma_deg,
        )
        return bool(np.allclose(mine, theirs) and np.allclose(self.pose, other.pose))
