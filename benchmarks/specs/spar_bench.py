"""SPAR-Bench (Zhang et al., 2025): spatial perception and reasoning from single and multiple views; the
paper's ``sparbench``.

Record (``jasonzhango/SPAR-Bench``: ``data/test-0000{0..3}-of-00004.parquet``, read in that order, 7,207
questions over 20 tasks): ``id``, ``task`` (e.g. ``depth_prediction_oc``, ``view_change_infer``,
``obj_spatial_relation_oo``), ``image`` (list of embedded images), ``question`` (shown as it is; multiple
choice questions carry their options inline, so no options are split out), ``answer``, ``img_type``,
``format_type``, ``source``. Frames: every image, up to 32.

Scoring: the paper's setting; the eight depth/distance tasks by SPAR's MRA on the first number of the reply
(the last for the four ``_mv`` ones; no number reads 0; metric ``spar_paper_na``); ``view_change_infer`` by
the per-axis MRA of ``key:value`` lists over move right/left, up/down, forward/backward and turn right/left,
up/down, prediction against answer, malformed pairs skipped (``spar_paper_vci``); every other task as
multiple choice: a letter read by boxed / ``(X)`` / ``X.`` / ``X:`` / ``X)`` / a lone letter / the first
character, then SPAR's lenient match (``spar_paper_mca``). Overall = mean over the tasks; ``level:Low``,
``level:Middle``, ``level:High`` are the means of the task means in each level (rule ``spar_levels``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.data.published import parquet_records
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, FramePolicy, RecordContext
from spatialclaw.task import AnswerType, FrameSpec, Task

REPO = "jasonzhango/SPAR-Bench"
COLUMNS = ("id", "task", "image", "question", "answer")
#: The tasks answered with a number; ``view_change_infer`` is scored per axis; every other task is multiple choice.
NUMERIC_TASKS = (
    "depth_prediction_oc",
    "depth_prediction_oo",
    "distance_prediction_oc",
    "distance_prediction_oo",
    "depth_prediction_oc_mv",
    "depth_prediction_oo_mv",
    "distance_prediction_oo_mv",
    "distance_prediction_oc_mv",
)
VIEW_CHANGE = "view_change_infer"


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of ``data/test-*-of-*.parquet``, the shards in name order, each in file order."""
    shards = sorted(Path(root).glob("data/test-*.parquet"))
    if not shards:
        raise DatasetUnavailable(
            f"sparbench: no data/test-*.parquet in {root} (expected the folder written by "
            f"`hf download --repo-type dataset {REPO} --local-dir {root}`)"
        )
    for shard in shards:
        yield from parquet_records(shard, COLUMNS, "sparbench")


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    images = record["image"] if isinstance(record["image"], list) else [record["image"]]
    paths: list[str | Path] = [ctx.image(image, "image") for image in images]
    task = str(record["task"])
    answer = str(record["answer"]).strip()
    answer_type: AnswerType
    if task == VIEW_CHANGE:
        answer_type, metric = "text", "spar_paper_vci"
    elif task in NUMERIC_TASKS:
        answer_type, metric = "number", f"spar_paper_na:{task}"
    else:
        answer_type, metric = "multiple_choice", "spar_paper_mca"
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.images(paths)],
        answer_type=answer_type,
        ground_truth=answer,
        task_id=f"spar-bench/{record['id']}",
        benchmark="spar-bench",
        category=task,
        meta={
            "metric": metric,
            "img_type": record.get("img_type"),
            "format_type": record.get("format_type"),
            "source": record.get("source"),
            "sample_id": str(record["id"]),
        },
    )


SPEC = BenchmarkSpec(
    name="spar-bench",
    description="Spatial perception and reasoning: depth, distance, view change, object relations",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="spar_levels",
    homepage="https://huggingface.co/datasets/jasonzhango/SPAR-Bench",
    metric="mean over the 20 tasks of letter accuracy, MRA (numbers), per-axis MRA (view change); Low/Middle/High",
    paper_name="sparbench",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="sparbench.md",
    expected_files=(("data/test-*-of-00004.parquet", 4),),
    paper_order=True,
    breakdowns=("category",),
)
