"""VSTI-Bench (VLM-3R, Fan et al., 2025): visual-spatial-temporal questions on indoor scan videos: camera
displacement and movement direction, object-camera distances and their change, relative positions; the
paper's ``vstibench``.

Record (``Journey9ni/vstibench``: ``test.json``, a list of 6,042 questions; videos at
``<root>/<video_path>``, e.g. ``ScanNet/videos/val/scene0011_00.mp4``): ``id``, ``question_type``
(``obj_obj_relative_pos_nf``/``_ud``/``_lr``, ``camera_obj_rel_dist_v1``..``_v3``,
``camera_movement_direction`` choices; ``camera_obj_abs_dist``, ``camera_displacement``,
``camera_obj_dist_change`` numbers), ``video_path``, ``question``, ``options`` (``"A. ..."`` strings or
null), ``mc_answer`` (the letter), ``ground_truth``. A question is multiple choice exactly when ``options``
is not null (answer ``mc_answer``), else numeric (answer ``ground_truth``). Questions may name frames as
"frame X of N": X counts in an N-frame uniform sampling of the whole video (the instruction explains it).
Frames: every native frame, 32 key frames shown.

Scoring: the paper's setting; the first space-separated token, trailing dot removed; multiple choice:
equal to ``mc_answer`` in any case (metric ``vsi_mca``); numbers: ``float`` of it and MRA with the signed
denominator ``|p - g| / g``, so a negative answer scores 1.0 for any readable number and a zero answer 0
(``vsti_na``). Overall = mean over question types (rule ``macro``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import json_list, require_file
from spatialclaw.benchmarks.scoring.letters import vsi_fuzzy
from spatialclaw.benchmarks.scoring.numbers import signed_mra, to_float
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, strip_option_labels
from spatialclaw.task import FrameSpec, Task

REPO = "Journey9ni/vstibench"
FIELDS = ("id", "question_type", "video_path", "question", "options")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The records of ``test.json`` in list order."""
    yield from json_list(require_file(root, "test.json", "vstibench", REPO), FIELDS, "vstibench")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    qtype = str(record["question_type"])
    sample = str(record.get("id", ctx.index))
    common: dict[str, Any] = dict(
        question=str(record["question"]),
        inputs=[FrameSpec.video(ctx.media(str(record["video_path"])))],
        task_id=f"vsti-bench/{sample}",
        benchmark="vsti-bench",
        category=qtype,
    )
    if record.get("options") is not None:
        return Task(
            **common,
            choices=strip_option_labels(record["options"]),
            answer_type="multiple_choice",
            ground_truth=str(record["mc_answer"]).strip(),
            meta={"metric": "vsi_mca", "sample_id": sample},
        )
    return Task(
        **common,
        answer_type="number",
        ground_truth=to_float(record["ground_truth"])
        if to_float(record["ground_truth"]) is not None
        else str(record["ground_truth"]),
        meta={"metric": "vsti_na", "unit": "m", "sample_id": sample},
    )


SPEC = BenchmarkSpec(
    name="vsti-bench",
    description="Visual-spatial-temporal reasoning on indoor videos: camera motion and object-camera relations",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="macro",
    media_help=f"Download {REPO} (test.json and its videos) and pass --source DIR",
    homepage="https://github.com/VITA-Group/VLM-3R",
    metric="mean over question types: first-token letter, MRA with the signed denominator (VLM-3R vstibench)",
    paper_name="vstibench",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="vstibench.md",
    expected_files=(("test.json", 1),),
    paper_order=True,
    breakdowns=("category",),
)


# ---------------------------------------- scoring


def vsti_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSTI-Bench numbers: ``float`` of the first space-separated token (trailing dot removed), then
    :func:`signed_mra` (negative ground truth: 1.0 for any readable number; zero: 0)."""
    got = to_float(vsi_fuzzy(reply))
    return signed_mra(got, to_float(gt)), got
