"""The paper's aggregation for benchmarks that run some questions without scoring them (MindCube's translation).

:func:`micro_scored` takes scored rows (anything with ``task_id``, ``category``, ``score`` and ``meta``) and
returns the keyword arguments of :class:`~spatialclaw.benchmarks.aggregation.Aggregate` except ``n`` and
``rule``; :data:`~spatialclaw.benchmarks.aggregation.AGGREGATORS` registers it as ``micro_paper_scored``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["micro_scored"]


class Row(Protocol):
    task_id: str
    category: str | None
    score: float | None
    meta: dict[str, Any]


def micro_scored(rows: Sequence[Row]) -> dict[str, Any]:
    """Rows whose ``meta["paper_scored"]`` is False are left out of every number; overall = the mean over the
    rest (an unscored row's missing score counts as 0), categories likewise; ``counts["unscored"]`` says how
    many were left out."""
    scored = [r for r in rows if r.meta.get("paper_scored", True) is not False]
    groups: dict[str, list[float]] = {}
    for row in scored:
        groups.setdefault(row.category or "uncategorized", []).append(row.score or 0.0)
    categories = {k: sum(v) / len(v) for k, v in sorted(groups.items())}
    counts = {k: len(v) for k, v in sorted(groups.items())}
    counts["unscored"] = len(rows) - len(scored)
    overall = sum(r.score or 0.0 for r in scored) / len(scored) if scored else None
    return {"overall": overall, "categories": categories, "counts": counts}
