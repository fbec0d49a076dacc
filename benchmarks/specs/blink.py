"""BLINK (Fu et al., 2024) as the paper runs it: the ``val`` split of all 14 subtasks, the mean over subtasks.

Published layout (``BLINK-Benchmark/BLINK``): one folder per subtask holding ``val-*.parquet`` (and
``test-*.parquet``, whose answers are hidden; not read). The paper's loader reads the 14 subtasks in the
order of :data:`SUBTASKS`, each file's rows in order (so ``paper_order`` holds). Record fields: ``idx`` (the
sample id), ``question``, ``choices`` (option texts, lettered A, B, ... by the prompt), ``answer``
(``"(A)"``), ``image_1`` .. ``image_4`` (null ones skipped; all shown), ``prompt``/``explanation`` (unused).
The category is the subtask folder.

Scoring: metric ``blink_paper`` (:func:`blink_extract`): a bare
letter, ``(X)``, the last ``\\boxed{X}``, the one ``(X)`` word in the reply (then in its last paragraph), the
last ``(X)``, the first "answer is x" phrase (no colon: ``Answer: B`` reads nothing there), a leading letter;
else ``(Z)``; compared with the answer as ``(X)``.
Overall = mean over subtasks (``macro``); the micro mean is the report's question-weighted figure.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import missing, parquet_rows
from spatialclaw.benchmarks.scoring.letters import boxed_letters
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, iter_nonempty
from spatialclaw.task import FrameSpec, Task

#: The paper's 14 subtasks, in its loader's order.
SUBTASKS = (
    "Art_Style",
    "Counting",
    "Forensic_Detection",
    "Functional_Correspondence",
    "IQ_Test",
    "Jigsaw",
    "Multi-view_Reasoning",
    "Object_Localization",
    "Relative_Depth",
    "Relative_Reflectance",
    "Semantic_Correspondence",
    "Spatial_Relation",
    "Visual_Correspondence",
    "Visual_Similarity",
)
REPO = "BLINK-Benchmark/BLINK"


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """Every subtask's ``val-*.parquet`` rows, subtasks in :data:`SUBTASKS` order, with ``_subtask`` added; a
    subtask folder with no such file is skipped with a warning (none at all: :class:`DatasetUnavailable`)."""
    absent = []
    for subtask in SUBTASKS:
        files = sorted((root / subtask).glob("val-*.parquet"))
        if not files:
            absent.append(subtask)
            continue
        for path in files:
            for row in parquet_rows(path, ("idx", "question", "choices", "answer", "image_1"), "blink"):
                yield {**row, "_subtask": subtask}
    if len(absent) == len(SUBTASKS):
        raise missing("blink", f"{SUBTASKS[0]}/val-*.parquet", root, REPO)
    if absent:
        warnings.warn(
            f"blink: skipped {len(absent)} subtask(s) with no val-*.parquet under {root}: {', '.join(absent)} "
            "(as the paper's loader skips them)",
            stacklevel=2,
        )


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    images = iter_nonempty(record.get(f"image_{i}") for i in range(1, 5))
    paths: list[str | Path] = [ctx.image(image, "image_N") for image in images]
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.images(paths)],
        choices=[str(c) for c in record["choices"]],
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip(),
        task_id=f"blink/{record['idx']}",
        benchmark="blink",
        category=record.get("_subtask") or record.get("sub_task") or ctx.config,
        meta={"metric": "blink_paper", "sample_id": str(record["idx"])},
    )


SPEC = BenchmarkSpec(
    name="blink",
    description="BLINK, all 14 perception subtasks (val): depth, correspondence, counting, jigsaw, IQ test, ...",
    to_task=to_task,
    hub_id=REPO,
    configs=SUBTASKS,
    split="val",
    aggregation="macro",
    metric="accuracy per subtask, overall = mean over the 14 subtasks; the paper's letter extraction, answer (X)",
    homepage="https://huggingface.co/datasets/BLINK-Benchmark/BLINK",
    paper_name="blink",
    read_source=read_source,
    frames=FramePolicy(),
    instruction="blink.md",
    expected_files=tuple((f"{subtask}/val-*.parquet", 1) for subtask in SUBTASKS),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring


def _bracketed_words(text: str) -> list[str]:
    """The letters of the whitespace-separated words that are exactly ``(X)``: ``(A).`` is no such word."""
    return [word[1] for word in text.split() if re.fullmatch(r"\([A-E]\)", word)]


def blink_extract(reply: str) -> str:
    """BLINK's paper extraction, as ``"(X)"``: a bare letter; an already bracketed ``(X)``; the last
    ``\\boxed{X}``; the one whitespace-separated word that is exactly ``(X)``, else the one in the last
    paragraph (so ``"(B) is right, not (A)."`` reads B); the last ``(X)`` anywhere; the *first*
    "answer/choice/option (is) x" phrase, the letter in any case and no colon between (``"the answer is b"``
    reads B, ``"Answer: B"`` does not match); a leading letter not followed by a letter; else ``"(Z)"``."""
    text = reply.strip()
    if re.fullmatch(r"[A-E]", text):
        return f"({text})"
    if re.fullmatch(r"\([A-E]\)", text):
        return text
    boxed = boxed_letters(text)
    if boxed:
        return f"({boxed[-1]})"
    words = _bracketed_words(text)
    if len(words) == 1:
        return f"({words[0]})"
    in_last = _bracketed_words(re.split(r"\n\s*\n", text)[-1])
    if len(in_last) == 1:
        return f"({in_last[0]})"
    bracketed = re.findall(r"\(([A-E])\)", text)
    if bracketed:
        return f"({bracketed[-1]})"
    phrased = re.search(r"\b(?:answer|choice|option)\s*(?:is\s*)?\(?([A-E])\b", text, flags=re.IGNORECASE)
    if phrased:
        return f"({phrased.group(1).upper()})"
    leading = re.match(r"\(?([A-E])(?![A-Za-z])", text)
    if leading:
        return f"({leading.group(1)})"
    return "(Z)"


def blink_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """BLINK: :func:`blink_extract` equals the answer written ``(X)`` (``"B"`` and ``"(B)"`` both read so)."""
    got = blink_extract(reply)
    target = str(gt).strip().strip("()").strip().upper()
    return (1.0 if got == f"({target})" else 0.0), got
