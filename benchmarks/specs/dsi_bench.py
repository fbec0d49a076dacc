"""DSI-Bench (Zhang et al., "DSI-Bench: A Benchmark for Dynamic Spatial Intelligence", 2025): motion of
objects and of the camera in dynamic videos, four-way multiple choice.

Record (``Viglong/DSI-Bench``: ``metadatas/<aug>.csv``, one per video variant ``std``, ``hflip``,
``reverse``, ``reverse_hflip``; layout from the official README's inference and evaluation scripts):
``relative_path`` (the video under ``videos/<aug>/``), ``question``, ``options`` (one string,
``"A. ... B. ... C. ... D. ..."``), ``GT`` (a letter), ``cate`` (0-5: object motion with a static or a
moving camera, camera motion in a static or dynamic scene, object-camera distance, object-camera
orientation). Pass ``--source metadatas/std.csv --media-root videos/std`` (each variant is its own run;
the README's "sample-wise" number pools the four runs).

Scoring: the official DSI-Bench README (linked from dsibench.github.io), "Evaluate model performance":
the letter inside ``<answer>X</answer>`` (else ``"E"``), its first character equal to ``GT``; overall =
accuracy over questions (metric ``dsi_choice``).
"""

from __future__ import annotations

from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task

CATEGORIES = (
    "Obj:static cam",
    "Obj:moving cam",
    "Cam:static scene",
    "Cam:dynamic scene",
    "Obj-Cam distance",
    "Obj-Cam orientation",
)

#: The official prompt's answer format (the reply a structured answer is rendered as before scoring).
ANSWER_FORMAT = "<answer>[A, B, C, or D]</answer>"


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    parsed = parse_inline_options(str(record["options"]))
    if parsed is None:
        raise ValueError(f"cannot read the options {record['options']!r} ('A. ... B. ...')")
    cate = int(record["cate"])
    return Task(
        question=str(record["question"]).strip(),
        inputs=[FrameSpec.video(ctx.media(str(record["relative_path"])))],
        choices=parsed[1],
        answer_type="multiple_choice",
        ground_truth=str(record["GT"]).strip(),
        task_id=f"dsi-bench/{ctx.index}-{record['relative_path']}",
        benchmark="dsi-bench",
        category=CATEGORIES[cate] if 0 <= cate < len(CATEGORIES) else f"category {cate}",
        meta={"metric": "dsi_choice", "answer_format": ANSWER_FORMAT},
    )


SPEC = BenchmarkSpec(
    name="dsi-bench",
    description="Dynamic spatial intelligence: object and camera motion in dynamic videos",
    to_task=to_task,
    hub_id="Viglong/DSI-Bench",
    split="train",
    splits=("std", "hflip", "reverse", "reverse_hflip"),
    aggregation="micro",
    media_help="Download Viglong/DSI-Bench (huggingface-cli download --repo-type dataset) and pass "
    "--source metadatas/std.csv --media-root videos/std",
    homepage="https://huggingface.co/datasets/Viglong/DSI-Bench",
    metric="accuracy; the letter in <answer>X</answer>, else E (official README evaluation)",
)
