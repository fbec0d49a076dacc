"""The camera pitch behind the floor points of one photo when it is uncertain or ambiguous (part of ``geom``'s
floor geometry): the candidate pitches of a ``CameraTilt`` (its estimate and the rival pitch the image also
supports) as a mixture weighted by their evidence, what each candidate says about one floor pixel, and the
sweep of a photo's floor points over every plausible pitch.

A pitch is plausible for a set of floor points when its weight under the evidence is not negligible (within
2.5 sigma of a candidate) and it keeps every one of the points below the horizon: a pixel that shows the
floor rules out any pitch that would put it in the sky. Directions between floor points of one photo do not
need the camera's height (it only scales the layout), so the sweep over the pitch tells whether an answer
read from them holds for every tilt the image allows.

Units: pitch in degrees (> 0 tilts up, < 0 looks down, as everywhere), positions in metres in the world of
``floor`` (+Z up, the floor at z = -camera_height_m), pixels (x, y).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.floor_camera import FloorCamera, pitch_roll_of_pose
from spatialclaw.primitives.geometry.tilt import TILT_SIGMA_DEG

__all__ = ["PitchReading", "PitchSweep", "floor_sweep", "intersect", "pitch_sweep", "robust_sigma", "tilt_modes"]

SWEEP_STEP_DEG = 0.5
"""Spacing of the pitches a sweep tries, degrees."""
SWEEP_SIGMAS = 2.5
"""A sweep covers each candidate pitch +- this many of its sigmas."""


def intersect(pixels: np.ndarray, K: np.ndarray, R: np.ndarray, height: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S, 3) floor points relative to the camera centre and (S,) ray lengths for per-sample pixels (S, 2),
    intrinsics (S, 3, 3), rotations (S, 3, 3) and heights (S,); NaN where the ray misses the floor."""
    rays_cam = np.linalg.solve(K, np.concatenate([pixels, np.ones((len(pixels), 1))], axis=1)[..., None])[..., 0]
    rays = np.einsum("sij,sj->si", R, rays_cam)
    down = rays[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(down < -1e-9, -height / down, np.nan)
    points = rays * t[:, None]
    return points, np.linalg.norm(points, axis=1)


def robust_sigma(values: np.ndarray) -> float:
    """Half the central 68% interval of ``values`` (a standard deviation that ignores far tails)."""
    low, high = np.percentile(values, [15.87, 84.13])
    return float((high - low) / 2.0)


def tilt_modes(tilt: Any, pitch_sigma_deg: float | None) -> tuple[float, tuple[tuple[float, float, float], ...]]:
    """(sigma of each candidate, ((offset from the tilt's pitch, sigma, weight), ...)) degrees for a
    ``CameraTilt`` with a rival pitch: its estimate and the rival, each with the spread of one reading (the
    tilt's sigma less the half gap it was widened by, at least ``TILT_SIGMA_DEG``, or ``pitch_sigma_deg``
    when given), weighted 1 : ``rival_support``; ``(sigma, ())`` when it has no rival."""
    rival = getattr(tilt, "rival_pitch_deg", None)
    if rival is None:
        return float(tilt.pitch_sigma_deg if pitch_sigma_deg is None else pitch_sigma_deg), ()
    gap = float(rival) - float(tilt.pitch_deg)
    sigma = (
        max(TILT_SIGMA_DEG, float(tilt.pitch_sigma_deg) - abs(gap) / 2.0)
        if pitch_sigma_deg is None
        else float(pitch_sigma_deg)
    )
    support = float(np.clip(getattr(tilt, "rival_support", 1.0), 0.0, 1.0))
    total = 1.0 + support
    return sigma, ((0.0, sigma, 1.0 / total), (gap, sigma, support / total))


@dataclass(frozen=True)
class PitchReading:
    """What one candidate camera pitch says about a floor pixel.

    Attributes:
        pitch_deg: the candidate pitch, degrees (> 0 up). label: what it is ("the estimate", "the rival").
        weight: its share (0..1) given the image's evidence and that this pixel shows the floor.
        distance_m: the pixel's distance from the camera along its ray at that pitch, metres (NaN: that
            pitch puts the pixel above the horizon, so it is ruled out for this point).
    """

    pitch_deg: float
    label: str
    weight: float
    distance_m: float

    @property
    def text(self) -> str:
        """E.g. "at pitch +11.0 deg (the rival) above the horizon: ruled out"."""
        at = f"at pitch {self.pitch_deg:+.1f} deg ({self.label})"
        if not np.isfinite(self.distance_m):
            return f"{at} above the horizon: ruled out"
        return f"{at} {self.distance_m:.1f} m away (weight {self.weight:.2f})"


def mode_readings(
    camera: FloorCamera, xy: np.ndarray, hit: np.ndarray, which: np.ndarray, K: np.ndarray
) -> tuple[PitchReading, ...]:
    """One ``PitchReading`` per candidate pitch of ``camera`` for pixel ``xy`` (2,), from the uncertainty
    draws' hits (S,) and modes (S,): a candidate's weight is its prior times the share of its draws that
    keep the pixel on the floor; () when the camera has a single candidate."""
    if len(camera.pitch_modes) < 2:
        return ()
    base = pitch_roll_of_pose(camera.pose)[0]
    raw = []
    for k, (offset, _, prior) in enumerate(camera.pitch_modes):
        drawn = which == k
        share = float(hit[drawn].mean()) if drawn.any() else 0.0
        R = camera.rotation_at(offset)
        distance = intersect(xy[None], K[None], R[None], np.array([camera.camera_height_m]))[1][0]
        raw.append((base + offset, "the estimate" if k == 0 else "the rival", prior * share, float(distance)))
    total = sum(r[2] for r in raw) or 1.0
    return tuple(PitchReading(p, label, w / total, d) for p, label, w, d in raw)


def floor_sweep(points: Sequence[Any], pitches_deg: Any) -> np.ndarray:
    """(P, N, 3) world positions (metres) of N ``FloorPoint``s of one photo (one camera and assumptions) if
    the camera's pitch were each of ``pitches_deg`` (P,) (absolute, degrees, > 0 up), its height, roll and
    field of view as assumed; NaN where that pitch puts a point above the horizon."""
    points = list(points)
    camera = _shared_camera(points)
    base = pitch_roll_of_pose(camera.pose)[0]
    pitches = np.atleast_1d(np.asarray(pitches_deg, dtype=np.float64))
    pixels = np.array([p.pixel for p in points], dtype=np.float64)
    K = np.repeat(camera.nominal_K[None], len(points), axis=0)
    heights = np.full(len(points), camera.camera_height_m)
    out = np.empty((len(pitches), len(points), 3))
    for i, pitch in enumerate(pitches):
        R = np.repeat(camera.rotation_at(float(pitch) - base)[None], len(points), axis=0)
        out[i] = intersect(pixels, K, R, heights)[0] + camera.pose[:3, 3]
    return out


@dataclass(frozen=True)
class PitchSweep:
    """Floor points of one photo at every plausible camera pitch (see the module docstring).

    Attributes:
        pitches_deg: (P,) ascending pitches, degrees (> 0 up), each keeping every point on the floor.
        weights: (P,) their weights under the pitch evidence, summing to 1.
        positions: (P, N, 3) the points' world positions at each pitch, metres.
        candidates: ((pitch_deg, label), ...) the tilt's estimate and its rival ("the estimate", "the rival").
        ruled_out: the labels of candidates whose pitch puts a point above the horizon.
    """

    pitches_deg: np.ndarray
    weights: np.ndarray
    positions: np.ndarray
    candidates: tuple[tuple[float, str], ...]
    ruled_out: tuple[str, ...]

    @property
    def span(self) -> str:
        """The plausible pitches as words, e.g. "-13.5 to +7.0 deg"."""
        return f"{self.pitches_deg[0]:+.1f} to {self.pitches_deg[-1]:+.1f} deg"


def pitch_sweep(points: Sequence[Any]) -> PitchSweep | None:
    """The ``PitchSweep`` of ``FloorPoint``s of one photo over the pitches their camera's evidence allows
    (each candidate +- 2.5 sigma, every 0.5 degree); None when the pitch is known exactly or no swept
    pitch keeps every point on the floor."""
    points = list(points)
    camera = _shared_camera(points)
    base = pitch_roll_of_pose(camera.pose)[0]
    modes = camera.modes
    if all(sigma <= 0 for _, sigma, _ in modes) and len(modes) == 1:
        return None
    low = min(base + off - SWEEP_SIGMAS * sigma for off, sigma, _ in modes)
    high = max(base + off + SWEEP_SIGMAS * sigma for off, sigma, _ in modes)
    grid = np.arange(low, high + 1e-9, SWEEP_STEP_DEG)
    grid = np.unique(np.concatenate([grid, [base + off for off, _, _ in modes]]))
    density = np.zeros(len(grid))
    for off, sigma, weight in modes:
        if sigma > 0:
            density += weight * np.exp(-0.5 * ((grid - base - off) / sigma) ** 2) / sigma
    positions = floor_sweep(points, grid)
    ok = np.isfinite(positions).all(axis=(1, 2)) & (density > 0)
    if not ok.any():
        return None
    labels = ("the estimate", "the rival")
    candidates = tuple((base + off, labels[min(k, 1)]) for k, (off, _, _) in enumerate(modes))
    ruled = tuple(label for (pitch, label) in candidates if not np.isfinite(floor_sweep(points, [pitch])).all())
    return PitchSweep(grid[ok], density[ok] / density[ok].sum(), positions[ok], candidates, ruled)


def _shared_camera(points: Sequence[Any]) -> FloorCamera:
    if not points or not all(getattr(p, "camera", None) is not None for p in points):
        raise ValueError("a pitch sweep needs FloorPoints from geom.floor_point")
    camera: FloorCamera = points[0].camera
    if not all(camera.same_as(p.camera) for p in points[1:]):
        raise ValueError("these floor points were located with different cameras or assumptions; sweep them apart")
    return camera
