"""The floor-plan least-squares problem behind ``scene.link_views``: unknowns, weighted residuals, their exact
Jacobian, a linear start from given headings, and one local fit (``LayoutProblem``; ``viewlinks`` and
``layout_search`` drive it).

Conventions as in ``viewlinks``: ground plane of the design world (metres, +Y the first view's forward, +X
its right); headings in degrees clockwise seen from above from +Y; a sighting's bearing > 0 to the right of
its view's forward. Unknowns, in this order: the free views' headings (degrees), the free views' (x, y)
positions, every landmark's (x, y). Residuals, each in sigmas: one angular residual per sighting (bearing
misfit over the pixel's angle), one range residual per sighting with a distance (given, or the stated
guess when nothing has one), one one-sided "in front" residual per sighting (the landmark's depth along
its view's forward must be at least ``min_depth_m``: a landmark behind or on top of a camera that sees it
is no solution), and one per measured turn between two views.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MIN_DEPTH_FRACTION", "LayoutProblem", "Sighting", "ViewSpec", "wrap_deg"]

MIN_DEPTH_FRACTION = 0.1  # a landmark must lie at least this fraction of the typical distance in front of a view
_DEG = 180.0 / np.pi


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
    pitch_deg: float = 0.0
    roll_deg: float = 0.0

    @property
    def tilt(self) -> np.ndarray:
        """(3, 3) rotation from this camera's axes to its level axes (OpenCV x right, y down, z forward, with
        z horizontal): ``Rx(pitch) Rz(roll)``, pitch > 0 tilts up, roll > 0 clockwise (the ``motion`` convention)."""
        from spatialclaw.primitives.scene.turn_profile import rotation_ypr

        return rotation_ypr(0.0, self.pitch_deg, self.roll_deg)


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

    def angles(self, K: np.ndarray, tilt: np.ndarray | None = None) -> tuple[float, float]:
        """(bearing, elevation) in radians, bearing > 0 right, elevation > 0 up, for a camera with intrinsics K
        and ``tilt`` (``ViewSpec.tilt``; None: a level camera)."""
        ray = np.linalg.solve(K, np.array([self.pixel[0], self.pixel[1], 1.0]))
        if tilt is not None:
            ray = tilt @ ray
        return float(np.arctan2(ray[0], ray[2])), float(np.arctan2(-ray[1], np.hypot(ray[0], ray[2])))


class LayoutProblem:
    """Weighted least squares over headings, view positions and landmark positions (see the module doc).

    ``views``: frame -> ``ViewSpec``; ``sightings``: one per (view, landmark) (a repeated pair keeps the last);
    ``anchor``: the frame whose heading and position are held; ``guess_m`` / ``guess_sigma_m``: the distance
    stated for sightings without one when ``ranged`` is False; ``turns``: ``(view a, view b, heading b -
    heading a, sigma)`` degrees."""

    def __init__(
        self,
        views: dict[int, ViewSpec],
        sightings: Sequence[Sighting],
        anchor: int,
        guess_m: float,
        guess_sigma_m: float,
        ranged: bool,
        turns: Sequence[tuple[int, int, float, float]] = (),
    ) -> None:
        self.views, self.anchor = views, anchor
        self.sightings = list({(s.view, s.landmark): s for s in sightings}.values())
        self.frames = list(views)
        self.names = sorted({s.landmark for s in self.sightings})
        self.free_h = [v for v in self.frames if v != anchor and views[v].heading_deg is None]
        self.free_p = [v for v in self.frames if v != anchor and views[v].position is None]
        row = {v: i for i, v in enumerate(self.frames)}
        self.view_of = np.array([row[s.view] for s in self.sightings], dtype=int)
        self.mark_of = np.array([self.names.index(s.landmark) for s in self.sightings], dtype=int)
        angles = np.array([s.angles(views[s.view].K, views[s.view].tilt) for s in self.sightings]).reshape(-1, 2)
        self.bearing_deg, self.elevation = np.degrees(angles[:, 0]), angles[:, 1]
        self.sigma_deg = np.array([np.degrees(s.pixel_sigma_px / views[s.view].K[0, 0]) for s in self.sightings])
        distance = np.array([np.nan if s.distance_m is None else s.distance_m for s in self.sightings], dtype=float)
        spread = np.array([np.nan if s.distance_sigma_m is None else s.distance_sigma_m for s in self.sightings])
        spread = np.where(np.isnan(spread), 0.25 * distance, spread)
        if not ranged:
            guessed = np.isnan(distance)
            distance, spread = np.where(guessed, guess_m, distance), np.where(guessed, guess_sigma_m, spread)
        cos = np.cos(self.elevation)
        self.ranged = np.flatnonzero(~np.isnan(distance))
        self.range_m = (distance * cos)[self.ranged]  # horizontal distances
        self.range_sigma_m = (spread * cos)[self.ranged]
        typical = float(np.median(self.range_m)) if len(self.ranged) else guess_m
        self.min_depth_m = MIN_DEPTH_FRACTION * typical
        self.depth_sigma_m = 0.02 * typical
        self.scale_m = typical
        self.turns = [(row[a], row[b], float(d), max(float(s), 1e-3)) for a, b, d, s in turns]
        self.fixed_h = np.array([views[v].heading_deg or 0.0 for v in self.frames], dtype=float)
        self.fixed_p = np.array([views[v].position or (0.0, 0.0) for v in self.frames], dtype=float)
        self.h_cols = np.array([row[v] for v in self.free_h], dtype=int)
        self.p_cols = np.array([row[v] for v in self.free_p], dtype=int)
        self.size = len(self.free_h) + 2 * len(self.free_p) + 2 * len(self.names)

    # ---- parameters ------------------------------------------------------------------------------
    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(V,) headings (degrees), (V, 2) view positions and (L, 2) landmark positions (metres) of ``x``."""
        h, p = self.fixed_h.copy(), self.fixed_p.copy()
        k = len(self.free_h)
        h[self.h_cols] = x[:k]
        p[self.p_cols] = x[k : k + 2 * len(self.free_p)].reshape(-1, 2)
        return h, p, x[k + 2 * len(self.free_p) :].reshape(-1, 2)

    def pack(self, h: np.ndarray, p: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The parameter vector of (V,) headings, (V, 2) view positions and (L, 2) landmark positions."""
        return np.concatenate([h[self.h_cols], p[self.p_cols].ravel(), np.asarray(m, dtype=float).ravel()])

    # ---- residuals and their Jacobian --------------------------------------------------------------
    def _parts(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        h, p, m = self.unpack(x)
        delta = m[self.mark_of] - p[self.view_of]
        heading = np.radians(h[self.view_of])
        forward = np.stack([np.sin(heading), np.cos(heading)], axis=1)
        return h, delta, forward

    def residuals(self, x: np.ndarray) -> np.ndarray:
        """All residuals in sigmas: bearings, ranges, "in front" guards, turns (see the module doc)."""
        h, delta, forward = self._parts(x)
        direction = np.degrees(np.arctan2(delta[:, 0], delta[:, 1]))
        out = [wrap_deg(direction - h[self.view_of] - self.bearing_deg) / self.sigma_deg]
        out.append((np.hypot(*delta[self.ranged].T) - self.range_m) / self.range_sigma_m)
        depth = np.sum(delta * forward, axis=1)
        out.append(np.maximum(self.min_depth_m - depth, 0.0) / self.depth_sigma_m)
        out.append(np.array([wrap_deg(h[b] - h[a] - d) / s for a, b, d, s in self.turns], dtype=float))
        return np.concatenate(out)

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """(residuals, parameters) exact Jacobian of ``residuals``."""
        _, delta, forward = self._parts(x)
        n, k_p = len(self.sightings), len(self.free_h)
        k_m = k_p + 2 * len(self.free_p)
        h_col = np.full(len(self.frames), -1)
        h_col[self.h_cols] = np.arange(len(self.free_h))
        p_col = np.full(len(self.frames), -1)
        p_col[self.p_cols] = k_p + 2 * np.arange(len(self.free_p))
        rows = n + len(self.ranged) + n + len(self.turns)
        J = np.zeros((rows, self.size))

        def put(r: np.ndarray, d_delta: np.ndarray, d_heading: np.ndarray, idx: np.ndarray) -> None:
            """Rows ``r``: derivative d_delta (R, 2) w.r.t. the offset landmark - view, d_heading (R,)."""
            views, marks = self.view_of[idx], self.mark_of[idx]
            for c in (0, 1):
                J[r, k_m + 2 * marks + c] += d_delta[:, c]
                has_p = p_col[views] >= 0
                J[r[has_p], p_col[views[has_p]] + c] -= d_delta[has_p, c]
            has_h = h_col[views] >= 0
            J[r[has_h], h_col[views[has_h]]] += d_heading[has_h]

        every = np.arange(n)
        r2 = np.maximum(np.sum(delta**2, axis=1), 1e-18)
        d_dir = _DEG * np.stack([delta[:, 1], -delta[:, 0]], axis=1) / r2[:, None]
        put(every, d_dir / self.sigma_deg[:, None], -1.0 / self.sigma_deg, every)
        dist = np.sqrt(r2[self.ranged])
        unit = delta[self.ranged] / dist[:, None]
        put(
            n + np.arange(len(self.ranged)), unit / self.range_sigma_m[:, None], np.zeros(len(self.ranged)), self.ranged
        )
        depth = np.sum(delta * forward, axis=1)
        active = (depth < self.min_depth_m).astype(float)[:, None]
        side = np.stack([forward[:, 1], -forward[:, 0]], axis=1)  # d forward / d heading (radians)
        d_heading = -active[:, 0] * np.sum(delta * side, axis=1) / _DEG / self.depth_sigma_m
        put(n + len(self.ranged) + every, -active * forward / self.depth_sigma_m, d_heading, every)
        base = 2 * n + len(self.ranged)
        for i, (a, b, _, s) in enumerate(self.turns):
            if h_col[b] >= 0:
                J[base + i, h_col[b]] += 1.0 / s
            if h_col[a] >= 0:
                J[base + i, h_col[a]] -= 1.0 / s
        return J

    # ---- starts and fits ---------------------------------------------------------------------------
    def linear_start(self, headings: np.ndarray) -> np.ndarray:
        """Parameters for the given (V,) headings: view and landmark positions from the linear least squares
        of every sighting's offset = its distance (given or guessed) x its ray's ground direction; sightings
        without a distance count as bearings (offset across the ray = 0)."""
        col = {int(v): 2 * i for i, v in enumerate(self.p_cols)}
        base = 2 * len(self.p_cols)
        distance = np.full(len(self.sightings), np.nan)
        distance[self.ranged] = self.range_m
        ray = np.radians(headings[self.view_of] + self.bearing_deg)
        u = np.stack([np.sin(ray), np.cos(ray)], axis=1)
        rows, targets = [], []
        for i, (v, m) in enumerate(zip(self.view_of.tolist(), self.mark_of.tolist(), strict=True)):
            if np.isnan(distance[i]):  # a bearing only: no offset across the ray
                pairs = [(np.array([u[i, 1], -u[i, 0]]), 0.0)]
            else:
                pairs = [(np.array([1.0, 0.0]), distance[i] * u[i, 0]), (np.array([0.0, 1.0]), distance[i] * u[i, 1])]
            for axis, target in pairs:
                row = np.zeros(base + 2 * len(self.names))
                row[base + 2 * m : base + 2 * m + 2] = axis
                if v in col:
                    row[col[v] : col[v] + 2] = -axis
                    targets.append(target)
                else:
                    targets.append(target + axis @ self.fixed_p[v])
                rows.append(row)
        A = np.vstack([np.array(rows), 1e-6 * np.eye(base + 2 * len(self.names))])  # keeps it solvable
        solution = np.linalg.lstsq(A, np.r_[targets, np.zeros(A.shape[1])], rcond=None)[0]
        p = self.fixed_p.copy()
        p[self.p_cols] = solution[:base].reshape(-1, 2)
        h = self.fixed_h.copy()
        h[self.h_cols] = headings[self.h_cols]
        return self.pack(h, p, solution[base:].reshape(-1, 2))

    def fit(self, x0: np.ndarray, max_nfev: int | None = None) -> tuple[np.ndarray, float]:
        """(parameters, chi-square = sum of squared residuals) of the local least-squares fit from ``x0``."""
        from scipy.optimize import least_squares

        fit = least_squares(self.residuals, x0, jac=self.jacobian, method="trf", x_scale="jac", max_nfev=max_nfev)
        x = np.asarray(fit.x)
        h_free = x[: len(self.free_h)]
        x[: len(self.free_h)] = wrap_deg(h_free)
        return x, float(2.0 * fit.cost)

    def covariance(self, x: np.ndarray) -> np.ndarray:
        """(P, P) covariance of the parameters at ``x``: ``(J^T J + W)^-1`` with W a weak prior (any heading:
        sigma 180 degrees; positions within 100 typical distances), so that what the sightings do not pin
        comes out with a large sigma, never the zero a pseudo-inverse would give it."""
        J = self.jacobian(x)
        k = len(self.free_h)
        prior = np.r_[np.full(k, 1.0 / 180.0**2), np.full(self.size - k, 1.0 / (100.0 * self.scale_m) ** 2)]
        return np.asarray(np.linalg.inv(J.T @ J + np.diag(prior)))

    def bearing_rms_deg(self, x: np.ndarray) -> float:
        """RMS of the bearing misfits at ``x``, degrees."""
        h, delta, _ = self._parts(x)
        misfit = wrap_deg(np.degrees(np.arctan2(delta[:, 0], delta[:, 1])) - h[self.view_of] - self.bearing_deg)
        return float(np.sqrt(np.mean(np.square(misfit)))) if len(misfit) else 0.0

    def too_close(self, x: np.ndarray) -> list[tuple[int, str]]:
        """(frame, landmark) of the sightings whose landmark lies less than ``min_depth_m`` in front of its view
        (on top of or behind the camera): a degenerate solution."""
        _, delta, forward = self._parts(x)
        depth = np.sum(delta * forward, axis=1)
        return [
            (self.frames[int(self.view_of[i])], self.names[int(self.mark_of[i])])
            for i in np.flatnonzero(depth < 0.5 * self.min_depth_m)
        ]
