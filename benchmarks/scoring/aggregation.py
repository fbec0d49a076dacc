"""Aggregation: a benchmark's scored rows into its overall and per-category numbers, by its own rule.

Every benchmark reports the mean score per category and an overall number computed by that benchmark's
own rule (:data:`AGGREGATORS`): ``micro`` (mean over questions), ``macro`` (mean over categories),
``vsi_bench`` (macro over question types after merging the three relative-direction difficulties),
``cv_bench`` (mean of the 2D score, itself the mean of ADE20K and COCO, and the 3D Omni3D score),
``circular`` (a question counts only when every circular variant of it is right), ``videomme_v2``
(grouped non-linear scores per video) and ``spatialtree`` (means up the ability tree).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spatialclaw.benchmarks.aggregation_paper_p2 import micro_scored
from spatialclaw.benchmarks.aggregation_paper_p3 import spar_levels, spatialtree_scored, videommev2_groups
from spatialclaw.benchmarks.official import literal

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


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _by_category(rows: Sequence[ScoredRow]) -> tuple[dict[str, float], dict[str, int]]:
    groups: dict[str, list[float]] = {}
    for row in rows:
        groups.setdefault(row.category or "uncategorized", []).append(row.score or 0.0)
    return {k: sum(v) / len(v) for k, v in sorted(groups.items())}, {k: len(v) for k, v in sorted(groups.items())}


def aggregate_micro(rows: Sequence[ScoredRow]) -> Aggregate:
    """Overall = mean over all questions (MMSI-Bench, MindCube, ERQA, OmniSpatial, ViewSpatial-Bench, ...)."""
    cats, counts = _by_category(rows)
    return Aggregate(_mean(r.score or 0.0 for r in rows), cats, counts, len(rows), "micro")


def aggregate_macro(rows: Sequence[ScoredRow]) -> Aggregate:
    """Overall = mean of the per-category means (BLINK over subtasks, SPAR-Bench over tasks)."""
    cats, counts = _by_category(rows)
    return Aggregate(_mean(cats.values()), cats, counts, len(rows), "macro")


VSI_DIRECTION_TYPES = ("object_rel_direction_easy", "object_rel_direction_medium", "object_rel_direction_hard")


def aggregate_vsi_bench(rows: Sequence[ScoredRow]) -> Aggregate:
    """VSI-Bench: mean per question type; the three relative-direction difficulties are averaged into one
    ``object_rel_direction`` entry (mean of the three means); overall = mean over the resulting types."""
    cats, counts = _by_category(rows)
    merged = {k: v for k, v in cats.items() if k not in VSI_DIRECTION_TYPES}
    directions = [cats[k] for k in VSI_DIRECTION_TYPES if k in cats]
    if directions:
        merged["object_rel_direction"] = sum(directions) / len(directions)
    return Aggregate(_mean(merged.values()), dict(sorted(merged.items())), counts, len(rows), "vsi_bench")


def aggregate_cv_bench(rows: Sequence[ScoredRow]) -> Aggregate:
    """CV-Bench: 2D = mean of the ADE20K and COCO accuracies, 3D = the Omni3D accuracy,
    overall = (2D + 3D) / 2; ``meta["source"]`` names each question's source dataset."""
    cats, counts = _by_category(rows)
    by_source: dict[str, list[float]] = {}
    for row in rows:
        by_source.setdefault(str(row.meta.get("source", "")), []).append(row.score or 0.0)
    src = {k: sum(v) / len(v) for k, v in by_source.items()}
    two_d = _mean(src[s] for s in ("ADE20K", "COCO") if s in src)
    three_d = src.get("Omni3D")
    overall = _mean(x for x in (two_d, three_d) if x is not None)
    extra = {f"source:{k}": v for k, v in sorted(src.items()) if k}
    if two_d is not None:
        extra["2D"] = two_d
    if three_d is not None:
        extra["3D"] = three_d
    return Aggregate(overall, {**cats, **extra}, counts, len(rows), "cv_bench")


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


def _video_mme_v2_logic(scores: list[bool], structure: Any) -> float:
    """Video-MME-v2 chain scoring of a logic group: the run of right answers from the first question,
    weighted by the group's structure (the official map, divided by 100)."""
    last = -1
    for index, right in enumerate(scores):
        if not right:
            break
        last = index
    structure = literal(structure)
    if structure == [1, 2, 3, 4]:
        weights = {0: 0.0, 1: 1 / 16, 2: 4 / 16, 3: 9 / 16, 4: 1.0}
    elif structure == [1, [2, 3], 4]:
        weights = {0: 0.0, 1: 1 / 12, 2: 4 / 12, 3: 7 / 12, 4: 1.0}
        if last == 0 and len(scores) > 2 and scores[2]:
            last += 1
    elif structure == [[1, 2], 3, 4]:
        weights = {0: 0.0, 1: 1 / 10, 2: 2 / 10, 3: 5 / 10, 4: 1.0}
        if last == -1 and len(scores) > 1 and scores[1]:
            last += 1
    else:
        raise ValueError(f"unknown Video-MME-v2 group_structure {structure!r}")
    return weights.get(last + 1, 0.0)


def aggregate_video_mme_v2(rows: Sequence[ScoredRow]) -> Aggregate:
    """Video-MME-v2 (lmms-eval ``videomme_v2_aggregate_results``): the questions of one video form a group,
    ordered by the number after the last ``-`` of ``meta["question_id"]``; a ``relevance`` group scores
    by how many are right (0, 1/16, 4/16, 9/16, 1), a ``logic`` group by :func:`_video_mme_v2_logic`, any
    other by the share right; overall = mean over groups. Categories: per-question means and
    ``group:<type>`` group means."""
    cats, counts = _by_category(rows)
    groups: dict[str, list[ScoredRow]] = {}
    for row in rows:
        groups.setdefault(str(row.meta.get("video_id", row.task_id)), []).append(row)
    by_type: dict[str, list[float]] = {}
    for members in groups.values():
        members.sort(key=lambda r: int(str(r.meta.get("question_id", "0")).split("-")[-1]))
        right = [(r.score or 0.0) >= 1.0 for r in members]
        kind = str(members[0].meta.get("group_type"))
        if kind == "relevance":
            value = {0: 0.0, 1: 1 / 16, 2: 4 / 16, 3: 9 / 16, 4: 1.0}.get(sum(right), 0.0)
        elif kind == "logic":
            value = _video_mme_v2_logic(right, members[0].meta.get("group_structure"))
        else:
            value = sum(right) * 0.25
        by_type.setdefault(kind, []).append(value)
    every = [v for values in by_type.values() for v in values]
    extra = {f"group:{k}": sum(v) / len(v) for k, v in sorted(by_type.items())}
    return Aggregate(_mean(every), {**cats, **extra}, counts, len(rows), "videomme_v2")


def aggregate_spatialtree(rows: Sequence[ScoredRow]) -> Aggregate:
    """SpatialTree-Bench: each question sits at a leaf of the ability tree (``meta["spatree"]``, e.g.
    ``["L1", "Geometry", "Size"]``); a leaf scores the mean of its questions, every inner node the mean of
    its children, overall = the root. lmms-eval weights children by ``spatree_hierarchy.json``; that file
    is not reproduced here, so children weigh equally (the official weights default to 1 too)."""
    cats, counts = _by_category(rows)
    leaves: dict[tuple[str, ...], list[float]] = {}
    for row in rows:
        path = tuple(str(p) for p in (row.meta.get("spatree") or [row.category or "uncategorized"]))
        leaves.setdefault(path, []).append(row.score or 0.0)

    def node(prefix: tuple[str, ...]) -> float | None:
        if prefix in leaves and not any(len(p) > len(prefix) and p[: len(prefix)] == prefix for p in leaves):
            return sum(leaves[prefix]) / len(leaves[prefix])
        children = sorted({p[len(prefix)] for p in leaves if len(p) > len(prefix) and p[: len(prefix)] == prefix})
        values = [v for v in (node(prefix + (c,)) for c in children) if v is not None]
        return sum(values) / len(values) if values else None

    levels = {f"level:{top}": node((top,)) for top in sorted({p[0] for p in leaves})}
    return Aggregate(
        node(()), {**cats, **{k: v for k, v in levels.items() if v is not None}}, counts, len(rows), "spatialtree"
    )


AGGREGATORS: dict[str, Callable[[Sequence[ScoredRow]], Aggregate]] = {
    "micro": aggregate_micro,
    "macro": aggregate_macro,
    "vsi_bench": aggregate_vsi_bench,
    "cv_bench": aggregate_cv_bench,
    "circular": aggregate_circular,
    "videomme_v2": aggregate_video_mme_v2,
    "spatialtree": aggregate_spatialtree,
    "micro_paper_scored": lambda rows: Aggregate(**micro_scored(rows), n=len(rows), rule="micro_paper_scored"),
    "spar_levels": lambda rows: Aggregate(**spar_levels(rows), n=len(rows), rule="spar_levels"),
    "spatialtree_scored": lambda rows: Aggregate(**spatialtree_scored(rows), n=len(rows), rule="spatialtree_scored"),
    "videommev2_groups": lambda rows: Aggregate(**videommev2_groups(rows), n=len(rows), rule="videommev2_groups"),
}


def aggregate(rows: Sequence[ScoredRow], rule: str = "micro") -> Aggregate:
    """Aggregate scored rows by the named rule (see :data:`AGGREGATORS`)."""
    try:
        return AGGREGATORS[rule](rows)
    except KeyError:
        raise ValueError(f"unknown aggregation rule {rule!r}; use one of {', '.join(AGGREGATORS)}") from None
