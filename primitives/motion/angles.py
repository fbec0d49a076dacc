"""Angle and direction conventions of the motion readouts: yaw / pitch / roll of a relative rotation, and
plain words for a direction or a turn.

Rotation of the later camera in the EARLIER camera's frame (OpenCV axes: x right, y down, z forward), as
R_ab = Ry(yaw) Rx(pitch) Rz(roll): yaw > 0 = turns RIGHT, pitch > 0 = tilts UP, roll > 0 = rolls clockwise
as the camera sees it (the image content turns counter-clockwise). A pan is yaw, a tilt is pitch.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["direction_words", "turn_words", "yaw_pitch_roll"]

_AXIS_WORDS = (("right", "left"), ("down", "up"), ("forward", "back"))


def yaw_pitch_roll(R_ab: np.ndarray) -> tuple[float, float, float]:
    """(yaw, pitch, roll) degrees of orientation ``R_ab`` (camera b in camera a's frame, OpenCV axes) with
    R_ab = Ry(yaw) Rx(pitch) Rz(roll): yaw > 0 turns right, pitch > 0 tilts up, roll > 0 clockwise."""
    yaw = math.degrees(math.atan2(R_ab[0, 2], R_ab[2, 2]))
    pitch = math.degrees(math.asin(float(np.clip(-R_ab[1, 2], -1.0, 1.0))))
    roll = math.degrees(math.atan2(R_ab[1, 0], R_ab[1, 1]))
    return yaw, pitch, roll


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
