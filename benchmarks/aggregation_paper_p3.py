"""The paper's aggregation rules for SPAR-Bench (levels), SpatialTree-Bench (micro over scored rows) and
Video-MME-v2 (groups of four with level and head breakdowns).

Each rule takes scored rows (anything with ``task_id``, ``category``, ``score`` and ``meta``) and returns the
keyword arguments of :class:`~spatialclaw.benchmarks.aggregation.Aggregate` except ``n`` and ``rule``
(``overall``, ``categories``, ``counts``); :data:`~spatialclaw.benchmarks.aggregation.AGGREGATORS` wraps them.
Scores stay in [0, 1] (the paper reports them x100).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from spatialclaw.benchmarks.official import literal

__all__ = ["SPAR_LEVELS", "spar_levels", "spatialtree_scored", "videommev2_groups"]


class Row(Protocol):
    task_id: str
    category: str | None
    score: float | None
    meta: dict[str, Any]


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _groups(rows: Iterable[Row], key: Any) -> dict[str, list[float]]:
    groups: dict[str, list[float]] = {}
    for row in rows:
        groups.setdefault(str(key(row)), []).append(row.score or 0.0)
    return groups


def _by_category(rows: Sequence[Row]) -> tuple[dict[str, float], dict[str, int]]:
    groups = _groups(rows, lambda r: r.category or "uncategorized")
    return {k: sum(v) / len(v) for k, v in sorted(groups.items())}, {k: len(v) for k, v in sorted(groups.items())}


#: SPAR-Bench's levels: the task names in each; every other task is High.
SPAR_LEVELS = {
    "Low": (
        "depth_prediction_oc",
        "depth_prediction_oo",
        "distance_prediction_oc",
        "distance_prediction_oo",
        "depth_prediction_oc_mv",
        "depth_prediction_oo_mv",
        "distance_prediction_oc_mv",
        "distance_prediction_oo_mv",
    ),
    "Middle": ("view_change_infer", "position_matching", "camera_motion_infer"),
}


def spar_levels(rows: Sequence[Row]) -> dict[str, Any]:
    """SPAR-Bench: per-task means; overall = their mean; ``level:Low/Middle/High`` = the mean of the task
    means in each level (Low: the eight depth and distance tasks; Middle: view change, position matching,
    camera motion; High: the rest)."""
    cats, counts = _by_category(rows)
    levels: dict[str, list[float]] = {}
    for task, value in cats.items():
        level = next((name for name, tasks in SPAR_LEVELS.items() if task in tasks), "High")
        levels.setdefault(level, []).append(value)
    extra = {f"level:{k}": sum(v) / len(v) for k, v in sorted(levels.items())}
    return {"overall": _mean(cats.values()), "categories": {**cats, **extra}, "counts": counts}


def spatialtree_scored(rows: Sequence[Row]) -> dict[str, Any]:
    """SpatialTree-Bench: rows with ``meta["paper_scored"]`` False (LLM-judged or simulator metrics) are left
    out; overall = the mean over the rest; breakdowns per level, level/category, level/category/subcategory
    (``meta["spatree"]``), ``question_type`` and ``metricfunc``."""
    scored = [r for r in rows if r.meta.get("paper_scored", True) is not False]
    cats, counts = _by_category(scored)
    keys = {
        "level": lambda r: "/".join(r.meta.get("spatree", [])[:1]),
        "level/category": lambda r: "/".join(r.meta.get("spatree", [])[:2]),
        "level/category/subcategory": lambda r: "/".join(r.meta.get("spatree", [])[:3]),
        "question_type": lambda r: r.meta.get("question_type"),
        "metricfunc": lambda r: r.meta.get("metricfunc"),
    }
    extra: dict[str, float] = {}
    for label, key in keys.items():
        for value, scores in sorted(_groups(scored, key).items()):
            extra[f"{label}:{value}"] = sum(scores) / len(scores)
    counts["unscored"] = len(rows) - len(scored)
    return {"overall": _mean(r.score or 0.0 for r in scored), "categories": {**cats, **extra}, "counts": counts}


_RELEVANCE = {0: 0.0, 1: 1 / 16, 2: 4 / 16, 3: 9 / 16, 4: 1.0}


def _logic(right: list[bool], structure: Any) -> float:
    """A logic group's score: the run of right answers from the first question, weighted by its structure."""
    last = -1
    for index, ok in enumerate(right):
        if not ok:
            break
        last = index
    structure = literal(structure)
    if structure == [1, [2, 3], 4]:
        weights = {0: 0.0, 1: 1 / 12, 2: 4 / 12, 3: 7 / 12, 4: 1.0}
        if last == 0 and len(right) > 2 and right[2]:
            last += 1
    elif structure == [[1, 2], 3, 4]:
        weights = {0: 0.0, 1: 1 / 10, 2: 2 / 10, 3: 5 / 10, 4: 1.0}
        if last == -1 and len(right) > 1 and right[1]:
            last += 1
    else:
        weights = _RELEVANCE
    return weights.get(last + 1, 0.0)


def _position(row: Row) -> tuple[int, str]:
    """A question's place in its group: the number after the last ``-`` of its question id."""
    tail = str(row.meta.get("question_id", row.task_id)).rsplit("-", 1)[-1]
    return (int(tail), "") if tail.isdigit() else (0, tail)


def videommev2_groups(rows: Sequence[Row]) -> dict[str, Any]:
    """Video-MME-v2: the four questions of a video form a group (``meta["video_id"]``, ordered by
    ``meta["question_id"]``; in the paper's loader order these are four consecutive samples); its metadata
    (group type and structure, level, heads) come from its last question. Relevance groups score by the
    count right (0, 1/16, 4/16, 9/16, 1) and keep the linear count/4; logic groups by the chain. Overall =
    mean over groups; breakdowns ``level_N``, ``relevance_score``, ``relevance_linear_score``,
    ``logic_score``, ``second_head:X`` and ``third_head:X``."""
    cats, counts = _by_category(rows)
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(str(row.meta.get("video_id", row.task_id)), []).append(row)
    scores: dict[str, list[float]] = {}
    every: list[float] = []
    for members in groups.values():
        members.sort(key=_position)
        right = [(r.score or 0.0) >= 1.0 for r in members]
        meta = members[-1].meta
        if meta.get("group_type") == "logic":
            value = _logic(right, meta.get("group_structure"))
            scores.setdefault("logic_score", []).append(value)
        else:
            value = _RELEVANCE.get(sum(right), 0.0)
            scores.setdefault("relevance_score", []).append(value)
            scores.setdefault("relevance_linear_score", []).append(sum(right) / 4)
        every.append(value)
        for key, label in (("level", "level_"), ("second_head", "second_head:"), ("third_head", "third_head:")):
            if meta.get(key) not in (None, ""):
                scores.setdefault(f"{label}{meta[key]}", []).append(value)
    extra = {k: sum(v) / len(v) for k, v in sorted(scores.items())}
    counts["groups"] = len(groups)
    return {"overall": _mean(every), "categories": {**cats, **extra}, "counts": counts}
