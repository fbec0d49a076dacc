"""``rescore``: recompute every row's score from its recorded answer, without calling a model.

The answer comes from the row, or, when a row lacks one, from the ``answer`` event of its trajectory.
Ground truths come from ``RUN/tasks.jsonl``. The results file is rewritten atomically, and each row's
previous score is kept as ``previous_score`` when it changed. Lines of the results file that cannot be read
are not rescored: they are named, and the rewrite keeps them in ``results.jsonl.unreadable``.

A run with a judge (``bench --judge``), or a rescore given one, hands the rows the rules leave to a judge to
it (:mod:`spatialclaw.runner.judge`); verdicts already in ``RUN/judge/`` are reused, so a rescore asks the
judge only about answers it has not judged.
"""

from __future__ import annotations

from pathlib import Path

from spatialclaw.benchmarks.scoring.aggregation import Aggregate
from spatialclaw.runner.episode import score_row
from spatialclaw.runner.judge import Judge
from spatialclaw.runner.run import aggregate_rows
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.run_dir import RunDir

__all__ = ["rescore_run"]


def rescore_run(path: str | Path, problems: list[str] | None = None, judge: str | None = None) -> tuple[Aggregate, int]:
    """Rescore ``path`` in place; returns the new aggregate and how many scores changed. Each unreadable line
    of the results file (and of a trajectory read for its answer) is appended to ``problems`` when given.
    ``judge``: the judge's model spec (default: the run's own judge, if it has one)."""
    run_dir = RunDir(path)
    manifest = run_dir.manifest()
    spec = judge or manifest["config"].get("judge")
    judging = None if spec is None else Judge(spec, run_dir.path)
    tasks = {t.task_id: t for t in run_dir.tasks()}
    by_task, unreadable = run_dir.results.read()
    rows = list(by_task.values())
    if problems is not None:
        problems += [f"{problem} (kept in {run_dir.results.unreadable_path.name})" for problem in unreadable]
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
                episode = load_episode(trajectory)
                answer = episode.answer
                row["answer"] = answer
                if problems is not None:
                    problems += episode.unreadable
        before = row.get("score")
        try:
            row.update(score_row(task, answer))
            row.pop("score_error", None)
            for key in ("judge", "judge_error", "rule_score"):
                row.pop(key, None)
            if judging is not None:
                trajectory = run_dir.path / row["trajectory_dir"] if row.get("trajectory_dir") else None
                judging.judge_row(task, row, trajectory)
        except ValueError as failure:
            row.update({"score": None, "score_error": str(failure)})
        if row.get("score") != before:
            row["previous_score"] = before
            changed += 1
    if judging is not None:
        judging.close()
    run_dir.results.rewrite(rows)
    return aggregate_rows(rows, tasks, manifest["aggregation"]), changed
