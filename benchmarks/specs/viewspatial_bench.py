"""ViewSpatial-Bench (Li et al., 2025): relative direction and orientation from the camera's and from a
person's perspective; the paper's ``viewspatial``.

Record (``lidingm/ViewSpatial-Bench``: ``ViewSpatial-Bench.json``, a list of 5,712 questions; images from
``scannetv2_val.zip`` and ``val2017.zip`` extracted in place): the sample id is the position in the list;
``question_type`` (5 types), ``image_path`` (list; leading ``.`` and ``/`` characters stripped, then the
``ViewSpatial-Bench/`` prefix dropped, e.g. ``scannetv2_val/scene0011_00/original_images/0.jpg``,
``val2017/000000000139.jpg``), ``question``, ``choices`` (one newline-separated string, appended as it is to
the question after a blank line; its lines, without their ``X. `` labels, are also the task's choices, so
``answer("B")`` is accepted, and the prompt does not list them again, ``meta["options_in_question"]``), ``answer`` (``"A. right"``; the letter is its
first character). Questions with a missing image are dropped with a warning that counts them, as the paper's
loader does. Frames: every image, up to 32.

Scoring: the paper's setting, metric ``viewspatial_paper``: ``\\boxed{X}``; ``<answer>X</answer>``; the
letter (any case) after the last answer-marker phrase (``option`` is none); the last ``(X)``, then ``X.``, then
``X:``; a single letter; the last standalone A-D (any case) in the final 400 characters. Overall = accuracy,
broken down by question type.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import json_list, require_file
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import boxed_letter, only_letter
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, strip_option_labels
from spatialclaw.task import FrameSpec, Task

REPO = "lidingm/ViewSpatial-Bench"
FIELDS = ("question_type", "image_path", "question", "choices", "answer")


def image_paths(record: dict[str, Any]) -> list[str]:
    """The record's image paths relative to the repository folder."""
    raw = record["image_path"] if isinstance(record["image_path"], list) else [record["image_path"]]
    return [str(p).lstrip("./").removeprefix("ViewSpatial-Bench/") for p in raw]


def _exists(root: Path, relative: str) -> bool:
    top = relative.split("/", 1)[0]
    return (root / relative).is_file() or (root / top / relative).is_file()


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The records of ``ViewSpatial-Bench.json`` in list order, each with its position as ``_index``; those
    with any image missing under ``root`` are dropped and counted in one warning."""
    records = json_list(require_file(root, "ViewSpatial-Bench.json", "viewspatial", REPO), FIELDS, "viewspatial")
    dropped = 0
    for index, record in enumerate(records):
        if not all(_exists(Path(root), p) for p in image_paths(record)):
            dropped += 1
            continue
        yield {**record, "_index": index}
    if dropped:
        warnings.warn(
            f"viewspatial: dropped {dropped} of {len(records)} question(s) whose images are missing under {root} "
            "(were scannetv2_val.zip and val2017.zip extracted?)",
            stacklevel=2,
        )


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    choices = record["choices"]
    if isinstance(choices, list):
        choices = "\n".join(str(c) for c in choices)
    index = record.get("_index", record.get("id", ctx.index))
    lines = [line.strip() for line in str(choices or "").splitlines() if line.strip()]
    return Task(
        question=f"{record['question']}\n\n{choices}" if choices else str(record["question"]),
        inputs=[FrameSpec.images([ctx.media(p) for p in image_paths(record)])],
        choices=strip_option_labels(lines) if lines else choice_letters(4),
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip()[:1].upper(),
        task_id=f"viewspatial-bench/{index}",
        benchmark="viewspatial-bench",
        category=str(record["question_type"]),
        meta={
            "metric": "viewspatial_paper",
            "answer_text": str(record["answer"]),
            "sample_id": str(index),
            "options_in_question": True,
        },
    )


SPEC = BenchmarkSpec(
    name="viewspatial-bench",
    description="Multi-perspective spatial localisation (camera and person viewpoints)",
    to_task=to_task,
    hub_id=REPO,
    configs=("ViewSpatial-Bench",),
    split="test",
    aggregation="micro",
    metric="accuracy; boxed, <answer>, last answer marker, last (X)/X./X:, last standalone A-D (paper setting)",
    media_help=f"Download {REPO} and unzip scannetv2_val.zip and val2017.zip in place, then pass --source DIR",
    homepage="https://huggingface.co/datasets/lidingm/ViewSpatial-Bench",
    paper_name="viewspatial",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="viewspatial.md",
    expected_files=(("ViewSpatial-Bench.json", 1),),
    archives=("scannetv2_val.zip", "val2017.zip"),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring


def viewspatial_option(text: str) -> str | None:
    """ViewSpatial-Bench ``extract_option``: the first standalone A-D, any case, as a capital."""
    match = re.search(r"\b([A-D])\b", text, re.IGNORECASE)
    return match.group(1).upper() if match else None


def viewspatial_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ViewSpatial-Bench: the option in the reply's *last line* equals the option in the answer."""
    got = viewspatial_option(reply.split("\n")[-1])
    return (1.0 if got is not None and got == viewspatial_option(str(gt)) else 0.0), got


#: The answer markers ViewSpatial-Bench reads a letter after; unlike DSI-Bench's, ``option`` is not one.
_MARKERS = (
    r"final answer|correct answer|answer is|the answer|best answer|best option|correct option|correct choice|answer"
)


def viewspatial_paper_letter(reply: str) -> str | None:
    """ViewSpatial-Bench: ``\\boxed{X}``; ``<answer>X</answer>``; the letter, in any case, after the *last*
    answer-marker phrase ("final answer", "the answer", "answer", ...; not "option"); the last ``(X)``, then the
    last ``X.``, then the last ``X:``; a single letter; the last standalone a-d, in any case, in the final 400
    characters. So ``"the answer is b"`` reads B, and ``"Option A is wrong, so C"`` reads C."""
    letters = "ABCD"
    boxed = boxed_letter(reply, letters)
    if boxed:
        return boxed
    tag = re.findall(r"<answer>\s*\(?([A-D])\)?\.?\s*</answer>", reply, flags=re.IGNORECASE)
    if tag:
        return str(tag[-1]).upper()
    marker = re.findall(rf"(?:{_MARKERS})\s*[:\-=]?\s*(?:\*\*)?\s*\(?([A-D])\b", reply, flags=re.IGNORECASE)
    if marker:
        return str(marker[-1]).upper()
    for pattern in (r"\(([A-D])\)", r"\b([A-D])\.", r"\b([A-D]):"):
        found = re.findall(pattern, reply)
        if found:
            return str(found[-1])
    only = only_letter(reply, letters)
    if only:
        return only
    tail = re.findall(r"\b([A-D])\b", reply[-400:], flags=re.IGNORECASE)
    return str(tail[-1]).upper() if tail else None


def viewspatial_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ViewSpatial-Bench: :func:`viewspatial_paper_letter` equals the answer's first letter (``"A. right"``
    -> A)."""
    got = viewspatial_paper_letter(reply)
    target = str(gt).strip()[:1].upper()
    return (1.0 if got is not None and got == target else 0.0), got
