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

import re
from collections.abc import Sequence
from typing import Any

from spatialclaw.benchmarks.scoring.rows import Row, by_category, mean
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


# ---------------------------------------- scoring


def leading_letter(reply: str) -> str:
    """lmms-eval's CV-Bench/BLINK ``_extract_answer_letter``: a letter at the very start, after optional
    ``(`` or spaces (``"(B) chair"`` -> B, but also ``"Bed"`` -> B and ``"The answer is B"`` -> T)."""
    match = re.match(r"[\(\s]*([A-Z])[\)\.\s]*", reply.strip(), flags=re.IGNORECASE)
    return match.group(1).upper() if match else ""


def cv_letter(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """CV-Bench and BLINK: :func:`leading_letter` against the answer with its parentheses stripped."""
    got = leading_letter(reply)
    return (1.0 if got == str(gt).strip("()") else 0.0), got


def aggregate_cv_bench(rows: Sequence[Row]) -> dict[str, Any]:
    """CV-Bench: 2D = mean of the ADE20K and COCO accuracies, 3D = the Omni3D accuracy,
    overall = (2D + 3D) / 2; ``meta["source"]`` names each question's source dataset."""
    cats, counts = by_category(rows)
    by_source: dict[str, list[float]] = {}
    for row in rows:
        by_source.setdefault(str(row.meta.get("source", "")), []).append(row.score or 0.0)
    src = {k: sum(v) / len(v) for k, v in by_source.items()}
    two_d = mean(src[s] for s in ("ADE20K", "COCO") if s in src)
    three_d = src.get("Omni3D")
    overall = mean(x for x in (two_d, three_d) if x is not None)
    extra = {f"source:{k}": v for k, v in sorted(src.items()) if k}
    if two_d is not None:
        extra["2D"] = two_d
    if three_d is not None:
        extra["3D"] = three_d
    return {"overall": overall, "categories": {**cats, **extra}, "counts": counts}
