"""``rescore``: recompute every row's score from its recorded answer, without calling a model.

The answer comes from the row, or, when a row lacks one, from the ``answer`` event of its trajectory.
Ground truths come from ``RUN/tasks.jsonl``. The results file is rewritten atomically, and each row's
previous score is kept as ``previous_score`` when it changed.
"""

from __future__ import annotations

from pathlib import Path

from spatialclaw.benchmarks.aggregation import Aggregate
from spatialclaw.runner.episode import score_row
from spatialclaw.runner.run import aggregate_rows
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.run_dir import RunDir

__all__ = ["rescore_run"]


def rescore_run(path: str | Path) -> tuple[Aggregate, int]:
    """Rescore ``path`` in place; returns the new aggregate and how many scores changed."""
    run_dir = RunDir(path)
    manifest = run_dir.manifest()
    tasks = {t.task_id: t for t in run_dir.tasks()}
    rows = list(run_dir.results.load().values())
    changed = 0
    for row in rows:
        task = tasks.get(row["task_id"])
        if task is None:
            raise ValueError(
                f"{run_dir.path}: row for unknown task {row['task_id']!r}; tasks.jsonl and results.jsonl disagree"
            )
        answer = row.get("answer")
        if answer is None and row.get("trajectory_dir"):
            trajectory = run_dir.path / row["trajectory_dir"]
            if (trajectory / "episode.jsonl").exists():
                answer = load_episode(trajectory).answer
                row["answer"] = answer
        before = row.get("score")
        try:
            row.update(score_row(task, answer))
            row.pop("score_error", None)
        except ValueError as failure:
            row.update({"score": None, "score_error": str(failure)})
        if row.get("score") != before:
            row["previous_score"] = before
            changed += 1
    run_dir.results.rewrite(rows)
    return aggregate_rows(rows, tasks, manifest["aggregation"]), changed
