"""PerceptionComp (2026): perception-centric video questions, five-way multiple choice, seven video
categories and three difficulty levels.

Record (``hrinnnn/PerceptionComp``, split ``test``; layout from lmms-eval's task): ``video_id`` (the video
is ``data/<video_id>.mp4`` in the repository; ``.MP4``, ``.mkv`` and ``.webm`` also occur), ``question``,
``answer_choice_0`` .. ``answer_choice_5`` (empty ones unused), ``answer_id`` (0-based), ``category``
(outdoor tour, shopping, sport, variety show, home tour, game, movie), ``difficulty`` (1-3).

Scoring: EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/perceptioncomp/utils.py`` (MMMU's
``parse_multi_choice_response``; metric ``perceptioncomp_choice``); overall = accuracy. Where the official
parser finds no option it picks one at random; we score that reply as wrong.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    options = [str(record.get(f"answer_choice_{i}") or "").strip() for i in range(6)]
    options = [o for o in options if o]
    answer = int(record["answer_id"])
    if not 0 <= answer < len(options):
        raise ValueError(f"answer_id {answer} is outside the {len(options)} options")
    video_id = str(record["video_id"])
    video = ctx.media_any([f"data/{video_id}.{ext}" for ext in ("mp4", "MP4", "mkv", "webm")])
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(video)],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=chr(ord("A") + answer),
        task_id=f"perceptioncomp/{record.get('question_id', ctx.index)}",
        benchmark="perceptioncomp",
        category=str(record.get("category") or "unknown"),
        meta={"metric": "perceptioncomp_choice", "difficulty": record.get("difficulty")},
    )


SPEC = BenchmarkSpec(
    name="perceptioncomp",
    description="Perception-centric video understanding: five-way questions over long real-world videos",
    to_task=to_task,
    hub_id="hrinnnn/PerceptionComp",
    split="test",
    aggregation="micro",
    media_help="Download hrinnnn/PerceptionComp (its data/ videos) and pass --media-root to that folder",
    homepage="https://huggingface.co/datasets/hrinnnn/PerceptionComp",
    metric="accuracy; MMMU-style option parsing, no random fallback (lmms-eval perceptioncomp)",
)
