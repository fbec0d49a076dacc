"""The paper's numeric and mixed scoring for SPAR-Bench, SpatialTree-Bench, SPBench, VSI-Bench (debiased) and
VSTI-Bench: number reading, the MRA variants (signed denominator, zero ground truth) and SpatialTree's rules.

Written from the facts gathered on the paper's setting, not from its code. The thresholds are
VSI-Bench's ten ``np.linspace(0.5, 0.95, 10)`` values, compared with ``<=``. Each scorer: (reply text,
ground truth, choices, parameter) -> (score in [0, 1], what was extracted).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from spatialclaw.benchmarks.official_common import VSI_CONFIDENCE, to_float, vsi_fuzzy
from spatialclaw.benchmarks.official_paper_p3 import spatialtree_paper_letter

__all__ = [
    "NUMBER_WORDS",
    "abs_mra",
    "signed_mra",
    "spar_paper_na",
    "spar_paper_number",
    "spar_paper_vci",
    "spatialtree_paper",
    "spbench_paper_na",
    "vsi_paper_na",
    "vsti_paper_na",
    "word_or_digits",
]

#: Number words searched before digits (SPBench, SpatialTree-Bench), in the order they are tried.
NUMBER_WORDS = {
    "one": 1.0,
    "two": 2.0,
    "three": 3.0,
    "four": 4.0,
    "five": 5.0,
    "six": 6.0,
    "seven": 7.0,
    "eight": 8.0,
    "nine": 9.0,
    "ten": 10.0,
    "zero": 0.0,
}


def word_or_digits(text: str) -> float | None:
    """The number a reply names: the first of "one" .. "ten", "zero" (in that order) found as a whole word,
    any case, anywhere in the reply (so "3 chairs, one of them red" reads 1); else the first run of digits
    (with a decimal part); else None."""
    lower = text.lower()
    for word, value in NUMBER_WORDS.items():
        if re.search(rf"\b{word}\b", lower):
            return value
    found = re.search(r"-?\d+(?:\.\d+)?", text)
    return float(found.group()) if found else None


def signed_mra(pred: float | None, gt: float | None) -> float:
    """MRA with the signed denominator ``|p - g| / g``: a negative ground truth makes every readable
    prediction score 1.0; a zero or missing ground truth, or a missing prediction, scores 0."""
    if pred is None or gt is None or gt == 0 or not math.isfinite(pred) or not math.isfinite(gt):
        return 0.0
    return float(np.mean(abs(pred - gt) / gt <= 1 - VSI_CONFIDENCE))


def abs_mra(pred: float | None, gt: float | None) -> float:
    """MRA with ``|p - g| / |g|``; a zero or missing ground truth, or a missing prediction, scores 0."""
    if pred is None or gt is None or gt == 0 or not math.isfinite(pred) or not math.isfinite(gt):
        return 0.0
    return float(np.mean(abs(pred - gt) / abs(gt) <= 1 - VSI_CONFIDENCE))


def spbench_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPBench numbers: :func:`word_or_digits`, then :func:`signed_mra`."""
    got = word_or_digits(reply)
    return signed_mra(got, to_float(gt)), got


def vsti_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSTI-Bench numbers: ``float`` of the first space-separated token (trailing dot removed), then
    :func:`signed_mra` (negative ground truth: 1.0 for any readable number; zero: 0)."""
    got = to_float(vsi_fuzzy(reply))
    return signed_mra(got, to_float(gt)), got


def vsi_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench debiased numbers: ``float`` of the first token, then :func:`abs_mra` (zero ground truth: 0)."""
    got = to_float(vsi_fuzzy(reply))
    return abs_mra(got, to_float(gt)), got


# -------------------------------------------------------------------------------------------- SPAR-Bench

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


def _spar_mra(pred: float, target: float) -> float:
    """SPAR's MRA: ``|p - t| / |t|`` (``|p - t|`` when t is 0) against the ten thresholds with ``<=``."""
    distance = abs(pred - target) if target == 0 else abs(pred - target) / abs(target)
    return float(np.mean(distance <= 1 - VSI_CONFIDENCE))


def spar_paper_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench numbers (``param``: the task): :func:`spar_paper_number`; a non-numeric answer is 0."""
    got = spar_paper_number(reply, param)
    target = to_float(gt)
    return _spar_mra(got, target if target is not None else 0.0), got


_VCI_AXES = (
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
        _spar_mra(pred.get(plus, 0.0) - pred.get(minus, 0.0), truth.get(plus, 0.0) - truth.get(minus, 0.0))
        for plus, minus in _VCI_AXES
    ]
    return float(np.mean(scores)), pred


# ------------------------------------------------------------------------------------- SpatialTree-Bench

#: metricfunc values scored by MRA on a number.
SPATIALTREE_MRA = ("meanrelativeacc", "meanrelativeacc2", "angulardifference", "l2distance")
#: metricfunc values the paper runs but leaves out of every score (LLM judges, simulators).
SPATIALTREE_UNSCORED = ("gpteval", "cogmapeval", "affmask", "manipulateeval", "agenticnaveval", "gravityeval")


def _yes_no_last(text: str) -> str | None:
    lower = text.lower()
    yes, no = lower.rfind("yes"), lower.rfind("no")
    if yes < 0 and no < 0:
        return None
    return "yes" if yes > no else "no"


def spatialtree_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SpatialTree-Bench by ``param``: ``choice`` (the letter equals the answer), ``mra`` (:func:`word_or_digits`
    then :func:`abs_mra`), ``judge`` (whichever of "yes"/"no" occurs last equals the answer), ``unscored``
    (0; the aggregation leaves these rows out), else ``other``: MRA when both sides are numbers and the answer
    is not 0, otherwise case-insensitive equality."""
    if param == "choice":
        letter = spatialtree_paper_letter(reply)
        return (1.0 if letter and letter == str(gt).strip().upper() else 0.0), letter
    if param == "mra":
        number = word_or_digits(reply)
        return abs_mra(number, to_float(gt)), number
    if param == "judge":
        said = _yes_no_last(reply)
        return (1.0 if said is not None and said == str(gt).strip().lower() else 0.0), said
    if param == "unscored":
        return 0.0, None
    pred, target = to_float(reply.strip()), to_float(gt)
    if pred is not None and target is not None and target != 0:
        return abs_mra(pred, target), pred
    return (1.0 if reply.strip().lower() == str(gt).strip().lower() else 0.0), reply.strip()
