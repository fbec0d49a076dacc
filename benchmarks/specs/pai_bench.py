"""PAI-Bench, understanding track (Physical AI Bench, SHI Labs, 2025): four-way questions about physical-world
videos (embodied reasoning and common sense), the paper's ``paibench``.

Record (``shi-labs/physical-ai-bench-understanding``: ``data/test-00000-of-00001.parquet``, 1,214 rows;
``videos/`` holds 927 mp4 in 7 subfolders): ``question``, ``index2ans`` (letter A-D -> option text, null for
unused letters), ``answer`` (a letter), ``video_path`` (relative to the repository root), ``category``
(Embodied Reasoning / Common Sense), ``subcategory`` (16). The sample id is the row index. Frames: every
native frame of the video, 32 key frames shown.

Scoring: the paper's setting; the MMSI-style letter chain (backticks, ``\\boxed{X}``, the first ``X.``,
``(X)`` or ``X:`` in any case, a standalone capital not followed by a word, a single letter; metric
``pai_paper``); an empty extraction is wrong. Overall = accuracy over questions, broken down by category and
subcategory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.benchmarks.data.published import parquet_records, require_file
from spatialclaw.benchmarks.scoring.letters import boxed_letter, marked_letter, only_letter
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext
from spatialclaw.task import FrameSpec, Task

REPO = "shi-labs/physical-ai-bench-understanding"
RECORDS = "data/test-00000-of-00001.parquet"
COLUMNS = ("question", "index2ans", "answer", "video_path", "category", "subcategory")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of ``data/test-00000-of-00001.parquet`` in file order, each with its row index as ``_row``."""
    path = require_file(root, RECORDS, "paibench", REPO)
    for row, record in enumerate(parquet_records(path, COLUMNS, "paibench")):
        yield {**record, "_row": row}


def _options(value: Any) -> dict[str, str]:
    mapping = jsonl.loads(value) if isinstance(value, str) else dict(value)
    return {str(k).strip().upper(): str(v) for k, v in mapping.items() if v is not None}


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    options = _options(record["index2ans"])
    letters = sorted(options)
    if letters != [chr(ord("A") + i) for i in range(len(letters))]:
        raise ValueError(f"index2ans keys {letters} are not A, B, C, ...")
    row = record.get("_row", ctx.index)
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media(str(record["video_path"])))],
        choices=[options[k] for k in letters],
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip().upper(),
        task_id=f"pai-bench/{row}",
        benchmark="pai-bench",
        category=str(record.get("category") or "unknown"),
        meta={"metric": "pai_paper", "subcategory": record.get("subcategory"), "sample_id": str(row)},
    )


SPEC = BenchmarkSpec(
    name="pai-bench",
    description="Physical AI understanding: embodied-reasoning and common-sense questions about videos",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    media_help=f"Download {REPO} (its videos/ folder) and pass --source DIR",
    homepage="https://github.com/SHI-Labs/physical-ai-bench",
    metric="accuracy; MMSI-style letter chain (boxed, X./(X)/X:, standalone letter), by category and subcategory",
    paper_name="paibench",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="paibench.md",
    expected_files=((RECORDS, 1), ("videos/**/*.mp4", 927)),
    paper_order=True,
    breakdowns=("category", "subcategory"),
)


# ---------------------------------------- scoring


def pai_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """PAI-Bench (reason): the ``<answer>`` content (else the reply plus ``" N/A"``), lower-cased without
    dots and spaces, equals the answer treated the same way."""
    try:
        got = reply.split("<answer>")[1].split("</answer>")[0].strip()
    except IndexError:
        got = reply + " N/A"

    def squeeze(text: str) -> str:
        return text.lower().replace(".", "").replace(" ", "")

    return (1.0 if squeeze(got) == squeeze(str(gt)) else 0.0), got


def mmsi_chain_letter(text: str, letters: str = "ABCD") -> str:
    """The MMSI-style chain: the first standalone letter inside ``` ``x`` ``` or `` `x` ``; ``\\boxed{X}``; the
    first ``X.``, ``(X)`` or ``X:`` in any case; the first standalone capital not followed by a space and a
    letter; a single letter left after removing the rest; else ``""`` (wrong)."""
    for pattern in (r"```(.*?)```", r"`([^`]*)`"):
        for inner in re.findall(pattern, text, flags=re.DOTALL):
            found = re.search(rf"\b([{letters}])\b", inner)
            if found:
                return found.group(1)
    return (
        boxed_letter(text, letters)
        or marked_letter(text, letters)
        or _standalone(text, letters)
        or only_letter(text, letters)
        or ""
    )


def _standalone(text: str, letters: str) -> str | None:
    found = re.search(rf"\b([{letters}])\b(?!\s[A-Za-z])", text)
    return found.group(1) if found else None


def pai_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """PAI-Bench (understanding): :func:`mmsi_chain_letter` over A-D against the answer letter; an empty
    extraction is wrong."""
    got = mmsi_chain_letter(reply, "ABCD")
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got
