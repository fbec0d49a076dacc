"""SpatialTree-Bench ("SpatialTree: How Spatial Abilities Branch Out in MLLMs", 2025): a hierarchy of
spatial abilities, from perception (L1) to agentic competence (L4); the paper's ``spatialtree``.

Record (``LongfeiLi/SpatialTree-Bench``: ``annotations_plain.parquet``, 6,300 questions: multiple-choice
4,248, open 1,852, judge 200; media ``videos/*.mp4`` and ``images/*.jpg`` under the repository root):
``session_id`` (the sample id), ``question``, ``question_type`` (``multiple-choice`` / ``open`` / ``judge``),
``option`` (list; nulls dropped), ``answer``, ``extra_info`` (JSON: ``metricfunc``, the ability path
``spatree0`` level, ``spatree1`` category, ``spatree2`` subcategory), ``hint`` (kept in meta, not shown),
``video`` (the first entry is used), ``image`` (list). Frames: a video at its native fps with 32 key
frames shown; images: all of them.

Scoring: the paper's setting, metric ``spatialtree_paper:<kind>``: every record is loaded and run. Those
whose ``metricfunc`` is an LLM judge or a simulator (gpteval, cogmapeval, affmask, manipulateeval,
agenticnaveval, gravityeval) are marked ``paper_scored`` False and left out of every number. Multiple
choice: boxed / first ``X.``, ``(X)``, ``X:`` (A-K) / a first-token letter, equal to the answer; metricfunc
meanrelativeacc, meanrelativeacc2, angulardifference, l2distance: MRA on the number read (number words
first), zero answer scores 0; judge: whichever of yes/no comes last; otherwise MRA when both are numbers,
else case-insensitive equality. Overall = mean over the scored questions (rule ``spatialtree_scored``),
with breakdowns per level, level/category, level/category/subcategory, question type and metricfunc.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import parquet_records, require_file
from spatialclaw.benchmarks.official_common import to_float
from spatialclaw.benchmarks.official_paper_p3_numeric import SPATIALTREE_MRA, SPATIALTREE_UNSCORED
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, strip_option_labels
from spatialclaw.task import AnswerType, FrameSpec, Task

REPO = "LongfeiLi/SpatialTree-Bench"
COLUMNS = ("session_id", "question", "question_type", "option", "answer", "extra_info")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of ``annotations_plain.parquet`` in file order."""
    yield from parquet_records(
        require_file(root, "annotations_plain.parquet", "spatialtree", REPO), COLUMNS, "spatialtree"
    )


def _json(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    return json.loads(text) if text else {}


def _kind(question_type: str, metric_func: str | None) -> tuple[str, AnswerType]:
    """The scoring branch and the answer type of one question."""
    if metric_func in SPATIALTREE_UNSCORED:
        return "unscored", "multiple_choice" if question_type == "multiple-choice" else "text"
    if question_type == "multiple-choice":
        return "choice", "multiple_choice"
    if metric_func in SPATIALTREE_MRA:
        return "mra", "number"
    if question_type == "judge":
        return "judge", "yes_no"
    return "other", "text"


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    info = _json(record.get("extra_info"))
    metric_func = info.get("metricfunc")
    path = [str(info[k]) for k in sorted((k for k in info if k.startswith("spatree")), key=lambda k: int(k[7:]))]
    videos = [v for v in (record.get("video") or []) if v]
    if videos:
        inputs = [FrameSpec.video(ctx.media(str(videos[0])))]
    else:
        inputs = [FrameSpec.images([ctx.media(str(p)) for p in record.get("image") or [] if p])]
    question_type = str(record.get("question_type") or "")
    kind, answer_type = _kind(question_type, metric_func)
    options = [str(o) for o in (record.get("option") or []) if o is not None]
    if answer_type == "text" and to_float(str(record["answer"]).strip()) is not None:
        answer_type = "number"
    session = str(record.get("session_id", ctx.index))
    return Task(
        question=str(record["question"]),
        inputs=inputs,
        choices=strip_option_labels(options) if question_type == "multiple-choice" and options else None,
        answer_type=answer_type,
        ground_truth=str(record["answer"]).strip(),
        task_id=f"spatialtree-bench/{session}",
        benchmark="spatialtree-bench",
        category=path[-1] if path else "uncategorized",
        meta={
            "metric": f"spatialtree_paper:{kind}",
            "paper_scored": kind != "unscored",
            "spatree": path,
            "spatree_level": path[0] if path else None,
            "metricfunc": metric_func,
            "question_type": question_type,
            "hint": record.get("hint"),
            "sample_id": session,
        },
    )


SPEC = BenchmarkSpec(
    name="spatialtree-bench",
    description="A tree of spatial abilities: perception, mental mapping, simulation and agentic competence",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="spatialtree_scored",
    media_help=f"Download {REPO} (annotations_plain.parquet, images/, videos/) and pass --source DIR",
    homepage="https://huggingface.co/datasets/LongfeiLi/SpatialTree-Bench",
    metric="mean over scored questions (LLM-judged/simulator items run, not scored): letter, MRA, yes/no, equality",
    paper_name="spatialtree",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="spatialtree.md",
    expected_files=(("annotations_plain.parquet", 1),),
    paper_order=True,
    breakdowns=("spatree_level", "question_type", "metricfunc"),
)
