"""3DSRBench (Ma et al., 2024): 3D spatial reasoning on COCO images (height, location, orientation,
multi-object), scored with circular evaluation.

Record (``ccvl/3DSRBench``, config ``benchmark``, split ``test``; the same columns as its VLMEvalKit TSV):
``index``, ``question``, ``A`` .. ``D`` (empty for two-option questions), ``answer`` (a letter),
``category``, ``image_source``, and the image either as ``image`` (base64, in the VLMEvalKit TSVs) or
``image_url`` (a COCO URL; the file is looked up under ``--media-root``, e.g. the unzipped
``coco_images.zip``, as ``<folder>/<name>`` then ``<name>``). Circular variants of one question
share ``index % 1,000,000`` (VLMEvalKit's convention); a question counts only when all variants are right.

Scoring: VLMEvalKit's circular evaluation with its rule matching (``vlmeval/utils/matching_util.py``
``can_infer_option`` / ``can_infer_text``; metric ``vlmeval_choice``). Where those rules find nothing,
VLMEvalKit asks an LLM judge; that is not reproduced, and the reply scores 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spatialclaw.benchmarks.scoring.letters import option_text
from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext
from spatialclaw.task import FrameSpec, Task


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    if record.get("image"):
        path = ctx.image(record["image"], "image")
    else:
        parts = str(record["image_url"]).rstrip("/").split("/")
        path = ctx.media_any(["/".join(parts[-2:]), parts[-1]])
    options = [str(record[k]) for k in "ABCD" if record.get(k) not in (None, "") and str(record[k]) != "nan"]
    index = int(record["index"])
    return Task(
        question=record["question"],
        inputs=[FrameSpec.images([path])],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"3dsrbench/{index}",
        benchmark="3dsrbench",
        category=record["category"],
        meta={"metric": "vlmeval_choice", "circular_group": str(index % 1_000_000)},
    )


SPEC = BenchmarkSpec(
    name="3dsrbench",
    description="3D spatial reasoning: height, location, orientation, multi-object (circular evaluation)",
    to_task=to_task,
    hub_id="ccvl/3DSRBench",
    configs=("benchmark",),
    split="test",
    aggregation="circular",
    metric="circular accuracy (every variant right); VLMEvalKit's option/text matching (its LLM judge not reproduced)",
    media_help="Download coco_images.zip from ccvl/3DSRBench and unzip it",
    homepage="https://huggingface.co/datasets/ccvl/3DSRBench",
)


# ---------------------------------------- scoring

_REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)


def vlmeval_infer(reply: str, options: Sequence[str]) -> str | None:
    """VLMEvalKit's rule matching (``can_infer_option``, then ``can_infer_text``): punctuation
    ``.()[],:;!*#{}`` becomes spaces; exactly one option letter among the tokens is the answer, unless an
    ``A`` appears in a reply of more than three tokens (an article); a refusal or a lone ``Z`` is ``"Z"``;
    otherwise exactly one option text inside the lower-cased reply. None where VLMEvalKit would ask its
    LLM judge (not reproduced)."""
    letters = [chr(ord("A") + i) for i in range(len(options))]
    if "Failed to obtain answer via API" in reply:
        return None
    if any(refusal in reply for refusal in _REFUSALS):
        return "Z"
    spaced = reply
    for char in ".()[],:;!*#{}":
        spaced = spaced.replace(char, " ")
    tokens = [t.strip() for t in spaced.split()]
    hits = [c for c in letters if c in tokens]
    if len(hits) == 1 and not ("A" in tokens and len(tokens) > 3):
        return hits[0]
    if not hits and "Z" in tokens:
        return "Z"
    low = reply.lower()
    named = [c for c, text in zip(letters, options, strict=True) if str(text).lower() in low]
    return named[0] if len(named) == 1 else None


def vlmeval_choice(
    reply: str, gt: Any, choices: Sequence[str] | None = None, param: str | None = None
) -> tuple[float, Any]:
    """3DSRBench (VLMEvalKit's multiple-choice evaluation): :func:`vlmeval_infer` equals the answer letter."""
    got = vlmeval_infer(reply, [option_text(c) for c in choices or []])
    return (1.0 if got is not None and got == str(gt).strip() else 0.0), got
