"""Omni3D-Bench (Marsili et al., VADAR, 2025) as the paper runs it: 3D questions on Omni3D images with float,
int or short-text answers.

Published layout (``dmarsili/Omni3D-Bench``, its archive extracted in place): ``annotations.json`` =
``{"questions": [...]}`` beside ``images/`` (501 questions on 201 images), at ``DIR`` or one folder down;
questions in list order (``paper_order`` holds). Fields: ``question_index`` (the sample id), ``question``,
``image_filename`` (under ``images/``), ``answer`` (typed), ``answer_type`` (``float``/``int``/``str``, the
category).

Scoring: metric ``omni3d_paper:<answer_type>``
(:func:`spatialclaw.benchmarks.official_paper_p2_more.omni3d_paper`): the ``\\boxed{}`` content, else the whole
reply when it is a number, else its last number, else the lower-cased text without quotes; float: the share
of t in 0.5, 0.45, ..., 0.05 with relative error < t (``|p|`` when the answer is 0); int:
``int(round(float(p)))``; str: case-insensitive equality. Overall = mean over questions; per answer type.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import check_keys, json_data, missing
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, FramePolicy, RecordContext
from spatialclaw.task import AnswerType, FrameSpec, Task

REPO = "dmarsili/Omni3D-Bench"
RECORDS = "annotations.json"


def annotations_file(root: Path) -> Path:
    """``annotations.json`` at ``root`` or in one of its subfolders (an extracted archive's folder)."""
    if (root / RECORDS).is_file():
        return root / RECORDS
    nested = sorted(root.glob(f"*/{RECORDS}"))
    if nested:
        return nested[0]
    raise missing("omni3d-bench", f"{RECORDS} (at . or one folder down)", root, REPO)


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The ``questions`` of ``annotations.json`` in order, each with ``_images`` (its ``images/`` folder)."""
    path = annotations_file(root)
    data = json_data(path, "omni3d-bench")
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise DatasetUnavailable(f'omni3d-bench: {path} should hold {{"questions": [...]}}')
    wanted = ("question_index", "question", "image_filename", "answer", "answer_type")
    for position, record in enumerate(data["questions"]):
        check_keys(record, wanted, path, "omni3d-bench", position)
        yield {**record, "_images": str(path.parent / "images")}


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    kind = str(record["answer_type"])
    if kind not in ("int", "float", "str"):
        raise ValueError(f"unknown answer_type {kind!r} (int, float or str)")
    answer = record["answer"]
    answer_type: AnswerType = "number"
    if kind == "str":
        answer = str(answer).strip()
        answer_type = "yes_no" if answer.lower() in ("yes", "no") else "text"
    images = Path(record.get("_images") or "images")
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.images([ctx.media(str(images / str(record["image_filename"])))])],
        answer_type=answer_type,
        ground_truth=answer,
        task_id=f"omni3d-bench/{record['question_index']}",
        benchmark="omni3d-bench",
        category=kind,
        meta={"metric": f"omni3d_paper:{kind}", "sample_id": str(record["question_index"])},
    )


SPEC = BenchmarkSpec(
    name="omni3d-bench",
    description="3D spatial reasoning on Omni3D images: counts, yes/no, one-word and metric answers",
    to_task=to_task,
    hub_id=REPO,
    split="train",
    aggregation="micro",
    homepage="https://huggingface.co/datasets/dmarsili/Omni3D-Bench",
    metric="mean over questions, per answer type: float by 10 strict thresholds, int rounded, str any case",
    media_help="Download dmarsili/Omni3D-Bench and extract its archive in place (spatialclaw data download omni3d)",
    paper_name="omni3d",
    read_source=read_source,
    frames=FramePolicy(),
    instruction="omni3d.md",
    expected_files=((f"**/{RECORDS}", 1),),
    archives=("*.zip", "*.tar.gz", "*.tgz", "*.tar"),
    paper_order=True,
    breakdowns=("category",),
)
