"""Solving a floor plan from views that share landmarks: each view's heading and ground position (part of ``scene``).

Everything is on the ground plane of the design world (metres, +Z up, +Y the first view's forward, +X its
right). A view's **heading** is the compass-style angle of its viewing direction on the ground, degrees
clockwise seen from above from world +Y (0 = +Y, 90 = +X). A landmark's **bearing** in a view is the
horizontal angle from the view's forward to the landmark, > 0 to the right: ``atan((x - cx) / f)`` for a
level camera, ``x`` the landmark's pixel column, ``cx`` and ``f`` from the view's intrinsics (pixels); a
tilted view's rays are levelled by its pitch and roll first (``ViewSpec.tilt``).

Unknowns: every view's heading and (x, y) position except the anchor view's (fixed: it defines the world)
and every landmark's (x, y). Observations: each landmark's bearing in each view that names it (angular
residual weighted by the pixel sigma over the focal length) and, where known or guessed, its distance from
that view (range residual weighted by the distance sigma; horizontal distance = distance x cos(elevation));
every landmark must lie in front of the views that see it (``layout_problem``). Two views need distances
(measured, or a stated guess) to fix their relative position: bearings alone do not constrain it. The fit
is weighted least squares from many starts (``layout_search``): every floor plan that fits about as well as
the best is kept with its weight. Each plan's covariance is ``(J^T J)^-1`` at its solution (with a weak
prior, so nothing unpinned gets a zero sigma), scaled up when the data fit worse than their sigmas; the
solution's sigmas are widened to cover every plan, and the plans that differ materially are named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from spatialclaw.primitives.scene.layout_problem import LayoutProblem, Sighting, ViewSpec, wrap_deg
from spatialclaw.primitives.scene.layout_search import MATERIAL_DEG, Minimum, search_layouts

__all__ = ["FEATURE_NAME", "LayoutSolution", "solve_layout"]

FEATURE_NAME = "matched feature "  # how the landmarks that link_views found by matching features are named


@dataclass(frozen=True)
class LayoutSolution:
    """The solved floor plan (the best of those that fit; see ``plans``).

    headings_deg / heading_sigmas_deg: per view frame, degrees (sigma 0 for the anchor and for given
    headings). positions: per view frame, (x, y) metres; position_sigmas_m: their (2,) standard deviations.
    landmarks: name -> (x, y, z) metres (z relative to the cameras' height); landmark_covariances: name ->
    (3, 3) m^2. rms_deg: RMS of the bearing residuals (degrees); rms_sigma: RMS of all residuals in sigmas
    (about 1 when the data fit); chi2: their sum of squares. Every sigma is scaled up by sqrt(chi2 / degrees
    of freedom) when the data fit worse than their stated sigmas, and widened to cover the other plans.
    plans: every floor plan that fits about as well (``layout_search``), best first, each with its own
    sigmas and ``weight`` (the weights sum to 1); () when only one fits. ambiguous_views /
    ambiguous_landmarks: the views whose heading (by more than ``MATERIAL_DEG``) and the landmarks whose
    place (by more than a quarter of the typical distance) differ between plans with weight >= 0.05.
    notes: what else limits the solution (sentences)."""

    headings_deg: dict[int, float]
    heading_sigmas_deg: dict[int, float]
    positions: dict[int, np.ndarray]
    position_sigmas_m: dict[int, np.ndarray]
    landmarks: dict[str, np.ndarray]
    landmark_covariances: dict[str, np.ndarray]
    rms_deg: float
    rms_sigma: float
    chi2: float = 0.0
    weight: float = 1.0
    plans: tuple[LayoutSolution, ...] = ()
    ambiguous_views: tuple[int, ...] = ()
    ambiguous_landmarks: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ambiguous(self) -> bool:
        """True when floor plans that differ materially fit about as well."""
        return bool(self.ambiguous_views or self.ambiguous_landmarks)


def _local_point(s: Sighting, view: ViewSpec, heading_deg: float, position: np.ndarray, guess_m: float) -> np.ndarray:
    bearing, elevation = s.angles(view.K, view.tilt)
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
                    _local_point(s, views[s.view], heading[s.view], position[s.view], guess_m)
                )
        known = {name: np.mean(p, axis=0) for name, p in marks.items()}
        marks.clear()
        for v, spec in views.items():
            if v in heading:
                continue
            shared = list({s.landmark: s for s in sightings if s.view == v and s.landmark in known}.values())
            if spec.heading_deg is not None and shared:
                heading[v] = spec.heading_deg
                local = np.array([_local_point(s, spec, spec.heading_deg, np.zeros(2), guess_m) for s in shared])
                position[v] = np.mean([known[s.landmark] for s in shared], axis=0) - local.mean(0)
            elif len(shared) >= 2:
                local = np.array([_local_point(s, spec, 0.0, np.zeros(2), guess_m) for s in shared])
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
            _local_point(s, views[s.view], heading[s.view], position[s.view], guess_m)
        )
    return heading, position, {name: np.mean(p, axis=0) for name, p in marks.items()}


def _plan(problem: LayoutProblem, found: Minimum, inflate: float) -> LayoutSolution:
    """One floor plan with its own covariance (``LayoutProblem.covariance`` times ``inflate``)."""
    cov = problem.covariance(found.x) * inflate
    h, p, m = problem.unpack(found.x)
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    frames, k = problem.frames, len(problem.free_h)
    heading_sd = {v: 0.0 for v in frames} | {v: float(sd[i]) for i, v in enumerate(problem.free_h)}
    position_sd = {v: np.zeros(2) for v in frames} | {
        v: sd[k + 2 * i : k + 2 * i + 2] for i, v in enumerate(problem.free_p)
    }
    k += 2 * len(problem.free_p)
    landmarks, covariances = {}, {}
    for i, name in enumerate(problem.names):
        mine = np.flatnonzero(problem.mark_of == i)
        ground = np.hypot(*(m[i] - p[problem.view_of[mine]]).T)
        z = float(np.mean(ground * np.tan(problem.elevation[mine])))
        landmarks[name] = np.array([m[i][0], m[i][1], z])
        c3 = np.zeros((3, 3))
        c3[:2, :2] = cov[k + 2 * i : k + 2 * i + 2, k + 2 * i : k + 2 * i + 2]
        c3[2, 2] = (0.25 * abs(z) + 0.05) ** 2
        covariances[name] = c3
    residuals = problem.residuals(found.x)
    return LayoutSolution(
        headings_deg={v: float(wrap_deg(h[j])) for j, v in enumerate(frames)},
        heading_sigmas_deg=heading_sd,
        positions={v: p[j].copy() for j, v in enumerate(frames)},
        position_sigmas_m=position_sd,
        landmarks=landmarks,
        landmark_covariances=covariances,
        rms_deg=problem.bearing_rms_deg(found.x),
        rms_sigma=float(np.sqrt(np.mean(np.square(residuals)))),
        chi2=found.chi2,
        weight=found.weight,
    )


def _mixed(problem: LayoutProblem, plans: list[LayoutSolution]) -> LayoutSolution:
    """The best plan with every sigma widened to the spread of all plans (weighted), and what differs."""
    best = plans[0]
    if len(plans) == 1:
        return best
    w = np.array([q.weight for q in plans])
    turn = {v: np.array([float(wrap_deg(q.headings_deg[v] - h)) for q in plans]) for v, h in best.headings_deg.items()}
    headings = {
        v: float(np.sqrt(np.sum(w * (np.array([q.heading_sigmas_deg[v] for q in plans]) ** 2 + turn[v] ** 2))))
        for v in best.headings_deg
    }
    positions = {
        v: np.sqrt(
            sum(
                wi * (q.position_sigmas_m[v] ** 2 + (q.positions[v] - best.positions[v]) ** 2)
                for wi, q in zip(w, plans, strict=True)
            )
        )
        for v in best.positions
    }
    covariances = {}
    for name, c in best.landmarks.items():
        spread = [q.landmarks[name] - c for q in plans]
        covariances[name] = sum(
            wi * (q.landmark_covariances[name] + np.outer(d, d)) for wi, q, d in zip(w, plans, spread, strict=True)
        )
    weighty = [q for q in plans[1:] if q.weight >= 0.05]
    views = sorted(
        v
        for v in best.headings_deg
        if any(abs(wrap_deg(q.headings_deg[v] - best.headings_deg[v])) > MATERIAL_DEG for q in weighty)
    )
    marks = sorted(
        n
        for n in best.landmarks
        if not n.startswith(FEATURE_NAME)
        and any(np.hypot(*(q.landmarks[n] - best.landmarks[n])[:2]) > 0.25 * problem.scale_m for q in weighty)
    )
    return replace(
        best,
        heading_sigmas_deg=headings,
        position_sigmas_m=positions,
        landmark_covariances=covariances,
        plans=tuple(plans),
        ambiguous_views=tuple(views),
        ambiguous_landmarks=tuple(marks),
    )


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
    (from matched features), each one more weighted residual. A (view, landmark) pair sighted twice counts
    once (the last). Raises ValueError when a view shares fewer than 2 landmarks with the others."""
    sightings = list({(s.view, s.landmark): s for s in sightings}.values())
    if ranged is None:
        ranged = any(s.distance_m is not None for s in sightings)
    heading0, position0, marks0 = _initialise(views, sightings, anchor, guess_m)
    problem = LayoutProblem(views, sightings, anchor, guess_m, guess_sigma_m, ranged, turns)
    greedy = problem.pack(
        np.array([heading0[v] for v in problem.frames]),
        np.array([position0[v] for v in problem.frames]),
        np.array([marks0[n] for n in problem.names]),
    )
    minima = search_layouts(problem, greedy)
    measured = len(problem.sightings) + len(problem.ranged) + len(problem.turns)
    dof = measured - problem.size
    inflate = max(1.0, minima[0].chi2 / dof) if dof > 0 else 1.0
    solution = _mixed(problem, [_plan(problem, found, inflate) for found in minima])
    notes = []
    if inflate > 1.5:
        notes.append(
            f"the sightings fit worse than their stated sigmas (chi-square {minima[0].chi2:.0f} for {dof} degrees "
            f"of freedom): every ± is scaled up by {np.sqrt(inflate):.1f}"
        )
    close = problem.too_close(minima[0].x)
    if close:  # every plan found puts a landmark on top of or behind a camera that sees it
        where = ", ".join(f"the {n} in view {v}" for v, n in close[:4])
        notes.append(
            f"no plan found keeps every landmark in front of the views that see it ({where}): a degenerate fit, "
            "so the ± of those views are widened to at least 90°"
        )
        seeing = {v for v, _ in close}
        wide = {v: max(s, 90.0) if v in seeing else s for v, s in solution.heading_sigmas_deg.items()}
        solution = replace(solution, heading_sigmas_deg=wide)
    if dof <= 0:
        notes.append(
            f"{measured} measurements for {problem.size} unknowns: the plan rests on the distance guess; "
            "name more landmarks or give distances"
        )
    return replace(solution, notes=tuple(notes))
