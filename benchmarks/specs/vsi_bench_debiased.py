"""VSI-Bench (debiased) (Brown et al., "Benchmark Designers Should 'Train on the Test Set' to Expose
Exploitable Non-Visual Shortcuts", 2025): VSI-Bench with the questions a blind model could answer from
language priors removed or rebalanced; the paper's ``vsibench_unbiased``.

Record (``nyu-visionx/VSI-Bench``: ``test_debiased.parquet``, 2,362 questions; videos
``<dataset>/<scene_name>.mp4`` from ``arkitscenes.zip``, ``scannet.zip`` and ``scannetpp.zip`` extracted in
place): ``id``, ``dataset``, ``scene_name``, ``question_type``, ``question``, ``ground_truth``, ``options``
(``"A. text"`` strings, re-lettered, or null for numeric questions). Frames: every native frame, 32 key
frames shown.

Scoring: the paper's setting; multiple choice (object_rel_direction_easy/_medium/_hard,
object_rel_distance, route_planning, obj_appearance_order) by ``\\boxed{X}``, the first ``X.``, ``(X)`` or
``X:`` in any case, a first-token letter or an option's text, compared case-insensitively (metric
``vsi_paper_mca``); numbers by ``float`` of the first token and MRA with ``|g|`` (a zero answer scores 0;
``vsi_paper_na``). Overall = VSI-Bench's rule: the three direction difficulties averaged into one, then the
mean over the 8 question types (rule ``vsi_bench``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import parquet_records, require_file
from spatialclaw.benchmarks.scoring.letters import boxed_letter, marked_letter, offered_letters, option_text, vsi_fuzzy
from spatialclaw.benchmarks.scoring.numbers import abs_mra, to_float
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, strip_option_labels
from spatialclaw.benchmarks.specs.vsi_bench import MEDIA_HELP, UNITS
from spatialclaw.task import FrameSpec, Task

REPO = "nyu-visionx/VSI-Bench"
COLUMNS = ("id", "dataset", "scene_name", "question_type", "question", "ground_truth", "options")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of ``test_debiased.parquet`` in file order."""
    path = require_file(root, "test_debiased.parquet", "vsibench_unbiased", REPO)
    yield from parquet_records(path, COLUMNS, "vsibench_unbiased")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    video = ctx.media(f"{record['dataset']}/{record['scene_name']}.mp4")
    options = strip_option_labels(record.get("options") or [])
    qtype = str(record["question_type"])
    common: dict[str, Any] = dict(
        question=str(record["question"]),
        inputs=[FrameSpec.video(video)],
        task_id=f"vsi-bench-debiased/{record['id']}",
        benchmark="vsi-bench-debiased",
        category=qtype,
    )
    meta = {"scene": record["scene_name"], "dataset": record["dataset"], "sample_id": str(record["id"])}
    if options:
        return Task(
            **common,
            choices=options,
            answer_type="multiple_choice",
            ground_truth=str(record["ground_truth"]).strip(),
            meta={**meta, "metric": "vsi_paper_mca"},
        )
    return Task(
        **common,
        answer_type="number",
        ground_truth=float(record["ground_truth"]),
        meta={**meta, "metric": "vsi_paper_na", "unit": UNITS.get(qtype)},
    )


SPEC = BenchmarkSpec(
    name="vsi-bench-debiased",
    description="VSI-Bench with blind-solvable questions removed (same videos and question types)",
    to_task=to_task,
    hub_id=REPO,
    configs=("debiased",),
    split="test",
    aggregation="vsi_bench",
    media_help=MEDIA_HELP + ", or pass --source DIR with them extracted in place",
    homepage="https://huggingface.co/datasets/nyu-visionx/VSI-Bench",
    metric="mean over question types (directions merged): boxed/X./first-token/option-text letter, MRA (zero GT 0)",
    paper_name="vsibench_unbiased",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="vsibench_unbiased.md",
    expected_files=(("test_debiased.parquet", 1),),
    archives=("arkitscenes.zip", "scannet.zip", "scannetpp.zip"),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring


def vsi_paper_letter(reply: str, choices: Sequence[str] | None, letters: str | None = None) -> str:
    """``\\boxed{X}``; the first ``X.``, ``(X)`` or ``X:`` (any case); the first token when it is a letter;
    the option whose text the reply is (case-insensitive, trailing period ignored); else ``""``."""
    letters = letters or offered_letters(choices)
    token = vsi_fuzzy(reply.strip())
    got = boxed_letter(reply, letters) or marked_letter(reply, letters)
    if got:
        return got
    if len(token) == 1 and token.upper() in letters:
        return token.upper()
    wanted = reply.strip().rstrip(".").strip().lower()
    for i, option in enumerate(choices or []):
        if wanted and wanted == option_text(option).rstrip(".").strip().lower():
            return chr(ord("A") + i)
    return ""


def vsi_paper_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench debiased and SPBench multiple choice: :func:`vsi_paper_letter`, compared case-insensitively."""
    got = vsi_paper_letter(reply, choices)
    return (1.0 if got and got.lower() == str(gt).strip().lower() else 0.0), got


def vsi_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench debiased numbers: ``float`` of the first token, then :func:`abs_mra` (zero ground truth: 0)."""
    got = to_float(vsi_fuzzy(reply))
    return abs_mra(got, to_float(gt)), got
