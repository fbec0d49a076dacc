"""Scored rows as every aggregation rule reads them: the row shape, a mean, and mean scores per group.

A benchmark's own aggregation (in its module under :mod:`spatialclaw.benchmarks.specs`) takes rows of this
shape and returns the ``overall``, ``categories`` and ``counts`` of an
:class:`~spatialclaw.benchmarks.scoring.aggregation.Aggregate`; an unscored row's missing score counts as 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

__all__ = ["Row", "by_category", "group_scores", "mean"]


class Row(Protocol):
    """What aggregation reads of a result row."""

    task_id: str
    category: str | None
    score: float | None
    meta: dict[str, Any]


def mean(values: Iterable[float]) -> float | None:
    """The mean, or None for no values."""
    values = list(values)
    return sum(values) / len(values) if values else None


def group_scores(rows: Iterable[Row], key: Callable[[Row], Any]) -> dict[str, list[float]]:
    """The rows' scores (None as 0) grouped by ``str(key(row))``."""
    groups: dict[str, list[float]] = {}
    for row in rows:
        groups.setdefault(str(key(row)), []).append(row.score or 0.0)
    return groups


def by_category(rows: Sequence[Row]) -> tuple[dict[str, float], dict[str, int]]:
    """The mean score and the row count per category (``"uncategorized"`` for none), sorted by category."""
    groups = group_scores(rows, lambda r: r.category or "uncategorized")
    return {k: sum(v) / len(v) for k, v in sorted(groups.items())}, {k: len(v) for k, v in sorted(groups.items())}
