"""Video-MME-v2 (2025): 800 videos, 3,200 eight-way questions (A-H) in groups of four per video, scored
non-linearly per group.

Record (``MME-Benchmarks/Video-MME-v2``, split ``test``; layout from lmms-eval's ``videomme_v2`` task):
``video_id`` (the video is ``data/<video_id>.mp4``), ``question_id`` (``"001-1"``: the number after the
last ``-`` orders a group), ``question``, ``options`` (one string, ``"A. ...\\nB. ..."``), ``answer``,
``group_type`` (``relevance`` / ``logic``), ``group_structure`` (e.g. ``"[1, 2, 3, 4]"``), ``level``,
``second_head``, ``third_head`` (set on a group's last question).

Scoring: EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/videomme_v2/utils.py`` (extraction over A-H, metric
``videomme_v2_choice``; ``videomme_v2_aggregate_results``, rule ``videomme_v2``: relevance groups by the
count right, logic groups by the unbroken chain from the first question).
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    video_id = str(record["video_id"])
    parsed = parse_inline_options(str(record["options"]))
    if parsed is None:
        raise ValueError(f"cannot read the options of {record['question_id']} ('A. ...\\nB. ...')")
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media_any([f"data/{video_id}.{ext}" for ext in ("mp4", "MP4", "mkv")]))],
        choices=parsed[1],
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"video-mme-v2/{record['question_id']}",
        benchmark="video-mme-v2",
        category=str(record.get("group_type") or "unknown"),
        meta={
            "metric": "videomme_v2_choice",
            "video_id": video_id,
            "question_id": str(record["question_id"]),
            "group_type": record.get("group_type"),
            "group_structure": record.get("group_structure"),
            "level": record.get("level"),
            "second_head": record.get("second_head"),
        },
    )


SPEC = BenchmarkSpec(
    name="video-mme-v2",
    description="Video understanding in question groups (relevance and logic chains), eight options each",
    to_task=to_task,
    hub_id="MME-Benchmarks/Video-MME-v2",
    split="test",
    aggregation="videomme_v2",
    media_help="Download MME-Benchmarks/Video-MME-v2 and put its videos under data/ in --media-root",
    homepage="https://github.com/MME-Benchmarks/Video-MME-v2",
    metric="grouped non-linear score per video (relevance: count right; logic: chain), mean over groups (lmms-eval)",
)
