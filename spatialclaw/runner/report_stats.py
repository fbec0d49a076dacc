"""Uncertainty for ``report``: seeded bootstrap intervals of a run's score and of a paired tool gain.

A run's interval resamples its tasks with replacement (:data:`BOOTSTRAP_SAMPLES` times, generator
``numpy.random.default_rng(BOOTSTRAP_SEED)``) and recomputes the overall score by the benchmark's own
rule each time; the interval is the central :data:`CONFIDENCE` percentile range of those scores. A tool
gain is computed on the tasks both runs have a row for (a paired comparison): its point value is the run's
score minus the baseline's on exactly those tasks, and its interval resamples those shared tasks, the same
draw for both runs, and takes the percentiles of the differences. The same runs always give the same
interval. Scores and intervals are fractions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spatialclaw.runner.run import aggregate_rows

__all__ = ["BOOTSTRAP_SAMPLES", "BOOTSTRAP_SEED", "CONFIDENCE", "Comparison", "compare", "score_interval"]

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95

Interval = tuple[float, float]


def _overall(rows: Sequence[dict[str, Any]], tasks: dict[str, Any], rule: str) -> float | None:
    return aggregate_rows(list(rows), tasks, rule).overall


def _percentiles(values: list[float]) -> Interval | None:
    import numpy as np

    if not values:
        return None
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(np.asarray(values, dtype=float), [tail, 100 - tail])
    return float(low), float(high)


def _draws(n: int) -> Any:
    import numpy as np

    return np.random.default_rng(BOOTSTRAP_SEED).integers(0, n, size=(BOOTSTRAP_SAMPLES, n))


def score_interval(rows: dict[str, dict[str, Any]], tasks: dict[str, Any], rule: str) -> Interval | None:
    """The bootstrap interval of the overall score of ``rows`` (by task id; see the module docstring);
    None for no rows, or when the rule gives no overall on a resample."""
    ordered = list(rows.values())
    if not ordered:
        return None
    scores: list[float] = []
    for draw in _draws(len(ordered)):
        value = _overall([ordered[i] for i in draw], tasks, rule)
        if value is None:
            return None
        scores.append(value)
    return _percentiles(scores)


@dataclass
class Comparison:
    """A run against its no-tools baseline on their shared tasks: task counts, the scores and the gain
    on the shared tasks (fractions), per category too, and the gain's bootstrap interval."""

    run_tasks: int
    base_tasks: int
    shared: int
    run_score: float | None
    base_score: float | None
    gain: float | None
    gain_interval: Interval | None
    category_gain: dict[str, float] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        """Whether either run has tasks the other lacks (so the runs' own overall scores differ in tasks)."""
        return self.shared != self.run_tasks or self.shared != self.base_tasks

    def warning(self, run: str, base: str) -> str:
        """One line saying that the comparison uses the shared tasks only, with the counts."""
        return (
            f"{run} has {self.run_tasks} task(s) with a row and its no-tools baseline {base} has "
            f"{self.base_tasks}; the tool gain compares their {self.shared} shared task(s) only"
        )


def compare(
    run_rows: dict[str, dict[str, Any]],
    base_rows: dict[str, dict[str, Any]],
    tasks: dict[str, Any],
    rule: str,
) -> Comparison:
    """``run_rows`` against ``base_rows`` (rows by task id) on the tasks both have (see the module docstring)."""
    shared = [task_id for task_id in run_rows if task_id in base_rows]
    ours = [run_rows[t] for t in shared]
    theirs = [base_rows[t] for t in shared]
    run_agg = aggregate_rows(ours, tasks, rule)
    base_agg = aggregate_rows(theirs, tasks, rule)
    gain = None
    if run_agg.overall is not None and base_agg.overall is not None:
        gain = run_agg.overall - base_agg.overall
    differences: list[float] = []
    if gain is not None and shared:
        for draw in _draws(len(shared)):
            ours_value = _overall([ours[i] for i in draw], tasks, rule)
            theirs_value = _overall([theirs[i] for i in draw], tasks, rule)
            if ours_value is None or theirs_value is None:
                differences = []
                break
            differences.append(ours_value - theirs_value)
    return Comparison(
        run_tasks=len(run_rows),
        base_tasks=len(base_rows),
        shared=len(shared),
        run_score=run_agg.overall,
        base_score=base_agg.overall,
        gain=gain,
        gain_interval=_percentiles(differences),
        category_gain={
            c: v - base_agg.categories[c] for c, v in run_agg.categories.items() if c in base_agg.categories
        },
    )
