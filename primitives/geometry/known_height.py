"""The camera's pitch (and height) fixed by objects of known real height standing on the floor: the geometry
behind ``camera_tilt(frame, known=...)`` (part of ``geom``).

An upright object of height h standing on the floor, seen with its floor contact at image row y_b and its
top at y_t, constrains the camera's pitch and height together: with phi = atan((y - cy) / f) (the ray's angle
below the optical axis, after undoing the roll) and theta the pitch (> 0 up), the floor contact lies
tan(phi_b - theta) = H / D below the horizon and the top tan(theta - phi_t) = (H - h) / D above or below it,
so H / h = 1 / (1 + tan(theta - phi_t) / tan(phi_b - theta)). One object gives the pitch for an assumed
camera height (1.5 +- 0.25 m; a height error moves the pitch little when the object is far); two or more at
different distances give both. For an object shorter than the camera's height the equation has two roots
(the second: a camera looking steeply down at the object right below it); what decides between them is
said in the readout. Pixels are (x, y), y down; angles degrees; heights metres.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["KnownHeight", "PitchSolution", "as_known_heights", "solve_pitch", "tilt_from_known_heights"]

PITCH_GRID_DEG = np.arange(-85.0, 60.0001, 0.1)
"""Candidate pitches, degrees (> 0 up)."""
_GRID = PITCH_GRID_DEG
_PRIOR_HEIGHT_M = 1.5
_PRIOR_HEIGHT_SIGMA_M = 0.25
_GIVEN_HEIGHT_LOG_SIGMA = 0.01  # a stated camera height is trusted to 1 %
_HFOV_DEG, _HFOV_SIGMA_DEG = 60.0, 10.0
_SAMPLES = 400
_WELL_FOUND_SHARE = 0.8  # fewer draws than this finding a mode: the known size barely pins the pitch


@dataclass(frozen=True)
class KnownHeight:
    """One upright object standing on the floor: its top and floor contact in the image ((x, y) pixels, the
    same vertical edge of the object) and its real height (metres)."""

    top: tuple[float, float]
    bottom: tuple[float, float]
    height_m: float


@dataclass(frozen=True)
class PitchSolution:
    """Pitches the known heights allow (degrees, > 0 up), best first, each with its sigma (degrees), its
    camera height (metres) and that height's sigma, and the share of uncertainty draws that found it."""

    pitches_deg: tuple[float, ...]
    sigmas_deg: tuple[float, ...]
    heights_m: tuple[float, ...]
    height_sigmas_m: tuple[float, ...]
    found_share: tuple[float, ...]
    height_given: bool
    height_curve_m: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    """(G,) the camera height (metres) the objects imply at each pitch of ``PITCH_GRID_DEG`` (nominal pixels
    and field of view; NaN where a floor contact would lie above the horizon)."""

    def height_at(self, pitch_deg: float) -> float:
        """The camera height (metres) the objects imply at ``pitch_deg`` (NaN when they cannot)."""
        return float(np.interp(pitch_deg, PITCH_GRID_DEG, self.height_curve_m))


def _points(where: Any) -> tuple[tuple[float, float], tuple[float, float]]:
    """(top, bottom) pixels of a box (x0, y0, x1, y1): its centre column's top and bottom rows; or of a pair of
    pixels ((x_top, y_top), (x_bottom, y_bottom)); or of anything with ``.box`` (a detection, a blob)."""
    where = getattr(where, "box", where)
    array = np.asarray(where, dtype=np.float64)
    if array.shape == (4,):
        x0, y0, x1, y1 = array
        if not (x1 > x0 and y1 > y0):
            raise ValueError(f"known: a box must be (x0, y0, x1, y1) pixels with x1 > x0 and y1 > y0, got {where!r}")
        return ((x0 + x1) / 2.0, float(y0)), ((x0 + x1) / 2.0, float(y1))
    if array.shape == (2, 2):
        (xt, yt), (xb, yb) = array
        if not yb > yt:
            raise ValueError(
                f"known: the floor contact ({xb:g}, {yb:g}) must lie below the top ({xt:g}, {yt:g}) in the image "
                "(pass ((x_top, y_top), (x_bottom, y_bottom)) pixels)"
            )
        return (float(xt), float(yt)), (float(xb), float(yb))
    raise ValueError(
        "known: each object is (box, height_m) with box (x0, y0, x1, y1) pixels, or ((x_top, y_top), "
        f"(x_bottom, y_bottom)) pixels, or a detection with .box; got {where!r}"
    )


def as_known_heights(known: Any) -> list[KnownHeight]:
    """``known`` as a list of ``KnownHeight``: one ``(box_or_points, height_m)`` pair or a list of them."""
    if isinstance(known, KnownHeight):
        return [known]
    items: Sequence[Any] = known if isinstance(known, list) else [known]
    out = []
    for item in items:
        if isinstance(item, KnownHeight):
            out.append(item)
            continue
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise ValueError(
                "known= takes (box, height_m) or a list of them: box (x0, y0, x1, y1) pixels of an upright object "
                f"standing on the floor, height_m its real height in metres; got {item!r}"
            )
        where, height = item
        height = float(height)
        if not (np.isfinite(height) and height > 0):
            raise ValueError(f"known: the object's real height must be > 0 metres, got {height!r}")
        top, bottom = _points(where)
        out.append(KnownHeight(top, bottom, height))
    if not out:
        raise ValueError("known= is empty; pass (box, height_m) of at least one object standing on the floor")
    return out


def _implied_log_height(phi_b: np.ndarray, phi_t: np.ndarray, height: np.ndarray) -> np.ndarray:
    """(..., G) log camera height (metres) each grid pitch implies for objects whose floor contact and top lie
    ``phi_b`` and ``phi_t`` radians below the optical axis ((...,) arrays) and whose real height is
    ``height`` metres; NaN where that pitch puts the floor contact at or above the horizon."""
    theta = np.radians(_GRID)
    below = phi_b[..., None] - theta  # the floor contact's angle below the horizon
    above = theta - phi_t[..., None]  # the top's angle above... (< 0: below) the horizon, seen from the camera
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = 1.0 + np.tan(above) / np.tan(below)  # h / H
        out = np.log(height[..., None] / ratio)
    valid = (below > 1e-4) & (below < np.pi / 2) & (above > -np.pi / 2) & (ratio > 1e-6)
    return np.where(valid, out, np.nan)


def _cost(log_heights: np.ndarray, weights: np.ndarray, prior: np.ndarray, prior_weight: float) -> np.ndarray:
    """(..., G) misfit (in sigmas squared) of the implied log heights (..., J, G) of J objects with weights
    (J,) 1 / sigma^2 and a prior log height (...,) of weight ``prior_weight``, at the best common height."""
    w = weights[:, None]
    total = (w * np.nan_to_num(log_heights)).sum(-2) + prior_weight * prior[..., None]
    best = total / (w.sum(-2) + prior_weight)
    cost = (w * (np.nan_to_num(log_heights) - best[..., None, :]) ** 2).sum(-2) + prior_weight * (
        best - prior[..., None]
    ) ** 2
    return np.where(np.isnan(log_heights).any(-2), np.inf, cost)


def _minima(cost: np.ndarray) -> list[tuple[float, float]]:
    """(pitch degrees refined by a parabola, cost) of each local minimum of a (G,) cost over ``_GRID``."""
    inner = np.flatnonzero(np.isfinite(cost[1:-1]) & (cost[1:-1] <= cost[:-2]) & (cost[1:-1] < cost[2:])) + 1
    out = []
    for i in inner:
        a, b, c = cost[i - 1], cost[i], cost[i + 1]
        shift = 0.0
        if np.isfinite(a) and np.isfinite(c) and a - 2 * b + c > 0:
            shift = float(np.clip(0.5 * (a - c) / (a - 2 * b + c), -1.0, 1.0))
        out.append((float(_GRID[i] + shift * 0.1), float(b)))
    return out


def solve_pitch(
    objects: list[KnownHeight],
    K: np.ndarray | None,
    width: int,
    height_px: int,
    *,
    roll_deg: float = 0.0,
    camera_height_m: float | None = None,
    pixel_sigma_px: float = 2.0,
    seed: int = 0,
) -> PitchSolution:
    """The pitches (degrees, > 0 up) that make each object's floor contact and real height consistent, with
    sigmas from the pixels (``pixel_sigma_px`` each end), the field of view (60 +- 10 degrees when ``K`` is
    None) and the camera height (``camera_height_m``, else 1.5 +- 0.25 m), drawn together (Monte Carlo).

    Raises:
        ValueError: no pitch from -85 to +60 degrees makes the objects consistent (a top below its floor
            contact, a floor contact above every horizon, or objects of contradictory sizes).
    """
    rng = np.random.default_rng(seed)
    n = _SAMPLES
    tops = np.array([o.top for o in objects])
    bottoms = np.array([o.bottom for o in objects])
    heights = np.array([o.height_m for o in objects])
    if K is None:
        hfov = np.clip(_HFOV_DEG + _HFOV_SIGMA_DEG * rng.standard_normal(n), 20.0, 120.0)
        hfov[0] = _HFOV_DEG
        focal = (width / 2.0) / np.tan(np.radians(hfov) / 2.0)
        cx, cy = (width - 1) / 2.0, (height_px - 1) / 2.0
    else:
        focal, cx, cy = np.full(n, float(K[1, 1])), float(K[0, 2]), float(K[1, 2])
    jitter = pixel_sigma_px * rng.standard_normal((2, n, len(objects), 2))
    jitter[:, 0] = 0.0  # draw 0 is the nominal solve
    roll = np.radians(roll_deg)

    def angle_below(points: np.ndarray, noise: np.ndarray) -> np.ndarray:
        a = (points[None, :, 0] + noise[..., 0] - cx) / focal[:, None]
        b = (points[None, :, 1] + noise[..., 1] - cy) / focal[:, None]
        return np.asarray(np.arctan(a * np.sin(roll) + b * np.cos(roll)))  # the roll undone

    phi_b, phi_t = angle_below(bottoms, jitter[0]), angle_below(tops, jitter[1])
    if camera_height_m is None:
        prior_mean, prior_sigma = np.log(_PRIOR_HEIGHT_M), _PRIOR_HEIGHT_SIGMA_M / _PRIOR_HEIGHT_M
    else:
        prior_mean, prior_sigma = np.log(float(camera_height_m)), _GIVEN_HEIGHT_LOG_SIGMA
    prior = prior_mean + prior_sigma * rng.standard_normal(n)
    prior[0] = prior_mean
    image_height = np.maximum(bottoms[:, 1] - tops[:, 1], 1.0)
    weights = 1.0 / (np.sqrt(2.0) * pixel_sigma_px / image_height) ** 2  # log-height sigma of each object
    log_heights = _implied_log_height(phi_b, phi_t, np.broadcast_to(heights, phi_b.shape))
    cost = _cost(log_heights, weights, prior, 1.0 / prior_sigma**2)
    nominal = _minima(cost[0])
    if not nominal:
        raise ValueError(
            "no camera pitch from -85 to +60 degrees makes the known objects' floor contacts and heights consistent: "
            "check each is upright ON the floor, its box runs from its top to its floor contact, and its height"
        )
    best_cost = min(c for _, c in nominal)
    modes = sorted((m for m in nominal if m[1] <= best_cost + 4.0), key=lambda m: m[1])
    per_sample = [_minima(row) for row in cost[1:]]
    pitches, sigmas, cam_heights, cam_sigmas, shares = [], [], [], [], []
    for pitch, _ in modes:
        drawn, drawn_h = [], []
        for s, found in enumerate(per_sample, start=1):
            # a draw's solution belongs to the nominal mode it lies nearest
            near = [p for p, _ in found if min(modes, key=lambda m: abs(m[0] - p))[0] == pitch]
            if near:
                p = min(near, key=lambda q: abs(q - pitch))
                drawn.append(p)
                g = int(np.clip(np.rint((p - _GRID[0]) / 0.1), 0, len(_GRID) - 1))
                row = log_heights[s, :, g]
                w = weights
                drawn_h.append(
                    float(np.exp((np.nansum(w * row) + prior[s] / prior_sigma**2) / (w.sum() + 1 / prior_sigma**2)))
                )
        g0 = int(np.clip(np.rint((pitch - _GRID[0]) / 0.1), 0, len(_GRID) - 1))
        row0 = log_heights[0, :, g0]
        h0 = float(
            np.exp((np.nansum(weights * row0) + prior[0] / prior_sigma**2) / (weights.sum() + 1 / prior_sigma**2))
        )
        spread = float(np.std(drawn)) if len(drawn) > 2 else float("inf")
        pitches.append(round(pitch, 1))
        sigmas.append(max(0.1, round(spread, 1)))
        cam_heights.append(round(h0, 2))
        cam_sigmas.append(round(float(np.std(drawn_h)) if len(drawn_h) > 2 else float("inf"), 2))
        shares.append(round(len(drawn) / len(per_sample), 2))
    nominal_heights = np.where(
        np.isnan(log_heights[0]).any(axis=0),
        np.nan,
        np.exp((weights[:, None] * np.nan_to_num(log_heights[0])).sum(axis=0) / weights.sum()),
    )
    return PitchSolution(
        tuple(pitches),
        tuple(sigmas),
        tuple(cam_heights),
        tuple(cam_sigmas),
        tuple(shares),
        camera_height_m is not None,
        nominal_heights,
    )


_PLAUSIBLE_PITCH_DEG, _PLAUSIBLE_SIGMA_DEG = -10.0, 25.0  # a weak prior: photos look level or somewhat down
_LOOSE_SIGMA_DEG = 10.0


def tilt_from_known_heights(
    objects: list[KnownHeight],
    edges: Any,
    K: np.ndarray | None,
    width: int,
    height_px: int,
    *,
    camera_height_m: float | None,
    pixel_sigma_px: float,
) -> dict[str, Any]:
    """The fields of a ``CameraTilt`` (``tilt.py`` builds it: it imports this module) whose pitch makes the
    known objects consistent (``solve_pitch``), its root chosen by
    the image's own tilt evidence ``edges`` (a ``CameraTilt`` from the edges, or None; averaged in when it
    agrees) and, without it, by a weak prior for photos (pitch -10 +- 25 degrees), the other root kept as a
    rival."""
    roll = float(edges.roll_deg) if edges is not None else 0.0
    solution = solve_pitch(
        objects, K, width, height_px, roll_deg=roll, camera_height_m=camera_height_m, pixel_sigma_px=pixel_sigma_px
    )
    modes = list(zip(solution.pitches_deg, solution.sigmas_deg, range(len(solution.pitches_deg)), strict=True))
    notes: list[str] = []
    caveats: list[str] = []
    if edges is not None:
        candidates = [edges.pitch_deg] + ([edges.rival_pitch_deg] if edges.rival_pitch_deg is not None else [])

        def misfit(mode: tuple[float, float, int]) -> float:
            return float(min(abs(mode[0] - c) for c in candidates) / np.hypot(mode[1], edges.pitch_sigma_deg))

        modes.sort(key=misfit)
        score = [float(np.exp(-0.5 * min(misfit(m), 6.0) ** 2)) for m in modes]
        agrees = misfit(modes[0]) <= 2.0
        nearest = min(candidates, key=lambda c: abs(modes[0][0] - c))
        if agrees and edges.rival_pitch_deg is not None:
            other = candidates[1] if nearest == candidates[0] else candidates[0]
            notes.append(
                f"the known height sides with the edges' pitch {nearest:+.1f} over {other:+.1f} deg (averaged in)"
            )
        elif agrees:
            notes.append(
                f"the image's {edges.source} agree (pitch {edges.pitch_deg:+.1f} ± {edges.pitch_sigma_deg:g}; averaged in)"
            )
        else:
            caveats.append(
                f"the image's {edges.source} say pitch {edges.pitch_deg:+.1f} ± {edges.pitch_sigma_deg:g} deg, which "
                "no pitch of the known height matches: is the object upright ON the floor, its box from its top to "
                "its floor contact, its height right?"
            )
        dropped = [m for m, s in zip(modes[1:], score[1:], strict=True) if s < 0.05]
        if dropped:
            notes.append(
                "the known height also fits pitch "
                + ", ".join(f"{m[0]:+.1f}" for m in dropped)
                + " deg, which the edges rule out"
            )
        rivals = [(m, s / max(score[0], 1e-9)) for m, s in zip(modes[1:], score[1:], strict=True) if s >= 0.05]
        roll_text = ""
    else:

        def plausibility(mode: tuple[float, float, int]) -> float:
            return float(np.exp(-0.5 * ((mode[0] - _PLAUSIBLE_PITCH_DEG) / _PLAUSIBLE_SIGMA_DEG) ** 2))

        modes.sort(key=lambda m: -plausibility(m))
        rivals = [(m, plausibility(m) / plausibility(modes[0])) for m in modes[1:]]
        roll_text = "roll assumed 0 (the image shows no vertical edges or horizon)"
    best = modes[0]
    index = best[2]
    sigma = best[1]
    pitch = best[0]
    height_m, height_sigma_m = solution.heights_m[index], solution.height_sigmas_m[index]
    how = "given" if solution.height_given else ("assumed" if len(objects) == 1 else "solved")
    if edges is not None and not agrees:
        gap = min(abs(best[0] - c) for c in candidates)
        sigma = max(sigma, gap / 2.0)
    elif edges is not None:  # two independent readings of one pitch: their weighted mean
        nearest_sigma = edges.pitch_sigma_deg
        weight, weight_edges = 1.0 / sigma**2, 1.0 / nearest_sigma**2
        pitch = (weight * best[0] + weight_edges * nearest) / (weight + weight_edges)
        sigma = float(1.0 / np.sqrt(weight + weight_edges))
        if not solution.height_given:  # the object then tells the camera height at that pitch
            at = [solution.height_at(p) for p in (pitch - sigma, pitch, pitch + sigma)]
            if np.isfinite(at).all():
                height_m, how = round(at[1], 2), "solved from the object at this pitch"
                height_sigma_m = round(float(np.hypot(abs(at[2] - at[0]) / 2.0, 0.02 * at[1])), 2)
    rival = None
    support = 1.0
    if rivals:
        (r_pitch, r_sigma, _), support = max(rivals, key=lambda r: r[1])
        steep = "looking steeply down at the object right below it" if r_pitch < best[0] else "looking up more"
        caveats.append(
            f"the known height also fits pitch {r_pitch:+.1f} ± {r_sigma:g} deg (a camera {steep})"
            + ("" if edges is not None else "; nothing in the image decides (no vertical edges or horizon)")
        )
        rival = r_pitch
    if sigma >= _LOOSE_SIGMA_DEG or solution.found_share[index] < _WELL_FOUND_SHARE:
        caveats.append(
            f"the known height barely pins the pitch here (only {100 * solution.found_share[index]:.0f}% of the "
            "uncertainty draws find it): the object is small in the image or near where two pitches meet; pass "
            "camera_height_m= or a second object at another distance"
        )
        sigma = max(sigma, _LOOSE_SIGMA_DEG)
    names = f"{len(objects)} object{'s' if len(objects) > 1 else ''} of known height"
    if roll_text:
        notes.append(roll_text)
    return {
        "pitch_deg": round(float(pitch), 1),
        "roll_deg": round(roll, 1),
        "pitch_sigma_deg": round(float(sigma), 1),
        "edges": edges.edges if edges is not None else 0,
        "source": names,
        "caveat": "; ".join(caveats),
        "note": "; ".join(notes),
        "rival_pitch_deg": rival,
        "rival_support": round(float(min(support, 1.0)), 2),
        "camera_height_m": height_m,
        "camera_height_sigma_m": height_sigma_m,
        "camera_height_how": how,
    }
