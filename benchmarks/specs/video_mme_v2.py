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

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import parquet_records, require_file
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext
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
