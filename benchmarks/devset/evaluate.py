"""The model-in-the-loop harness for the dev set (:mod:`spatialclaw.benchmarks.devset.build`).

A model (a person, a coding agent, any harness) answers each question twice: once by looking at the
images only, once by driving a spatial kernel through ``spatialclaw session``. The harness hands out
the questions without their answers, and scores both conditions from what the host recorded: the
kernel condition from the sessions' own trajectories (the answer the host validated and the cells
run), never from what the driver reports.

::

    python -m spatialclaw.benchmarks.devset DEV                         # DEV/tasks.jsonl + images
    python -m spatialclaw.benchmarks.devset.evaluate prepare DEV/tasks.jsonl EVAL
        # EVAL/questions.md: one block per question (ids, image paths, text, options) and the exact
        # `spatialclaw session start` command for the kernel condition (sessions under EVAL/sessions)
    python -m spatialclaw.benchmarks.devset.evaluate score DEV/tasks.jsonl EVAL --looking EVAL/looking.jsonl
        # a table per question class: looking-only vs kernel score, tool gain, steps; JSON last line
    python -m spatialclaw.benchmarks.devset.evaluate cells EVAL             # every cell the kernel ran, per question

``looking.jsonl`` holds one ``{"task_id": ..., "answer": ...}`` per line.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.benchmarks.data.local import load_local_tasks
from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.task import Task

__all__ = ["prepare", "score", "session_command"]

MAX_STEPS = 8


def session_command(task: Task, sessions: Path) -> str:
    """The ``spatialclaw session start`` command line for one task (kernel condition)."""
    words = [
        "spatialclaw",
        "session",
        "start",
        "--root",
        str(sessions),
        "--id",
        task.task_id,
        "--max-steps",
        str(MAX_STEPS),
        "--question",
        task.question,
        "--frames",
        *task.inputs[0].paths,
    ]
    if task.inputs[0].indices is not None:  # key frames that know their frame numbers in the source clip
        words += ["--indices", *(str(i) for i in task.inputs[0].indices)]
    if task.choices:
        words += ["--choices", *task.choices]
    else:
        words += ["--answer-type", task.answer_type]
    return shlex.join(words)


def prepare(tasks_path: Path, out: Path) -> Path:
    """Write ``out/questions.md`` (questions without answers, and the kernel-condition commands)."""
    out.mkdir(parents=True, exist_ok=True)
    sessions = (out / "sessions").resolve()
    blocks = []
    for task in load_local_tasks(tasks_path):
        options = "".join(f"\n    {chr(65 + i)}. {c}" for i, c in enumerate(task.choices or []))
        kind = "answer with the option letter" if task.choices else f"answer type: {task.answer_type}"
        images = "\n".join(_image_lines(task))
        blocks.append(
            f"## {task.task_id}\nimages:\n{images}\nquestion: {task.question}{options}\n({kind})\n"
            f"kernel condition:\n    {session_command(task, sessions)}\n"
        )
    path = out / "questions.md"
    path.write_text("\n".join(blocks))
    return path


def _image_lines(task: Task) -> list[str]:
    """One line per input image: its path, and its frame number in the source clip when the task gives it."""
    lines = []
    for spec in task.inputs:
        if spec.kind == "images" and spec.indices is not None and len(spec.indices) == len(spec.paths):
            lines += [f"    {p}  (frame {n})" for p, n in zip(spec.paths, spec.indices, strict=True)]
        else:
            lines += [f"    {p}" for p in spec.paths]
    return lines


def _session_outcome(directory: Path) -> tuple[Any, int] | None:
    """(the answer the host recorded, cells run) of one session's trajectory, or None if it has none."""
    from spatialclaw.trajectories.episode_log import load_episode

    if not (directory / "episode.jsonl").exists():
        return None
    episode = load_episode(directory)
    return episode.answer, len(episode.of_type("cell"))


def score(tasks_path: Path, eval_dir: Path, looking: Path | None) -> dict[str, Any]:
    """Score both conditions per question class; unanswered questions score 0 and are counted."""
    tasks = {t.task_id: t for t in load_local_tasks(tasks_path)}
    looked: dict[str, Any] = {}
    if looking is not None:
        found = jsonl.read(looking, {"task_id": (str, int)})
        if found.bad:
            raise ValueError("; ".join(found.problems()))
        for row in found.records:
            looked[str(row["task_id"])] = row.get("answer")
    per_class: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for task_id, task in tasks.items():
        bucket = per_class[task.category or "other"]
        if looking is not None:
            bucket["looking"].append(_answer_value(task, looked.get(task_id)))
            bucket["looking_answered"].append(float(task_id in looked))
        outcome = _session_outcome(eval_dir / "sessions" / task_id)
        bucket["kernel"].append(_answer_value(task, outcome[0]) if outcome else 0.0)
        bucket["kernel_answered"].append(float(bool(outcome and outcome[0] is not None)))
        if outcome:
            bucket["steps"].append(float(outcome[1]))
    everything: dict[str, list[float]] = defaultdict(list)
    for bucket in per_class.values():
        for key, values in bucket.items():
            everything[key] += values
    table = {}
    for name, bucket in [*sorted(per_class.items()), ("all", everything)]:
        mean = {key: (sum(v) / len(v) if v else None) for key, v in bucket.items()}
        table[name] = {
            "n": len(bucket["kernel"]),
            **{k: (round(v, 3) if v is not None else None) for k, v in mean.items()},
        }
        kernel_mean, looking_mean = mean.get("kernel"), mean.get("looking")
        if looking_mean is not None and kernel_mean is not None:
            table[name]["gain"] = round(kernel_mean - looking_mean, 3)
    return table


def _answer_value(task: Task, answer: Any) -> float:
    """The score of one answer to ``task`` (0 when there is none)."""
    if answer is None:
        return 0.0
    metric, unit = task.meta.get("metric"), task.meta.get("unit")
    return score_answer(answer, task.ground_truth, task.answer_type, task.choices, metric, unit).value


def _cell(row: dict[str, Any], key: str) -> str:
    return "-" if row.get(key) is None else f"{row[key]:.2f}"


def _print_table(table: dict[str, Any]) -> None:
    print(f"{'class':<18}{'n':>3}{'looking':>9}{'kernel':>8}{'gain':>7}{'steps':>7}")
    for name, row in table.items():
        cells = [_cell(row, key) for key in ("looking", "kernel", "gain", "steps")]
        print(f"{name:<18}{row['n']:>3}{cells[0]:>9}{cells[1]:>8}{cells[2]:>7}{cells[3]:>7}")


def _print_cells(eval_dir: Path) -> None:
    from spatialclaw.trajectories.episode_log import load_episode

    for directory in sorted((eval_dir / "sessions").iterdir()):
        if not (directory / "episode.jsonl").exists():
            continue
        episode = load_episode(directory)
        print(f"===== {directory.name}: answer {episode.answer!r}")
        for number, cell in enumerate(episode.of_type("cell"), 1):
            print(f"--- cell {number}\n{cell.get('code', '').rstrip()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare", help="write the questions (no answers) and the session commands")
    p.add_argument("tasks", type=Path)
    p.add_argument("out", type=Path)
    s = commands.add_parser("score", help="score looking-only answers and kernel sessions per class")
    s.add_argument("tasks", type=Path)
    s.add_argument("eval_dir", type=Path)
    s.add_argument("--looking", type=Path, default=None, help="JSONL of {task_id, answer} answered by looking only")
    c = commands.add_parser("cells", help="print every cell the kernel sessions ran")
    c.add_argument("eval_dir", type=Path)
    args = parser.parse_args(argv)
    if args.command == "prepare":
        print(prepare(args.tasks, args.out))
    elif args.command == "score":
        table = score(args.tasks, args.eval_dir, args.looking)
        _print_table(table)
        print(json.dumps(table))
    else:
        _print_cells(args.eval_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
