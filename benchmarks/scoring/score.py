"""Scoring: turn a model's answer into a score against the ground truth (:func:`score_answer`) by a metric.

Answers are read by the lenient extractors of :mod:`spatialclaw.benchmarks.scoring.answer_parsing` or, for a
benchmark's official metric, by that benchmark's own extraction; scores become benchmark numbers in
:mod:`spatialclaw.benchmarks.scoring.aggregation`.

Metrics
    :func:`mean_relative_accuracy` is the official VSI-Bench rule bit for bit (lmms-eval
    ``tasks/vsibench/utils.py``, copied by SPAR-Bench, VSTI-Bench, SpatialTree-Bench and others): a hit at
    each of the ten thresholds ``conf = np.linspace(0.5, 0.95, 10)`` (numpy's floats: 0.5499999...) when
    ``|pred - gt| / |gt| <= 1 - conf``; MRA is the share of hits. So 0.88 against 1.0 scores 0.8, 1.26
    scores 0.5 and 2 against 4 scores 0.1 (the error 0.5 equals ``1 - 0.5``). Paper text writes ``<``; the
    code, which produced every published number, uses ``<=``.

    Zero ground truth policy: relative error is undefined when ``gt == 0`` (the official code divides by
    it). We score it as exact: 1.0 when ``|pred| <= 1e-9`` and 0.0 otherwise. A missing or non-finite
    prediction scores 0.0.

    Official per-benchmark metrics (``"vsi_mca"``, ``"mmsi_choice"``, ``"dsi_choice"``, ...; see
    :mod:`spatialclaw.benchmarks.scoring.metrics`) reproduce each benchmark's own answer extraction; the adapters
    in :mod:`spatialclaw.benchmarks.specs` set them in ``task.meta["metric"]``. The lenient extractors
    (:func:`~spatialclaw.benchmarks.scoring.answer_parsing.extract_choice`,
    :func:`~spatialclaw.benchmarks.scoring.answer_parsing.extract_number`) serve local and synthetic tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spatialclaw.benchmarks.scoring.answer_parsing import (
    extract_choice,
    extract_number,
    focus,
    norm,
    normalize_choice_answer,
)
from spatialclaw.benchmarks.scoring.metrics import OFFICIAL_METRICS, parse_metric, render_structured
from spatialclaw.benchmarks.scoring.numbers import VSI_CONFIDENCE

__all__ = [
    "SCORINGS",
    "VSI_BENCH_THRESHOLDS",
    "Score",
    "exact_match",
    "mean_relative_accuracy",
    "score_answer",
]

#: How an answer reaches a benchmark's official extractor: as given (``reference``, the paper's parity) or
#: rendered in the benchmark's reply format first, no answer scoring 0 (``lenient``).
SCORINGS = ("reference", "lenient")

#: The official thresholds ``np.linspace(0.5, 0.95, 10)``, as the floats numpy makes them.
VSI_BENCH_THRESHOLDS: tuple[float, ...] = tuple(float(t) for t in VSI_CONFIDENCE)


# --------------------------------------------------------------------------------------------- metrics


def mean_relative_accuracy(pred: Any, gt: Any, thresholds: Sequence[float] = VSI_BENCH_THRESHOLDS) -> float:
    """VSI-Bench mean relative accuracy of one numeric prediction, in [0, 1], by the official rule: the
    share of ``thresholds`` (default: the official ten) with ``|pred - gt| / |gt| <= 1 - threshold``.
    ``pred`` may be a number or text (read with :func:`extract_number`). A missing, non-numeric or
    non-finite prediction scores 0.0. Zero ground truth: 1.0 iff ``|pred| <= 1e-9``."""
    p = extract_number(pred) if not isinstance(pred, (int, float)) or isinstance(pred, bool) else float(pred)
    g = float(gt) if isinstance(gt, (int, float)) else extract_number(gt)
    if g is None or not math.isfinite(g):
        raise ValueError(f"ground truth {gt!r} is not a finite number; fix the task's ground_truth")
    if p is None or not math.isfinite(p):
        return 0.0
    if g == 0.0:
        return 1.0 if abs(p) <= 1e-9 else 0.0
    relative_error = abs(p - g) / abs(g)
    return float(np.mean(relative_error <= 1 - np.asarray(thresholds, dtype=float)))


def exact_match(pred: Any, gt: Any) -> float:
    """1.0 when the two agree after lower-casing and dropping punctuation and extra spaces, else 0.0."""
    if pred is None:
        return 0.0
    return 1.0 if norm(str(pred)) == norm(str(gt)) else 0.0


_YES = {"yes", "y", "true", "correct", "right"}
_NO = {"no", "n", "false", "incorrect", "wrong"}


def _yes_no(text: Any) -> str | None:
    if text is None:
        return None
    if isinstance(text, bool):
        return "yes" if text else "no"
    words = norm(focus(str(text))).split()
    for word in words:
        if word in _YES:
            return "yes"
        if word in _NO:
            return "no"
    return None


@dataclass
class Score:
    """A scored answer: ``value`` in [0, 1], the ``metric`` used, and what was read from the answer."""

    value: float
    metric: str
    extracted: Any = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.value, "metric": self.metric, "extracted": self.extracted, **self.details}


METRICS = ("choice", "mra", "exact", "number_exact", "yes_no", *OFFICIAL_METRICS)


def default_metric(answer_type: str) -> str:
    """The metric a task uses when its ``meta["metric"]`` does not say: choices by letter, numbers by MRA."""
    return {"multiple_choice": "choice", "number": "mra", "yes_no": "yes_no"}.get(answer_type, "exact")


def score_answer(
    answer: Any,
    ground_truth: Any,
    answer_type: str = "text",
    choices: Sequence[str] | None = None,
    metric: str | None = None,
    unit: str | None = None,
    scoring: str = "lenient",
) -> Score:
    """Score one answer against its ground truth.

    ``metric``: ``"choice"`` (option letter accuracy), ``"mra"`` (mean relative accuracy), ``"exact"``
    (normalised string match), ``"number_exact"`` (the number read from the answer equals the ground truth
    to 1e-6, e.g. counts) or ``"yes_no"``; defaults from ``answer_type``. A benchmark's official metric
    (``"vsi_mca"``, ``"spar_na:<task>"``, ...: a name from :data:`~spatialclaw.benchmarks.scoring.metrics.OFFICIAL_METRICS`,
    optionally ``:parameter``) renders a structured answer in the official reply format and runs that
    benchmark's own extraction and comparison. ``unit`` converts a numeric
    answer written with units (``"150 cm"``) into the ground truth's unit before comparing.

    ``scoring`` (for official metrics): ``"reference"`` runs the benchmark's extractor on the answer's text as
    given (``str(answer)``, stripped; no answer is ``""``, which some extractors read as an answer, e.g.
    OmniSpatial's ``A``), quirks included, as the benchmark's reference evaluation does; ``"lenient"`` renders
    a structured answer in the benchmark's reply format first (:func:`render_structured`) and scores no answer
    as 0.
    """
    if scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {scoring!r}; use one of {', '.join(SCORINGS)}")
    metric = metric or default_metric(answer_type)
    name, param = parse_metric(metric)
    if name not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    if param is not None and name not in OFFICIAL_METRICS:  # else "mra:x" would be scored as exact text
        raise ValueError(f"metric {metric!r}: {name!r} takes no ':' parameter; use {name!r}")
    if ground_truth is None:
        raise ValueError("cannot score a task without ground truth")
    if name in OFFICIAL_METRICS and scoring == "reference":
        scorer, _ = OFFICIAL_METRICS[name]
        text = "" if answer is None else (answer.strip() if isinstance(answer, str) else str(answer))
        value, extracted = scorer(text, ground_truth, choices, param)
        return Score(float(value), metric, extracted, {"ground_truth": ground_truth})
    if name in OFFICIAL_METRICS:
        if answer is None or not str(answer).strip():
            # no answer is wrong everywhere (SPAR-Bench's exact_match would count an empty reply as right)
            return Score(0.0, metric, None, {"ground_truth": ground_truth})
        scorer, template = OFFICIAL_METRICS[name]
        value, extracted = scorer(render_structured(answer, choices, template), ground_truth, choices, param)
        return Score(float(value), metric, extracted, {"ground_truth": ground_truth})
    if metric == "choice":
        if not choices:
            raise ValueError("metric 'choice' needs the task's choices")
        gt = normalize_choice_answer(ground_truth, choices)
        if gt is None:
            raise ValueError(f"ground truth {ground_truth!r} matches none of the choices {list(choices)}")
        got = extract_choice(answer, choices)
        return Score(1.0 if got == gt else 0.0, metric, got, {"ground_truth": gt})
    if metric in {"mra", "number_exact"}:
        number = extract_number(answer, unit)
        g = extract_number(ground_truth)
        if g is None:
            raise ValueError(f"ground truth {ground_truth!r} is not a number")
        if metric == "mra":
            return Score(mean_relative_accuracy(number, g), metric, number, {"ground_truth": g})
        exact = number is not None and abs(number - g) <= 1e-6
        return Score(1.0 if exact else 0.0, metric, number, {"ground_truth": g})
    if metric == "yes_no":
        got, gt = _yes_no(answer), _yes_no(ground_truth)
        if gt is None:
            raise ValueError(f"ground truth {ground_truth!r} is neither yes nor no")
        return Score(1.0 if got == gt else 0.0, metric, got, {"ground_truth": gt})
    extracted = focus(str(answer)).strip() if answer is not None else None
    return Score(exact_match(extracted, ground_truth), metric, extracted, {"ground_truth": ground_truth})
