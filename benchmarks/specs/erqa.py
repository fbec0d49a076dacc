"""ERQA (Gemini Robotics team, 2025): embodied reasoning multiple choice over one or more images.

Record (``FlagEval/ERQA``, BAAI's parquet release of the ``erqa.tfrecord`` file, split ``test``):
``question_id``, ``question`` (the options inline, ``A. ...``), ``question_type``, ``answer`` (a letter),
``images`` (list of encoded images), ``visual_indices`` (where each image sits in the prompt; absent in
some copies). A copy without ``question_id`` uses the record index. Overall = accuracy.

Scoring: lmms-eval ``lmms_eval/tasks/erqa/utils.py`` with ``lmms_eval/tasks/_task_utils/mcq_extract.py``
(metric ``erqa_choice``: its main rules, see :func:`spatialclaw.benchmarks.official_mcq_parsers.mcq_extract`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    paths: list[str | Path] = [ctx.image(image, "images") for image in record["images"]]
    parsed = parse_inline_options(record["question"])
    if parsed is None:
        raise ValueError("question has no inline options 'A. ...'")
    stem, options = parsed
    return Task(
        question=stem,
        inputs=[FrameSpec.images(paths)],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"erqa/{record.get('question_id', ctx.index)}",
        benchmark="erqa",
        category=record.get("question_type") or "uncategorized",
        meta={"metric": "erqa_choice", "visual_indices": list(record.get("visual_indices") or [])},
    )


SPEC = BenchmarkSpec(
    name="erqa",
    description="Embodied reasoning QA (spatial, trajectory, state, task reasoning) for robotics",
    to_task=to_task,
    hub_id="FlagEval/ERQA",
    split="test",
    aggregation="micro",
    metric="accuracy; the last declared or the bare option letter (lmms-eval extract_mcq_answer rules)",
    homepage="https://github.com/embodiedreasoning/ERQA",
)
