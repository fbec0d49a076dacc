"""3DSRBench (Ma et al., 2024): 3D spatial reasoning on COCO images (height, location, orientation,
multi-object), scored with circular evaluation.

Record (``ccvl/3DSRBench``, config ``benchmark``, split ``test``; the same columns as its VLMEvalKit TSV):
``index``, ``question``, ``A`` .. ``D`` (empty for two-option questions), ``answer`` (a letter),
``category``, ``image_source``, and the image either as ``image`` (base64, in the VLMEvalKit TSVs) or
``image_url`` (a COCO URL; the file is looked up under ``--media-root``, e.g. the unzipped
``coco_images.zip``, as ``<folder>/<name>`` then ``<name>``). Circular variants of one question
share ``index % 1,000,000`` (VLMEvalKit's convention); a question counts only when all variants are right.

Scoring: VLMEvalKit's circular evaluation with its rule matching (``vlmeval/utils/matching_util.py``
``can_infer_option`` / ``can_infer_text``; metric ``vlmeval_choice``). Where those rules find nothing,
VLMEvalKit asks an LLM judge; that is not reproduced, and the reply scores 0.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    if record.get("image"):
        path = ctx.image(record["image"], "image")
    else:
        parts = str(record["image_url"]).rstrip("/").split("/")
        path = ctx.media_any(["/".join(parts[-2:]), parts[-1]])
    options = [str(record[k]) for k in "ABCD" if record.get(k) not in (None, "") and str(record[k]) != "nan"]
    index = int(record["index"])
    return Task(
        question=record["question"],
        inputs=[FrameSpec.images([path])],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"3dsrbench/{index}",
        benchmark="3dsrbench",
        category=record["category"],
        meta={"metric": "vlmeval_choice", "circular_group": str(index % 1_000_000)},
    )


SPEC = BenchmarkSpec(
    name="3dsrbench",
    description="3D spatial reasoning: height, location, orientation, multi-object (circular evaluation)",
    to_task=to_task,
    hub_id="ccvl/3DSRBench",
    configs=("benchmark",),
    split="test",
    aggregation="circular",
    metric="circular accuracy (every variant right); VLMEvalKit's option/text matching (its LLM judge not reproduced)",
    media_help="Download coco_images.zip from ccvl/3DSRBench and unzip it",
    homepage="https://huggingface.co/datasets/ccvl/3DSRBench",
)
