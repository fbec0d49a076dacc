"""Camera tilt (pitch and roll) of one photo: the pose of a tilted camera, the image row of its horizon,
and the tilt estimated from the image's near-vertical edges (part of ``geom``).

World frame of a tilted camera (the design world of a single camera): metres, right-handed, +Z up,
origin at the camera's centre, +Y = the camera's viewing direction projected onto the ground, +X = its
right. Pitch and roll (degrees): pitch > 0 = the camera looks DOWN by that angle from level; roll > 0 =
the camera is turned about its viewing axis so that its right side is lower (the horizon rises towards
the right of the image). ``camera_tilt`` estimates them from the vanishing point of the near-vertical
edges (door frames, wall corners, furniture legs; +- 5 degrees).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics

__all__ = ["DEFAULT_HFOV_DEG", "TILT_SIGMA_DEG", "CameraTilt", "camera_tilt", "horizon_row", "tilted_camera_pose"]

DEFAULT_HFOV_DEG = 60.0
TILT_SIGMA_DEG = 5.0
"""Uncertainty of a pitch estimated by ``camera_tilt``, degrees (errors of -5.3..+1.2 degrees measured on
four real RGB-D room photos at 224 px, truth from their depth's floor plane)."""
_MIN_EDGE_PX = 12.0
_MAX_EDGE_TILT_DEG = 25.0
_EDGE_TOLERANCE_RAD = 0.015

_LEVEL = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # camera x, y, z -> world X, -Z, Y


def rot_x(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def tilted_camera_pose(pitch_deg: float = 0.0, roll_deg: float = 0.0) -> np.ndarray:
    """(4, 4) camera-to-world pose of a camera at the world origin facing +Y, pitched ``pitch_deg`` DOWN
    (degrees) and then rolled ``roll_deg`` about its viewing axis (right side lower for > 0)."""
    pose = np.eye(4)
    pose[:3, :3] = _LEVEL @ rot_x(-float(pitch_deg)) @ rot_z(float(roll_deg))
    return pose


def horizon_row(K: Any, pitch_deg: float) -> float:
    """Image row (pixels, y down) of the horizon at the principal point's column for a camera pitched
    ``pitch_deg`` down with no roll: floor points lie below it (larger y)."""
    K = as_intrinsics(K)
    return float(K[1, 2] - K[1, 1] * np.tan(np.radians(pitch_deg)))


@dataclass(frozen=True)
class CameraTilt:
    """A camera's tilt estimated from one image.

    Attributes:
        pitch_deg: downward tilt, degrees (> 0 looks down). roll_deg: roll, degrees (right side lower for
            > 0). pitch_sigma_deg: its uncertainty, degrees. edges: near-vertical edges that agree.
    """

    pitch_deg: float
    roll_deg: float
    pitch_sigma_deg: float
    edges: int

    @property
    def text(self) -> str:
        return (
            f"camera tilted {self.pitch_deg:.1f} ± {self.pitch_sigma_deg:g} deg down, roll {self.roll_deg:.0f} deg "
            f"(from {self.edges} near-vertical edges)"
        )

    def __repr__(self) -> str:
        return self.text


def camera_tilt(frame: Any, *, K: Any = None, hfov_deg: float | None = None) -> CameraTilt:
    """Estimate a camera's pitch and roll from one image: world-vertical edges (door frames, wall corners,
    furniture legs) converge to a vanishing point below the image when the camera looks down and above it
    when it looks up; the pitch and roll whose vertical vanishing direction the most edge length passes
    through (within about 3 px at 224 px wide) win. Needs a few vertical edges away from the image's
    centre column.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        K: (3, 3) intrinsics, pixels; else ``hfov_deg`` (horizontal field of view, degrees, default 60).

    Returns:
        A ``CameraTilt`` (``.pitch_deg`` > 0 down, ``.roll_deg``, ``.pitch_sigma_deg``, ``.edges``).

    Raises:
        ValueError: too few near-vertical edges (or all near the centre column) to tell the tilt; pass
            ``pitch_deg`` to ``floor_point`` yourself (a judgement: 0 = level, 30 = looking well down).
    """
    import cv2

    from spatialclaw.primitives.imaging import as_rgb_array

    gray = cv2.cvtColor(as_rgb_array(frame), cv2.COLOR_RGB2GRAY)
    height, width = gray.shape
    K = as_intrinsics(K) if K is not None else None
    if K is None:
        fov = DEFAULT_HFOV_DEG if hfov_deg is None else float(hfov_deg)
        f = (width / 2.0) / np.tan(np.radians(fov) / 2.0)
        K = np.array([[f, 0.0, (width - 1) / 2.0], [0.0, f, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
    found = cv2.createLineSegmentDetector().detect(gray)[0]
    segments = np.zeros((0, 4)) if found is None else found.reshape(-1, 4).astype(np.float64)
    dx, dy = segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1]
    length = np.hypot(dx, dy)
    upright = (length >= _MIN_EDGE_PX * width / 224.0) & (
        np.degrees(np.arctan2(np.abs(dx), np.abs(dy))) < _MAX_EDGE_TILT_DEG
    )
    segments, length = segments[upright], length[upright]
    ends = [
        np.linalg.solve(K, np.stack([segments[:, i], segments[:, i + 1], np.ones(len(segments))])).T for i in (0, 2)
    ]
    lines = np.cross(ends[0], ends[1])
    lines /= np.maximum(np.linalg.norm(lines, axis=1, keepdims=True), 1e-12)
    off_centre = np.abs((segments[:, 0] + segments[:, 2]) / 2.0 - K[0, 2]) > 0.15 * width
    pitches, rolls = np.arange(-10.0, 50.01, 0.5), np.arange(-10.0, 10.01, 1.0)
    t, r = np.radians(pitches)[:, None], np.radians(rolls)[None, :]
    up = np.stack(
        [-np.sin(r) * np.cos(t), -np.cos(r) * np.cos(t), -np.sin(t) + 0 * r], axis=-1
    )  # world up, camera frame
    residual = np.abs(np.einsum("nk,prk->prn", lines, up))
    support = (length * np.clip(1.0 - (residual / _EDGE_TOLERANCE_RAD) ** 2, 0.0, None)).sum(axis=-1)
    i, j = np.unravel_index(int(np.argmax(support)), support.shape) if len(segments) else (0, 0)
    agreeing = residual[i, j] < _EDGE_TOLERANCE_RAD if len(segments) else np.zeros(0, bool)
    if agreeing.sum() < 6 or (agreeing & off_centre).sum() < 3 or i in (0, len(pitches) - 1):
        raise ValueError(
            f"too few near-vertical edges to tell the camera's tilt ({int(agreeing.sum())} agree, "
            f"{int((agreeing & off_centre).sum())} away from the centre); pass pitch_deg= (degrees down)"
        )
    return CameraTilt(float(pitches[i]), float(rolls[j]), TILT_SIGMA_DEG, int(agreeing.sum()))
