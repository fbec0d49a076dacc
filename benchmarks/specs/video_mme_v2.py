"""Video-MME-v2 (2025): 800 videos, 3,200 eight-way questions (A-H) in groups of four per video, scored
non-linearly per group; the paper's ``videommev2``.

Record (``MME-Benchmarks/Video-MME-v2``: ``test.parquet`` at the root, 3,200 rows = 800 videos x 4; videos
``videos/<video_id>.mp4``, ``001.mp4`` .. ``800.mp4``): ``question_id`` (the sample id), ``video_id``,
``question``, ``options`` (one string ``"A. ...\\nB. ..."``, split per line), ``answer``, ``group_type``
(relevance / logic), ``group_structure`` (e.g. ``[1, [2, 3], 4]``), ``level``, ``second_head``,
``third_head``. Frames: the video sampled at 1 fps, 32 key frames shown.

Scoring: the paper's setting, metric ``videommev2_paper``: the answer prefixes removed, then
``\\boxed{X}``, then (unless the reply has more than ten words and no capital A-H) the first capital A-H.
Groups (rule ``videommev2_groups``): a video's four questions, which are four consecutive rows of the file;
relevance groups score 0, 1/16, 4/16, 9/16, 1 by the count right (and linearly, count/4), logic groups by the
chain from the first question; overall = mean over groups, with ``level_N``, relevance, logic, second-head and
third-head breakdowns. Under ``--seed/--limit`` subsampling we still group by video; the paper groups four
consecutive rows of its shuffled list, mixing videos.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import parquet_records, require_file
from spatialclaw.benchmarks.scoring.rows import Row, by_category, mean
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext
from spatialclaw.benchmarks.specs.video_mme import videomme_extract
from spatialclaw.task import FrameSpec, Task

REPO = "MME-Benchmarks/Video-MME-v2"
COLUMNS = ("question_id", "video_id", "question", "options", "answer", "group_type", "group_structure")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of ``test.parquet`` in file order."""
    yield from parquet_records(require_file(root, "test.parquet", "videommev2", REPO), COLUMNS, "videommev2")


def split_options(text: str) -> list[str]:
    """``"A. x\\nB. y"`` -> ``["x", "y"]``: one option per line, each starting with its own letter A-H."""
    options: dict[str, str] = {}
    for line in str(text).splitlines():
        match = re.match(r"\s*\(?([A-H])\s*[.:)]\s*(.*)", line)
        if match:
            options[match.group(1)] = match.group(2).strip()
    letters = sorted(options)
    if not letters or letters != [chr(ord("A") + i) for i in range(len(letters))]:
        raise ValueError(f"cannot read the options {text!r} as lines 'A. ...', 'B. ...'")
    return [options[k] for k in letters]


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    raw = record["video_id"]
    video_id = f"{raw:03d}" if isinstance(raw, int) else str(raw)
    question_id = str(record["question_id"])
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media_any([f"videos/{video_id}.mp4", f"videos/{video_id}.MP4"]))],
        choices=split_options(record["options"]),
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip().upper(),
        task_id=f"video-mme-v2/{question_id}",
        benchmark="video-mme-v2",
        category=str(record.get("group_type") or "unknown"),
        meta={
            "metric": "videommev2_paper",
            "video_id": video_id,
            "question_id": question_id,
            "group_type": record.get("group_type"),
            "group_structure": record.get("group_structure"),
            "level": record.get("level"),
            "second_head": record.get("second_head"),
            "third_head": record.get("third_head"),
            "sample_id": question_id,
        },
    )


SPEC = BenchmarkSpec(
    name="video-mme-v2",
    description="Video understanding in question groups (relevance and logic chains), eight options each",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="videommev2_groups",
    media_help=f"Download {REPO} (test.parquet and videos/) and pass --source DIR",
    homepage="https://github.com/MME-Benchmarks/Video-MME-v2",
    metric="grouped non-linear score per video (relevance: count right; logic: chain), mean over groups; levels, heads",
    paper_name="videommev2",
    read_source=read_source,
    frames=FramePolicy(fps=1.0, key_frames=32),
    instruction="videommev2.md",
    expected_files=(("test.parquet", 1), ("videos/*.mp4", 800)),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring

_VIDEOMME_V2_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Final Answer:",
    "Best answer:",
    "Best option:",
    "Answer:",
    "Option:",
)


def videomme_v2_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME-v2: the same extraction over A-H with its longer prefix list."""
    got = videomme_extract(reply, _VIDEOMME_V2_PREFIXES, "A-H")
    return (1.0 if got.upper() == str(gt).upper() else 0.0), got


_V2_PREFIXES = (
    "Final Answer:",
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
    "Answer:",
    "Option:",
)


def videommev2_letter(reply: str) -> str | None:
    """Video-MME-v2: the answer prefixes removed; ``\\boxed{X}`` (A-H); else the first capital A-H. None when
    nothing is read (the reference's "more than ten words and no capital A-H reads nothing" is this same rule)."""
    text = reply.strip()
    for prefix in _V2_PREFIXES:
        text = text.replace(prefix, "")
    boxed = re.findall(r"\\boxed\{\s*\(?\s*([A-H])\s*\)?\s*\.?\s*\}", text)
    if boxed:
        return str(boxed[-1])
    found = re.search(r"[A-H]", text)
    return found.group() if found else None


def videommev2_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME-v2: :func:`videommev2_letter` equals the answer; nothing read is wrong."""
    got = videommev2_letter(reply)
    return (1.0 if got is not None and got == str(gt).strip().upper() else 0.0), got


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


def aggregate_video_mme_v2(rows: Sequence[Row]) -> dict[str, Any]:
    """Video-MME-v2 (lmms-eval ``videomme_v2_aggregate_results``): the questions of one video form a group,
    ordered by the number after the last ``-`` of ``meta["question_id"]``; a ``relevance`` group scores
    by how many are right (0, 1/16, 4/16, 9/16, 1), a ``logic`` group by :func:`_video_mme_v2_logic`, any
    other by the share right; overall = mean over groups. Categories: per-question means and
    ``group:<type>`` group means."""
    cats, counts = by_category(rows)
    groups: dict[str, list[Row]] = {}
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
    return {"overall": mean(every), "categories": {**cats, **extra}, "counts": counts}


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
    cats, counts = by_category(rows)
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
    return {"overall": mean(every), "categories": {**cats, **extra}, "counts": counts}


def literal(value: Any) -> Any:
    """A Python literal stored as text (``"[1, 2, 3, 4]"``), else the value."""
    if isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value
