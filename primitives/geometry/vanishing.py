"""Vanishing points of an image's straight edges (sequential RANSAC over line segments) and its long
straight lines (collinear segments merged), the evidence behind the tilt fallbacks in ``horizon``.

Segments are (N, 4) arrays of x0, y0, x1, y1 pixels ((x, y), y down). A vanishing point is kept as a unit
direction in the camera frame (OpenCV: x right, y down, z forward; sign arbitrary), so points at infinity
need no special case; a line is kept as the unit normal of the plane through the camera centre and it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "LongLine",
    "VanishingPoint",
    "long_lines",
    "plane_normals",
    "refine_direction",
    "segment_error_px",
    "vanishing_points",
]

TOLERANCE_PX = 1.0
"""Endpoint distance (pixels at 224 px wide) from the line through a vanishing point that still counts."""
_MIN_COUNT = 5  # segments a vanishing point needs
_PAIRS = 1200  # RANSAC hypotheses per vanishing point
_MAX_SIGMA_DEG = 6.0  # a family whose meeting point is known worse than this is not a vanishing point


@dataclass(frozen=True)
class VanishingPoint:
    """A family of image segments that meet in one point: ``direction`` (3,) unit vector in the camera
    frame (sign arbitrary), ``support`` (their total length, pixels), ``count``, ``members`` (N,) bool over
    the segments, ``sigma_deg`` (the direction's angular uncertainty from the fit, degrees)."""

    direction: np.ndarray
    support: float
    count: int
    members: np.ndarray
    sigma_deg: float


def plane_normals(segments: np.ndarray, K: np.ndarray) -> np.ndarray:
    """(N, 3) unit normals of the planes through the camera centre and each segment."""
    ones = np.ones((len(segments), 1))
    inverse = np.linalg.inv(K)
    a = np.hstack([segments[:, :2], ones]) @ inverse.T
    b = np.hstack([segments[:, 2:], ones]) @ inverse.T
    normals = np.cross(a, b)
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    return normals


def segment_error_px(segments: np.ndarray, point: np.ndarray) -> np.ndarray:
    """(..., N) distance (pixels) of each segment's endpoints from the line through its midpoint and the
    homogeneous image point(s) ``point`` (3,) or (M, 3): 0 when the segment points exactly at it."""
    mid = (segments[:, :2] + segments[:, 2:]) / 2.0
    half = (segments[:, 2:] - segments[:, :2]) / 2.0
    point = np.asarray(point, dtype=np.float64)
    towards = point[..., None, :2] - mid * point[..., None, 2:3]  # from the midpoint to the point (any sign)
    norm = np.maximum(np.linalg.norm(towards, axis=-1), 1e-12)
    cross = np.abs(half[:, 0] * towards[..., 1] - half[:, 1] * towards[..., 0])
    error: np.ndarray = cross / norm
    return error


def refine_direction(normals: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float]:
    """The direction most orthogonal to the weighted normals, and its angular sigma (degrees)."""
    scatter = (normals * weights[:, None]).T @ normals
    values, vectors = np.linalg.eigh(scatter)
    residual = max(values[0], 0.0) / max(weights.sum(), 1e-12)  # mean squared sine of the misfit
    # the direction's variance along its two free axes: residual spread over the normals' spread there
    sigma = np.sqrt(residual * weights.sum() / max(values[1], 1e-12) / max(len(normals) - 2, 1))
    return vectors[:, 0], float(np.degrees(np.arcsin(min(1.0, sigma))))


def vanishing_points(
    segments: np.ndarray, lengths: np.ndarray, K: np.ndarray, width: int, *, limit: int = 5, seed: int = 0
) -> list[VanishingPoint]:
    """Up to ``limit`` vanishing points, strongest first, by sequential RANSAC: a pair of segments (drawn
    by length) proposes their intersection; the segments whose endpoints lie within about 1 px (at 224 px
    wide) of the line from their midpoint to it support it, weighted by length; the winner is refined by
    least squares over its members, which then leave the pool. Each needs 5 segments and a direction
    known to 6 degrees (pieces of one broken line "meet" anywhere along it)."""
    if len(segments) < _MIN_COUNT:
        return []
    rng = np.random.default_rng(seed)
    normals = plane_normals(segments, K)
    tolerance = TOLERANCE_PX * width / 224.0
    free = np.ones(len(segments), bool)
    found: list[VanishingPoint] = []
    for _ in range(limit):
        pool = np.flatnonzero(free)
        if len(pool) < _MIN_COUNT:
            break
        p = lengths[pool] / lengths[pool].sum()
        pairs = rng.choice(pool, size=(_PAIRS, 2), p=p)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        directions = np.cross(normals[pairs[:, 0]], normals[pairs[:, 1]])
        ok = np.linalg.norm(directions, axis=1) > 1e-9
        directions = directions[ok] / np.linalg.norm(directions[ok], axis=1, keepdims=True)
        if not len(directions):
            break
        error = segment_error_px(segments[pool], directions @ K.T)
        weight = lengths[pool] * np.clip(1.0 - (error / tolerance) ** 2, 0.0, None)
        best = directions[int(np.argmax(weight.sum(axis=1)))]
        members = np.zeros(len(segments), bool)
        for _ in range(3):
            members = free & (segment_error_px(segments, K @ best) < tolerance)
            if members.sum() < 2:
                break
            refined, _ = refine_direction(normals[members], lengths[members])
            best = refined if refined @ best >= 0 else -refined
        members = free & (segment_error_px(segments, K @ best) < tolerance)
        if members.sum() < _MIN_COUNT:
            break
        _, sigma = refine_direction(normals[members], lengths[members])
        if sigma <= _MAX_SIGMA_DEG:  # else its segments lie on one line (a line broken in pieces), no point
            found.append(VanishingPoint(best, float(lengths[members].sum()), int(members.sum()), members, sigma))
        free &= ~members
    return found


@dataclass(frozen=True)
class LongLine:
    """A long straight line of the image made of collinear segments: ``normal`` (3,) unit normal of the
    plane through the camera centre and the line (camera frame), ``length`` (pixels, its segments' sum)."""

    normal: np.ndarray
    length: float


def long_lines(
    segments: np.ndarray, lengths: np.ndarray, K: np.ndarray, width: int, min_length: float
) -> list[LongLine]:
    """The image's long straight lines, longest first: segments whose endpoints lie within 1.5 px (at
    224 px wide) of a longer one's line are merged with it (a floor-wall line broken by what stands on
    it), refitted by total least squares through all their endpoints; lines under ``min_length`` px
    are dropped."""
    tolerance = 1.5 * width / 224.0
    free = np.ones(len(segments), bool)
    out = []
    for seed in np.argsort(-lengths):
        if not free[seed]:
            continue
        members = np.zeros(len(segments), bool)
        members[seed] = True
        for _ in range(2):
            ends = np.vstack([segments[members, :2], segments[members, 2:]])
            centre = ends.mean(axis=0)
            direction = np.linalg.svd(ends - centre)[2][0]
            normal = np.array([-direction[1], direction[0]])
            distance = np.maximum(
                np.abs((segments[:, :2] - centre) @ normal), np.abs((segments[:, 2:] - centre) @ normal)
            )
            members = free & (distance <= tolerance)
            members[seed] = True
        free &= ~members
        if lengths[members].sum() >= min_length:
            line = np.array([normal[0], normal[1], -normal @ centre])  # a x + b y + c = 0, pixels
            plane = K.T @ line
            out.append(LongLine(plane / np.linalg.norm(plane), float(lengths[members].sum())))
    return out
