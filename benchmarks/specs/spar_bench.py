"""SPAR-Bench (Zhang et al., 2025): spatial perception and reasoning from single and multiple views.

Record (``jasonzhango/SPAR-Bench``, split ``test``): ``id``, ``img_type`` (single-view / multi-view /
video), ``format_type`` (``fill`` for numeric answers, ``select`` for multiple choice), ``task`` (e.g.
``depth_prediction_oc``, ``distance_prediction_oo``, ``view_change_infer``), ``source``, ``image`` (list of
images), ``question`` (options inline for ``select``), ``answer``. Scoring follows the task name, as the
official code does: the eight depth/distance tasks by SPAR's MRA on the first number of the reply (the last
for the four ``_mv`` ones), ``view_change_infer`` by the per-axis MRA of ``action:amount`` lists, the rest
as multiple choice by SPAR's lenient ``exact_match``; overall = mean over tasks.

Scoring: EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/sparbench/utils.py`` (metrics ``spar_mca``,
``spar_na``, ``spar_vci``; ``sparbench_aggregate_results``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task

#: lmms-eval sparbench's task families: multiple choice, numbers, and the view-change instruction.
NUMERIC_TASKS = (
    "depth_prediction_oc",
    "depth_prediction_oo",
    "distance_prediction_oc",
    "distance_prediction_oo",
    "depth_prediction_oc_mv",
    "depth_prediction_oo_mv",
    "distance_prediction_oo_mv",
    "distance_prediction_oc_mv",
)
VIEW_CHANGE = "view_change_infer"


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    images = record["image"] if isinstance(record["image"], list) else [record["image"]]
    paths: list[str | Path] = [ctx.image(image, "image") for image in images]
    task = str(record["task"])
    common: dict[str, Any] = dict(
        inputs=[FrameSpec.images(paths)],
        task_id=f"spar-bench/{record['id']}",
        benchmark="spar-bench",
        category=task,
    )
    meta = {"img_type": record.get("img_type"), "source": record.get("source")}
    answer = str(record["answer"]).strip()
    if task == VIEW_CHANGE:  # "move_right:0.5,rotate_left:30,...", scored per axis by MRA
        return Task(
            question=record["question"],
            answer_type="text",
            ground_truth=answer,
            meta={**meta, "metric": "spar_vci"},
            **common,
        )
    if task in NUMERIC_TASKS:
        return Task(
            question=record["question"],
            answer_type="number",
            ground_truth=answer,
            meta={**meta, "metric": f"spar_na:{task}"},
            **common,
        )
    parsed = parse_inline_options(record["question"])
    if parsed is None:
        raise ValueError(f"multiple-choice question {record['id']} ({task}) has no inline options")
    stem, options = parsed
    return Task(
        question=stem,
        choices=options,
        answer_type="multiple_choice",
        ground_truth=answer,
        meta={**meta, "metric": "spar_mca"},
        **common,
    )


SPEC = BenchmarkSpec(
    name="spar-bench",
    description="Spatial perception and reasoning: depth, distance, view change, object relations",
    to_task=to_task,
    hub_id="jasonzhango/SPAR-Bench",
    split="test",
    aggregation="macro",
    homepage="https://huggingface.co/datasets/jasonzhango/SPAR-Bench",
    metric="mean over the 20 tasks of accuracy, MRA (numbers) and per-axis MRA (view change) (lmms-eval sparbench)",
)
