"""SPAR-Bench (Zhang et al., 2025): spatial perception and reasoning from single and multiple views; the
paper's ``sparbench``.

Record (``jasonzhango/SPAR-Bench``: ``data/test-0000{0..3}-of-00004.parquet``, read in that order, 7,207
questions over 20 tasks): ``id``, ``task`` (e.g. ``depth_prediction_oc``, ``view_change_infer``,
``obj_spatial_relation_oo``), ``image`` (list of embedded images), ``question`` (shown as it is; multiple
choice questions carry their options inline: they are read from it as the task's choices, letters A-D when
none parse, so ``answer("B")`` is accepted, and the prompt does not list them again,
``meta["options_in_question"]``), ``answer``, ``img_type``,
``format_type``, ``source``. Frames: every image, up to 32.

Scoring: the paper's setting; the eight depth/distance tasks by SPAR's MRA on the first number of the reply
(the last for the four ``_mv`` ones; no number reads 0; metric ``spar_paper_na``); ``view_change_infer`` by
the per-axis MRA of ``key:value`` lists over move right/left, up/down, forward/backward and turn right/left,
up/down, prediction against answer, malformed pairs skipped (``spar_paper_vci``); every other task as
multiple choice: a letter read by the first boxed / ``(X)`` / ``X.`` / ``X:`` / ``X)`` / a lone letter / the
first character, then SPAR's lenient match (``spar_paper_mca``). Overall = mean over the tasks; ``level:Low``,
``level:Middle``, ``level:High`` are the means of the task means in each level (rule ``spar_levels``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spatialclaw.benchmarks.data.published import parquet_records
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import boxed_letters, only_letter
from spatialclaw.benchmarks.scoring.numbers import VSI_CONFIDENCE, to_float
from spatialclaw.benchmarks.scoring.rows import Row, by_category, mean
from spatialclaw.benchmarks.spec import (
    BenchmarkSpec,
    DatasetUnavailable,
    FramePolicy,
    RecordContext,
    parse_inline_options,
)
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
    choices: list[str] | None = None
    if task == VIEW_CHANGE:
        answer_type, metric = "text", "spar_paper_vci"
    elif task in NUMERIC_TASKS:
        answer_type, metric = "number", f"spar_paper_na:{task}"
    else:
        answer_type, metric = "multiple_choice", "spar_paper_mca"
        parsed = parse_inline_options(str(record["question"]))
        choices = parsed[1] if parsed else choice_letters(4)
    return Task(
        question=str(record["question"]),
        inputs=[FrameSpec.images(paths)],
        choices=choices,
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
            **({"options_in_question": True} if choices else {}),
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


# ---------------------------------------- scoring


def spar_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench ``exact_match`` (lower-cased): equal, or the reply contained in the answer, or the reply's
    first character equal to the answer (so ``"a) chair"`` and ``"Answer: A"`` both count for A)."""
    pred, target = reply.lower(), str(gt).lower()
    if pred == target or pred in target or pred[:1] == target:
        return 1.0, reply
    return 0.0, reply


_SPAR_MV_NUMERIC = (
    "depth_prediction_oc_mv",
    "depth_prediction_oo_mv",
    "distance_prediction_oc_mv",
    "distance_prediction_oo_mv",
)


def spar_number(reply: str, task: str | None) -> float | None:
    """SPAR-Bench ``process_na``: the first number in the reply (the *last* for the four multi-view depth and
    distance tasks, -1 when they have none); None when there is none."""
    numbers = [float(n) for n in re.findall(r"(?<!\^)\d+\.\d+|(?<!\^)\d+", reply)]
    if task in _SPAR_MV_NUMERIC:
        return numbers[-1] if numbers else -1.0
    return numbers[0] if numbers else None


def _spar_mra(pred: float, target: float) -> float:
    """SPAR-Bench's MRA: like VSI-Bench's, but a zero target measures the absolute error."""
    distance = abs(pred - target) if target == 0.0 else abs((pred - target) / target)
    return float(np.mean(distance <= 1 - VSI_CONFIDENCE))


def spar_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench numbers: :func:`spar_number` (``param`` is the task name), then SPAR's MRA."""
    got = spar_number(reply, param)
    target = to_float(gt)
    if got is None or target is None:
        return 0.0, got
    return _spar_mra(got, target), got


_VCI_AXES = (
    ("move_right", "move_left"),
    ("move_up", "move_down"),
    ("move_forward", "move_backward"),
    ("rotate_right", "rotate_left"),
    ("rotate_up", "rotate_down"),
)


def _parse_instruction(text: str) -> dict[str, float]:
    return {k: float(v) for k, v in [item.split(":") for item in text.split(",")]}


def spar_vci(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench ``view_change_infer``: both replies parsed as ``action:amount,...``, netted per axis
    (right - left, up - down, forward - backward, and the two rotations); the mean of
    ``mean_relative_accuracy(gt_axis, predicted_axis)`` over the five axes (the official argument order:
    the prediction is the reference). Any parse error scores 0."""
    try:
        pred, truth = _parse_instruction(reply), _parse_instruction(str(gt))
    except ValueError:
        return 0.0, None
    scores = []
    for plus, minus in _VCI_AXES:
        p = pred.get(plus, 0) - pred.get(minus, 0)
        g = truth.get(plus, 0) - truth.get(minus, 0)
        scores.append(_spar_mra(g, p))
    return float(np.mean(scores)), pred


def spar_paper_letter(reply: str) -> str:
    """SPAR-Bench's letter: the first ``\\boxed{X}``; the first ``(X)``, ``X.``, ``X:`` or ``X)`` (A-D, any case,
    even at the end of a word: ``"behind."`` reads D); a single A-D left after deleting everything else; the first
    character if it is A-D; else the text."""
    text = reply.strip()
    first = re.search(r"\(([A-D])\)|([A-D])[.:)]", text, flags=re.IGNORECASE)  # no word boundary: "behind." is D
    return (
        next(iter(boxed_letters(text, "A-D")), None)
        or (((first.group(1) or first.group(2)).upper()) if first else None)
        or only_letter(text, "ABCD")
        or (text[0] if text[:1] in ("A", "B", "C", "D") else None)
        or text
    )


def spar_paper_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench multiple choice: :func:`spar_paper_letter`, then SPAR's lenient match, lower-cased: equal,
    or the extraction contained in the answer, or its first character equal to the answer."""
    got = spar_paper_letter(reply)
    pred, target = got.lower(), str(gt).strip().lower()
    right = bool(pred) and (pred == target or pred in target or pred[:1] == target)
    return (1.0 if right else 0.0), got


_SPAR_LAST_NUMBER = (
    "depth_prediction_oc_mv",
    "depth_prediction_oo_mv",
    "distance_prediction_oc_mv",
    "distance_prediction_oo_mv",
)


def spar_paper_number(reply: str, task: str | None) -> float:
    """SPAR-Bench: the numbers not preceded by ``^``; the first, or the last for the four multi-view depth and
    distance tasks; 0 when there is none."""
    numbers = [float(n) for n in re.findall(r"(?<!\^)\d+\.\d+|(?<!\^)\d+", reply)]
    if not numbers:
        return 0.0
    return numbers[-1] if task in _SPAR_LAST_NUMBER else numbers[0]


def _spar_paper_mra(pred: float, target: float) -> float:
    """SPAR's MRA: ``|p - t| / |t|`` (``|p - t|`` when t is 0) against the ten thresholds with ``<=``."""
    distance = abs(pred - target) if target == 0 else abs(pred - target) / abs(target)
    return float(np.mean(distance <= 1 - VSI_CONFIDENCE))


def spar_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench numbers (``param``: the task): :func:`spar_paper_number`; a non-numeric answer is 0."""
    got = spar_paper_number(reply, param)
    target = to_float(gt)
    return _spar_paper_mra(got, target if target is not None else 0.0), got


_PAPER_VCI_AXES = (
    ("move_right", "move_left"),
    ("move_up", "move_down"),
    ("move_forward", "move_backward"),
    ("turn_right", "turn_left"),
    ("turn_up", "turn_down"),
)


def _instruction(text: str) -> dict[str, float]:
    """``key:value`` pairs with every space removed; malformed pairs are skipped."""
    pairs: dict[str, float] = {}
    for item in text.replace(" ", "").split(","):
        parts = item.split(":")
        value = to_float(parts[1]) if len(parts) == 2 else None
        if value is not None and parts[0]:
            pairs[parts[0]] = value
    return pairs


def spar_paper_vci(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench ``view_change_infer``: per axis (move right/left, up/down, forward/backward, turn
    right/left, turn up/down) the net amount; SPAR's MRA of the prediction against the answer; the mean."""
    pred, truth = _instruction(reply), _instruction(str(gt))
    scores = [
        _spar_paper_mra(pred.get(plus, 0.0) - pred.get(minus, 0.0), truth.get(plus, 0.0) - truth.get(minus, 0.0))
        for plus, minus in _PAPER_VCI_AXES
    ]
    return float(np.mean(scores)), pred


#: SPAR-Bench's levels: the task names in each; every other task is High.
SPAR_LEVELS = {
    "Low": (
        "depth_prediction_oc",
        "depth_prediction_oo",
        "distance_prediction_oc",
        "distance_prediction_oo",
        "depth_prediction_oc_mv",
        "depth_prediction_oo_mv",
        "distance_prediction_oc_mv",
        "distance_prediction_oo_mv",
    ),
    "Middle": ("view_change_infer", "position_matching", "camera_motion_infer"),
}


def spar_levels(rows: Sequence[Row]) -> dict[str, Any]:
    """SPAR-Bench: per-task means; overall = their mean; ``level:Low/Middle/High`` = the mean of the task
    means in each level (Low: the eight depth and distance tasks; Middle: view change, position matching,
    camera motion; High: the rest)."""
    cats, counts = by_category(rows)
    levels: dict[str, list[float]] = {}
    for task, value in cats.items():
        level = next((name for name, tasks in SPAR_LEVELS.items() if task in tasks), "High")
        levels.setdefault(level, []).append(value)
    extra = {f"level:{k}": sum(v) / len(v) for k, v in sorted(levels.items())}
    return {"overall": mean(cats.values()), "categories": {**cats, **extra}, "counts": counts}
