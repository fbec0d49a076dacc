"""MindCube (Yin et al., 2025): spatial mental models from a few views (rotation, around, among).

Record (``MindCube_tinybench.jsonl`` inside ``MLL-Lab/MindCube``'s ``data.zip``): ``id`` (prefixed with
its setting: ``rotation_...``, ``around_...``, ``among_...``), ``category`` (list of tags), ``type``,
``meta_info``, ``question`` (options inline as ``A. ...``), ``images`` (paths relative to the unzipped
``data/`` folder), ``gt_answer`` (a letter). The hub repository holds a zip, not loadable records: unzip it
and pass ``--source data/raw/MindCube_tinybench.jsonl --media-root data``. Overall = accuracy.

Scoring: mll-lab-nu/MindCube ``src/evaluation/core/extractors.py`` and lmms-eval
``lmms_eval/tasks/mindcube/utils.py`` (metric ``mindcube_choice``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task

SETTINGS = ("rotation", "around", "among")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    paths: list[str | Path] = [ctx.image(path, "images") for path in record["images"]]
    parsed = parse_inline_options(record["question"])
    if parsed is None:
        raise ValueError(f"question {record['id']} has no inline options 'A. ...'")
    stem, options = parsed
    setting = next((s for s in SETTINGS if str(record["id"]).startswith(s)), record.get("type") or "unknown")
    return Task(
        question=stem,
        inputs=[FrameSpec.images(paths)],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=str(record["gt_answer"]).strip(),
        task_id=f"mindcube/{record['id']}",
        benchmark="mindcube",
        category=setting,
        meta={"metric": "mindcube_choice", "tags": list(record.get("category") or [])},
    )


SPEC = BenchmarkSpec(
    name="mindcube",
    description="Spatial mental modelling from limited views (rotation, around, among)",
    to_task=to_task,
    hub_id="MLL-Lab/MindCube",
    split="train",
    aggregation="micro",
    metric="accuracy; MindCube's prioritised answer patterns (official extract_answer)",
    media_help="Download data.zip from MLL-Lab/MindCube, unzip it, and use its data/ folder",
    homepage="https://huggingface.co/datasets/MLL-Lab/MindCube",
)
