"""SPAR-Bench (Zhang et al., 2025): spatial perception and reasoning from single and multiple views.

Record (``jasonzhango/SPAR-Bench``, split ``test``): ``id``, ``img_type`` (single-view / multi-view /
video), ``format_type`` (``fill`` for numeric answers, ``select`` for multiple choice), ``task`` (e.g.
``depth_prediction_oc``, ``distance_prediction_oo``, ``view_change_infer``), ``source``, ``image`` (list of
images), ``question`` (options inline for ``select``), ``answer``. Numeric ``fill`` answers are scored by mean
relative accuracy, other ``fill`` answers by normalised exact match, choices by accuracy; overall = mean
over tasks.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.scoring import extract_number
from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    images = record["image"] if isinstance(record["image"], list) else [record["image"]]
    paths = [ctx.image(image, "image") for image in images]
    common = dict(
        inputs=[FrameSpec.images(paths)],
        task_id=f"spar-bench/{record['id']}",
        benchmark="spar-bench",
        category=record["task"],
    )
    meta = {"img_type": record.get("img_type"), "source": record.get("source")}
    if record["format_type"] == "select":
        parsed = parse_inline_options(record["question"])
        if parsed is None:
            raise ValueError(f"select question {record['id']} has no inline options")
        stem, options = parsed
        return Task(question=stem, choices=options, answer_type="multiple_choice", ground_truth=str(record["answer"]).strip(),
                    meta={**meta, "metric": "choice"}, **common)
    value = extract_number(record["answer"])
    if value is None:  # a free-form fill answer: scored by normalised exact match
        return Task(question=record["question"], answer_type="text", ground_truth=str(record["answer"]),
                    meta={**meta, "metric": "exact"}, **common)
    return Task(question=record["question"], answer_type="number", ground_truth=value, meta={**meta, "metric": "mra"}, **common)


SPEC = BenchmarkSpec(
    name="spar-bench",
    description="Spatial perception and reasoning: depth, distance, view change, object relations",
    to_task=to_task,
    hub_id="jasonzhango/SPAR-Bench",
    split="test",
    aggregation="macro",
    homepage="https://huggingface.co/datasets/jasonzhango/SPAR-Bench",
)
