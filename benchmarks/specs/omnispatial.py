"""OmniSpatial (Jia et al., 2025): dynamic reasoning, complex spatial logic, spatial interaction and
perspective taking.

Record (``data.json`` in ``qizekun/OmniSpatial``'s ``OmniSpatial-test.zip``): ``id``, ``question``,
``options`` (list of option texts), ``answer`` (0-based index of the right option), ``task_type``
(Dynamic_Reasoning, Complex_Logic, Spatial_Interaction, Perspective_Taking), ``sub_task_type``. Images live
beside it as ``<task_type>/<id>.png`` (an ``image`` field, when present, names the file instead). Unzip and
pass ``--source OmniSpatial-test/data.json``. Overall = accuracy.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.scoring import choice_letters
from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    image = record.get("image") or f"{record['task_type']}/{record['id']}.png"
    options = list(record["options"])
    answer = record["answer"]
    ground_truth = choice_letters(len(options))[int(answer)] if isinstance(answer, int) or str(answer).isdigit() else str(answer)
    return Task(
        question=record["question"],
        inputs=[FrameSpec.images([ctx.image(image, "image")])],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=ground_truth,
        task_id=f"omnispatial/{record['id']}",
        benchmark="omnispatial",
        category=record["task_type"],
        meta={"metric": "choice", "sub_task_type": record.get("sub_task_type")},
    )


SPEC = BenchmarkSpec(
    name="omnispatial",
    description="Comprehensive spatial reasoning: dynamics, logic, interaction, perspective taking",
    to_task=to_task,
    hub_id="qizekun/OmniSpatial",
    split="test",
    aggregation="micro",
    media_help="Download OmniSpatial-test.zip from qizekun/OmniSpatial and unzip it",
    homepage="https://huggingface.co/datasets/qizekun/OmniSpatial",
)
