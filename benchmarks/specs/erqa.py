"""ERQA (Gemini Robotics team, 2025) as the paper runs it: embodied-reasoning multiple choice over one or more
images, with the options kept inside the question and ``<image>`` tags where the images belong.

Published layout (``FlagEval/ERQA``): ``data/*.parquet`` (``data/test-00000-of-00001.parquet``, 400 rows),
all read in name order and concatenated (``paper_order`` holds). The paper falls back to
``data/erqa.tfrecord`` when no parquet is there; spatialclaw does not read TFRecord and says so. Fields:
``question_id`` (the sample id; else ``erqa_<4-digit index>``), ``question`` (options inline, kept as they
are), ``question_type`` (the category), ``answer`` (a letter), ``images`` (``{bytes, path}`` list; all shown),
``visual_indices``. An ``<image>`` tag is spliced into the question at each of the first N ``visual_indices``
character positions (N = the number of images, in the list's order); when those are all 0 or there are none,
the tags go on a line before the question, separated by spaces. The images keep the record's order. ``choices`` are the options read from the question, only to check ``answer("B")``
(``meta["options_in_question"]``: the prompt does not list them again).

Scoring: metric ``erqa_paper``, strict: the reply with every ``.`` removed, stripped and lower-cased must
equal the answer. Overall = accuracy; breakdowns per question type and single- vs multi-image
(``meta["images"]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import missing, parquet_rows
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.spec import (
    BenchmarkSpec,
    DatasetUnavailable,
    FramePolicy,
    RecordContext,
    parse_inline_options,
)
from spatialclaw.task import FrameSpec, Task

REPO = "FlagEval/ERQA"


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """Every ``data/*.parquet`` in name order, rows in order, with ``_position`` (the row's place overall)."""
    files = sorted((root / "data").glob("*.parquet"))
    if not files:
        if (root / "data" / "erqa.tfrecord").is_file():
            raise DatasetUnavailable(
                f"erqa: {root}/data holds only erqa.tfrecord; spatialclaw reads the parquet release "
                f"(data/test-00000-of-00001.parquet of {REPO})"
            )
        raise missing("erqa", "data/*.parquet", root, REPO)
    position = 0
    for path in files:
        for row in parquet_rows(path, ("question", "answer", "images"), "erqa"):
            yield {**row, "_position": position}
            position += 1


def with_image_tags(question: str, visual_indices: list[Any] | None, count: int) -> str:
    """``<image>`` at each of the first ``count`` character indices (in the list's order, then spliced in
    ascending order), or, when those are all 0 or absent, ``count`` tags separated by single spaces on a line
    before the question. The images stay in the record's order, which need not be the tags' order."""
    indices = sorted(int(i) for i in list(visual_indices or [])[:count])
    if not indices or all(i == 0 for i in indices):
        return " ".join(["<image>"] * count) + "\n" + question if count else question
    for position in reversed(indices):
        question = question[:position] + "<image>" + question[position:]
    return question


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    images = list(record.get("images") or [])
    paths: list[str | Path] = [ctx.image(image, "images") for image in images]
    raw = str(record["question"])
    parsed = parse_inline_options(raw)
    answer = str(record["answer"]).strip()
    index = record.get("_position", ctx.index)
    sample_id = str(record.get("question_id") or f"erqa_{int(index):04d}")
    choices = parsed[1] if parsed else choice_letters(max(4, ord(answer[:1].upper() or "A") - ord("A") + 1))
    return Task(
        question=with_image_tags(raw, record.get("visual_indices"), len(images)),
        inputs=[FrameSpec.images(paths)],
        choices=choices,
        answer_type="multiple_choice",
        ground_truth=answer,
        task_id=f"erqa/{sample_id}",
        benchmark="erqa",
        category=record.get("question_type") or "uncategorized",
        meta={
            "metric": "erqa_paper",
            "sample_id": sample_id,
            "options_in_question": True,
            "images": "single-image" if len(images) <= 1 else "multi-image",
            "visual_indices": list(record.get("visual_indices") or []),
        },
    )


SPEC = BenchmarkSpec(
    name="erqa",
    description="Embodied reasoning QA (spatial, trajectory, state, task reasoning) for robotics",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    metric="accuracy; the reply without dots, lower-cased, must equal the letter (strict)",
    homepage="https://github.com/embodiedreasoning/ERQA",
    paper_name="erqa",
    read_source=read_source,
    frames=FramePolicy(),
    instruction="erqa.md",
    expected_files=(("data/*.parquet", 1),),
    paper_order=True,
    breakdowns=("category", "images"),
)


# ---------------------------------------- scoring

_DECLARATION = re.compile(
    r"(?<!\w)(?:(?:the|my)\s+)?(?:(?:correct|best|final)\s+)?(?:answer|option|choice)\s*(?:is\b|[:=])"
    r"|(?<!\w)i\s+(?:choose|select|pick)\b",
    re.IGNORECASE,
)


_WRAP_OPEN = "*_`\"'([{$"


def _read_letter(fragment: str) -> tuple[str, str] | None:
    """A single ASCII letter at the start of ``fragment`` (after wrappers such as ``**``, ``(`` and an
    ``option`` prefix) that is not part of a word; returns (capital letter, the rest)."""
    text = fragment.lstrip().lstrip(":=,;").lstrip()
    text = re.sub(r"^(?:option|choice)\b\s*:?\s*", "", text, flags=re.IGNORECASE)
    text = text.lstrip(_WRAP_OPEN + " ")
    if not text or not ("A" <= text[0].upper() <= "Z") or not text[0].isascii():
        return None
    letter, tail = text[0], text[1:]
    if tail[:1].isalnum() or tail[:1] == "_":
        return None
    return letter.upper(), tail


def _alternative_follows(tail: str) -> bool:
    rest = tail.lstrip("*_`\"')]}$ .:").lstrip()
    connector = re.match(r"(?:and\s*/\s*or|and|or|[/&,+|])\s*", rest, flags=re.IGNORECASE)
    return connector is not None and _read_letter(rest[connector.end() :]) is not None


def mcq_extract(reply: str, allowed: Sequence[str] = tuple("ABCDEFGH")) -> str:
    """The main rules of lmms-eval's ``extract_mcq_answer`` (used by its ERQA task): the last ``<answer>``
    or ``\\boxed{}`` container scopes the search; otherwise the *last* explicit declaration ("the answer
    is C", "Answer: D", "I choose B") decides, even when it names a letter that is not offered (then "");
    otherwise a bare or leading-label letter (``"B"``, ``"(C)"``, ``"D. lamp"``). Two letters joined by
    "or", "and", "/" or "," abstain (""). The upstream parser handles more wrappers and languages; those
    extra forms are not reproduced."""
    if not reply or not reply.strip():
        return ""
    allowed_set = {a.upper() for a in allowed}
    text = reply.strip()
    containers = list(
        re.finditer(
            r"<answer\b[^<>]*>(.*?)(?:</answer\s*>|$)|\\boxed\s*\{([^{}]*)\}", text, flags=re.IGNORECASE | re.DOTALL
        )
    )
    if containers:
        last = containers[-1]
        text = (last.group(1) if last.group(1) is not None else last.group(2)).strip()
    declared = None
    for match in _DECLARATION.finditer(text):
        choice = _read_letter(text[match.end() :])
        declared = choice[0] if choice and choice[0] in allowed_set and not _alternative_follows(choice[1]) else ""
    if declared is not None:
        return declared
    choice = _read_letter(text)
    if choice is None or _alternative_follows(choice[1]):
        return ""
    tail = choice[1].strip()
    if tail and not re.match(r"^[\).:\]*_`'\"}]", tail):
        return ""  # "A chair is ..." is prose, not a label
    return choice[0] if choice[0] in allowed_set else ""


def erqa_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ERQA (lmms-eval): :func:`mcq_extract` over A-D equals the answer letter."""
    got = mcq_extract(reply, "ABCD")
    return (1.0 if got == str(gt) else 0.0), got


def erqa_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ERQA, strictly: the reply with every ``.`` removed, stripped and lower-cased equals the answer stripped
    and lower-cased (``"B"``, ``"b"``, ``"B."`` score; ``"(B)"`` and ``"Answer: B"`` do not); empty is wrong."""
    got = reply.replace(".", "").strip().lower()
    return (1.0 if got and got == str(gt).strip().lower() else 0.0), got
