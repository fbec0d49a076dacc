"""OSI-Bench ("From Indoor to Open World: Revealing the Spatial Reasoning Gap in MLLMs", 2025): spatial
reasoning on open-world videos, relational multiple choice and metric (static and dynamic) numbers.

Record (the ``OSI-Bench.tsv`` that VLMEvalKit downloads from ``lmms-lab-si/EASI-Leaderboard-Data``; videos
in ``HarmlessSR07/OSI-Bench``'s zip archives, unzipped under ``--media-root``): ``index``, ``video`` (path
relative to the unzipped folder), ``question``, ``options`` (a list, or its text, of ``"A. ..."``
strings; empty for numbers), ``answer``, ``category`` (``relative_distance``,
``relative_direction_categorical_ordinal``, ``trajectory_description``, ``object_3d_localization``,
``absolute_distance``, ``depth_aware_counting``, ``absolute_displacement``, ``absolute_speed``,
``trajectory_length``), ``question_type`` (``mcq`` / ``numerical``), ``video_length`` (seconds).

Scoring: VLMEvalKit ``vlmeval/dataset/osibench.py`` (``_apply_osi_na_mra``, ``_build_summary``): numbers by
VSI-Bench MRA with OSI's zero-answer thresholds (metric ``osi_na:<category>``), overall = mean over all
questions. The MCQ/number extraction step of EASI's ``spatial_bench`` scorer was not available offline:
choices are read like VSI-Bench (first token, ``vsi_mca``) and numbers as the reply's first number.
"""

from __future__ import annotations

import ast
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, strip_option_labels
from spatialclaw.task import FrameSpec, Task


def _options(raw: Any) -> list[str]:
    """VLMEvalKit's ``_parse_options``: a list, a list literal, or one option per line."""
    if isinstance(raw, list):
        return [str(o) for o in raw]
    text = str(raw or "").strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = ast.literal_eval(text)
            if isinstance(parsed, list):
                return [str(o) for o in parsed]
        except (ValueError, SyntaxError):
            pass
    return [line for line in text.splitlines() if line]


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    category = str(record["category"])
    common: dict[str, Any] = dict(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media(str(record["video"])))],
        task_id=f"osi-bench/{record['index']}",
        benchmark="osi-bench",
        category=category,
    )
    meta = {"video_length_s": record.get("video_length")}
    if str(record["question_type"]).lower() == "mcq":
        return Task(
            **common,
            choices=strip_option_labels(_options(record.get("options"))),
            answer_type="multiple_choice",
            ground_truth=str(record["answer"]).strip(),
            meta={**meta, "metric": "vsi_mca"},
        )
    return Task(
        **common,
        answer_type="number",
        ground_truth=float(record["answer"]),
        meta={**meta, "metric": f"osi_na:{category}"},
    )


SPEC = BenchmarkSpec(
    name="osi-bench",
    description="Open-world spatial intelligence on outdoor videos: relations, distances, speeds, trajectories",
    to_task=to_task,
    hub_id="HarmlessSR07/OSI-Bench",
    split="test",
    aggregation="micro",
    media_help="Download HarmlessSR07/OSI-Bench and unzip its archives into one folder; the records are "
    "OSI-Bench.tsv from lmms-lab-si/EASI-Leaderboard-Data (pass it as --source)",
    homepage="https://huggingface.co/datasets/HarmlessSR07/OSI-Bench",
    metric="accuracy and MRA (zero answers by threshold), mean over questions (VLMEvalKit OSIBench)",
)
