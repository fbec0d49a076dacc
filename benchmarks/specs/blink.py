"""BLINK (Fu et al., 2024), its spatial subsets: relative depth, spatial relation, multi-view reasoning,
object localization and visual correspondence.

Record (``BLINK-Benchmark/BLINK``, one config per subtask, split ``val``; ``test`` answers are hidden):
``idx``, ``question``, ``sub_task``, ``image_1`` .. ``image_4`` (images or null), ``choices`` (option
texts), ``answer`` (``"(A)"``), ``prompt``, ``explanation``. Overall = mean over subtasks.

Scoring: lmms-eval ``lmms_eval/tasks/blink/utils.py`` (the leading-letter extraction, metric ``cv_letter``)
and zeyofu/BLINK_Benchmark ``eval/evaluate.py`` (overall = mean over subtasks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, iter_nonempty
from spatialclaw.task import FrameSpec, Task

SPATIAL_SUBTASKS = (
    "Relative_Depth",
    "Spatial_Relation",
    "Multi-view_Reasoning",
    "Object_Localization",
    "Visual_Correspondence",
)


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    images = iter_nonempty(record.get(f"image_{i}") for i in range(1, 5))
    paths: list[str | Path] = [ctx.image(image, "image_N") for image in images]
    return Task(
        question=record["question"],
        inputs=[FrameSpec.images(paths)],
        choices=list(record["choices"]),
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"blink/{record['idx']}",
        benchmark="blink",
        category=record.get("sub_task") or ctx.config,
        meta={"metric": "cv_letter"},
    )


SPEC = BenchmarkSpec(
    name="blink",
    description="BLINK spatial subsets: relative depth, spatial relation, multi-view, localization, correspondence",
    to_task=to_task,
    hub_id="BLINK-Benchmark/BLINK",
    configs=SPATIAL_SUBTASKS,
    split="val",
    aggregation="macro",
    metric="accuracy per subtask, overall = mean over subtasks; the reply's leading letter (lmms-eval)",
    homepage="https://huggingface.co/datasets/BLINK-Benchmark/BLINK",
)
