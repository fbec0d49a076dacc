"""Shared parts of the official scorers: the VSI-Bench thresholds and MRA, its first-token reader, number reading
and option labels.

The scorers themselves live in :mod:`spatialclaw.benchmarks.official_mcq`,
:mod:`spatialclaw.benchmarks.official_mcq_parsers` and :mod:`spatialclaw.benchmarks.official_numeric`; the
registry of metric names is :data:`spatialclaw.benchmarks.official.OFFICIAL_METRICS`.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

__all__ = ["VSI_CONFIDENCE", "official_mra", "option_text", "to_float", "vsi_fuzzy"]


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


def option_text(option: str) -> str:
    return re.sub(r"^\s*\(?[A-Za-z]\s*[\).:]\s+", "", str(option), count=1).strip()


def vsi_fuzzy(reply: str) -> str:
    """VSI-Bench's ``fuzzy_matching``: the reply's first space-separated token, trailing dots removed."""
    return reply.split(" ")[0].rstrip(".").strip()
