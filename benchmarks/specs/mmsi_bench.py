"""MMSI-Bench (Yang et al., 2025) as the paper runs it: multi-image spatial intelligence, four-way multiple choice
with the options kept inside the question.

Published layout (``RunsenXu/MMSI-Bench``): ``MMSI_Bench.parquet`` at the repository root, 1,000 rows in
order (``paper_order`` holds). Fields: ``id`` (the sample id), ``images`` (encoded images; all shown, up to
32), ``question`` (options inline after ``Options:``, kept as they are), ``question_type`` (the category),
``answer`` (a letter, upper-cased), ``difficulty``, ``thought`` (not shown). ``choices`` are read from the
question only to check ``answer("B")`` (``meta["options_in_question"]``).

Scoring: metric ``mmsi_paper`` (:func:`mmsi_paper_extract`).
Overall = accuracy; breakdowns per question type and per subset (``meta["subset"]``: Positional
Relationship, Motion, Attribute, MSR; the question type's prefix).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import missing, parquet_rows
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import boxed_letters, first_labelled_letter
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task

REPO = "RunsenXu/MMSI-Bench"
RECORDS = "MMSI_Bench.parquet"
SUBSETS = ("Positional Relationship", "Motion", "Attribute", "MSR")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """``MMSI_Bench.parquet``'s rows in order."""
    path = root / RECORDS
    if not path.is_file():
        raise missing("mmsi-bench", RECORDS, root, REPO)
    yield from parquet_rows(path, ("id", "images", "question", "question_type", "answer"), "mmsi-bench")


def subset(question_type: str) -> str:
    """The subset a question type belongs to, by its prefix (``"Motion (Cam.)"`` -> ``"Motion"``)."""
    return next((s for s in SUBSETS if question_type.strip().startswith(s)), "Other")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    paths: list[str | Path] = [ctx.image(image, "images") for image in record["images"]]
    question = str(record["question"])
    answer = str(record["answer"]).strip().upper()
    parsed = parse_inline_options(question, marker="Options:") or parse_inline_options(question)
    choices = parsed[1] if parsed else choice_letters(max(4, ord(answer[:1] or "A") - ord("A") + 1))
    kind = str(record["question_type"])
    return Task(
        question=question,
        inputs=[FrameSpec.images(paths)],
        choices=choices,
        answer_type="multiple_choice",
        ground_truth=answer,
        task_id=f"mmsi-bench/{record['id']}",
        benchmark="mmsi-bench",
        category=kind,
        meta={
            "metric": "mmsi_paper",
            "sample_id": str(record["id"]),
            "options_in_question": True,
            "subset": subset(kind),
            "difficulty": record.get("difficulty"),
        },
    )


SPEC = BenchmarkSpec(
    name="mmsi-bench",
    description="Multi-image spatial reasoning (camera, object and region relations, motion, multi-step)",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    metric="accuracy, per question type and subset; backticks, boxed, first X./(X)/X:, a standalone A-D",
    homepage="https://huggingface.co/datasets/RunsenXu/MMSI-Bench",
    paper_name="mmsi",
    read_source=read_source,
    frames=FramePolicy(),
    instruction="mmsi.md",
    expected_files=((RECORDS, 1),),
    paper_order=True,
    breakdowns=("category", "subset"),
)


# ---------------------------------------- scoring


def mmsi_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Bench ``extract_single_choice_with_word_boundary``: unwrap ````x````, ```x``` and ``{x}``, then
    the first capital A-D standing alone and not followed by a space and a word (``"B. chair"`` -> B,
    ``"A chair"`` -> nothing); compared case-insensitively with the answer letter."""
    pred = reply
    for pattern in (r"``([^`]*)``", r"`([^`]*)`", r"\{([^}]*)\}"):
        match = re.search(pattern, pred)
        if match:
            pred = match.group(1)
    match = re.search(r"\b[A-D]\b(?!\s[a-zA-Z])", pred)
    if not match:
        return 0.0, None
    letter = match.group()
    return (1.0 if str(gt).lower().replace("\n", " ").strip() == letter.lower() else 0.0), letter


def mmsi_paper_extract(reply: str) -> str | None:
    """MMSI-Bench's paper extraction: inside ````x```` or ```x``` the first standalone A-D; ``\\boxed{X}``; the
    first ``X.``, ``(X)``, ``X:`` (any case); the first standalone A-D not followed by a space and a
    letter; the single letter left after removing punctuation and spaces."""
    quoted = re.search(r"``(.*?)``|`(.*?)`", reply, flags=re.DOTALL)
    if quoted:
        inside = re.search(r"\b([A-D])\b", quoted.group(1) if quoted.group(1) is not None else quoted.group(2))
        if inside:
            return inside.group(1)
    boxed = boxed_letters(reply, "A-D")
    if boxed:
        return boxed[0]
    labelled = first_labelled_letter(reply)
    if labelled:
        return labelled
    standalone = re.search(r"\b([A-D])\b(?!\s[A-Za-z])", reply)
    if standalone:
        return standalone.group(1)
    squeezed = re.sub(r"[\s\W_]", "", reply)
    return squeezed.upper() if len(squeezed) == 1 and squeezed.isalpha() else None


def mmsi_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Bench: :func:`mmsi_paper_extract` equals the answer, upper-cased."""
    got = mmsi_paper_extract(reply)
    return (1.0 if got is not None and got == str(gt).strip().upper() else 0.0), got
