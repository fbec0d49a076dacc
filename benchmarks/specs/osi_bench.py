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
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import missing, parquet_rows
from spatialclaw.benchmarks.scoring.letters import boxed_letters, first_labelled_letter, option_text_letter
from spatialclaw.benchmarks.scoring.numbers import official_mra, to_float
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


# ---------------------------------------- scoring

_OSI_ZERO_THRESHOLD = {"absolute_speed": 0.30, "absolute_displacement": 0.30, "trajectory_length": 2.0}


def first_number(text: str) -> float | None:
    match = re.search(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text.replace(",", ""))
    return float(match.group()) if match else None


def osi_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OSI-Bench numbers (VLMEvalKit ``_apply_osi_na_mra``; ``param`` is the category): VSI-Bench MRA; a
    zero answer for speed, displacement or trajectory length counts when the prediction is below the
    category's threshold (else MRA against the threshold), any other zero answer only when exact. The
    number is the reply's first number (EASI's extraction step was not available offline)."""
    got = first_number(reply)
    target = to_float(gt)
    if got is None or target is None or math.isnan(got) or math.isnan(target):
        return 0.0, got
    threshold = _OSI_ZERO_THRESHOLD.get(param or "")
    if threshold is not None and target == 0:
        return (1.0 if got < threshold else official_mra(got, threshold)), got
    if target == 0:
        return (1.0 if got == 0 else 0.0), got
    return official_mra(got, target), got


def osibench_mcq(
    reply: str, gt: Any, choices: Sequence[str] | None = None, param: str | None = None
) -> tuple[float, Any]:
    """OSI-Bench multiple choice: ``\\boxed{X}``; the first ``X.``, ``(X)``, ``X:`` (any case); the first token
    when it is a single A-D; an option's exact text; else the first token; equal to the answer, any case."""
    text = reply.strip()
    tokens = text.split()
    first_token = tokens[0] if tokens else ""
    boxed = boxed_letters(text, "A-D")
    got = boxed[0] if boxed else first_labelled_letter(text)
    if got is None and first_token.upper() in ("A", "B", "C", "D"):
        got = first_token.upper()
    got = got or option_text_letter(text, choices) or first_token
    return (1.0 if got and got.lower() == str(gt).strip().lower() else 0.0), got


def osibench_number(reply: str) -> float | None:
    """OSI-Bench's number: one inside ``\\boxed{}``; else the *first* ``[+-]?digits[.digits]``; else the first
    token as a float."""
    boxed = re.search(r"\\boxed\{\s*([+-]?\d+(?:\.\d+)?)", reply)
    if boxed:
        return float(boxed.group(1))
    match = re.search(r"[+-]?\d+(?:\.\d+)?", reply)
    if match:
        return float(match.group())
    tokens = reply.split()
    return to_float(tokens[0]) if tokens else None


def osibench_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OSI-Bench numbers (``param``: the category): MRA over the ten thresholds with ``<=`` and ``|g|``; a zero
    answer for absolute_speed or absolute_displacement (0.30) or trajectory_length (2.0) scores 1 when the
    prediction is below the threshold, else MRA against the threshold; any other zero needs an exact 0."""
    got = osibench_number(reply)
    target = to_float(gt)
    if got is None or target is None or not math.isfinite(got) or not math.isfinite(target):
        return 0.0, got
    threshold = _OSI_ZERO_THRESHOLD.get(param or "")
    if target == 0 and threshold is not None:
        return (1.0 if got < threshold else official_mra(got, threshold)), got
    if target == 0:
        return (1.0 if got == 0 else 0.0), got
    return official_mra(got, target), got
