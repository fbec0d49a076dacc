"""CV-Bench (Tong et al., Cambrian-1, 2024): 2D counting and relations, 3D depth order and distance.

Registered as ``cv-bench-2d3d`` (alias ``cambrian_cvbench``, and ``CV-Bench``): the paper's ``cvbench`` is the
cross-video CVBench (``Dongyh35/CVBench``), a different benchmark.

Record (``nyu-visionx/CV-Bench``, split ``test``): ``idx``, ``type`` (2D/3D), ``task`` (Count, Relation,
Depth, Distance), ``image``, ``question``, ``choices``, ``answer`` (``"(A)"``), ``prompt``, ``filename``,
``source`` (ADE20K, COCO, Omni3D), ``source_dataset``, ``source_filename``, ``target_class``,
``target_size``, ``bbox``. Overall by the card's rule: ((ADE20K + COCO) / 2 + Omni3D) / 2.

Scoring: lmms-eval ``lmms_eval/tasks/cv_bench/utils.py`` (metric ``cv_letter``; the overall formula is its
``cv_bench_default_aggregate_results``, the dataset card's rule).
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    path = ctx.image(record["image"], "image")
    return Task(
        question=record["question"],
        inputs=[FrameSpec.images([path])],
        choices=list(record["choices"]),
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"cv-bench-2d3d/{record['idx']}",
        benchmark="cv-bench-2d3d",
        category=record["task"],
        meta={"metric": "cv_letter", "source": record["source"], "type": record.get("type")},
    )


SPEC = BenchmarkSpec(
    name="cv-bench-2d3d",
    description="Vision-centric 2D (count, relation) and 3D (depth order, relative distance) questions",
    to_task=to_task,
    hub_id="nyu-visionx/CV-Bench",
    split="test",
    aggregation="cv_bench",
    metric="accuracy, overall = ((ADE20K + COCO) / 2 + Omni3D) / 2; the reply's leading letter (lmms-eval)",
    homepage="https://huggingface.co/datasets/nyu-visionx/CV-Bench",
)
