"""OmniSpatial (Jia et al., 2025) as the paper runs it: dynamic reasoning, complex spatial logic, spatial
interaction and perspective taking, four-way multiple choice on one image.

Published layout (``qizekun/OmniSpatial``, ``OmniSpatial-test.zip`` extracted in place):
``OmniSpatial-test/data.json`` (1,533 records, in order: ``paper_order`` holds); the image of a record is
``OmniSpatial-test/<task_type>/<id before the first "_">.png``. Fields: ``id``, ``question``, ``options``
(option texts, lettered A, B, ... by the prompt), ``answer`` (0-based index, the letter from ``ABCD``),
``task_type`` (4, the category), ``sub_task_type`` (10). Raw ids repeat across groups, so the sample id is
``<task_type>_<sub_task_type>_<id>``. Records whose options are empty (drawn in the image) keep the question
as it is; their ``choices`` are the letters A-D only to check ``answer("B")``
(``meta["options_in_question"]``: the prompt lists no options, as in the paper).

Scoring: metric ``omnispatial_paper``: the last "Answer: X" (any case); else the base extractor's single
A-D; else a leading A-D; else A; case-insensitive. Overall = accuracy; per task type and per sub-task type.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import check_keys, json_data, missing
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import base_extract
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, FramePolicy, RecordContext
from spatialclaw.task import FrameSpec, Task

REPO = "qizekun/OmniSpatial"
FOLDER = "OmniSpatial-test"


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """``OmniSpatial-test/data.json``'s records in order, each with ``_folder`` (where its images are)."""
    path = next((p for p in (root / FOLDER / "data.json", root / "data.json") if p.is_file()), None)
    if path is None:
        raise missing("omnispatial", f"{FOLDER}/data.json", root, REPO)
    data = json_data(path, "omnispatial")
    if not isinstance(data, list):
        raise DatasetUnavailable(f"omnispatial: {path} should hold a JSON list, not {type(data).__name__}")
    for position, record in enumerate(data):
        check_keys(
            record, ("id", "question", "options", "answer", "task_type", "sub_task_type"), path, "omnispatial", position
        )
        yield {**record, "_folder": str(path.parent)}


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    folder = Path(record.get("_folder") or ".")
    image = folder / str(record["task_type"]) / f"{str(record['id']).split('_')[0]}.png"
    options = [str(o) for o in (record.get("options") or [])]
    answer = int(record["answer"])
    letter = "ABCD"[answer] if 0 <= answer < 4 else chr(ord("A") + answer)
    sample_id = f"{record['task_type']}_{record.get('sub_task_type')}_{record['id']}"
    meta: dict[str, Any] = {
        "metric": "omnispatial_paper",
        "sample_id": sample_id,
        "sub_task_type": record.get("sub_task_type"),
    }
    if not options:
        options = choice_letters(max(4, answer + 1))
        meta["options_in_question"] = True
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.images([ctx.media(str(image))])],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=letter,
        task_id=f"omnispatial/{sample_id}",
        benchmark="omnispatial",
        category=str(record["task_type"]),
        meta=meta,
    )


SPEC = BenchmarkSpec(
    name="omnispatial",
    description="Comprehensive spatial reasoning: dynamics, logic, interaction, perspective taking",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    metric="accuracy, per task and sub-task type; the last 'Answer: X', else the base extractor, else A",
    media_help="Download qizekun/OmniSpatial and extract OmniSpatial-test.zip in place",
    homepage="https://huggingface.co/datasets/qizekun/OmniSpatial",
    paper_name="omnispatial",
    read_source=read_source,
    frames=FramePolicy(),
    instruction="omnispatial.md",
    expected_files=((f"{FOLDER}/data.json", 1),),
    archives=(f"{FOLDER}.zip",),
    paper_order=True,
    breakdowns=("category", "sub_task_type"),
)


# ---------------------------------------- scoring


def omnispatial_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OmniSpatial (lmms-eval, its default ``eval_type: re``): the last ``Answer: X`` (X in A-D, any case),
    else ``"A"``; compared case-sensitively with the capital answer letter, as the official code does."""
    found = re.findall(r"Answer\s*:\s*([A-D])\b", reply, flags=re.IGNORECASE)
    got = found[-1] if found else "A"
    return (1.0 if got == str(gt) else 0.0), got


def omnispatial_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OmniSpatial: the last "Answer: X" (any case); else :func:`base_extract` when it gives one A-D letter;
    else the first character when it is A-D; else ``"A"``; compared case-insensitively."""
    found = re.findall(r"answer\s*:\s*([A-D])\b", reply, flags=re.IGNORECASE)
    if found:
        got = found[-1].upper()
    else:
        base = base_extract(reply)
        first = reply.strip()[:1].upper()
        got = base if base in ("A", "B", "C", "D") else first if first in ("A", "B", "C", "D") else "A"
    return (1.0 if got == str(gt).strip().upper() else 0.0), got
