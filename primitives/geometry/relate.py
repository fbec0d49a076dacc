"""Distances, angles and directions between things (part of ``geom``).

Directions are read in an observer's *gravity-aligned* frame: take the observer camera's forward axis
(+z of its pose), drop its vertical part (project it onto the ground plane, +Z up) and normalise it:
that is "forward". "Right" = forward x up (horizontal, to the observer's right), "up" = world +Z.
So "left/right" and "in front/behind" never depend on the camera's pitch or roll, and "above/below"
is always along gravity. "Behind X" means farther from the observer than X along forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from spatialclaw.primitives.geometry.camera import as_points, as_pose

__all__ = [
    "Direction",
    "angle_between",
    "closest_points",
    "direction",
    "distance",
    "format_metres",
    "observer_axes",
]


def format_metres(value: float) -> str:
    """A distance as text: centimetre precision below 1 m ("0.43 m"), decimetre precision above ("1.3 m")."""
    magnitude = abs(float(value))
    return f"{magnitude:.2f} m" if round(magnitude, 2) < 1.0 else f"{magnitude:.1f} m"


def _centroid(points: Any, name: str) -> np.ndarray:
    centroid: np.ndarray = as_points(points, name=name).mean(axis=0)
    return centroid


def closest_points(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, float]:
    """The closest pair between two point sets (KD-tree).

    Args:
        a: (N, 3) points in metres; b: (M, 3) points in metres, same frame.

    Returns:
        (point_in_a (3,), point_in_b (3,), distance in metres).
    """
    from scipy.spatial import cKDTree

    pa, pb = as_points(a, name="a"), as_points(b, name="b")
    small, large, swapped = (pa, pb, False) if len(pa) <= len(pb) else (pb, pa, True)
    dist, index = cKDTree(large).query(small, k=1)
    i = int(np.argmin(dist))
    p_small, p_large = small[i], large[int(index[i])]
    if swapped:
        return p_large, p_small, float(dist[i])
    return p_small, p_large, float(dist[i])


def distance(a: Any, b: Any, kind: Literal["centroid", "closest"] = "centroid") -> float:
    """Distance in metres between two point sets (or single (3,) points), same frame.

    ``kind="centroid"``: between the means of the sets (centre-to-centre).
    ``kind="closest"``: between the two closest points, one from each set (gap between surfaces;
    0 when they touch), found with a KD-tree.
    """
    if kind == "centroid":
        return float(np.linalg.norm(_centroid(a, "a") - _centroid(b, "b")))
    if kind == "closest":
        return closest_points(a, b)[2]
    raise ValueError(f"kind must be 'centroid' or 'closest', got {kind!r}")


def angle_between(u: Any, v: Any) -> float:
    """Angle in degrees, in [0, 180], between two non-zero vectors of the same length (e.g. (3,))."""
    u, v = np.asarray(u, dtype=np.float64).ravel(), np.asarray(v, dtype=np.float64).ravel()
    if u.shape != v.shape:
        raise ValueError(f"vectors must have the same shape, got {u.shape} and {v.shape}")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("angle_between got a zero-length vector; the angle is undefined")
    return float(np.degrees(np.arccos(np.clip(u @ v / (nu * nv), -1.0, 1.0))))


def observer_axes(observer_pose: Any, up: Any = (0.0, 0.0, 1.0)) -> np.ndarray:
    """(3, 3) rows = the observer's gravity-aligned (right, forward, up) unit axes in world coordinates.

    Forward is the camera's +z axis projected onto the plane perpendicular to ``up`` (its image-up
    direction, -y, when the camera looks straight down or up); right = forward x up.
    """
    pose = as_pose(observer_pose, name="observer_pose")
    up = np.asarray(up, dtype=np.float64)
    up = up / np.linalg.norm(up)
    forward = pose[:3, 2] - (pose[:3, 2] @ up) * up
    if np.linalg.norm(forward) < 1e-6:
        image_up = -pose[:3, 1]
        forward = image_up - (image_up @ up) * up
    forward /= np.linalg.norm(forward)
    return np.stack([np.cross(forward, up), forward, up])


@dataclass(frozen=True)
class Direction:
    """Where a target is relative to a reference, in an observer's gravity-aligned frame (metres).

    ``right_m`` > 0: right of the reference (< 0: left); ``forward_m`` > 0: behind it, i.e. farther from
    the observer (< 0: in front of it); ``up_m`` > 0: above it (< 0: below). Components are of the
    offset between the two positions compared (target minus reference). ``tolerance_m``: components smaller than this are not worded.
    """

    right_m: float
    forward_m: float
    up_m: float
    tolerance_m: float = 0.05

    @property
    def horizontal_m(self) -> float:
        """Distance on the ground plane, metres."""
        return float(np.hypot(self.right_m, self.forward_m))

    @property
    def distance_m(self) -> float:
        """Straight-line distance, metres."""
        return float(np.linalg.norm([self.right_m, self.forward_m, self.up_m]))

    def _parts(self) -> tuple[list[str], list[str]]:
        parts: list[str] = []
        level: list[str] = []
        for value, positive, negative, axis in (
            (self.right_m, "right of", "left of", "left-right position"),
            (self.forward_m, "behind", "in front of", "front-back position"),
            (self.up_m, "above", "below", "height"),
        ):
            if abs(value) >= self.tolerance_m:
                parts.append(f"{format_metres(value)} {positive if value > 0 else negative}")
            else:
                level.append(axis)
        return parts, level

    @property
    def words(self) -> str:
        """The offset as words, e.g. "1.3 m left of and 0.40 m behind" ("at the same place as" when every
        component is within the tolerance)."""
        parts, _ = self._parts()
        if not parts:
            return "at the same place as"
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    @property
    def note(self) -> str:
        """The axes within the tolerance, e.g. " (same height within 0.05 m)"; "" when there are none."""
        _, level = self._parts()
        if not level:
            return ""
        if len(level) == 3:
            return f" (within {format_metres(self.tolerance_m)} on every axis)"
        return f" (same {' and '.join(level)} within {format_metres(self.tolerance_m)})"

    def sentence(self, target: str = "target", reference: str = "reference") -> str:
        """E.g. "the chair is 1.3 m left of and 0.40 m behind the table (same height within 0.05 m)"."""
        return f"the {target} is {self.words} the {reference}{self.note}"

    def __repr__(self) -> str:
        return (
            f"Direction(right={self.right_m:+.3f} m, forward={self.forward_m:+.3f} m, up={self.up_m:+.3f} m: "
            f"{self.words}{self.note})"
        )


def direction(
    target: Any,
    reference: Any,
    observer_pose: Any,
    up: Any = (0.0, 0.0, 1.0),
    tolerance: float = 0.05,
) -> Direction:
    """Where ``target`` is relative to ``reference`` as seen by an observer.

    Args:
        target, reference: (N, 3) point sets or (3,) points in metres in a gravity-aligned world frame
            (+Z up); their centroids are compared.
        observer_pose: (4, 4) camera-to-world pose of the observer (e.g. ``rec.poses[k]``).
        up: the world's up direction (default +Z, the design world frame).
        tolerance: offsets smaller than this (metres) are left out of the wording.

    Returns:
        A ``Direction``: signed metres right/forward(=behind)/up in the observer's gravity-aligned frame
        (see the module docstring) and ``.words`` such as "1.3 m left of and 0.40 m behind"; ``.sentence(a, b)`` words it in full.
    """
    offset = _centroid(target, "target") - _centroid(reference, "reference")
    right, forward, upward = observer_axes(observer_pose, up) @ offset
    return Direction(float(right), float(forward), float(upward), tolerance_m=float(tolerance))
