"""VSTI-Bench (VLM-3R, Fan et al., 2025): visual-spatial-temporal questions on indoor scan videos: camera
displacement and movement direction, object-camera distances and their change, relative positions.

Record (VLM-3R's ``vstibench`` task, in VSI-Bench's layout): ``id``, ``video_path`` (relative to the
dataset folder), ``question_type`` (``camera_obj_abs_dist``, ``camera_displacement``,
``camera_obj_dist_change`` numbers; ``obj_obj_relative_pos_nf``/``_ud``/``_lr``,
``camera_obj_rel_dist_v1``..``_v3``, ``camera_movement_direction`` choices), ``question``, ``options``
(``"A. ..."`` strings), ``ground_truth`` (numbers), ``mc_answer`` (the letter for choices). The hub id of
the records could not be confirmed offline: pass ``--source`` (a records file) and ``--media-root``.

Scoring: VITA-Group/VLM-3R ``thinking-in-space/lmms_eval/tasks/vstibench/utils.py`` (VSI-Bench's rules:
``vsi_mca`` against ``mc_answer``, ``vsi_na``; overall = mean over question types, no merging).
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, strip_option_labels
from spatialclaw.task import FrameSpec, Task

NUMERIC_TYPES = ("camera_obj_abs_dist", "camera_displacement", "camera_obj_dist_change")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    qtype = str(record["question_type"])
    common: dict[str, Any] = dict(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media(str(record["video_path"])))],
        task_id=f"vsti-bench/{record.get('id', ctx.index)}",
        benchmark="vsti-bench",
        category=qtype,
    )
    if qtype in NUMERIC_TYPES:
        return Task(
            **common,
            answer_type="number",
            ground_truth=float(record["ground_truth"]),
            meta={"metric": "vsi_na", "unit": "m"},
        )
    return Task(
        **common,
        choices=strip_option_labels(record["options"]),
        answer_type="multiple_choice",
        ground_truth=str(record["mc_answer"]).strip(),
        meta={"metric": "vsi_mca"},
    )


SPEC = BenchmarkSpec(
    name="vsti-bench",
    description="Visual-spatial-temporal reasoning on indoor videos: camera motion and object-camera relations",
    to_task=to_task,
    hub_id=None,
    split="test",
    aggregation="macro",
    media_help="Get VSTI-Bench's records and videos as VLM-3R's README describes and pass --source and --media-root",
    homepage="https://github.com/VITA-Group/VLM-3R",
    metric="accuracy (first token) and MRA, mean over question types (VLM-3R vstibench)",
)
