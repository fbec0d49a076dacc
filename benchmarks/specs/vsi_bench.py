"""VSI-Bench (Yang et al., "Thinking in Space", 2024): questions about egocentric indoor videos.

Record (``nyu-visionx/VSI-Bench``, split ``test``): ``id``, ``dataset`` (arkitscenes / scannet /
scannetpp), ``scene_name``, ``question_type``, ``question``, ``ground_truth``, ``options`` (list of
``"A. text"`` strings, or null for numeric questions). Videos ship as zip archives in the same repository:
``<media_root>/<dataset>/<scene_name>.mp4``. Numeric answers: distances in metres, object sizes in
centimetres, room sizes in square metres, counts; scored by mean relative accuracy; multiple choice by
accuracy; overall by the ``vsi_bench`` rule.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task

UNITS = {"object_abs_distance": "m", "object_size_estimation": "cm", "room_size_estimation": "m2"}


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    video = ctx.media(f"{record['dataset']}/{record['scene_name']}.mp4")
    options = list(record.get("options") or [])
    qtype = record["question_type"]
    common = dict(
        question=record["question"],
        inputs=[FrameSpec.video(video)],
        task_id=f"vsi-bench/{record['id']}",
        benchmark="vsi-bench",
        category=qtype,
    )
    if options:
        return Task(**common, choices=options, answer_type="multiple_choice", ground_truth=str(record["ground_truth"]),
                    meta={"metric": "choice", "scene": record["scene_name"]})
    return Task(**common, answer_type="number", ground_truth=float(record["ground_truth"]),
                meta={"metric": "mra", "unit": UNITS.get(qtype), "scene": record["scene_name"]})


SPEC = BenchmarkSpec(
    name="vsi-bench",
    description="Visual-spatial intelligence on indoor scan videos (counts, distances, sizes, directions, routes)",
    to_task=to_task,
    hub_id="nyu-visionx/VSI-Bench",
    split="test",
    aggregation="vsi_bench",
    media_help="Download arkitscenes.zip, scannet.zip and scannetpp.zip from nyu-visionx/VSI-Bench and unzip them into one folder",
    homepage="https://huggingface.co/datasets/nyu-visionx/VSI-Bench",
)
