"""CVBench, the cross-video benchmark (``Dongyh35/CVBench``, upstream github.com/Hokhim2/CVBench): questions over
2-4 videos at once, the paper's ``cvbench`` (not Cambrian's single-image CV-Bench, registered as
``cv-bench-2d3d``).

Published layout: ``data/test-00000-of-00001.parquet`` (1,000 rows) and ``CVBench.zip`` (1,315 mp4),
extracted in place. The video root is the first of ``videos/``, ``CVBench/`` and the folder itself that has
numeric subfolders. Record fields: ``id`` (int, the sample id), ``task_type`` (15 types, the category),
``video_1`` .. ``video_4`` (nullable paths under the video root), ``question``, ``options`` (1-4 strings,
``"A. ..."`` or ``"Yes."``/``"No."``), ``answer`` (``A``-``D`` or ``Yes``/``No``). Rows in file order
(``paper_order`` holds).

The question shows the options verbatim, one per line, as the paper does (``meta["options_in_question"]``:
the prompt does not list them again). A question is yes/no when every option, without a trailing period and
lower-cased, is yes or no (answer type ``yes_no``); otherwise multiple choice with the option texts as
``choices`` so that ``answer("B")`` is checked. Each video is its own input, sampled at 1 fps, 32 key frames
shown per video.

Scoring: metrics ``cvbench_paper`` and ``cvbench_paper:yesno``
(:func:`cvbench_paper`); overall = accuracy over questions, broken
down by the 15 task types.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import missing, parquet_rows
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import (
    boxed_letters,
    first_labelled_letter,
    last_answer_block,
    option_text_letter,
)
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext
from spatialclaw.task import AnswerType, FrameSpec, Task

REPO = "Dongyh35/CVBench"
RECORDS = "data/test-00000-of-00001.parquet"
FRAMES = FramePolicy(fps=1.0, key_frames=32)
TASK_TYPES = (
    "Cross-video Anomaly Detection",
    "Cross-video Scene Recognition",
    "Multi-video Key-Action Recognition",
    "Cross-video Event Retrieval",
    "Cross-video Object Recognition",
    "Multi-video Attribute Recognition",
    "Joint-video Counting",
    "Cross-video Entity Matching",
    "Multi-view Scene Understanding",
    "Multi-video Temporal Reasoning",
    "Joint-video Spatial Navigating",
    "Video Difference Caption",
    "Cross-video Counterfactual Reasoning",
    "Joint-video Summarization",
    "Cross-video Procedural Transfer",
)


def video_root(root: Path) -> Path:
    """The first of ``videos/``, ``CVBench/`` and ``root`` itself that holds a numeric subfolder."""
    for candidate in (root / "videos", root / "CVBench", root):
        if candidate.is_dir() and any(p.is_dir() and p.name.isdigit() for p in candidate.iterdir()):
            return candidate
    raise missing(
        "cvbench", "the extracted videos (CVBench.zip: numeric folders under videos/, CVBench/ or .)", root, REPO
    )


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The parquet's rows in order, each with ``_video_root`` (where its video paths resolve)."""
    path = root / RECORDS
    if not path.is_file():
        raise missing("cvbench", RECORDS, root, REPO)
    rows = parquet_rows(path, ("id", "task_type", "video_1", "video_2", "question", "options", "answer"), "cvbench")
    base = video_root(root)
    for row in rows:
        yield {**row, "_video_root": str(base)}


def is_yes_no(options: list[str]) -> bool:
    """Every option, without a trailing period and lower-cased, is yes or no."""
    return bool(options) and all(o.strip().rstrip(".").strip().lower() in ("yes", "no") for o in options)


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    base = Path(record.get("_video_root") or ".")
    names = [str(record[key]) for key in ("video_1", "video_2", "video_3", "video_4") if record.get(key)]
    inputs = [FrameSpec.video(ctx.media(str(base / name)), fps=FRAMES.fps) for name in names]
    options = [str(o) for o in (record.get("options") or [])]
    question = "\n".join([str(record["question"]), *options])
    yes_no = is_yes_no(options)
    answer_type: AnswerType = "yes_no" if yes_no else "multiple_choice"
    labelled = [re.sub(r"^\s*\(?[A-Da-d]\s*[\).:]\s*", "", o, count=1) for o in options]
    choices = None if yes_no else (labelled or choice_letters(4))  # no options: the letters A-D
    return Task(
        question=question,
        inputs=inputs,
        choices=choices,
        answer_type=answer_type,
        ground_truth=str(record["answer"]).strip(),
        task_id=f"cvbench/{record['id']}",
        benchmark="cvbench",
        category=str(record["task_type"]),
        meta={
            "metric": "cvbench_paper:yesno" if yes_no else "cvbench_paper",
            "sample_id": str(record["id"]),
            "options_in_question": True,
            "video_names": names,
        },
    )


SPEC = BenchmarkSpec(
    name="cvbench",
    description="Cross-video reasoning over 2-4 videos: matching, counting, ordering, navigation, differences",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="micro",
    media_help="Download Dongyh35/CVBench and extract CVBench.zip in place (spatialclaw data download cvbench)",
    homepage="https://huggingface.co/datasets/Dongyh35/CVBench",
    metric="accuracy over questions, per task type; yes/no by the first yes/no word, letters by boxed/X./(X)/X:",
    paper_name="cvbench",
    read_source=read_source,
    frames=FRAMES,
    instruction="cvbench.md",
    expected_files=((RECORDS, 1), ("**/*.mp4", 1315)),
    archives=("CVBench.zip",),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring


def _only_a_to_d(text: str) -> str | None:
    """CVBench's last resort: every character but A-D/a-d deleted; one letter left is the answer."""
    rest = re.sub(r"[^A-Da-d]", "", text)
    return rest.upper() if len(rest) == 1 else None


def cvbench_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """CVBench (cross-video). ``param == "yesno"``: the first whole-word yes/no (any case) in the last
    ``<answer>`` block, else in the reply, equals the answer (any case). Multiple choice, in the last
    ``<answer>`` block or else the reply: ``\\boxed{X}``; the first ``X.``, ``(X)``, ``X:`` or a leading
    ``X`` (any case); a single A-D left after deleting the rest; an option's exact text. Empty is wrong."""
    block = last_answer_block(reply)
    if param == "yesno":
        got = None
        for text in [block] if block and block.strip() else [reply]:  # a non-empty <answer> block alone
            match = re.search(r"\b(yes|no)\b", text, flags=re.IGNORECASE)
            if match:
                got = match.group(1).lower()
                break
        return (1.0 if got is not None and got == str(gt).strip().rstrip(".").lower() else 0.0), got
    text = (block if block is not None else reply).strip()
    boxed = boxed_letters(text, "A-D")
    got = boxed[0] if boxed else None
    if got is None:
        leading = re.match(r"([A-D])\b", text, flags=re.IGNORECASE)
        got = first_labelled_letter(text) or (leading.group(1).upper() if leading else None)
    got = got or _only_a_to_d(text) or option_text_letter(text, choices)
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got
