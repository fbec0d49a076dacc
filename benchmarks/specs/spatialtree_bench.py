"""SpatialTree-Bench ("SpatialTree: How Spatial Abilities Branch Out in MLLMs", 2025): a hierarchy of
spatial abilities, from perception (L1) to agentic competence (L4).

Record (``LongfeiLi/SpatialTree-Bench``, split ``test``; layout from lmms-eval's ``spatialtreebench``
task): ``question``, ``option`` (list of option strings), ``answer``, ``question_type`` (``open`` for
numeric answers), ``extra_info`` (JSON text: ``metricfunc``, the ability path ``spatree0``,
``spatree1``, ..., ``pe_style``), ``hint`` (JSON text), ``image`` (list of relative paths such as
``images/x.jpg``) or ``video`` (list; ``video_info[0].frame_index`` names the frames to use),
``session_id``.

Scoring: EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/spatialtreebench/utils.py`` and
``metrics/rule_metrics.py``. Reproduced: ``multichoiceeval`` (metric ``spatialtree_choice``; on an
``open`` question it becomes ``meanrelativeacc``) and ``meanrelativeacc`` (``spatialtree_mra``). Records
judged by an LLM (``gpteval``, ``judge``) or by task-specific simulators (``gravityeval``, ``cogmapeval``,
``affmask``, ``manipulateeval``, ``agenticnaveval``) are skipped with a count. Overall: means up the
ability tree, children weighted equally (the official ``spatree_hierarchy.json`` weights are not
reproduced).
"""

from __future__ import annotations

import json
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, strip_option_labels
from spatialclaw.task import FrameSpec, Task

SCORED = ("multichoiceeval", "meanrelativeacc")


def _json(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    return json.loads(text) if text else {}


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task | None:
    info = _json(record.get("extra_info"))
    metric_func = info.get("metricfunc")
    if metric_func not in SCORED:
        return None
    path = [str(info[k]) for k in sorted((k for k in info if k.startswith("spatree")), key=lambda k: int(k[7:]))]
    videos = list(record.get("video") or [])
    if videos:
        frames = ((record.get("video_info") or [{}])[0] or {}).get("frame_index") or []
        inputs = [FrameSpec.video(ctx.media(str(videos[0])), count=min(32, len(frames)) if frames else 16)]
    else:
        inputs = [FrameSpec.images([ctx.media(str(p)) for p in record.get("image") or []])]
    common: dict[str, Any] = dict(
        question=str(record["question"]),
        inputs=inputs,
        task_id=f"spatialtree-bench/{record.get('session_id', ctx.index)}",
        benchmark="spatialtree-bench",
        category=path[-1] if path else "uncategorized",
    )
    meta = {"spatree": path, "metricfunc": metric_func}
    if metric_func == "multichoiceeval" and record.get("question_type") != "open":
        return Task(
            **common,
            choices=strip_option_labels(record["option"]),
            answer_type="multiple_choice",
            ground_truth=str(record["answer"]).strip(),
            meta={**meta, "metric": "spatialtree_choice"},
        )
    return Task(
        **common, answer_type="number", ground_truth=float(record["answer"]), meta={**meta, "metric": "spatialtree_mra"}
    )


SPEC = BenchmarkSpec(
    name="spatialtree-bench",
    description="A tree of spatial abilities: perception, mental mapping, simulation and agentic competence",
    to_task=to_task,
    hub_id="LongfeiLi/SpatialTree-Bench",
    split="test",
    aggregation="spatialtree",
    media_help="Download LongfeiLi/SpatialTree-Bench (its images/ and videos/) and pass --media-root to that folder",
    homepage="https://huggingface.co/datasets/LongfeiLi/SpatialTree-Bench",
    metric="choice patterns and MRA, means up the ability tree (lmms-eval spatialtreebench; LLM-judged items skipped)",
)
