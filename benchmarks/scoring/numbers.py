"""Number reading and mean relative accuracy (MRA) as several benchmarks' scorers share them: the VSI-Bench
thresholds, a float or None, number words, and the MRA variants (zero ground truth, signed denominator)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

#: ``np.linspace(0.5, 0.95, int((0.95 - 0.5) / 0.05 + 2))`` exactly as lmms-eval's VSI-Bench code builds it:
#: the quotient is 8.999..., so ``int(... + 2)`` is 10 points, with numpy's float rounding (0.5499999...).
VSI_CONFIDENCE = np.linspace(0.5, 0.95, int((0.95 - 0.5) / 0.05 + 2))


def official_mra(pred: float | None, gt: float) -> float:
    """VSI-Bench mean relative accuracy, bit for bit: ``mean(|pred - gt| / gt <= 1 - conf)`` over the ten
    numpy thresholds. ``pred`` None (unreadable) scores 0.0 as in the official ``except TypeError``. The
    caller handles ``gt == 0`` (see :func:`spatialclaw.benchmarks.scoring.mean_relative_accuracy`)."""
    if pred is None or not math.isfinite(pred):
        return 0.0
    return float(np.mean(abs(pred - gt) / abs(gt) <= 1 - VSI_CONFIDENCE))


def to_float(text: Any) -> float | None:
    """``float(text)`` or None, as the official ``to_float`` helpers do."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def mra_or_zero_policy(pred: float | None, gt: float) -> float:
    """:func:`official_mra`, except that a zero ground truth needs a prediction within 1e-9 of zero (our
    documented policy; the official VSI-Bench code divides by it)."""
    if gt == 0.0:
        return 1.0 if pred is not None and abs(pred) <= 1e-9 else 0.0
    return official_mra(pred, gt)


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
    (with a decimal part), unsigned as the reference reads it (``"-1.5"`` reads 1.5); else None."""
    lower = text.lower()
    for word, value in NUMBER_WORDS.items():
        if re.search(rf"\b{word}\b", lower):
            return value
    found = re.search(r"\d+(?:\.\d+)?", text)
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
