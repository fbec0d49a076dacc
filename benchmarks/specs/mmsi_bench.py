"""MMSI-Bench (Yang et al., 2025): multi-image spatial intelligence, four-way multiple choice.

Record (``RunsenXu/MMSI-Bench``, split ``test``): ``id``, ``images`` (list of encoded image bytes),
``question_type``, ``question`` (the options inline after ``"Options:"``), ``answer`` (a letter),
``thought``. Overall = accuracy over all questions.

Scoring: EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/mmsi_bench/utils.py`` (metric ``mmsi_choice``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    paths: list[str | Path] = [ctx.image(image, "images") for image in record["images"]]
    parsed = parse_inline_options(record["question"], marker="Options:") or parse_inline_options(record["question"])
    if parsed is None:
        raise ValueError(f"question {record['id']} has no inline options ('Options: A: ..., B: ...')")
    stem, options = parsed
    return Task(
        question=stem,
        inputs=[FrameSpec.images(paths)],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"mmsi-bench/{record['id']}",
        benchmark="mmsi-bench",
        category=record["question_type"],
        meta={"metric": "mmsi_choice"},
    )


SPEC = BenchmarkSpec(
    name="mmsi-bench",
    description="Multi-image spatial reasoning (camera, object and region relations, motion, multi-step)",
    to_task=to_task,
    hub_id="RunsenXu/MMSI-Bench",
    split="test",
    aggregation="micro",
    metric="accuracy; the first standalone A-D not followed by a word (official MMSI-Bench extraction)",
    homepage="https://huggingface.co/datasets/RunsenXu/MMSI-Bench",
)
