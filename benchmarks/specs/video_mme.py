"""Video-MME (Fu et al., 2024): general video understanding, short to hour-long videos, four-way choice; the
paper's ``videomme``.

Record (``lmms-lab/Video-MME``: the first parquet in ``videomme/``, ``test-00000-of-00001.parquet``, 2,700
questions; videos ``data/<videoID>.mp4``, 900; the subtitles are not used): ``question_id`` (the sample id),
``videoID``, ``question``, ``options`` (``"A. Apples."`` strings; the labels are dropped and the options
re-lettered), ``answer`` (a letter), ``task_type``, ``duration`` (short / medium / long), ``domain``.
Frames: the video sampled at 1 fps, 32 key frames shown.

Scoring: the paper's setting, metric ``videomme_paper``: the base extractor: ``\\boxed{X}``; else the first
letter followed by ``.``, ``:`` or ``)``, any letter and case and with no word boundary (so ``"Answer: B"``
reads R, as in the paper's evaluation); else a single letter left after removing the rest; else the text.
Equal to the answer. Overall = accuracy, broken down by task type, duration and domain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import parquet_records
from spatialclaw.benchmarks.scoring.letters import base_extract
from spatialclaw.benchmarks.spec import (
    BenchmarkSpec,
    DatasetUnavailable,
    FramePolicy,
    RecordContext,
    strip_option_labels,
)
from spatialclaw.task import FrameSpec, Task

REPO = "lmms-lab/Video-MME"
COLUMNS = ("question_id", "videoID", "question", "options", "answer", "task_type", "duration", "domain")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of the first parquet file (by name) in ``videomme/``, in file order."""
    files = sorted(Path(root).glob("videomme/*.parquet"))
    if not files:
        raise DatasetUnavailable(
            f"videomme: no videomme/*.parquet in {root} (expected the folder written by "
            f"`hf download --repo-type dataset {REPO} --local-dir {root}` with its video archives extracted)"
        )
    yield from parquet_records(files[0], COLUMNS, "videomme")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    video_id = str(record["videoID"])
    question_id = str(record["question_id"])
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media_any([f"data/{video_id}.{ext}" for ext in ("mp4", "MP4", "mkv")]))],
        choices=strip_option_labels(record["options"]),
        answer_type="multiple_choice",
        ground_truth=str(record["answer"]).strip().upper(),
        task_id=f"video-mme/{question_id}",
        benchmark="video-mme",
        category=str(record["task_type"]),
        meta={
            "metric": "videomme_paper",
            "duration": record.get("duration"),
            "domain": record.get("domain"),
            "sample_id": question_id,
        },
    )


SPEC = BenchmarkSpec(
    name="video-mme",
    description="General video understanding over short, medium and long videos (perception and reasoning)",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    media_help=f"Download {REPO} and extract its video archives (videos land in data/), then pass --source DIR",
    homepage="https://github.com/BradyFU/Video-MME",
    metric="accuracy; boxed, else the first letter before . : ) (paper setting), by task type, duration, domain",
    paper_name="videomme",
    read_source=read_source,
    frames=FramePolicy(fps=1.0, key_frames=32),
    instruction="videomme.md",
    expected_files=(("videomme/test-00000-of-00001.parquet", 1), ("data/*.mp4", 900)),
    archives=("*.zip",),
    paper_order=True,
    breakdowns=("category", "duration", "domain"),
)


# ---------------------------------------- scoring

_VIDEOMME_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    # Two pairs the official list joins by a missing comma, kept as the official code has them:
    "The best option isThe correct option is",
    "Best answer:Best option:",
)


def videomme_extract(reply: str, prefixes: Sequence[str], letters: str) -> str:
    text = reply.strip()
    for prefix in prefixes:
        text = text.replace(prefix, "")
    if len(text.split()) > 10 and not re.search(f"[{letters}]", text):
        return ""
    match = re.search(f"[{letters}]", text)
    return match[0] if match else ""


def videomme_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME (lmms-eval ``extract_characters_regex``): drop answer prefixes, then the *first* capital
    A-D anywhere in the reply; compared case-insensitively."""
    got = videomme_extract(reply, _VIDEOMME_PREFIXES, "ABCD")
    return (1.0 if got.lower() == str(gt).lower() else 0.0), got


def videomme_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME: the paper's base extractor (:func:`~spatialclaw.benchmarks.scoring.letters.base_extract`, as
    for MMSI-Video-Bench and OmniSpatial) equals the answer (upper-cased)."""
    got = base_extract(reply)
    return (1.0 if got == str(gt).strip().upper() else 0.0), got
