"""Solving a floor plan from views that share landmarks: each view's heading and ground position (part of ``scene``).

Everything is on the ground plane of the design world (metres, +Z up, +Y the first view's forward, +X its
right). A view's **heading** is the compass-style angle of its viewing direction on the ground, degrees
clockwise seen from above from world +Y (0 = +Y, 90 = +X). A landmark's **bearing** in a view is the
horizontal angle from the view's forward to the landmark, > 0 to the right: ``atan((x - cx) / f)`` for a
level camera, ``x`` the landmark's pixel column, ``cx`` and ``f`` from the view's intrinsics (pixels).

Unknowns: every view's heading and (x, y) position except the anchor view's (fixed: it defines the world)
and every landmark's (x, y). Observations: each landmark's bearing in each view that names it (angular
residual weighted by the pixel sigma over the focal length) and, where known or guessed, its distance from
that view (range residual weighted by the distance sigma; horizontal distance = distance x cos(elevation)).
Two views need distances (measured, or a stated guess) to fix their relative position: bearings alone do
not constrain it. The fit is weighted least squares; the covariance ``(J^T J)^-1`` at the solution gives
each heading's, position's and landmark's uncertainty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["LayoutSolution", "Sighting", "ViewSpec", "solve_layout", "wrap_deg"]


def wrap_deg(angle_deg: np.ndarray | float) -> np.ndarray:
    """Angles wrapped to (-180, 180] degrees."""
    a = np.asarray(angle_deg, dtype=np.float64)
    return -((-a + 180.0) % 360.0 - 180.0)


@dataclass(frozen=True)
class ViewSpec:
    """One view to place. frame: absolute frame index. K: (3, 3) intrinsics, pixels.
    heading_deg: known heading (degrees clockwise from world +Y) or None (solved).
    position: known (x, y) ground position in metres or None (solved). assumed: what was assumed for K."""

    frame: int
    K: np.ndarray = field(repr=False)
    heading_deg: float | None = None
    position: tuple[float, float] | None = None
    assumed: str = ""


@dataclass(frozen=True)
class Sighting:
    """A landmark seen in a view: pixel (x, y) in pixels, distance from the camera along the ray in metres
    (None: unknown) with its sigma, and the pixel's sigma in pixels."""

    view: int
    landmark: str
    pixel: tuple[float, float]
    distance_m: float | None = None
    distance_sigma_m: float | None = None
    pixel_sigma_px: float = 2.0

    def angles(self, K: np.ndarray) -> tuple[float, float]:
        """(bearing, elevation) in radians for a level camera with intrinsics K: bearing > 0 right, elevation > 0 up."""
        ray = np.linalg.solve(K, np.array([self.pixel[0], self.pixel[1], 1.0]))
        return float(np.arctan2(ray[0], ray[2])), float(np.arctan2(-ray[1], np.hypot(ray[0], ray[2])))


@dataclass(frozen=True)
class LayoutSolution:
    """The solved floor plan. headings_deg / heading_sigmas_deg: per view frame. positions: per view frame,
    (x, y) metres; position_sigmas_m: their (2,) standard deviations. landmarks: name -> (x, y, z) metres
    (z relative to the cameras' height); landmark_covariances: name -> (3, 3) m^2. rms_deg: RMS of the
    bearing residuals (degrees); rms_sigma: RMS of all residuals in sigmas (about 1 when the data fit)."""

    headings_deg: dict[int, float]
    heading_sigmas_deg: dict[int, float]
    positions: dict[int, np.ndarray]
    position_sigmas_m: dict[int, np.ndarray]
    landmarks: dict[str, np.ndarray]
    landmark_covariances: dict[str, np.ndarray]
    rms_deg: float
    rms_sigma: float


def _direction_deg(delta: np.ndarray) -> np.ndarray:
    """Heading (degrees clockwise from +Y) of (..., 2) ground vectors."""
    out: np.ndarray = np.degrees(np.arctan2(delta[..., 0], delta[..., 1]))
    return out


def _local_point(s: Sighting, K: np.ndarray, heading_deg: float, position: np.ndarray, guess_m: float) -> np.ndarray:
    bearing, elevation = s.angles(K)
    d = (s.distance_m if s.distance_m is not None else guess_m) * np.cos(elevation)
    h = np.radians(heading_deg) + bearing
    return np.asarray(position + d * np.array([np.sin(h), np.cos(h)]))


def _procrustes_heading(local: np.ndarray, world: np.ndarray) -> tuple[float, np.ndarray]:
    """Rotation (heading, degrees) and translation taking view-local ground points (heading 0 at the origin)
    onto world points (2D least squares)."""
    a, b = local - local.mean(0), world - world.mean(0)
    # heading rotates +Y toward +X (clockwise): world = R(-h) local, angle of the fit measured clockwise
    angle = np.arctan2(np.sum(a[:, 1] * b[:, 0] - a[:, 0] * b[:, 1]), np.sum(a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]))
    h = float(np.degrees(angle))
    c, s = np.cos(angle), np.sin(angle)
    R = np.array([[c, s], [-s, c]])
    return h, world.mean(0) - R @ local.mean(0)


def _initialise(
    views: dict[int, ViewSpec], sightings: Sequence[Sighting], anchor: int, guess_m: float
) -> tuple[dict[int, float], dict[int, np.ndarray], dict[str, np.ndarray]]:
    heading = {anchor: views[anchor].heading_deg or 0.0}
    position = {anchor: np.asarray(views[anchor].position or (0.0, 0.0), dtype=np.float64)}
    marks: dict[str, list[np.ndarray]] = {}
    changed = True
    while changed:
        changed = False
        for s in sightings:
            if s.view in heading:
                marks.setdefault(s.landmark, []).append(
                    _local_point(s, views[s.view].K, heading[s.view], position[s.view], guess_m)
                )
        known = {name: np.mean(p, axis=0) for name, p in marks.items()}
        marks.clear()
        for v, spec in views.items():
            if v in heading:
                continue
            shared = [s for s in sightings if s.view == v and s.landmark in known]
            if spec.heading_deg is not None and shared:
                heading[v] = spec.heading_deg
                local = np.array([_local_point(s, spec.K, spec.heading_deg, np.zeros(2), guess_m) for s in shared])
                position[v] = np.mean([known[s.landmark] for s in shared], axis=0) - local.mean(0)
            elif len(shared) >= 2:
                local = np.array([_local_point(s, spec.K, 0.0, np.zeros(2), guess_m) for s in shared])
                heading[v], position[v] = _procrustes_heading(local, np.array([known[s.landmark] for s in shared]))
            else:
                continue
            if spec.position is not None:
                position[v] = np.asarray(spec.position, dtype=np.float64)
            changed = True
    missing = sorted(set(views) - set(heading))
    if missing:
        raise ValueError(
            f"views {missing} share fewer than 2 landmarks with the views already placed; link them to a placed "
            f"view by matched features (scene.link_views(frames[i], frames[j])) or with at least 2 named landmarks "
            f"(or 1 and heading_deg=)"
        )
    for s in sightings:
        marks.setdefault(s.landmark, []).append(
            _local_point(s, views[s.view].K, heading[s.view], position[s.view], guess_m)
        )
    return heading, position, {name: np.mean(p, axis=0) for name, p in marks.items()}


def solve_layout(
    views: dict[int, ViewSpec],
    sightings: Sequence[Sighting],
    anchor: int,
    guess_m: float,
    guess_sigma_m: float,
    ranged: bool | None = None,
    turns: Sequence[tuple[int, int, float, float]] = (),
) -> LayoutSolution:
    """Place every view (heading, position) and landmark on the ground from the sightings (see the module doc).

    ``anchor``: the frame whose heading and position are held (given, or 0 deg at the origin). When no
    sighting has a distance (or ``ranged=False``), every sighting without one gets ``guess_m`` metres with
    sigma ``guess_sigma_m`` (the scale); otherwise sightings without a distance are bearings only.
    ``turns``: measured relative headings ``(view a, view b, heading b - heading a, sigma)`` in degrees
    (from matched features), each one more weighted residual."""
    from scipy.optimize import least_squares

    heading0, position0, marks0 = _initialise(views, sightings, anchor, guess_m)
    free_h = [v for v in views if v != anchor and views[v].heading_deg is None]
    free_p = [v for v in views if v != anchor and views[v].position is None]
    names = sorted(marks0)
    if ranged is None:
        ranged = any(s.distance_m is not None for s in sightings)
    angles = {id(s): s.angles(views[s.view].K) for s in sightings}

    def unpack(x: np.ndarray) -> tuple[dict[int, float], dict[int, np.ndarray], dict[str, np.ndarray]]:
        h = dict(heading0)
        p = dict(position0)
        h.update({v: float(x[i]) for i, v in enumerate(free_h)})
        k = len(free_h)
        p.update({v: x[k + 2 * i : k + 2 * i + 2] for i, v in enumerate(free_p)})
        k += 2 * len(free_p)
        return h, p, {n: x[k + 2 * i : k + 2 * i + 2] for i, n in enumerate(names)}

    def residuals(x: np.ndarray) -> np.ndarray:
        h, p, m = unpack(x)
        out = []
        for s in sightings:
            K = views[s.view].K
            bearing, elevation = angles[id(s)]
            delta = m[s.landmark] - p[s.view]
            sigma_deg = np.degrees(s.pixel_sigma_px / K[0, 0])
            out.append(wrap_deg(_direction_deg(delta) - h[s.view] - np.degrees(bearing)) / sigma_deg)
            d, sd = s.distance_m, s.distance_sigma_m
            if d is None and not ranged:
                d, sd = guess_m, guess_sigma_m
            if d is not None:
                c = np.cos(elevation)
                out.append((np.hypot(*delta) - d * c) / ((sd or 0.25 * d) * c))
        for a, b, delta_deg, sigma_deg in turns:
            out.append(wrap_deg(h[b] - h[a] - delta_deg) / max(sigma_deg, 1e-3))
        return np.asarray(out, dtype=np.float64)

    x0 = np.concatenate(
        [[heading0[v] for v in free_h], *[position0[v] for v in free_p], *[marks0[n] for n in names]]
    ).astype(np.float64)
    fit = least_squares(residuals, x0, method="lm" if len(x0) <= len(residuals(x0)) else "trf")
    cov = np.linalg.pinv(fit.jac.T @ fit.jac)
    h, p, m = unpack(fit.x)
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    heading_sd = {v: 0.0 for v in views} | {v: float(sd[i]) for i, v in enumerate(free_h)}
    k = len(free_h)
    position_sd = {v: np.zeros(2) for v in views} | {v: sd[k + 2 * i : k + 2 * i + 2] for i, v in enumerate(free_p)}
    k += 2 * len(free_p)
    landmarks, covariances = {}, {}
    for i, n in enumerate(names):
        mine = [s for s in sightings if s.landmark == n]
        zs = [np.hypot(*(m[n] - p[s.view])) * np.tan(angles[id(s)][1]) for s in mine]
        z = float(np.mean(zs))
        landmarks[n] = np.array([m[n][0], m[n][1], z])
        c3 = np.zeros((3, 3))
        c3[:2, :2] = cov[k + 2 * i : k + 2 * i + 2, k + 2 * i : k + 2 * i + 2]
        c3[2, 2] = (0.25 * abs(z) + 0.05) ** 2
        covariances[n] = c3
    bearing_res = [
        float(wrap_deg(_direction_deg(m[s.landmark] - p[s.view]) - h[s.view] - np.degrees(angles[id(s)][0])))
        for s in sightings
    ]
    return LayoutSolution(
        headings_deg={v: float(wrap_deg(h[v])) for v in views},
        heading_sigmas_deg=heading_sd,
        positions={v: np.asarray(p[v], dtype=np.float64).copy() for v in views},
        position_sigmas_m=position_sd,
        landmarks=landmarks,
        landmark_covariances=covariances,
        rms_deg=float(np.sqrt(np.mean(np.square(bearing_res)))),
        rms_sigma=float(np.sqrt(np.mean(np.square(fit.fun)))),
    )
