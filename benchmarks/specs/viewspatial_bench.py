"""ViewSpatial-Bench (Li et al., 2025): relative direction and orientation from the camera's and from a
person's perspective.

Record (``lidingm/ViewSpatial-Bench``, config ``ViewSpatial-Bench``, file ``ViewSpatial-Bench.json``,
split ``test``): ``question_type`` (e.g. ``"Camera perspective - Relative Direction"``), ``image_path``
(list of paths such as ``ViewSpatial-Bench/scannetv2_val/...`` or ``ViewSpatial-Bench/val2017/...``; the
images ship as ``scannetv2_val.zip`` and ``val2017.zip``, and the leading ``ViewSpatial-Bench/`` is dropped
when looking under ``--media-root``), ``question``, ``choices`` (``"A. left\\nB. right ..."`` or a list),
``answer`` (``"A. left"`` or a letter). Overall = accuracy.

Scoring: ZJU-REAL/ViewSpatial-Bench ``evaluate.py`` (metric ``viewspatial_choice``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    raw_paths = record["image_path"] if isinstance(record["image_path"], list) else [record["image_path"]]
    paths: list[str | Path] = [
        ctx.image(str(path).removeprefix("ViewSpatial-Bench/"), "image_path") for path in raw_paths
    ]
    choices = record["choices"]
    if isinstance(choices, str):
        parsed = parse_inline_options(choices)
        if parsed is None:
            raise ValueError(f"cannot read the options in {choices!r}")
        choices = parsed[1]
    return Task(
        question=record["question"],
        inputs=[FrameSpec.images(paths)],
        choices=list(choices),
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"viewspatial-bench/{record.get('id', ctx.index)}",
        benchmark="viewspatial-bench",
        category=record["question_type"],
        meta={"metric": "viewspatial_choice"},
    )


SPEC = BenchmarkSpec(
    name="viewspatial-bench",
    description="Multi-perspective spatial localisation (camera and person viewpoints)",
    to_task=to_task,
    hub_id="lidingm/ViewSpatial-Bench",
    configs=("ViewSpatial-Bench",),
    split="test",
    aggregation="micro",
    metric="accuracy; the first A-D in the reply's last line (official evaluate.py)",
    media_help="Download scannetv2_val.zip and val2017.zip from lidingm/ViewSpatial-Bench and unzip them into one folder",
    homepage="https://huggingface.co/datasets/lidingm/ViewSpatial-Bench",
)
