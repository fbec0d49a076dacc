"""Omni3D-Bench (Marsili et al., VADAR, 2025): 3D spatial questions on Omni3D images: counts, yes/no,
multiple choice (one word) and metric or ratio numbers.

Record (``dmarsili/Omni3D-Bench``, one parquet, split ``train``; the columns a public reader of that
parquet reports): ``image_index`` (the image file name), ``image`` (encoded), ``q_index``, ``question``,
``answer``, ``answer_type`` (``int`` counts, ``str`` yes/no or one word, ``float`` numbers).

Scoring: VLMEvalKit's ``Omni3DBench_acc`` (answers between ``<ans></ans>`` when present; ``int`` by
``int()`` equality, yes/no by containment with true/false synonyms, other ``str`` by exact lower-case
equality, ``float`` by the share of ten tolerances t with ``|gt - pred| / gt < t``: strict, unlike
VSI-Bench; metric ``omni3d:<answer_type>``). VLMEvalKit reports the four classes separately; our overall is
the mean over all questions, and the classes are the categories.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import AnswerType, FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    kind = str(record["answer_type"])
    if kind not in ("int", "float", "str"):
        raise ValueError(f"unknown answer_type {kind!r} (int, float or str)")
    answer = str(record["answer"]).strip()
    answer_type: AnswerType
    if kind == "str":
        category = "yes/no" if answer in ("yes", "no") else "multiple choice"
        answer_type = "yes_no" if answer in ("yes", "no") else "text"
    else:
        category = "count" if kind == "int" else "number"
        answer_type = "number"
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.images([ctx.image(record["image"], "image")])],
        answer_type=answer_type,
        ground_truth=answer,
        task_id=f"omni3d-bench/{record['q_index']}",
        benchmark="omni3d-bench",
        category=category,
        meta={"metric": f"omni3d:{kind}", "image_index": record.get("image_index")},
    )


SPEC = BenchmarkSpec(
    name="omni3d-bench",
    description="3D spatial reasoning on Omni3D images: counts, yes/no, one-word and metric answers",
    to_task=to_task,
    hub_id="dmarsili/Omni3D-Bench",
    split="train",
    aggregation="micro",
    homepage="https://huggingface.co/datasets/dmarsili/Omni3D-Bench",
    metric="per answer type: count equality, yes/no, exact word, strict-tolerance MRA; mean over questions (VLMEvalKit)",
)
