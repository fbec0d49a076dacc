"""Angle and direction conventions of the motion readouts: yaw / pitch / roll of a relative rotation, and
plain words for a direction or a turn.

Rotation of the later camera in the EARLIER camera's frame (OpenCV axes: x right, y down, z forward), as
R_ab = Ry(yaw) Rx(pitch) Rz(roll): yaw > 0 = turns RIGHT, pitch > 0 = tilts UP, roll > 0 = rolls clockwise
as the camera sees it (the image content turns counter-clockwise). A pan is yaw, a tilt is pitch.

A camera that looks down (or up) and turns about the vertical turns about a tilted axis in its own frame:
decomposed in camera axes, part of that turn reads as roll (looking 42 deg down, a 59 deg turn reads as yaw
41, roll 36). ``level_angles`` measures a step about gravity instead, given camera a's pitch; ``least_roll``
finds the vertical (a pitch within ``MAX_TILT_DEG``) that explains a step with the least roll.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "MAX_TILT_DEG",
    "clip_tilt",
    "direction_words",
    "least_roll",
    "level_angles",
    "pitched",
    "turn_words",
    "yaw_pitch_roll",
]

_AXIS_WORDS = (("right", "left"), ("down", "up"), ("forward", "back"))
MAX_TILT_DEG = 60.0  # steepest camera pitch (up or down) a vertical is sought at without a given tilt


def yaw_pitch_roll(R_ab: np.ndarray) -> tuple[float, float, float]:
    """(yaw, pitch, roll) degrees of orientation ``R_ab`` (camera b in camera a's frame, OpenCV axes) with
    R_ab = Ry(yaw) Rx(pitch) Rz(roll): yaw > 0 turns right, pitch > 0 tilts up, roll > 0 clockwise."""
    yaw = math.degrees(math.atan2(R_ab[0, 2], R_ab[2, 2]))
    pitch = math.degrees(math.asin(float(np.clip(-R_ab[1, 2], -1.0, 1.0))))
    roll = math.degrees(math.atan2(R_ab[1, 0], R_ab[1, 1]))
    return yaw, pitch, roll


def pitched(degrees: float) -> np.ndarray:
    """Rx(pitch): a camera pitched by ``degrees`` (> 0 up) in a level frame (OpenCV axes, y down along gravity)."""
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def level_angles(R_ab: np.ndarray, tilt_deg: float) -> tuple[float, float, float]:
    """(yaw, pitch, roll) degrees of step ``R_ab`` measured about gravity, for a camera a pitched ``tilt_deg``
    (> 0 up, no roll): yaw = the turn about the vertical (> 0 right), pitch = the change of pitch (> 0 up),
    roll = camera b's roll (> 0 clockwise). At ``tilt_deg`` 0 this is ``yaw_pitch_roll``."""
    yaw, pitch, roll = yaw_pitch_roll(pitched(tilt_deg) @ R_ab)
    return yaw, pitch - tilt_deg, roll


def least_roll(R_ab: np.ndarray, max_tilt_deg: float = MAX_TILT_DEG) -> tuple[float, float]:
    """(tilt, roll) degrees: the camera pitch within +-``max_tilt_deg`` whose vertical explains step ``R_ab``
    with the smallest roll, and that roll (1 degree grid, then the best neighbour refined to 0.1)."""
    grid = np.arange(-max_tilt_deg, max_tilt_deg + 0.5, 1.0)
    rolls = np.array([abs(level_angles(R_ab, t)[2]) for t in grid])
    best = float(grid[int(np.argmin(rolls))])
    fine = np.clip(np.arange(best - 1.0, best + 1.05, 0.1), -max_tilt_deg, max_tilt_deg)
    tilt = float(min(fine, key=lambda t: abs(level_angles(R_ab, float(t))[2])))
    return tilt, level_angles(R_ab, tilt)[2]


def clip_tilt(rotations: list[np.ndarray]) -> float | None:
    """The camera pitch (degrees, > 0 up, within +-``MAX_TILT_DEG``) whose vertical explains a clip's turns
    ``rotations`` (each R_ab, camera b in camera a's frame) with the least total roll, or None when camera
    axes already do: the turns over 2 deg must read as rolls of 3 deg or more (median) in camera axes, and
    that vertical must leave at most 35 % of their total roll and lie 10 deg or more from level."""
    turning = [R for R in rotations if math.degrees(math.acos(float(np.clip((np.trace(R) - 1) / 2, -1, 1)))) >= 2.0]
    if not turning:
        return None
    level = [abs(yaw_pitch_roll(R)[2]) for R in turning]
    if float(np.median(level)) < 3.0:
        return None
    grid = np.arange(-MAX_TILT_DEG, MAX_TILT_DEG + 0.5, 1.0)
    costs = [sum(abs(level_angles(R, float(t))[2]) for R in turning) for t in grid]
    tilt = float(grid[int(np.argmin(costs))])
    return tilt if min(costs) <= 0.35 * sum(level) and abs(tilt) >= 10.0 else None


def direction_words(vector: np.ndarray, threshold: float = 0.35) -> str:
    """Plain words for a direction in camera axes (x right, y down, z forward): the components larger than
    ``threshold`` of its length, biggest first, e.g. "forward and left"."""
    unit = np.asarray(vector, float) / max(float(np.linalg.norm(vector)), 1e-12)
    order = np.argsort(-np.abs(unit))
    words = [_AXIS_WORDS[axis][0 if unit[axis] > 0 else 1] for axis in order if abs(unit[axis]) >= threshold]
    return " and ".join(words) if words else "nowhere in particular"


def turn_words(yaw: float | None, pitch: float | None, roll: float | None, minimum: float = 0.5) -> str:
    if yaw is None or pitch is None or roll is None:
        return ""
    parts = []
    if abs(yaw) >= minimum:
        parts.append(f"pans {'right' if yaw > 0 else 'left'} {abs(yaw):.1f} deg")
    if abs(pitch) >= minimum:
        parts.append(f"tilts {'up' if pitch > 0 else 'down'} {abs(pitch):.1f} deg")
    if abs(roll) >= minimum:
        parts.append(f"rolls {'clockwise' if roll > 0 else 'counter-clockwise'} {abs(roll):.1f} deg")
    return ", ".join(parts)
