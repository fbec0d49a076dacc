"""VSI-Bench (Yang et al., "Thinking in Space", 2024): questions about egocentric indoor videos.

Record (``nyu-visionx/VSI-Bench``, split ``test``): ``id``, ``dataset`` (arkitscenes / scannet /
scannetpp), ``scene_name``, ``question_type``, ``question``, ``ground_truth``, ``options`` (list of
``"A. text"`` strings, or null for numeric questions). Videos ship as zip archives in the same repository:
``<media_root>/<dataset>/<scene_name>.mp4``. Numeric answers: distances in metres, object sizes in
centimetres, room sizes in square metres, counts; scored by mean relative accuracy; multiple choice by
accuracy; overall by the ``vsi_bench`` rule.

Scoring: EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/vsibench/utils.py`` (metrics ``vsi_mca``,
``vsi_na``; ``vsibench_aggregate_results``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from spatialclaw.benchmarks.scoring.letters import vsi_fuzzy
from spatialclaw.benchmarks.scoring.numbers import mra_or_zero_policy, to_float
from spatialclaw.benchmarks.scoring.rows import Row, by_category, mean
from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, strip_option_labels
from spatialclaw.task import FrameSpec, Task

UNITS = {"object_abs_distance": "m", "object_size_estimation": "cm", "room_size_estimation": "m2"}


def make_to_task(benchmark: str) -> Callable[[dict[str, Any], RecordContext], Task]:
    """The record mapping for VSI-Bench and its debiased release (same layout, another config)."""

    def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
        video = ctx.media(f"{record['dataset']}/{record['scene_name']}.mp4")
        options = strip_option_labels(record.get("options") or [])
        qtype = record["question_type"]
        common = dict(
            question=record["question"],
            inputs=[FrameSpec.video(video)],
            task_id=f"{benchmark}/{record['id']}",
            benchmark=benchmark,
            category=qtype,
        )
        if options:
            return Task(
                **common,
                choices=options,
                answer_type="multiple_choice",
                ground_truth=str(record["ground_truth"]),
                meta={"metric": "vsi_mca", "scene": record["scene_name"]},
            )
        return Task(
            **common,
            answer_type="number",
            ground_truth=float(record["ground_truth"]),
            meta={"metric": "vsi_na", "unit": UNITS.get(qtype), "scene": record["scene_name"]},
        )

    return to_task


MEDIA_HELP = (
    "Download arkitscenes.zip, scannet.zip and scannetpp.zip from nyu-visionx/VSI-Bench and unzip them into one folder"
)

SPEC = BenchmarkSpec(
    name="vsi-bench",
    description="Visual-spatial intelligence on indoor scan videos (counts, distances, sizes, directions, routes)",
    to_task=make_to_task("vsi-bench"),
    hub_id="nyu-visionx/VSI-Bench",
    split="test",
    aggregation="vsi_bench",
    media_help=MEDIA_HELP,
    homepage="https://huggingface.co/datasets/nyu-visionx/VSI-Bench",
    metric="accuracy (first token) and MRA, mean over question types, directions merged (lmms-eval vsibench)",
)


# ---------------------------------------- scoring


def vsi_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench (and VSTI-Bench, SPBench) multiple choice: the first token equals the letter, any case."""
    got = vsi_fuzzy(reply)
    return (1.0 if got.lower() == str(gt).lower() else 0.0), got


def vsi_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench numbers: ``float()`` of the first token (so ``"3.5 m"`` reads 3.5, ``"about 3"`` nothing),
    then the official MRA."""
    got = to_float(vsi_fuzzy(reply))
    return mra_or_zero_policy(got, float(gt)), got


VSI_DIRECTION_TYPES = ("object_rel_direction_easy", "object_rel_direction_medium", "object_rel_direction_hard")


def aggregate_vsi_bench(rows: Sequence[Row]) -> dict[str, Any]:
    """VSI-Bench: mean per question type; the three relative-direction difficulties are averaged into one
    ``object_rel_direction`` entry (mean of the three means); overall = mean over the resulting types."""
    cats, counts = by_category(rows)
    merged = {k: v for k, v in cats.items() if k not in VSI_DIRECTION_TYPES}
    directions = [cats[k] for k in VSI_DIRECTION_TYPES if k in cats]
    if directions:
        merged["object_rel_direction"] = sum(directions) / len(directions)
    return {"overall": mean(merged.values()), "categories": dict(sorted(merged.items())), "counts": counts}
