"""Every floor plan that fits: a multi-start search over the views' headings for ``scene.link_views``
(``search_layouts``), so that a plan which fits the bearings as well as the one found is reported, not hidden.

Bearings seen from views far apart often fit more than one floor plan: without distances, a view that shares
only two landmarks with the others can turn and slide along a circle and still see both where it does, and
the stated distance guess is all that tells the plans apart. A local fit then lands in one of them and its
covariance, which describes only that minimum, states a few degrees. Here: starts from the greedy placement
(``viewlinks``) and from ``STARTS`` headings drawn at random (a fixed seed) for the free views (views that
measured turns hold together, from matched features, turn as one), each with the positions that fit those
headings linearly, are fitted briefly; the distinct minima are refined in full
and every one whose chi-square is within ``MAX_DELTA_CHI2`` of the best is kept, weighted by
``exp(-delta chi2 / 2)`` (its likelihood relative to the best under the stated sigmas and guesses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from spatialclaw.primitives.scene.layout_problem import LayoutProblem

__all__ = ["MATERIAL_DEG", "MAX_DELTA_CHI2", "STARTS", "Minimum", "search_layouts"]

STARTS = 48  # random heading starts (besides the greedy placement)
BRIEF_NFEV = 40  # function evaluations of a start's brief fit
REFINE = 8  # distinct minima refined in full
REFINE_NFEV = 400  # function evaluations of a full fit at most
MAX_DELTA_CHI2 = 6.0  # a floor plan whose chi-square is within this of the best fits about as well (weight >= 5 %)
SAME_DEG = 3.0  # minima whose headings all agree within this are one floor plan
MATERIAL_DEG = 10.0  # floor plans whose headings differ by more than this differ materially


@dataclass(frozen=True)
class Minimum:
    """One floor plan that fits: parameters ``x`` of the ``LayoutProblem``, its chi-square, its weight (the
    weights of the kept plans sum to 1) and its (V,) headings in degrees."""

    x: np.ndarray
    chi2: float
    weight: float
    headings_deg: np.ndarray


def _wrap(angle_deg: np.ndarray) -> np.ndarray:
    return np.asarray((np.asarray(angle_deg) + 180.0) % 360.0 - 180.0)


def _distinct(
    problem: LayoutProblem, found: Sequence[tuple[np.ndarray, float]], tolerance: float
) -> list[tuple[np.ndarray, float]]:
    """The lowest-chi-square member of each group of fits whose headings agree within ``tolerance`` degrees."""
    kept: list[tuple[np.ndarray, float]] = []
    for x, chi2 in sorted(found, key=lambda item: item[1]):
        h = problem.unpack(x)[0]
        if all(np.abs(_wrap(h - problem.unpack(y)[0])).max() > tolerance for y, _ in kept):
            kept.append((x, chi2))
    return kept


def _turn_groups(problem: LayoutProblem) -> list[np.ndarray]:
    """The free views in groups that measured turns (matched features) hold together, each group's view
    rows; a group holding the anchor or a given heading turns with it and is left out (it is not free)."""
    parent = list(range(len(problem.frames)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b, _, _ in problem.turns:
        parent[root(a)] = root(b)
    free = set(problem.h_cols.tolist())
    groups: dict[int, list[int]] = {}
    for i in range(len(problem.frames)):
        groups.setdefault(root(i), []).append(i)
    return [np.array(members) for members in groups.values() if set(members) <= free]


def search_layouts(problem: LayoutProblem, greedy: np.ndarray | None, seed: int = 0) -> list[Minimum]:
    """The floor plans that fit about as well as the best (best first, see the module doc). ``greedy``: the
    parameters of the greedy placement, or None when there is none."""
    rng = np.random.default_rng(seed)
    starts = [] if greedy is None else [greedy]
    base = problem.unpack(greedy)[0] if greedy is not None else problem.fixed_h
    groups = _turn_groups(problem)
    if groups:
        for _ in range(STARTS):
            h = base.copy()
            for members in groups:
                h[members] += rng.uniform(-180.0, 180.0)
            starts.append(problem.linear_start(h))
    brief = [problem.fit(x0, max_nfev=BRIEF_NFEV) for x0 in starts]
    refined = [problem.fit(x, max_nfev=REFINE_NFEV) for x, _ in _distinct(problem, brief, SAME_DEG)[:REFINE]]
    found = [(x, chi2) for x, chi2 in _distinct(problem, refined, SAME_DEG) if not problem.too_close(x)] or refined[:1]
    best = min(chi2 for _, chi2 in found)
    kept = [(x, chi2) for x, chi2 in found if chi2 - best <= MAX_DELTA_CHI2]
    weights = np.exp(-0.5 * (np.array([chi2 for _, chi2 in kept]) - best))
    weights /= weights.sum()
    return [Minimum(x, chi2, float(w), problem.unpack(x)[0].copy()) for (x, chi2), w in zip(kept, weights, strict=True)]
