"""Video-MME (Fu et al., 2024): general video understanding, short to hour-long videos, four-way choice.

Record (``lmms-lab/Video-MME``, split ``test``; layout from lmms-eval's ``videomme`` task):
``video_id``, ``duration`` (short / medium / long), ``domain``, ``sub_category``, ``videoID`` (the video
is ``data/<videoID>.mp4``; ``.MP4`` and ``.mkv`` also occur), ``question_id``, ``task_type``,
``question``, ``options`` (list of ``"A. ..."`` strings), ``answer`` (a letter).

Scoring: EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/videomme/utils.py`` (``extract_characters_regex``:
answer prefixes removed, then the first capital A-D anywhere; metric ``videomme_choice``); overall =
accuracy over questions.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, strip_option_labels
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    video_id = str(record["videoID"])
    video = ctx.media_any([f"data/{video_id}.{ext}" for ext in ("mp4", "MP4", "mkv")])
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(video)],
        choices=strip_option_labels(record["options"]),
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"video-mme/{record['question_id']}",
        benchmark="video-mme",
        category=str(record["task_type"]),
        meta={"metric": "videomme_choice", "duration": record.get("duration"), "domain": record.get("domain")},
    )


SPEC = BenchmarkSpec(
    name="video-mme",
    description="General video understanding over short, medium and long videos (perception and reasoning)",
    to_task=to_task,
    hub_id="lmms-lab/Video-MME",
    split="test",
    aggregation="micro",
    media_help="Download lmms-lab/Video-MME and unzip its video archives into data/ under --media-root",
    homepage="https://github.com/BradyFU/Video-MME",
    metric="accuracy; the first capital A-D after answer prefixes (lmms-eval videomme)",
)
