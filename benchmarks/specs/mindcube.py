"""MindCube (Yin et al., 2025) as the paper runs it: spatial mental models from a few views (around, rotation,
among; translation questions are run but not scored).

Published layout (``MLL-Lab/MindCube``, ``data.zip`` extracted in place): the records file is looked for in
``DIR``, ``DIR/raw`` and ``DIR/data/raw``, in that order, trying ``MindCube.jsonl`` (21,154) before
``MindCube_tinybench.jsonl`` in each, so the full set wins when present; lines in file order
(``paper_order`` holds). Images resolve under whichever of ``DIR`` and ``DIR/data`` holds
``other_all_image/``. Fields: ``id`` (the sample id), ``question`` (options inline, kept as they are),
``images`` (all shown), ``gt_answer`` (upper-cased), ``category`` (tags), ``type``. The setting (the
category) is read from the lower-cased id by substring, checked in the order around, rotation,
translation, among; otherwise ``other``. ``choices`` are read from the question only to check
``answer("B")`` (``meta["options_in_question"]``).

Scoring: metric ``mindcube_paper`` (:func:`mindcube_paper_extract`).
``translation`` samples carry ``meta["paper_scored"] = False``: the paper leaves them out of every number.
Overall = accuracy over the rest (rule ``micro_paper_scored``); per setting.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.benchmarks.data.published import check_keys, missing
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import boxed_letters
from spatialclaw.benchmarks.spec import (
    BenchmarkSpec,
    DatasetUnavailable,
    FramePolicy,
    RecordContext,
    parse_inline_options,
)
from spatialclaw.task import FrameSpec, Task

REPO = "MLL-Lab/MindCube"
SETTINGS = ("around", "rotation", "translation", "among")
RECORD_FILES = ("MindCube.jsonl", "MindCube_tinybench.jsonl")


def records_file(root: Path) -> Path:
    """The records file the paper picks: the full set before the tiny bench, in DIR, DIR/raw, DIR/data/raw."""
    for folder in (root, root / "raw", root / "data" / "raw"):
        for name in RECORD_FILES:
            if (folder / name).is_file():
                return folder / name
    raise missing("mindcube", "MindCube.jsonl or MindCube_tinybench.jsonl (in ., raw/ or data/raw/)", root, REPO)


def image_base(root: Path) -> Path:
    """Whichever of ``root`` and ``root/data`` holds ``other_all_image/``."""
    for folder in (root, root / "data"):
        if (folder / "other_all_image").is_dir():
            return folder
    raise missing("mindcube", "other_all_image/ (in . or data/)", root, REPO)


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The chosen JSONL's records in order, with ``_image_base``."""
    path = records_file(root)
    base = image_base(root)
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = jsonl.loads(line)
            except ValueError as exc:  # malformed or nested too deeply
                raise DatasetUnavailable(f"mindcube: {path} line {number} is not valid JSON ({exc})") from None
            check_keys(record, ("id", "question", "images", "gt_answer"), path, "mindcube", number)
            yield {**record, "_image_base": str(base)}


def setting(sample_id: Any) -> str:
    """around, rotation, translation or among, by substring of the lower-cased id in that order; else other."""
    text = str(sample_id).lower()
    return next((s for s in SETTINGS if s in text), "other")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    base = Path(record.get("_image_base") or ".")
    paths: list[str | Path] = [ctx.media(str(base / str(p))) for p in record["images"]]
    question = str(record["question"])
    answer = str(record["gt_answer"]).strip().upper()
    parsed = parse_inline_options(question)
    choices = parsed[1] if parsed else choice_letters(max(4, ord(answer[:1] or "A") - ord("A") + 1))
    kind = setting(record["id"])
    meta: dict[str, Any] = {
        "metric": "mindcube_paper",
        "sample_id": str(record["id"]),
        "options_in_question": True,
        "tags": list(record.get("category") or []),
    }
    if kind == "translation":
        meta["paper_scored"] = False
    return Task(
        question=question,
        inputs=[FrameSpec.images(paths)],
        choices=choices,
        answer_type="multiple_choice",
        ground_truth=answer,
        task_id=f"mindcube/{record['id']}",
        benchmark="mindcube",
        category=kind,
        meta=meta,
    )


SPEC = BenchmarkSpec(
    name="mindcube",
    description="Spatial mental modelling from limited views (around, rotation, among)",
    to_task=to_task,
    hub_id=REPO,
    split="train",
    aggregation="micro_paper_scored",
    metric="accuracy without the translation samples; boxed, last 'X.', the answer tag, answer phrases, last letter",
    media_help="Download MLL-Lab/MindCube and extract data.zip in place (spatialclaw data download mindcube)",
    homepage="https://huggingface.co/datasets/MLL-Lab/MindCube",
    paper_name="mindcube",
    read_source=read_source,
    frames=FramePolicy(),
    instruction="mindcube.md",
    expected_files=(("**/MindCube_tinybench.jsonl", 1),),
    archives=("data.zip",),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring


def mindcube_extract(text: str) -> str | None:
    """MindCube's ``extract_answer`` (the official repo's and lmms-eval's): the last ``X.`` first; then the
    text after an ``<Answer>`` tag; then prioritised patterns (last match of the first that hits); then
    line-by-line fallbacks. Letters A-E only, capitals only."""
    if not text:
        return None
    dotted = list(re.finditer(r"([A-E])\.", text))
    if dotted:
        return dotted[-1].group(1)
    tagged = re.search(r"<Answer>(.*?)(?:<|$)", text, re.DOTALL)
    if tagged:
        section = tagged.group(1)
        for pattern in (
            r"[Mm]y answer is ([A-E])",
            r"[Mm]y answer is ([A-E])\.",
            r"[Tt]he answer is ([A-E])",
            r"(?:Answer: )?([A-E])\.",
            r"\b([A-E])\b",
        ):
            found = list(re.finditer(pattern, section))
            if found:
                return found[-1].group(1)
    for pattern in (
        r'(?:Answer: )?([A-E])\. [A-Za-z0-9 \-\(\)\'",]+(?=(?:\n|$|\.|"))',
        r'(?:Answer: )?([A-E])\. [A-Za-z0-9 \-\(\)\'"]+',
        r"(?:^|\n)(?:Answer: )?([A-E])(?:\.|$|\s)",
        r"[\*\"]([A-E])[\*\"]",
        r"\bAnswer:?\s*([A-E])\b",
        r"[Mm]y answer is ([A-E])",
        r"[Mm]y answer is ([A-E])\.",
        r"answer is ([A-E])",
    ):
        found = list(re.finditer(pattern, text))
        if found:
            return found[-1].group(1)
    lines = text.split("\n")
    described = [m.group(1) for line in lines for m in [re.search(r'([A-E])\. [A-Za-z0-9 \-\(\)\'",]+', line)] if m]
    if described:
        return described[-1]
    for line in reversed(lines):
        match = re.search(r"\b([A-E])\b", line)
        if match:
            return match.group(1)
    return None


def mindcube_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MindCube: :func:`mindcube_extract` on the stripped reply equals ``gt_answer`` exactly."""
    got = mindcube_extract(reply.strip())
    return (1.0 if got == str(gt) else 0.0), got


_MINDCUBE_PHRASES = (
    r"(?i:my answer is)\s*([A-E])\b",
    r"(?i:the answer is)\s*([A-E])\b",
    r"(?i:answer):\s*([A-E])\b",
    r"\b([A-E])[:.]\s*(?=[A-Z])",
)


def mindcube_paper_extract(text: str) -> str | None:
    """MindCube's paper extraction: the *first* ``\\boxed{X}``; the last ``X.``; inside an ``<Answer>``/
    ``<answer>`` tag the last ``X.``, else its last standalone letter; the last of "my answer is X", "the answer
    is X", "Answer: X", ``X:``/``X.`` before a capital; the last standalone A-E; else None."""
    boxed = boxed_letters(text)
    if boxed:
        return boxed[0]
    dotted = re.findall(r"\b([A-E])\.", text)
    if dotted:
        return str(dotted[-1])
    tagged = re.search(r"<answer>(.*?)(?:</answer>|$)", text, flags=re.IGNORECASE | re.DOTALL)
    if tagged:
        inside = re.findall(r"\b([A-E])\b", tagged.group(1))
        if inside:
            return str(inside[-1])
    hits = [(m.start(), m.group(1)) for pattern in _MINDCUBE_PHRASES for m in re.finditer(pattern, text)]
    if hits:
        return max(hits)[1]
    standalone = re.findall(r"\b([A-E])\b", text)
    return standalone[-1] if standalone else None


def mindcube_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MindCube: :func:`mindcube_paper_extract` equals ``gt_answer`` (upper-cased) exactly."""
    got = mindcube_paper_extract(reply.strip())
    return (1.0 if got is not None and got == str(gt).strip().upper() else 0.0), got
