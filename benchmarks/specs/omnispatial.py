"""OmniSpatial (Jia et al., 2025): dynamic reasoning, complex spatial logic, spatial interaction and
perspective taking.

Record (``data.json`` in ``qizekun/OmniSpatial``'s ``OmniSpatial-test.zip``): ``id`` (``"<image>_<n>"``:
several questions share an image), ``question``, ``options`` (list of option texts; empty for the
Complex_Logic questions whose options are drawn in the image, labelled A, B, C, D), ``answer`` (0-based index
of the right option), ``task_type`` (Dynamic_Reasoning, Complex_Logic, Spatial_Interaction,
Perspective_Taking), ``sub_task_type``. Records carry no image field: the image is
``<task_type>/<image>.png`` beside ``data.json``. Unzip and pass ``--source OmniSpatial-test/data.json``.
Overall = accuracy.

Scoring: lmms-eval ``lmms_eval/tasks/omnispatial/utils.py`` with its ``_default_template_yaml``
(``eval_type: re``; metric ``omnispatial_choice``).
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.answer_parsing import choice_letters
from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    image = f"{record['task_type']}/{str(record['id']).split('_')[0]}.png"
    options = list(record["options"] or [])
    answer = int(record["answer"])
    question = record["question"]
    if not options:  # the options are drawn in the image
        options = choice_letters(max(4, answer + 1))
        question += "\n(The options are labelled in the image.)"
    if not 0 <= answer < len(options):
        raise ValueError(f"answer index {answer} is outside the {len(options)} options")
    return Task(
        question=question,
        inputs=[FrameSpec.images([ctx.image(image, "image")])],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=choice_letters(len(options))[answer],
        task_id=f"omnispatial/{record['id']}",
        benchmark="omnispatial",
        category=record["task_type"],
        meta={"metric": "omnispatial_choice", "sub_task_type": record.get("sub_task_type")},
    )


SPEC = BenchmarkSpec(
    name="omnispatial",
    description="Comprehensive spatial reasoning: dynamics, logic, interaction, perspective taking",
    to_task=to_task,
    hub_id="qizekun/OmniSpatial",
    split="test",
    aggregation="micro",
    metric="accuracy; the last 'Answer: X', else A (lmms-eval, eval_type re)",
    media_help="Download OmniSpatial-test.zip from qizekun/OmniSpatial and unzip it",
    homepage="https://huggingface.co/datasets/qizekun/OmniSpatial",
)
