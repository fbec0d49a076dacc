"""PerceptionComp (2026): perception-centric video questions, five-way multiple choice, seven video
categories and three difficulty levels; the paper's ``perceptioncomp``.

Record (``hrinnnn/PerceptionComp``: ``questions.json``, a list of 1,114 questions; videos at
``data/<video_id>.mp4``, 273): ``key`` (the sample id), ``video_id``, ``question``, ``answer_choice_0`` ..
``answer_choice_4`` (every present one kept, lettered A-E), ``answer_id`` (0-based), ``answer`` (the text),
``category`` (outdoor tour, shopping, sport, variety show, home tour, game, movie), ``difficulty`` (1-3).
Frames: the video sampled at 1 fps, 32 key frames shown.

Scoring: the paper's setting, metric ``perceptioncomp_paper``: the first ``<answer>X</answer>``, the first
``\\boxed{X}``, "answer" then X, the last standalone A-E in any case, a single letter; compared with the answer
letter.
Overall = accuracy over questions, broken down by category and difficulty.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import json_list, require_file
from spatialclaw.benchmarks.scoring.letters import boxed_letters, mmmu_parse, only_letter, option_text
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext
from spatialclaw.task import FrameSpec, Task

REPO = "hrinnnn/PerceptionComp"
FIELDS = ("key", "video_id", "question", "answer_id", "category", "difficulty")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The records of ``questions.json`` in file order."""
    yield from json_list(require_file(root, "questions.json", "perceptioncomp", REPO), FIELDS, "perceptioncomp")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    options = [str(record[f"answer_choice_{i}"]) for i in range(5) if record.get(f"answer_choice_{i}") is not None]
    answer = int(record["answer_id"])
    if not 0 <= answer < len(options):
        raise ValueError(f"answer_id {answer} is outside the {len(options)} options")
    video_id = str(record["video_id"])
    key = str(record.get("key", record.get("question_id", ctx.index)))
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media_any([f"data/{video_id}.{ext}" for ext in ("mp4", "MP4", "mkv", "webm")]))],
        choices=options,
        answer_type="multiple_choice",
        ground_truth=chr(ord("A") + answer),
        task_id=f"perceptioncomp/{key}",
        benchmark="perceptioncomp",
        category=str(record.get("category") or "unknown"),
        meta={"metric": "perceptioncomp_paper", "difficulty": record.get("difficulty"), "sample_id": key},
    )


SPEC = BenchmarkSpec(
    name="perceptioncomp",
    description="Perception-centric video understanding: five-way questions over long real-world videos",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    media_help=f"Download {REPO} (questions.json and its data/ videos) and pass --source DIR",
    homepage="https://huggingface.co/datasets/hrinnnn/PerceptionComp",
    metric="accuracy; <answer>, boxed, 'answer X', last standalone A-E (paper setting), by category and difficulty",
    paper_name="perceptioncomp",
    read_source=read_source,
    frames=FramePolicy(fps=1.0, key_frames=32),
    instruction="perceptioncomp.md",
    expected_files=(("questions.json", 1), ("data/*.mp4", 273)),
    paper_order=True,
    breakdowns=("category", "difficulty"),
)


# ---------------------------------------- scoring


def perceptioncomp_choice(
    reply: str, gt: Any, choices: Sequence[str] | None = None, param: str | None = None
) -> tuple[float, Any]:
    """PerceptionComp (lmms-eval): :func:`mmmu_parse` over the non-empty options equals the answer letter."""
    got = mmmu_parse(reply, [option_text(c) for c in choices or []])
    return (1.0 if got is not None and got.upper() == str(gt).upper() else 0.0), got


def perceptioncomp_paper_choice(
    reply: str, gt: Any, choices: Any = None, param: str | None = None
) -> tuple[float, Any]:
    """PerceptionComp: the *first* ``<answer>X</answer>``; the *first* ``\\boxed{X}``; "answer" then spaces or a
    colon and X; the *last* standalone A-E in any case (so a trailing article "a" reads A); a single letter.
    Compared with the answer upper-cased."""
    letters = "ABCDE"
    tag = re.findall(r"<answer>\s*\(?([A-E])\)?\.?\s*</answer>", reply, flags=re.IGNORECASE)
    said = re.findall(r"answer[\s:]+\(?([A-E])\b", reply, flags=re.IGNORECASE)
    alone = re.findall(r"\b([A-E])\b", reply, flags=re.IGNORECASE)
    got = (
        (tag[0].upper() if tag else None)
        or next(iter(boxed_letters(reply, "A-E")), None)
        or (said[0].upper() if said else None)
        or (alone[-1].upper() if alone else None)
        or only_letter(reply, letters)
        or ""
    )
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got
