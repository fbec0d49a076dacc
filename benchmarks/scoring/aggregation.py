"""Aggregation: a benchmark's scored rows into its overall and per-category numbers, by its own rule.

Every benchmark reports the mean score per category and an overall number computed by that benchmark's
own rule (:data:`AGGREGATORS`): ``micro`` (mean over questions), ``macro`` (mean over categories),
``vsi_bench`` (macro over question types after merging the three relative-direction difficulties),
``cv_bench`` (mean of the 2D score, itself the mean of ADE20K and COCO, and the 3D Omni3D score),
``circular`` (a question counts only when every circular variant of it is right), ``videomme_v2``
(grouped non-linear scores per video) and ``spatialtree`` (means up the ability tree).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spatialclaw.benchmarks.scoring.rows import Row, by_category, mean
from spatialclaw.benchmarks.specs import cv_bench, spar_bench, spatialtree_bench, video_mme_v2, vsi_bench

__all__ = [
    "AGGREGATORS",
    "Aggregate",
    "ScoredRow",
    "aggregate",
]


@dataclass
class ScoredRow:
    """The part of a result row aggregation needs. ``score`` is None for an unscored row (counted as 0)."""

    task_id: str
    category: str | None
    score: float | None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Aggregate:
    """A benchmark's numbers: ``overall`` and per-category means (both in [0, 1]), question counts, the rule."""

    overall: float | None
    categories: dict[str, float]
    counts: dict[str, int]
    n: int
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall,
            "categories": self.categories,
            "counts": self.counts,
            "n": self.n,
            "rule": self.rule,
        }


def aggregate_micro(rows: Sequence[ScoredRow]) -> Aggregate:
    """Overall = mean over all questions (MMSI-Bench, MindCube, ERQA, OmniSpatial, ViewSpatial-Bench, ...)."""
    cats, counts = by_category(rows)
    return Aggregate(mean(r.score or 0.0 for r in rows), cats, counts, len(rows), "micro")


def aggregate_macro(rows: Sequence[ScoredRow]) -> Aggregate:
    """Overall = mean of the per-category means (BLINK over subtasks, SPAR-Bench over tasks)."""
    cats, counts = by_category(rows)
    return Aggregate(mean(cats.values()), cats, counts, len(rows), "macro")


def aggregate_circular(rows: Sequence[ScoredRow]) -> Aggregate:
    """Circular evaluation (3DSRBench): rows sharing ``meta["circular_group"]`` are one question, right
    only when every variant is right; overall = mean over questions, categories likewise."""
    groups: dict[str, list[ScoredRow]] = {}
    for row in rows:
        groups.setdefault(str(row.meta.get("circular_group", row.task_id)), []).append(row)
    collapsed = [
        ScoredRow(key, members[0].category, min(m.score or 0.0 for m in members), members[0].meta)
        for key, members in groups.items()
    ]
    result = aggregate_micro(collapsed)
    result.rule = "circular"
    return result


def micro_scored(rows: Sequence[Row]) -> dict[str, Any]:
    """For benchmarks that run some questions without scoring them (MindCube's translation): rows whose
    ``meta["paper_scored"]`` is False are left out of every number; overall = the mean over the rest (an
    unscored row's missing score counts as 0), categories likewise; ``counts["unscored"]`` says how many
    were left out."""
    scored = [r for r in rows if r.meta.get("paper_scored", True) is not False]
    categories, counts = by_category(scored)
    counts["unscored"] = len(rows) - len(scored)
    return {"overall": mean(r.score or 0.0 for r in scored), "categories": categories, "counts": counts}


def _rule(name: str, own: Callable[[Sequence[Row]], dict[str, Any]]) -> Callable[[Sequence[ScoredRow]], Aggregate]:
    """A benchmark's own rule (overall, categories, counts) as an aggregator that names it."""
    return lambda rows: Aggregate(**own(rows), n=len(rows), rule=name)


AGGREGATORS: dict[str, Callable[[Sequence[ScoredRow]], Aggregate]] = {
    "micro": aggregate_micro,
    "macro": aggregate_macro,
    "vsi_bench": _rule("vsi_bench", vsi_bench.aggregate_vsi_bench),
    "cv_bench": _rule("cv_bench", cv_bench.aggregate_cv_bench),
    "circular": aggregate_circular,
    "videomme_v2": _rule("videomme_v2", video_mme_v2.aggregate_video_mme_v2),
    "spatialtree": _rule("spatialtree", spatialtree_bench.aggregate_spatialtree),
    "micro_paper_scored": _rule("micro_paper_scored", micro_scored),
    "spar_levels": _rule("spar_levels", spar_bench.spar_levels),
    "spatialtree_scored": _rule("spatialtree_scored", spatialtree_bench.spatialtree_scored),
    "videommev2_groups": _rule("videommev2_groups", video_mme_v2.videommev2_groups),
}


def aggregate(rows: Sequence[ScoredRow], rule: str = "micro") -> Aggregate:
    """Aggregate scored rows by the named rule (see :data:`AGGREGATORS`)."""
    try:
        return AGGREGATORS[rule](rows)
    except KeyError:
        raise ValueError(f"unknown aggregation rule {rule!r}; use one of {', '.join(AGGREGATORS)}") from None
