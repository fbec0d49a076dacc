"""PAI-Bench, reason track (Physical AI Bench, SHI Labs, 2025): multiple-choice questions about space and
time in physical-world videos.

Record (``shi-labs/physical-ai-bench-reason``, split ``test``; layout from the official ``reason/run.py``):
``question``, ``index2ans`` (option letter -> text, null for unused letters), ``video_path`` (relative to
the downloaded repository), ``answer`` (a letter), ``category`` (``Space...`` / ``Time...``),
``subcategory``.

Scoring: SHI-Labs/physical-ai-bench ``reason/run.py`` and ``reason/models.py`` (``check_answer``): the text
inside ``<answer>...</answer>`` (else the reply plus ``" N/A"``), lower-cased without dots and spaces,
equals the answer; overall = accuracy over questions (metric ``pai_choice``).
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    options = {str(k): v for k, v in dict(record["index2ans"]).items() if v is not None}
    letters = sorted(options)
    if letters != [chr(ord("A") + i) for i in range(len(letters))]:
        raise ValueError(f"index2ans keys {letters} are not A, B, C, ...")
    category = str(record.get("category") or "unknown")
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media(str(record["video_path"])))],
        choices=[str(options[k]) for k in letters],
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"pai-bench/{ctx.index}-{record['video_path']}",
        benchmark="pai-bench",
        category=category,
        meta={
            "metric": "pai_choice",
            "subcategory": record.get("subcategory"),
            "answer_format": "<answer>answer</answer>",
        },
    )


SPEC = BenchmarkSpec(
    name="pai-bench",
    description="Physical AI understanding: space and time questions about robot, driving and everyday videos",
    to_task=to_task,
    hub_id="shi-labs/physical-ai-bench-reason",
    split="test",
    aggregation="micro",
    media_help="Download shi-labs/physical-ai-bench-reason (its videos) and pass --media-root to that folder",
    homepage="https://github.com/SHI-Labs/physical-ai-bench",
    metric="accuracy; the <answer> text compared without case, dots and spaces (official reason/run.py)",
)
