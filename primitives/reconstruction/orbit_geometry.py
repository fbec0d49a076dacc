"""Geometry of a camera circling a point, for ``orbit``: angles between directions, the point the optical axes
pass closest to, the orbit's axis, and which way a camera travelled and turned in its own frame (OpenCV axes:
x right, y down, z forward; poses camera-to-world; degrees)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["angle", "fixation", "orbit_axis", "rotate", "signed_angle", "travel", "turn"]

LATERAL_SHARE = 0.3  # a step whose sideways share of the displacement is below this is not called left/right


def angle(a: np.ndarray, b: np.ndarray) -> float:
    return math.degrees(math.acos(float(np.clip(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)), -1.0, 1.0))))


def signed_angle(a: np.ndarray, b: np.ndarray, axis: np.ndarray) -> float:
    return math.degrees(math.atan2(float(np.cross(a, b) @ axis), float(a @ b)))


def fixation(centres: np.ndarray, directions: np.ndarray) -> np.ndarray | None:
    """The point closest (least squares) to every optical axis, or None when the axes are nearly parallel
    or the point lies behind the cameras."""
    A = np.zeros((3, 3))
    b = np.zeros(3)
    for c, d in zip(centres, directions, strict=True):
        P = np.eye(3) - np.outer(d, d)
        A += P
        b += P @ c
    eigen = np.linalg.eigvalsh(A)
    if eigen[0] < 1e-3 * len(centres):  # axes within a few degrees of parallel: no point they all pass near
        return None
    point = np.linalg.solve(A, b)
    ahead = [(point - c) @ d > 0 for c, d in zip(centres, directions, strict=True)]
    return point if sum(ahead) > len(ahead) / 2 else None


def orbit_axis(centres: np.ndarray, point: np.ndarray, ups: np.ndarray) -> np.ndarray:
    """Normal of the plane of the camera centres (3+ spread out), else of the first and last centres' rays
    from ``point``; oriented along the cameras' mean up direction."""
    axis = np.zeros(3)
    if len(centres) >= 3:
        _, s, Vt = np.linalg.svd(centres - centres.mean(axis=0))
        if s[1] > 0.2 * s[0]:  # the centres span a plane, not a line
            axis = Vt[2]
    if not np.any(axis):
        axis = np.cross(centres[0] - point, centres[-1] - point)
    if np.linalg.norm(axis) < 1e-12:
        axis = ups.mean(axis=0)
    axis = axis / np.linalg.norm(axis)
    return axis if axis @ ups.mean(axis=0) >= 0 else -axis


def travel(pose_a: np.ndarray, pose_b: np.ndarray, scale: float) -> str:
    step = pose_b[:3, 3] - pose_a[:3, 3]
    length = float(np.linalg.norm(step))
    if length <= 1e-6 * max(scale, 1e-12):
        return "none"
    parts = {
        "right": step @ pose_a[:3, 0],
        "down": step @ pose_a[:3, 1],
        "forward": step @ pose_a[:3, 2],
    }
    if abs(parts["right"]) >= LATERAL_SHARE * length:
        return "right" if parts["right"] > 0 else "left"
    name, value = max(parts.items(), key=lambda kv: abs(kv[1]))
    opposite = {"right": "left", "down": "up", "forward": "back"}
    return name if value > 0 else opposite[name]


def turn(pose_a: np.ndarray, pose_b: np.ndarray) -> str:
    sideways = float(pose_b[:3, 2] @ pose_a[:3, 0])  # the new viewing direction along camera a's x axis
    return "none" if abs(sideways) < 1e-4 else ("right" if sideways > 0 else "left")


def rotate(vector: np.ndarray, axis: np.ndarray, degrees: float) -> np.ndarray:
    """``vector`` turned by ``degrees`` about the unit ``axis`` (right-handed; Rodrigues)."""
    a = math.radians(degrees)
    turned: np.ndarray = vector * math.cos(a) + np.cross(axis, vector) * math.sin(a)
    return turned + axis * float(axis @ vector) * (1 - math.cos(a))
