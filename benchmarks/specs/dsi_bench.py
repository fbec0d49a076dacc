"""DSI-Bench (Zhang et al., "DSI-Bench: A Benchmark for Dynamic Spatial Intelligence", 2025) as the paper runs it:
all four video variants pooled, 7,076 four-way questions on object and camera motion.

Published layout (``Viglong/DSI-Bench``): ``metadatas/{std,reverse,hflip,reverse_hflip}.csv`` (1,769 rows
each; ``metadata_4aug.csv`` is not read) and the videos at ``videos/<aug>/<relative_path>``. The paper reads
the four CSVs in that order, rows in order (``paper_order`` holds). Fields: ``cate`` (0-5, the category),
``relative_path``, ``video_type``, ``question``, ``options`` (``"A: x; B: y; C: z; D: w"``, listed as
``A. x`` ... by the prompt), ``GT`` (a letter, upper-cased), ``others``. The sample id is
``<aug>__row_<6-digit row>``; ``meta["base_id"]`` (``row_<n>``) names the same question across the four
variants. A sample whose video is missing stays in, with no frames (as in the paper; ``meta["missing_media"]``).

Frames: every frame at the native rate, 32 key frames shown. Scoring: metric ``dsibench_paper``
(:func:`dsibench_extract`): ``\\boxed{X}``, the last answer marker,
the last letter token near the end, a leading a-d, letters in any case; empty is wrong. Overall = accuracy
over all samples; breakdowns per category and per augmentation (``meta["aug"]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import csv_rows, missing
from spatialclaw.benchmarks.scoring.letters import boxed_letters
from spatialclaw.benchmarks.spec import (
    BenchmarkSpec,
    FramePolicy,
    RecordContext,
    parse_inline_options,
)
from spatialclaw.task import FrameSpec, Task

REPO = "Viglong/DSI-Bench"
AUGMENTATIONS = ("std", "reverse", "hflip", "reverse_hflip")
CATEGORIES = (
    "Obj:static cam",
    "Obj:moving cam",
    "Cam:static scene",
    "Cam:dynamic scene",
    "Obj-Cam distance",
    "Obj-Cam orientation",
)


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of the four metadata CSVs, in :data:`AUGMENTATIONS` order, with ``_aug`` and ``_row``."""
    for aug in AUGMENTATIONS:
        path = root / "metadatas" / f"{aug}.csv"
        if not path.is_file():
            raise missing("dsi-bench", f"metadatas/{aug}.csv", root, REPO)
        for row_index, row in enumerate(
            csv_rows(path, ("relative_path", "question", "options", "GT", "cate"), "dsi-bench")
        ):
            yield {**row, "_aug": aug, "_row": row_index}


def parse_options(text: str) -> list[str]:
    """``"A: x; B: y; C: z; D: w"`` (the published form; ``"A. x B. y"`` also read) as the option texts."""
    pairs = re.findall(r"(?:^|;)\s*([A-H])\s*:\s*(.*?)\s*(?=;\s*[A-H]\s*:|$)", text.strip(), flags=re.DOTALL)
    letters = [letter for letter, _ in pairs]
    if len(pairs) >= 2 and letters == [chr(ord("A") + i) for i in range(len(pairs))]:
        return [option for _, option in pairs]
    parsed = parse_inline_options(text)
    if parsed is None:
        raise ValueError(f"cannot read the options {text!r} ('A: x; B: y; ...')")
    return parsed[1]


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    aug = record.get("_aug")
    row = int(record.get("_row", ctx.index))
    relative = str(record["relative_path"])
    sample_id = f"{aug}__row_{row:06d}" if aug else f"row_{row:06d}"
    meta: dict[str, Any] = {"metric": "dsibench_paper", "sample_id": sample_id, "base_id": f"row_{row}"}
    if aug:
        meta["aug"] = aug
    inputs = [FrameSpec.video(ctx.media(f"videos/{aug}/{relative}" if aug else relative))]
    cate = int(record["cate"])
    return Task(
        question=str(record["question"]).strip(),
        inputs=inputs,
        choices=parse_options(str(record["options"])),
        answer_type="multiple_choice",
        ground_truth=str(record["GT"]).strip().upper(),
        task_id=f"dsi-bench/{sample_id}",
        benchmark="dsi-bench",
        category=CATEGORIES[cate] if 0 <= cate < len(CATEGORIES) else f"category {cate}",
        meta=meta,
    )


SPEC = BenchmarkSpec(
    name="dsi-bench",
    description="Dynamic spatial intelligence: object and camera motion in dynamic videos, four variants pooled",
    to_task=to_task,
    hub_id=REPO,
    split="train",
    splits=AUGMENTATIONS,
    aggregation="micro",
    media_help="Download Viglong/DSI-Bench (spatialclaw data download dsibench) and pass --source DIR",
    homepage="https://huggingface.co/datasets/Viglong/DSI-Bench",
    metric="accuracy over the 4 variants pooled, per category and variant; boxed, last answer marker, last letter",
    paper_name="dsibench",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="dsibench.md",
    expected_files=tuple((f"metadatas/{aug}.csv", 1) for aug in AUGMENTATIONS),
    paper_order=True,
    breakdowns=("category", "aug"),
)


# ---------------------------------------- scoring


def dsi_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """DSI-Bench: the letter in ``<answer>X</answer>`` (A-D, any case, as a capital), else ``"E"``; its
    first character equals ``GT``."""
    match = re.search(r"<answer>\s*([A-D])\s*</answer>", reply, flags=re.IGNORECASE)
    got = match.group(1).upper() if match else "E"
    return (1.0 if str(gt).strip() == got[0] else 0.0), got


_DSI_MARKERS = (
    "final answer",
    "correct answer",
    "answer is",
    "the answer",
    "best answer",
    "best option",
    "correct option",
    "correct choice",
    "answer",
    "option",
)


_DSI_MARKER = re.compile(
    r"(?:" + "|".join(re.escape(m) for m in _DSI_MARKERS) + r")\s*[:\-=]?\s*(?:\*\*)?\s*\(?\s*([A-D])\b",
    flags=re.IGNORECASE,
)


def dsibench_extract(reply: str) -> str:
    """DSI-Bench's paper extraction, the letter upper-cased: ``\\boxed{X}``; else the letter after the *last*
    answer marker ("final answer", "answer is", "best option", ... then ``:``/``-``/``=``, ``**``, ``(``); else
    the last letter token in the final 400 characters (followed by ``.``, ``)``, ``:``, a newline, ``**`` or the
    end); else the first character when it is a-d; else ``""``. Every step reads the letter in any case, so
    ``"the answer is b"`` and ``"b, since it turns"`` read B."""
    boxed = boxed_letters(reply, "A-D")
    if boxed:
        return boxed[-1]
    marked = [m.group(1) for m in _DSI_MARKER.finditer(reply)]
    if marked:
        return marked[-1].upper()
    tail = reply[-400:]
    tokens = re.findall(r"(?<![A-Za-z])([A-Da-d])(?=\.|\)|:|\n|\*\*|$)", tail)
    if tokens:
        return str(tokens[-1]).upper()
    first = reply.strip()[:1].upper()
    return first if first in ("A", "B", "C", "D") else ""


def dsibench_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """DSI-Bench: :func:`dsibench_extract` equals ``GT`` (upper-cased); an empty extraction is wrong."""
    got = dsibench_extract(reply)
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got
