"""The local task format: a JSONL file anyone can write, one task per line.

Each line is a JSON object::

    {"task_id": "kitchen-1",                       # unique within the file (default: "line-N")
     "question": "How far is the kettle from the sink, in metres?",
     "images": ["frames/0001.png", "frames/0002.png"],   # or
     "video": "clips/kitchen.mp4", "fps": 2,             # (optional "count": frames sampled evenly)
     "choices": ["left", "right"],                  # optional: makes it multiple choice (answers A, B, ...)
     "answer": 1.8,                                 # optional ground truth (a letter or option text for choices)
     "answer_type": "number",                       # multiple_choice | number | yes_no | text (inferred
                                                    # from the question, see spatialclaw.agent.question)
     "category": "distance",                        # optional, for per-category tables
     "metric": "mra", "unit": "m",                  # optional scoring overrides (see scoring.score_answer)
     "meta": {"anything": "else"}}                  # optional, shown to the kernel as meta
                                                   # (except meta.truth: host only, e.g. how an answer was made)

Relative paths resolve against the JSONL file's folder. The :class:`~spatialclaw.task.Task` dict form
(``"inputs": [{"kind": "images", "paths": [...]}, ...]``, ``"ground_truth"``), which the runner writes to
``RUN/tasks.jsonl``, is accepted too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.agent.question import parse_question
from spatialclaw.task import FrameSpec, Task

__all__ = ["load_local_tasks", "task_from_record", "write_local_tasks"]

_KNOWN = {
    "task_id",
    "question",
    "images",
    "video",
    "fps",
    "count",
    "choices",
    "answer",
    "ground_truth",
    "answer_type",
    "category",
    "metric",
    "unit",
    "meta",
    "inputs",
    "benchmark",
    "inferred",
    "option_labels",
    "allowed_answers",
}


def _resolve(path: str, base: Path) -> str:
    p = Path(path)
    p = p if p.is_absolute() else base / p
    if not p.exists():
        raise FileNotFoundError(f"{p} does not exist")
    return str(p.resolve())


def task_from_record(record: dict[str, Any], base: Path, line: int = 0, benchmark: str = "local") -> Task:
    """One task from a JSON record in the local format (see the module docstring)."""
    unknown = set(record) - _KNOWN
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_KNOWN)}")
    if not isinstance(record.get("question"), str) or not record["question"].strip():
        raise ValueError("'question' (non-empty text) is required")
    inputs: list[FrameSpec] = []
    if "inputs" in record:
        for item in record["inputs"]:
            spec = FrameSpec.coerce(item)
            spec.paths = [_resolve(p, base) for p in spec.paths]
            inputs.append(spec)
    if "images" in record:
        images = record["images"] if isinstance(record["images"], list) else [record["images"]]
        inputs.append(FrameSpec.images([_resolve(p, base) for p in images]))
    if "video" in record:
        inputs.append(
            FrameSpec.video(_resolve(record["video"], base), fps=record.get("fps"), count=record.get("count"))
        )
    if not inputs:
        raise ValueError("give 'images' (a list of paths), 'video' (a path) or 'inputs'")
    meta = dict(record.get("meta") or {})
    for key in ("metric", "unit"):
        if key in record:
            meta[key] = record[key]
    choices = record.get("choices")
    ground_truth = record.get("ground_truth", record.get("answer"))
    parsed = parse_question(record["question"], list(choices) if choices else None, record.get("answer_type"))
    answer_type, notes = parsed.answer_type, parsed.notes
    if answer_type == "text" and isinstance(ground_truth, (int, float)) and not isinstance(ground_truth, bool):
        answer_type = "number"
        notes = [n for n in notes if not n.startswith("answer type")] + [
            "answer type number: the ground truth is a number"
        ]
    if isinstance(record.get("inferred"), list):  # a Task's dict form keeps what was inferred when it was made
        notes = [str(n) for n in record["inferred"]]
    if parsed.text != record["question"].strip():
        meta.setdefault("question_as_written", record["question"])
    return Task(
        question=parsed.text,
        inputs=inputs,
        choices=parsed.choices,
        answer_type=answer_type,  # type: ignore[arg-type]
        inferred=notes,
        option_labels=record.get("option_labels") or parsed.labels,  # a Task's dict form keeps them
        allowed_answers=record.get("allowed_answers") or parsed.allowed,
        ground_truth=ground_truth,
        task_id=str(record.get("task_id") or f"line-{line}"),
        benchmark=record.get("benchmark") or benchmark,
        category=record.get("category"),
        meta=meta,
    )


def load_local_tasks(path: str | Path, limit: int | None = None) -> list[Task]:
    """Read a local JSONL task file; errors name the line and the problem."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"task file {path} does not exist")
    tasks: list[Task] = []
    seen: set[str] = set()
    found = jsonl.read(path)
    lines: list[tuple[int, dict[str, Any] | None, str]] = [
        (number, record, "") for number, record in zip(found.numbers, found.records, strict=True)
    ]
    lines += [(bad.number, None, bad.reason) for bad in found.bad]
    for number, record, reason in sorted(lines, key=lambda line: line[0]):
        if limit is not None and len(tasks) >= limit:
            break
        try:
            if record is None:
                raise ValueError(f"each line must be a JSON object ({reason})")
            task = task_from_record(record, path.parent, number)
        except (ValueError, FileNotFoundError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        if task.task_id in seen:
            raise ValueError(f"{path}:{number}: duplicate task_id {task.task_id!r}")
        seen.add(task.task_id)
        tasks.append(task)
    if found.torn and (limit is None or len(tasks) < limit):
        raise ValueError(f"{path}: the last line is not complete JSON")
    if not tasks:
        raise ValueError(f"{path} holds no tasks")
    return tasks


def write_local_tasks(tasks: list[Task], path: str | Path) -> None:
    """Write tasks in their dict form (absolute paths), readable by :func:`load_local_tasks`."""
    jsonl.write_atomic(path, (task.to_dict() for task in tasks), default=str)
