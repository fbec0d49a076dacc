"""ViewSpatial-Bench (Li et al., 2025): relative direction and orientation from the camera's and from a
person's perspective; the paper's ``viewspatial``.

Record (``lidingm/ViewSpatial-Bench``: ``ViewSpatial-Bench.json``, a list of 5,712 questions; images from
``scannetv2_val.zip`` and ``val2017.zip`` extracted in place): the sample id is the position in the list;
``question_type`` (5 types), ``image_path`` (list; leading ``.`` and ``/`` characters stripped, then the
``ViewSpatial-Bench/`` prefix dropped, e.g. ``scannetv2_val/scene0011_00/original_images/0.jpg``,
``val2017/000000000139.jpg``), ``question``, ``choices`` (one newline-separated string, appended as it is to
the question after a blank line, so no options are split out), ``answer`` (``"A. right"``; the letter is its
first character). Questions with a missing image are dropped with a warning that counts them, as the paper's
loader does. Frames: every image, up to 32.

Scoring: the paper's setting, metric ``viewspatial_paper``: ``\\boxed{X}``; ``<answer>X</answer>``; the
letter after the last answer-marker phrase; the last ``(X)``, then ``X.``, then ``X:``; a single letter; the
last standalone capital A-D in the final 400 characters. Overall = accuracy, broken down by question type.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import json_list, require_file
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext
from spatialclaw.task import FrameSpec, Task

REPO = "lidingm/ViewSpatial-Bench"
FIELDS = ("question_type", "image_path", "question", "choices", "answer")


def image_paths(record: dict[str, Any]) -> list[str]:
    """The record's image paths relative to the repository folder."""
    raw = record["image_path"] if isinstance(record["image_path"], list) else [record["image_path"]]
    return [str(p).lstrip("./").removeprefix("ViewSpatial-Bench/") for p in raw]


def _exists(root: Path, relative: str) -> bool:
    top = relative.split("/", 1)[0]
    return (root / relative).is_file() or (root / top / relative).is_file()


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The records of ``ViewSpatial-Bench.json`` in list order, each with its position as ``_index``; those
    with any image missing under ``root`` are dropped and counted in one warning."""
    records = json_list(require_file(root, "ViewSpatial-Bench.json", "viewspatial", REPO), FIELDS, "viewspatial")
    dropped = 0
    for index, record in enumerate(records):
        if not all(_exists(Path(root), p) for p in image_paths(record)):
            dropped += 1
            continue
        yield {**record, "_index": index}
    if dropped:
        warnings.warn(
            f"viewspatial: dropped {dropped} of {len(records)} question(s) whose images are missing under {root} "
            "(were scannetv2_val.zip and val2017.zip extracted?)",
            stacklevel=2,
        )


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    choices = record["choices"]
    if isinstance(choices, list):
        choices = "\n".join(str(c) for c in choices)
    index = record.get("_index", record.get("id", ctx.index))
    return Task(
        question=f"{record['question']}\n\n{choices}" if choices else str(record["question"]),
        inputs=[FrameSpec.images([ctx.media(p) for p in image_paths(record)])],
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip()[:1].upper(),
        task_id=f"viewspatial-bench/{index}",
        benchmark="viewspatial-bench",
        category=str(record["question_type"]),
        meta={"metric": "viewspatial_paper", "answer_text": str(record["answer"]), "sample_id": str(index)},
    )


SPEC = BenchmarkSpec(
    name="viewspatial-bench",
    description="Multi-perspective spatial localisation (camera and person viewpoints)",
    to_task=to_task,
    hub_id=REPO,
    configs=("ViewSpatial-Bench",),
    split="test",
    aggregation="micro",
    metric="accuracy; boxed, <answer>, last answer marker, last (X)/X./X:, last standalone A-D (paper setting)",
    media_help=f"Download {REPO} and unzip scannetv2_val.zip and val2017.zip in place, then pass --source DIR",
    homepage="https://huggingface.co/datasets/lidingm/ViewSpatial-Bench",
    paper_name="viewspatial",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="viewspatial.md",
    expected_files=(("ViewSpatial-Bench.json", 1),),
    archives=("scannetv2_val.zip", "val2017.zip"),
    paper_order=True,
    breakdowns=("category",),
)
