"""The assumed camera of a ``floor_point`` call: intrinsics (fixed, or a horizontal field of view), pose,
height above the floor, and the uncertainty range of each, which ``floor_samples`` draws jointly for all
floor points of one photo (their shared error).

The pitch is one normal spread about the pose's pitch, or, when the image supports two pitches
(``CameraTilt.rival_pitch_deg``), a mixture of them weighted by their evidence (``pitch_modes``). A pitch
change turns the camera about its level horizontal axis (its roll and heading stay).

Units: pixels, degrees (pitch > 0 tilts up), metres; the pose is (4, 4) camera-to-world (see ``floor`` for
the world frame).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatialclaw.primitives.geometry.tilt import rot_x, rot_z

__all__ = ["FloorCamera", "pitch_roll_of_pose", "repitched"]


def pitch_roll_of_pose(pose: np.ndarray) -> tuple[float, float]:
    """(pitch, roll) in degrees of a camera-to-world pose in a +Z-up world (pitch > 0 up, roll > 0 clockwise)."""
    pitch = float(np.degrees(np.arcsin(np.clip(pose[2, 2], -1.0, 1.0))))
    roll = float(np.degrees(np.arcsin(np.clip(-pose[2, 0] / max(np.cos(np.radians(pitch)), 1e-9), -1.0, 1.0))))
    return pitch, roll


def repitched(rotation: np.ndarray, roll_deg: float, delta_deg: float) -> np.ndarray:
    """(3, 3) camera-to-world rotation of a camera with that ``rotation`` and roll pitched ``delta_deg``
    further up (degrees) about its level horizontal axis: its heading and roll stay."""
    return np.asarray(rotation @ rot_z(-roll_deg) @ rot_x(delta_deg) @ rot_z(roll_deg))


def _rot_x_many(deg: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations about x by ``deg`` degrees (each as ``rot_x``)."""
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    out = np.zeros((len(deg), 3, 3))
    out[:, 0, 0] = 1.0
    out[:, 1, 1], out[:, 1, 2], out[:, 2, 1], out[:, 2, 2] = c, -s, s, c
    return out


def _rot_z_many(deg: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotations about z by ``deg`` degrees (each as ``rot_z``)."""
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    out = np.zeros((len(deg), 3, 3))
    out[:, 2, 2] = 1.0
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1] = c, -s, s, c
    return out


@dataclass(frozen=True, eq=False)
class FloorCamera:
    """The assumed camera of a ``floor_point`` call and its uncertainty (what ``floor_samples`` draws).

    Attributes: K (fixed intrinsics) or width / height_px / hfov_deg / hfov_sigma_deg (pixels, degrees);
    pose (4, 4) camera-to-world; camera_height_m / height_sigma_m (metres); pitch_sigma_deg /
    roll_sigma_deg (degrees, about the pose); pixel_sigma_px (pixels); pitch_modes: ((offset_deg from the
    pose's pitch, sigma_deg, weight), ...) when the pitch is a mixture of candidates (weights sum to 1),
    else () for one normal spread of ``pitch_sigma_deg``."""

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
    pitch_modes: tuple[tuple[float, float, float], ...] = ()

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

    @property
    def modes(self) -> tuple[tuple[float, float, float], ...]:
        """((pitch offset from the pose's, sigma, weight), ...) degrees: the candidate pitches (one when
        the tilt has no rival)."""
        return self.pitch_modes or ((0.0, self.pitch_sigma_deg, 1.0),)

    def rotation_at(self, delta_deg: float) -> np.ndarray:
        """(3, 3) camera-to-world rotation with the pitch ``delta_deg`` above the pose's (degrees)."""
        return repitched(self.pose[:3, :3], pitch_roll_of_pose(self.pose)[1], delta_deg)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(n, 3, 3) intrinsics, (n, 3, 3) camera-to-world rotations, (n,) heights and (n,) the index of the
        pitch mode each draw came from (into ``modes``), drawn from the ranges."""
        heights = np.clip(self.camera_height_m + self.height_sigma_m * rng.standard_normal(n), 0.05, None)
        unit = rng.standard_normal(n)
        roll = self.roll_sigma_deg * rng.standard_normal(n)
        fovs = self.hfov_deg + self.hfov_sigma_deg * rng.standard_normal(n)
        modes = self.modes
        which = np.zeros(n, int)
        if len(modes) > 1:
            which = rng.choice(len(modes), size=n, p=np.array([m[2] for m in modes]) / sum(m[2] for m in modes))
        offsets, sigmas = np.array([m[0] for m in modes]), np.array([m[1] for m in modes])
        pitch = offsets[which] - sigmas[which] * unit  # (the sign keeps the draws of a level camera as before)
        own_roll = pitch_roll_of_pose(self.pose)[1]
        R0 = self.pose[:3, :3]
        # repitched(R0, own_roll, dp) @ rot_z(dr) for every draw at once
        rotations = np.einsum(
            "ij,njk,kl,nlm->nim", R0 @ rot_z(-own_roll), _rot_x_many(pitch), rot_z(own_roll), _rot_z_many(roll)
        )
        return self._intrinsics(fovs), rotations, heights, which

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
        return bool(
            np.allclose(mine, theirs)
            and np.allclose(self.pose, other.pose)
            and len(self.pitch_modes) == len(other.pitch_modes)
            and (not self.pitch_modes or np.allclose(self.pitch_modes, other.pitch_modes))
        )
