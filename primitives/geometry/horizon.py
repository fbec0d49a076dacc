"""The camera's "up" from vanishing points: every reading they allow (the horizon through two or more
horizontal ones, a vertical one, one horizontal one and a floor-wall boundary orthogonal to it), the
best of them, and its honest uncertainty (``horizon_tilt``, the fallback of ``geom.camera_tilt`` when
vertical edges are too few or disagree).

``up`` is the world's up direction in the camera frame (OpenCV: x right, y down, z forward); pitch =
asin(up_z) (> 0 tilts up) and roll = atan2(-up_x, -up_y) (> 0 clockwise, right side lower), degrees, as
in ``tilt``. The horizon is the image line of directions orthogonal to ``up``: for a camera without roll
it is the row cy - f tan(pitch), so pitch = atan((cy - y_horizon) / f).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatialclaw.primitives.geometry.vanishing import (
    TOLERANCE_PX,
    LongLine,
    VanishingPoint,
    long_lines,
    segment_error_px,
    vanishing_points,
)

__all__ = ["HorizonTilt", "UpReading", "horizon_tilt", "pitch_roll_of", "up_readings"]

_ROLE_MIN_DEG, _ROLE_MAX_DEG = 1.0, 3.0  # a vanishing point within twice its sigma (1..3 deg) takes a role
_PITCH_RANGE = (-75.0, 30.0)  # as the vertical-edge search: steeper upward views are rare
_ROLL_LIMIT = 25.0
_HORIZON_SIGMA_DEG = 5.0
_BOUNDARY_SIGMA_DEG = 7.0
_SIGMA_PER_DEG = 0.1  # the sigma's floor grows by this per degree of tilt (the errors on real views did)
_RIVAL_SHARE, _RIVAL_GAP_DEG = 0.7, 5.0


@dataclass(frozen=True)
class UpReading:
    """One reading of the world's up (camera frame) from the vanishing points.

    Attributes: up (3,) unit, pointing up (up_y < 0); pitch_deg / roll_deg; horizontal / along: indices
    of the vanishing points on its horizon / at its vertical vanishing point; boundary: the floor-wall
    line it assumes horizontal and orthogonal to vanishing point ``boundary_point``, or None (and -1);
    vertical_support: length (px) of upright segments through its vertical vanishing point; score:
    the support of its horizontal vanishing points + vertical_support (+ the boundary's length), px."""

    up: np.ndarray
    pitch_deg: float
    roll_deg: float
    horizontal: tuple[int, ...]
    along: tuple[int, ...]
    boundary: LongLine | None
    boundary_point: int
    vertical_support: float
    score: float

    @property
    def usable(self) -> bool:
        """Enough to tell a tilt: two horizontal vanishing points, or one and a vertical one or a boundary."""
        return len(self.horizontal) >= 2 or (len(self.horizontal) == 1 and bool(self.along or self.boundary))


@dataclass(frozen=True)
class HorizonTilt:
    """The tilt read from the horizon (or a floor-wall boundary): pitch_deg / roll_deg; pitch_sigma_deg
    (degrees: the spread from the vanishing points' own uncertainty, a floor measured on real photos, and
    any rival reading); source (what it was read from); segments: how many edges carry it; members (N,)
    bool over the segments given: those on its horizon; rival_deg: the pitch of a rival reading nearly as
    well supported, or None."""

    pitch_deg: float
    roll_deg: float
    pitch_sigma_deg: float
    source: str
    segments: int
    members: np.ndarray = field(repr=False)
    rival_deg: float | None


def pitch_roll_of(up: np.ndarray) -> tuple[float, float]:
    """(pitch, roll) in degrees of a camera whose world-up direction in its own frame is ``up`` (3,)."""
    up = up / np.linalg.norm(up)
    return float(np.degrees(np.arcsin(np.clip(up[2], -1.0, 1.0)))), float(np.degrees(np.arctan2(-up[0], -up[1])))


def _oriented(up: np.ndarray) -> np.ndarray:
    up = up / np.linalg.norm(up)
    return up if up[1] < 0 else -up


def _tolerance(point: VanishingPoint) -> float:
    return float(np.radians(np.clip(2.0 * point.sigma_deg, _ROLE_MIN_DEG, _ROLE_MAX_DEG)))


def _roles(points: list[VanishingPoint], up: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Indices of the vanishing points on the horizon of ``up`` and at its vertical vanishing point."""
    horizontal = tuple(i for i, p in enumerate(points) if abs(p.direction @ up) < np.sin(_tolerance(p)))
    along = tuple(i for i, p in enumerate(points) if abs(p.direction @ up) > np.cos(_tolerance(p)))
    return horizontal, along


def _boundary_constraint(point: VanishingPoint, line: LongLine) -> np.ndarray:
    """The direction ``up`` is orthogonal to when ``line`` is horizontal and orthogonal to ``point``."""
    constraint: np.ndarray = np.cross(point.direction, line.normal)
    return constraint / float(np.linalg.norm(constraint))


def _refit(directions: list[tuple[float, np.ndarray, bool]], constraint: tuple[float, np.ndarray] | None) -> np.ndarray:
    """(..., 3) up most orthogonal to the weighted horizontal directions, most along the vertical ones
    (weight, (..., 3) direction, is_vertical) and orthogonal to the weighted ``constraint``."""
    scatter = 0.0
    for weight, d, vertical in directions:
        outer = np.einsum("...i,...j->...ij", d, d)
        scatter = scatter + weight * ((np.eye(3) - outer) if vertical else outer)
    if constraint is not None:
        scatter = scatter + constraint[0] * np.einsum("...i,...j->...ij", constraint[1], constraint[1])
    refit: np.ndarray = np.linalg.eigh(scatter)[1][..., 0]
    return refit


def _consensus(
    points: list[VanishingPoint], up: np.ndarray, boundary: LongLine | None, boundary_point: int
) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    """``up`` refitted three times to every vanishing point that takes a role under it, weighted by
    support (and kept orthogonal to a boundary's constraint); with the final roles."""
    heaviest = max((p.support for p in points), default=1.0)
    for _ in range(3):
        horizontal, along = _roles(points, up)
        constraint = None
        if boundary is not None and boundary_point in horizontal:
            constraint = (heaviest, _boundary_constraint(points[boundary_point], boundary))
        if len(horizontal) + len(along) + (constraint is not None) < 2:
            break
        terms = [(points[i].support, points[i].direction, False) for i in horizontal]
        terms += [(points[i].support, points[i].direction, True) for i in along]
        refit = _refit(terms, constraint)
        up = _oriented(refit if refit @ up >= 0 else -refit)
    horizontal, along = _roles(points, up)
    return up, horizontal, along


def _vertical_support(up: np.ndarray, segments: np.ndarray, lengths: np.ndarray, K: np.ndarray, width: int) -> float:
    """Length (px) of the segments upright in the image that point at the vertical vanishing point of ``up``."""
    error = segment_error_px(segments, K @ up)
    tolerance = TOLERANCE_PX * width / 224.0
    dx, dy = segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1]
    upright = np.degrees(np.arctan2(np.abs(dx), np.abs(dy))) < 35.0
    return float((lengths * upright * np.clip(1.0 - (error / tolerance) ** 2, 0.0, None)).sum())


def up_readings(
    points: list[VanishingPoint], segments: np.ndarray, lengths: np.ndarray, K: np.ndarray, width: int
) -> list[UpReading]:
    """Every reading of the world's up the vanishing points allow, best score first: each pair at least
    30 degrees apart as horizontal (the horizon through them), each one as vertical, and each one with
    each of the three longest lines running across the image (within 30 degrees of its rows, a quarter
    of its width long, segments merged) as a floor-wall boundary orthogonal to it (a Manhattan room).
    Each is refitted to all vanishing points that agree with it; readings outside pitch -75..30 or roll
    beyond 25 degrees are dropped."""
    seeds: list[tuple[np.ndarray, LongLine | None, int]] = []
    for a, first in enumerate(points):
        seeds.append((_oriented(first.direction), None, -1))
        for second in points[a + 1 :]:
            up = np.cross(first.direction, second.direction)
            if np.linalg.norm(up) > np.sin(np.radians(30.0)):
                seeds.append((_oriented(up), None, -1))
    taken = np.zeros(len(segments), bool)
    for point in points:
        taken |= point.members
    dx, dy = segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1]
    across = (~taken) & (np.degrees(np.arctan2(np.abs(dy), np.abs(dx))) < 30.0)
    lines = long_lines(segments[across], lengths[across], K, width, 0.25 * width)[:3]
    for a, point in enumerate(points):
        for line in lines:
            up = line.normal - (line.normal @ point.direction) * point.direction
            if np.linalg.norm(up) > 0.5:
                seeds.append((_oriented(up), line, a))
    out = []
    for up, boundary, boundary_point in seeds:
        up, horizontal, along = _consensus(points, up, boundary, boundary_point)
        pitch, roll = pitch_roll_of(up)
        if not (_PITCH_RANGE[0] <= pitch <= _PITCH_RANGE[1] and abs(roll) <= _ROLL_LIMIT):
            continue
        if boundary is not None and (horizontal != (boundary_point,) or along):
            boundary, boundary_point = None, -1  # not needed, or no longer orthogonal to a horizontal one
        vertical = _vertical_support(up, segments, lengths, K, width)
        score = sum(points[i].support for i in horizontal) + vertical + (boundary.length if boundary else 0.0)
        out.append(UpReading(up, pitch, roll, horizontal, along, boundary, boundary_point, vertical, float(score)))
    out.sort(key=lambda r: -r.score)
    return out


def _jitter(direction: np.ndarray, sigma_deg: float, rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, 3) unit vectors scattered around ``direction`` by ``sigma_deg`` (isotropic, degrees)."""
    basis = np.linalg.svd(direction[None])[2][1:]  # two unit vectors orthogonal to it
    out = direction[None] + (rng.standard_normal((count, 2)) * np.radians(sigma_deg)) @ basis
    jittered: np.ndarray = out / np.linalg.norm(out, axis=1, keepdims=True)
    return jittered


def _propagated_sigma(
    reading: UpReading, points: list[VanishingPoint], width: int, seed: int, count: int = 200
) -> float:
    """Pitch spread (degrees) of the reading refitted with its roles kept when each of its vanishing
    points (and a boundary's line, by 2 px at 224 px wide over its length) moves by its own uncertainty."""
    rng = np.random.default_rng(seed)
    terms = [
        (points[i].support, _jitter(points[i].direction, points[i].sigma_deg, rng, count), i in reading.along)
        for i in reading.horizontal + reading.along
    ]
    constraint = None
    if reading.boundary is not None:
        line_sigma = float(np.degrees(2.0 * width / 224.0 / max(reading.boundary.length, 1.0)))
        normal = _jitter(reading.boundary.normal, line_sigma, rng, count)
        first = terms[reading.horizontal.index(reading.boundary_point)][1]
        across = np.cross(first, normal)
        constraint = (max(p.support for p in points), across / np.linalg.norm(across, axis=1, keepdims=True))
    ups = _refit(terms, constraint)
    ups *= np.sign(ups @ reading.up)[:, None]
    return float(np.std(np.degrees(np.arcsin(np.clip(ups[:, 2], -1.0, 1.0)))))


def horizon_tilt(
    segments: np.ndarray, lengths: np.ndarray, K: np.ndarray, width: int, seed: int = 0
) -> tuple[HorizonTilt | None, str]:
    """The camera's tilt from its vanishing points: the best-scoring usable reading (a horizon through
    two or more horizontal vanishing points, one with a vertical vanishing point, or one and a floor-wall
    boundary); (None, why) when none is usable. The sigma is the spread the vanishing points' own
    uncertainty gives, at least 5 degrees (7 for a boundary) plus 0.1 per degree of tilt (what real photos
    showed), widened to cover any other reading 5 or more degrees away with 70% of the score."""
    points = vanishing_points(segments, lengths, K, width, seed=seed)
    readings = up_readings(points, segments, lengths, K, width)
    usable = [r for r in readings if r.usable]
    if not usable:
        return None, f"no horizon ({len(points)} vanishing points, no two of them horizontal, no floor-wall boundary)"
    best = usable[0]
    floor = _BOUNDARY_SIGMA_DEG if len(best.horizontal) < 2 and not best.along else _HORIZON_SIGMA_DEG
    floor += _SIGMA_PER_DEG * abs(best.pitch_deg)  # the steeper, the farther the horizon lies outside the image
    sigma = max(_propagated_sigma(best, points, width, seed), floor)
    rivals = [
        r.pitch_deg
        for r in readings
        if abs(r.pitch_deg - best.pitch_deg) >= _RIVAL_GAP_DEG and r.score >= _RIVAL_SHARE * best.score
    ]
    rival = max(rivals, key=lambda p: abs(p - best.pitch_deg)) if rivals else None
    if rival is not None:
        sigma += abs(rival - best.pitch_deg) / 2.0
    members = np.zeros(len(segments), bool)
    for i in best.horizontal:
        members |= points[i].members
    if len(best.horizontal) >= 2:
        source = f"horizon through {len(best.horizontal)} vanishing points"
    elif best.along:
        source = "vertical and horizontal vanishing points"
    else:
        source = "floor-wall boundary and 1 vanishing point"
    count = sum(points[i].count for i in best.horizontal + best.along)
    return HorizonTilt(best.pitch_deg, best.roll_deg, float(sigma), source, count, members, rival), ""
