"""SPBench (SpatialLadder, Li et al., 2025): spatial perception questions on single images (SI) and multiple
views (MV) in VSI-Bench's question types; the paper's ``spbench`` is both tracks as one benchmark.

Record (``hongxingli/SPBench``: ``SPBench-SI.parquet``, 1,009 rows, then ``SPBench-MV.parquet``, 319 rows;
images at ``<root>/<scene_name>/<image>``): ``id`` (sample id ``SI_<id>`` / ``MV_<id>``), ``question``,
``question_type``, ``scene_name``, ``images`` (file names), ``options`` (a list of ``"A. text"``, a JSON
string of one, or null), ``ground_truth``. Frames: every image, up to 32.

Scoring: the paper's setting; multiple-choice types (object_rel_direction_easy/_medium/_hard,
object_rel_direction, object_rel_distance) read the letter by boxed / first ``X.``, ``(X)``, ``X:`` / a
first-token letter / an option's text, compared case-insensitively (metric ``spbench_mca``); numeric types
(object_abs_distance, object_counting, object_size_estimation, room_size_estimation) read a number word
("one" .. "ten", "zero") first, else the first digits, scored by MRA with the signed denominator
``|p - g| / g`` (a zero answer scores 0; ``spbench_na``); any other type scores 0 (``spbench_other``).
Overall = mean over question types on both tracks together, the three direction difficulties kept apart
(rule ``macro``); the ``subset`` breakdown is the accuracy per track. ``spbench-si`` and ``spbench-mv`` are
one track each, read and scored the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.benchmarks.data.published import parquet_records, require_file
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import vsi_fuzzy
from spatialclaw.benchmarks.scoring.numbers import signed_mra, to_float, word_or_digits
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, strip_option_labels
from spatialclaw.task import AnswerType, FrameSpec, Task

REPO = "hongxingli/SPBench"
COLUMNS = ("id", "question", "question_type", "scene_name", "images", "options", "ground_truth")
MC_TYPES = (
    "object_rel_direction_easy",
    "object_rel_direction_medium",
    "object_rel_direction_hard",
    "object_rel_direction",
    "object_rel_distance",
)
NUMERIC_TYPES = ("object_abs_distance", "object_counting", "object_size_estimation", "room_size_estimation")


def make_read_source(tracks: tuple[str, ...]) -> Callable[[Path], Iterator[dict[str, Any]]]:
    """A reader of ``SPBench-<track>.parquet`` for each track in turn, each row tagged with ``_subset``."""

    def read_source(root: Path) -> Iterator[dict[str, Any]]:
        paths = [require_file(root, f"SPBench-{track}.parquet", "spbench", REPO) for track in tracks]
        for track, path in zip(tracks, paths, strict=True):
            for record in parquet_records(path, COLUMNS, "spbench"):
                yield {**record, "_subset": track}

    return read_source


def _options(value: Any) -> list[str]:
    """The record's options: a list, or a JSON string of one; anything else (an unreadable string) is none,
    as the reference reads it."""
    if isinstance(value, str):
        try:
            value = jsonl.loads(value) if value.strip() else None
        except ValueError:
            value = None
    return strip_option_labels(value) if isinstance(value, list) else []


def make_to_task(benchmark: str) -> Callable[[dict[str, Any], RecordContext], Task]:
    def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
        subset = str(record.get("_subset", "SI"))
        scene = str(record["scene_name"])
        images = record["images"] if isinstance(record["images"], list) else [record["images"]]
        qtype = str(record["question_type"])
        options = _options(record.get("options"))
        sample = f"{subset}_{record['id']}"
        answer_type: AnswerType
        if qtype in MC_TYPES:
            metric, answer_type = "spbench_mca", "multiple_choice"
        elif qtype in NUMERIC_TYPES:
            metric, answer_type = "spbench_na", "number"
        else:
            metric, answer_type = "spbench_other", "multiple_choice" if options else "text"
        return Task(
            question=str(record["question"]),
            inputs=[FrameSpec.images([ctx.media(f"{scene}/{name}") for name in images])],
            choices=(options or choice_letters(4)) if answer_type == "multiple_choice" else None,
            answer_type=answer_type,
            ground_truth=str(record["ground_truth"]).strip(),
            task_id=f"{benchmark}/{sample}",
            benchmark=benchmark,
            category=qtype,
            meta={
                "metric": metric,
                "subset": subset,
                "scene": scene,
                "sample_id": sample,
                **({"options_in_question": True} if answer_type == "multiple_choice" and not options else {}),
            },
        )

    return to_task


def _spec(name: str, tracks: tuple[str, ...], paper_name: str | None) -> BenchmarkSpec:
    files = " + ".join(f"SPBench-{t}.parquet" for t in tracks)
    return BenchmarkSpec(
        name=name,
        description="SPBench: spatial perception from "
        + {"SI": "one image", "MV": "several views"}.get(tracks[0] if len(tracks) == 1 else "", "one or several views"),
        to_task=make_to_task(name),
        hub_id=REPO,
        data_files=files if len(tracks) == 1 else None,
        split="train",
        aggregation="macro",
        media_help=f"Download {REPO} ({files} and the scene folders) and pass --source DIR",
        homepage="https://huggingface.co/datasets/hongxingli/SPBench",
        metric="mean over question types (directions kept apart): letter chain, number words then digits, signed MRA",
        paper_name=paper_name,
        read_source=make_read_source(tracks),
        frames=FramePolicy(fps=None, key_frames=32),
        instruction="spbench.md",
        expected_files=tuple((f"SPBench-{t}.parquet", 1) for t in tracks),
        paper_order=True,
        breakdowns=("category", "subset"),
    )


SPEC = _spec("spbench", ("SI", "MV"), "spbench")
SPEC_SI = _spec("spbench-si", ("SI",), None)
SPEC_MV = _spec("spbench-mv", ("MV",), None)


# ---------------------------------------- scoring


def spbench_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPBench numbers: :func:`word_or_digits`, then :func:`signed_mra`."""
    got = word_or_digits(reply)
    return signed_mra(got, to_float(gt)), got


def unscored_type(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """A question type the paper's scorer does not know (SPBench): always 0."""
    return 0.0, vsi_fuzzy(reply)
