"""OSI-Bench ("From Indoor to Open World: Revealing the Spatial Reasoning Gap in MLLMs", 2025) as the paper runs
it: spatial reasoning on open-world videos, relational multiple choice and metric numbers.

Published layout (``HarmlessSR07/OSI-Bench``): ``data.parquet`` at the root (8,766 rows, in order:
``paper_order`` holds) and 1,000 videos at ``DIR/<file_name>`` (archives extracted in place). Fields:
``index`` (the sample id), ``question``, ``question_type`` (``mcq``/``numerical``), ``file_name`` (the
video), ``options`` (up to 4, ``"A. text"`` or plain; listed as ``A. text`` ... by the prompt), ``answer``,
``category`` (9), ``video_length``. Frames: every frame at the native rate, 32 key frames shown.

Scoring: multiple choice (metric ``osibench_mcq``): ``\\boxed{X}``; the first ``X.``/``(X)``/``X:`` (any
case); a first token that is a single A-D; an option's exact text; else the first token; compared without
case. Numbers (metric ``osibench_na:<category>``): a number in ``\\boxed{}``, else the first number, else the
first token; MRA (ten thresholds, ``<=``, ``|g|``); a zero answer for absolute_speed and
absolute_displacement (0.30) and trajectory_length (2.0) scores 1 below the threshold, else MRA against it;
other zero answers need an exact 0. Overall = mean over all samples; per category.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import missing, parquet_rows
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext
from spatialclaw.task import FrameSpec, Task

REPO = "HarmlessSR07/OSI-Bench"
RECORDS = "data.parquet"


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """``data.parquet``'s rows in order."""
    path = root / RECORDS
    if not path.is_file():
        raise missing("osi-bench", RECORDS, root, REPO)
    wanted = ("index", "question", "question_type", "file_name", "options", "answer", "category")
    yield from parquet_rows(path, wanted, "osi-bench")


def option_texts(raw: Any) -> list[str]:
    """The options as texts in letter order: ``"A. text"`` entries by their letter, plain ones in turn (a list,
    its text form, or one option per line)."""
    if isinstance(raw, str):
        text = raw.strip()
        try:
            raw = ast.literal_eval(text) if text.startswith("[") else text.splitlines()
        except (ValueError, SyntaxError):
            raw = text.splitlines()
    by_letter: dict[str, str] = {}
    for position, option in enumerate(o for o in (raw or []) if o is not None and str(o).strip()):
        labelled = re.match(r"^\s*([A-D])\s*\.\s*(.*)$", str(option), flags=re.DOTALL)
        letter, text = (labelled.group(1), labelled.group(2).strip()) if labelled else ("ABCD"[position], str(option))
        by_letter[letter] = text
    return [by_letter[letter] for letter in sorted(by_letter)]


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    category = str(record["category"])
    video = record.get("file_name") or record.get("video")
    common: dict[str, Any] = dict(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media(str(video)))],
        task_id=f"osi-bench/{record['index']}",
        benchmark="osi-bench",
        category=category,
    )
    meta = {"sample_id": str(record["index"]), "video_length_s": record.get("video_length")}
    if str(record["question_type"]).lower() == "mcq":
        return Task(
            **common,
            choices=option_texts(record.get("options")),
            answer_type="multiple_choice",
            ground_truth=str(record["answer"]).strip(),
            meta={**meta, "metric": "osibench_mcq"},
        )
    return Task(
        **common,
        answer_type="number",
        ground_truth=float(record["answer"]),
        meta={**meta, "metric": f"osibench_na:{category}"},
    )


SPEC = BenchmarkSpec(
    name="osi-bench",
    description="Open-world spatial intelligence on outdoor videos: relations, distances, speeds, trajectories",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    media_help="Download HarmlessSR07/OSI-Bench and extract its archives in place (spatialclaw data download osibench)",
    homepage="https://huggingface.co/datasets/HarmlessSR07/OSI-Bench",
    metric="mean over samples, per category: letters by boxed/X./(X)/X:/first token, numbers by MRA (zero thresholds)",
    paper_name="osibench",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="osibench.md",
    expected_files=((RECORDS, 1), ("**/*.mp4", 1000)),
    archives=("**/*.zip",),
    paper_order=True,
    breakdowns=("category",),
)
