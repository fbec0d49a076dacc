"""MMSI-Video-Bench (Lin et al., 2025): video-based spatial intelligence: spatial construction, motion,
planning, prediction and cross-video reasoning, 1,106 multiple-choice questions.

Record (``mmsivideo.json`` in ``rbler/MMSI-Video-Bench``, a JSON list; layout from the official
``dataset.py``): ``id``, ``video_list`` (``path``, ``start``, ``end``, ``base_fps`` per clip),
``frames_list`` (per clip, frame paths relative to ``frames/``), ``ref_images`` (relative to
``ref_images/``; one per ``<image>`` in ``ori_question``), ``system_prompt``, ``task_prompt``,
``user_prompt`` (the question and its options), ``format_prompt``, ``ground_truth`` (or ``gt``; a letter),
``question_type`` (or ``type``, the Chinese code the official ``type_map_dict`` translates). Unzip
``frames.zip`` and ``ref_images.zip`` next to the json and pass ``--source data/mmsivideo.json``.

Scoring: InternRobotics/MMSI-Video-Bench ``evaluation.py`` (``extract_answer``: ``boxed{}``, JSON
``"answer":``, ``answer is``, ``Answer:`` or a bare letter, A-F; metric ``mmsi_video_choice``); overall =
accuracy over questions.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task

#: The official ``type_map_dict``: annotation codes to the category names the paper reports.
TYPE_NAMES = {
    "CU-跨时间": "(Cross-Video) Memory Update",
    "CU-跨视角": "(Cross-Video) Multi-View Integration",
    "HU-规划": "Planning",
    "HU-预测模拟": "Prediction",
    "MU-相机运动": "(Motion Understanding) Camera Motion",
    "MU-物体运动": "(Motion Understanding) Instance Motion",
    "MU-交互": "(Motion Understanding) Interactive Motion",
    "SC-物体物体空间关系": "(Spatial Construction) Instance-Instance Spatial Relationship",
    "SC-物体场景空间关系": "(Spatial Construction) Instance-Scene Spatial Relationship",
    "SC-场景场景空间关系": "(Spatial Construction) Scene-Scene Spatial Relationship",
    "SC-物体场景属性": "(Spatial Construction) Instance/Scene Attribute",
    "SC-物体相机空间关系": "(Spatial Construction) Camera-Instance Spatial Relationship",
    "SC-场景相机空间关系": "(Spatial Construction) Camera-Scene Spatial Relationship",
}


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    inputs = [
        FrameSpec.images([ctx.media(f"frames/{frame}") for frame in frames])
        for frames in record["frames_list"]
        if frames
    ]
    if record.get("ref_images"):
        inputs.append(FrameSpec.images([ctx.media(f"ref_images/{image}") for image in record["ref_images"]]))
    prompt = f"{record.get('task_prompt') or ''}{record['user_prompt']}"
    parsed = parse_inline_options(prompt)
    if parsed is None:
        raise ValueError(f"question {record['id']} has no options 'A. ... B. ...' in its user_prompt")
    kind = str(record.get("question_type") or record.get("type") or "unknown")
    return Task(
        question=parsed[0],
        inputs=inputs,
        choices=parsed[1],
        answer_type="multiple_choice",
        ground_truth=str(record.get("ground_truth", record.get("gt"))).strip(),
        task_id=f"mmsi-video-bench/{record['id']}",
        benchmark="mmsi-video-bench",
        category=TYPE_NAMES.get(kind, kind),
        meta={"metric": "mmsi_video_choice", "format_prompt": record.get("format_prompt")},
    )


SPEC = BenchmarkSpec(
    name="mmsi-video-bench",
    description="Video spatial intelligence: construction, motion, planning, prediction, cross-video reasoning",
    to_task=to_task,
    hub_id="rbler/MMSI-Video-Bench",
    data_files="mmsivideo.json",
    split="train",
    aggregation="micro",
    media_help="Download rbler/MMSI-Video-Bench, unzip frames.zip and ref_images.zip beside mmsivideo.json",
    homepage="https://huggingface.co/datasets/rbler/MMSI-Video-Bench",
    metric="accuracy; boxed / 'answer is' / 'Answer:' / bare letter, A-F (official evaluation.py)",
)
