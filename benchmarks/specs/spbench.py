"""SPBench (SpatialLadder, Li et al., 2025): spatial perception questions, single image (SPBench-SI) and
multiple views (SPBench-MV), in VSI-Bench's question types.

Record (``hongxingli/SPBench``; one file per track, ``SPBench-SI.parquet`` and ``SPBench-MV.parquet`` as
the official ``eval_spld/evaluator.py`` reads them; images under ``SPBench-SI-images/`` and
``SPBench-MV-images/``): ``id``, ``question`` (options inline, ``"A. ..."``, for multiple choice),
``answer`` (a letter or a number), ``images`` (list of relative paths), ``modal_type``,
``original_question_type`` (the VSI-Bench type), ``problem_type``. The column names were confirmed from a
public loader; the values of ``problem_type`` were not, so a question is multiple choice when its
options parse and its answer is a letter.

Scoring: ZJU-REAL/SpatialLadder ``eval_spld/evaluator.py`` scores both tracks with its ``vsibench_eval``
(VSI-Bench's rules: ``vsi_mca``, ``vsi_na``, mean over question types). That helper's own file was not
available offline; VSI-Bench's official extraction is used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec, RecordContext, parse_inline_options
from spatialclaw.task import FrameSpec, Task


def make_to_task(benchmark: str) -> Callable[[dict[str, Any], RecordContext], Task]:
    def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
        images = record["images"] if isinstance(record["images"], list) else [record["images"]]
        common: dict[str, Any] = dict(
            inputs=[FrameSpec.images([ctx.image(image, "images") for image in images])],
            task_id=f"{benchmark}/{record['id']}",
            benchmark=benchmark,
            category=str(record.get("original_question_type") or record.get("problem_type") or "unknown"),
        )
        meta = {"modal_type": record.get("modal_type"), "problem_type": record.get("problem_type")}
        answer = str(record["answer"]).strip()
        parsed = parse_inline_options(str(record["question"]), marker="Options:") or parse_inline_options(
            str(record["question"])
        )
        if parsed is not None and re.fullmatch(r"[A-Za-z]", answer):
            return Task(
                question=parsed[0],
                choices=parsed[1],
                answer_type="multiple_choice",
                ground_truth=answer,
                meta={**meta, "metric": "vsi_mca"},
                **common,
            )
        return Task(
            question=str(record["question"]),
            answer_type="number",
            ground_truth=float(answer),
            meta={**meta, "metric": "vsi_na"},
            **common,
        )

    return to_task


def _spec(track: str) -> BenchmarkSpec:
    name = f"spbench-{track.lower()}"
    return BenchmarkSpec(
        name=name,
        description=f"SPBench {track}: spatial perception from {'one image' if track == 'SI' else 'several views'}",
        to_task=make_to_task(name),
        hub_id="hongxingli/SPBench",
        data_files=f"SPBench-{track}.parquet",
        split="train",
        aggregation="vsi_bench",
        media_help=f"Download hongxingli/SPBench and pass --media-root to the folder holding SPBench-{track}-images/",
        homepage="https://huggingface.co/datasets/hongxingli/SPBench",
        metric="as VSI-Bench: accuracy (first token) and MRA, mean over question types (SpatialLadder evaluator)",
    )


SPEC_SI = _spec("SI")
SPEC_MV = _spec("MV")
