"""Omni3D-Bench (Marsili et al., VADAR, 2025) as the paper runs it: 3D questions on Omni3D images with float,
int or short-text answers.

Published layout (``dmarsili/Omni3D-Bench``, its archive extracted in place): ``annotations.json`` =
``{"questions": [...]}`` beside ``images/`` (501 questions on 201 images), at ``DIR`` or one folder down;
questions in list order (``paper_order`` holds). Fields: ``question_index`` (the sample id), ``question``,
``image_filename`` (under ``images/``), ``answer`` (typed), ``answer_type`` (``float``/``int``/``str``, the
category).

Scoring: metric ``omni3d_paper:<answer_type>``
(:func:`omni3d_paper`): the ``\\boxed{}`` content, else the whole
reply when it is a number, else its last number, else the lower-cased text without quotes at its ends; float: the share
of t in 0.5, 0.45, ..., 0.05 with relative error < t (``|p|`` when the answer is 0); int:
``int(round(float(p)))``; str: case-insensitive equality. Overall = mean over questions; per answer type.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import check_keys, json_data, missing
from spatialclaw.benchmarks.scoring.numbers import to_float
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, FramePolicy, RecordContext
from spatialclaw.task import AnswerType, FrameSpec, Task

REPO = "dmarsili/Omni3D-Bench"
RECORDS = "annotations.json"


def annotations_file(root: Path) -> Path:
    """``annotations.json`` at ``root`` or in one of its subfolders (an extracted archive's folder)."""
    if (root / RECORDS).is_file():
        return root / RECORDS
    nested = sorted(root.glob(f"*/{RECORDS}"))
    if nested:
        return nested[0]
    raise missing("omni3d-bench", f"{RECORDS} (at . or one folder down)", root, REPO)


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The ``questions`` of ``annotations.json`` in order, each with ``_images`` (its ``images/`` folder)."""
    path = annotations_file(root)
    data = json_data(path, "omni3d-bench")
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise DatasetUnavailable(f'omni3d-bench: {path} should hold {{"questions": [...]}}')
    wanted = ("question_index", "question", "image_filename", "answer", "answer_type")
    for position, record in enumerate(data["questions"]):
        check_keys(record, wanted, path, "omni3d-bench", position)
        yield {**record, "_images": str(path.parent / "images")}


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    kind = str(record["answer_type"])
    if kind not in ("int", "float", "str"):
        raise ValueError(f"unknown answer_type {kind!r} (int, float or str)")
    answer = record["answer"]
    answer_type: AnswerType = "number"
    if kind == "str":
        answer = str(answer).strip()
        answer_type = "yes_no" if answer.lower() in ("yes", "no") else "text"
    images = Path(record.get("_images") or "images")
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.images([ctx.media(str(images / str(record["image_filename"])))])],
        answer_type=answer_type,
        ground_truth=answer,
        task_id=f"omni3d-bench/{record['question_index']}",
        benchmark="omni3d-bench",
        category=kind,
        meta={"metric": f"omni3d_paper:{kind}", "sample_id": str(record["question_index"])},
    )


SPEC = BenchmarkSpec(
    name="omni3d-bench",
    description="3D spatial reasoning on Omni3D images: counts, yes/no, one-word and metric answers",
    to_task=to_task,
    hub_id=REPO,
    split="train",
    aggregation="micro",
    homepage="https://huggingface.co/datasets/dmarsili/Omni3D-Bench",
    metric="mean over questions, per answer type: float by 10 strict thresholds, int rounded, str any case",
    media_help="Download dmarsili/Omni3D-Bench and extract its archive in place (spatialclaw data download omni3d)",
    paper_name="omni3d",
    read_source=read_source,
    frames=FramePolicy(),
    instruction="omni3d.md",
    expected_files=((f"**/{RECORDS}", 1),),
    archives=("*.zip", "*.tar.gz", "*.tgz", "*.tar"),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring


def _omni3d_reply(reply: str) -> str:
    return reply.split("<ans>")[1].split("</ans>")[0] if "<ans>" in reply else reply


#: VLMEvalKit's Omni3D-Bench tolerances, compared with a strict ``<`` (unlike VSI-Bench's ``<=``).
OMNI3D_TOLERANCES = (0.5, 0.45, 0.40, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05)


def omni3d_score(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Omni3D-Bench (VLMEvalKit ``Omni3DBench_acc``) by ``answer_type`` (``param``): ``int`` counts by
    ``int()`` equality; ``str`` yes/no when the reply (lower-cased) contains the answer or true/false;
    other ``str`` answers by exact equality with the lower-cased reply; ``float`` by the share of
    tolerances t with ``|gt - pred| / gt < t``."""
    pred = _omni3d_reply(reply)
    if param == "int":
        try:
            return (1.0 if int(pred) == int(gt) else 0.0), int(pred)
        except (TypeError, ValueError):
            return 0.0, None
    if param == "float":
        value = to_float(pred)
        if value is None:
            return 0.0, None
        target = float(gt)
        hits = [abs(target - value) / target < t for t in OMNI3D_TOLERANCES] if target else [value == 0] * 10
        return sum(hits) / len(OMNI3D_TOLERANCES), value
    answer = str(gt)
    low = pred.lower()
    if answer in ("yes", "no"):
        right = answer in low or (answer == "yes" and "true" in low) or (answer == "no" and "false" in low)
        return (1.0 if right else 0.0), pred
    return (1.0 if answer == low else 0.0), pred


#: The ten thresholds 0.5, 0.45, ..., 0.05; a float answer hits one when its relative error is below it.
OMNI3D_PAPER_THRESHOLDS = (0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05)


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def omni3d_prediction(reply: str) -> str:
    """Omni3D-Bench's paper reading of a reply: the ``\\boxed{}`` content if any; then, when the text holds a
    number, the whole text if it parses as a float, else its *last* number; otherwise the lower-cased
    text with quote characters stripped from its two ends (``"man's chair"`` keeps its apostrophe)."""
    text = reply.strip()
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", text)
    if boxed:
        text = boxed[-1].strip()
    numbers = _NUMBER.findall(text.replace(",", ""))
    if numbers:
        return text if to_float(text) is not None else numbers[-1]
    return text.lower().strip().strip("\"'").strip()


def omni3d_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Omni3D-Bench by ``answer_type`` (``param``): ``float``: the share of the ten thresholds t with
    ``|p - g| / |g| < t`` (``|p|`` when g = 0); ``int``: ``int(round(float(p))) == int(g)`` (so "3.0"
    counts); ``str``: equality after stripping, case-insensitive."""
    pred = omni3d_prediction(reply)
    if param in ("float", "int"):
        value = to_float(pred)
        target = to_float(gt)
        if value is None or target is None or not math.isfinite(value) or not math.isfinite(target):
            return 0.0, value
        if param == "int":
            return (1.0 if int(round(value)) == int(target) else 0.0), value
        error = abs(value - target) / abs(target) if target != 0 else abs(value)
        return sum(error < t for t in OMNI3D_PAPER_THRESHOLDS) / len(OMNI3D_PAPER_THRESHOLDS), value
    return (1.0 if pred.strip().lower() == str(gt).strip().lower() else 0.0), pred
