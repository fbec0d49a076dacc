"""The paper's answer extraction and scoring for MMSI-Video-Bench, Omni3D-Bench, OmniSpatial and OSI-Bench.

Same signature and registration as :mod:`spatialclaw.benchmarks.official_paper_p2`: (reply text, ground
truth, choices, parameter) -> (score in [0, 1], what was extracted); :data:`PAPER_METRICS_P2` maps every
paper metric name of these ten benchmarks to its scorer and the template a structured answer is rendered
with, and is registered in :data:`spatialclaw.benchmarks.official.OFFICIAL_METRICS`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from spatialclaw.benchmarks.official_common import official_mra, to_float
from spatialclaw.benchmarks.official_paper_p2 import (
    blink_paper,
    boxed_letters,
    cvbench_paper,
    dsibench_paper,
    erqa_paper,
    first_labelled_letter,
    mindcube_paper,
    mmsi_paper,
    option_text_letter,
)

__all__ = [
    "OMNI3D_PAPER_THRESHOLDS",
    "PAPER_METRICS_P2",
    "base_extract",
    "mmsivideo_paper",
    "omni3d_paper",
    "omni3d_prediction",
    "omnispatial_paper",
    "osibench_mcq",
    "osibench_na",
    "osibench_number",
]


# ------------------------------------------------------------------------------------- MMSI-Video-Bench


def base_extract(reply: str) -> str:
    """The paper's base letter extractor: ``\\boxed{X}``; else the *first* letter followed by ``.``, ``:`` or
    ``)`` (optionally after ``(``), any case, so "Answer: B" reads R; else the single letter left after
    removing non-letters; else the reply itself. Letters are upper-cased."""
    boxed = boxed_letters(reply, "A-Z")
    if boxed:
        return boxed[0]
    labelled = re.search(r"\(?([A-Za-z])[.:)]", reply)
    if labelled:
        return labelled.group(1).upper()
    letters = re.sub(r"[^A-Za-z]", "", reply)
    if len(letters) == 1:
        return letters.upper()
    return reply.strip()


def mmsivideo_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Video-Bench: :func:`base_extract` equals ``ground_truth`` upper-cased."""
    got = base_extract(reply)
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got


# ----------------------------------------------------------------------------------------- Omni3D-Bench

#: The ten thresholds 0.5, 0.45, ..., 0.05; a float answer hits one when its relative error is below it.
OMNI3D_PAPER_THRESHOLDS = (0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05)
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def omni3d_prediction(reply: str) -> str:
    """Omni3D-Bench's paper reading of a reply: the ``\\boxed{}`` content if any; then, when the text holds a
    number, the whole text if it parses as a float, else its *last* number; otherwise the lower-cased
    text with quotes stripped."""
    text = reply.strip()
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", text)
    if boxed:
        text = boxed[-1].strip()
    numbers = _NUMBER.findall(text.replace(",", ""))
    if numbers:
        return text if to_float(text) is not None else numbers[-1]
    return text.lower().replace('"', "").replace("'", "").strip()


def omni3d_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Omni3D-Bench by ``answer_type`` (``param``): ``float``: the share of the ten thresholds t with
    ``|p - g| / |g| < t`` (``|p|`` when g = 0); ``int``: ``int(round(float(p))) == int(g)`` (so "3.0"
    counts); ``str``: equality after stripping, case-insensitive."""
    pred = omni3d_prediction(reply)
    if param in ("float", "int"):
        value = to_float(pred)
        target = to_float(gt)
        if value is None or target is None or not math.isfinite(value) or not math.isfinite(target):
            return 0.0, value
        if param == "int":
            return (1.0 if int(round(value)) == int(target) else 0.0), value
        error = abs(value - target) / abs(target) if target != 0 else abs(value)
        return sum(error < t for t in OMNI3D_PAPER_THRESHOLDS) / len(OMNI3D_PAPER_THRESHOLDS), value
    return (1.0 if pred.strip().lower() == str(gt).strip().lower() else 0.0), pred


# ------------------------------------------------------------------------------------------- OmniSpatial


def omnispatial_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OmniSpatial: the last "Answer: X" (any case); else :func:`base_extract` when it gives one A-D letter;
    else the first character when it is A-D; else ``"A"``; compared case-insensitively."""
    found = re.findall(r"answer\s*:\s*([A-D])\b", reply, flags=re.IGNORECASE)
    if found:
        got = found[-1].upper()
    else:
        base = base_extract(reply)
        first = reply.strip()[:1].upper()
        got = base if base in ("A", "B", "C", "D") else first if first in ("A", "B", "C", "D") else "A"
    return (1.0 if got == str(gt).strip().upper() else 0.0), got


# --------------------------------------------------------------------------------------------- OSI-Bench

_OSI_ZERO_THRESHOLD = {"absolute_speed": 0.30, "absolute_displacement": 0.30, "trajectory_length": 2.0}


def osibench_mcq(
    reply: str, gt: Any, choices: Sequence[str] | None = None, param: str | None = None
) -> tuple[float, Any]:
    """OSI-Bench multiple choice: ``\\boxed{X}``; the first ``X.``, ``(X)``, ``X:`` (any case); the first token
    when it is a single A-D; an option's exact text; else the first token; equal to the answer, any case."""
    text = reply.strip()
    tokens = text.split()
    first_token = tokens[0] if tokens else ""
    boxed = boxed_letters(text, "A-D")
    got = boxed[0] if boxed else first_labelled_letter(text)
    if got is None and first_token.upper() in ("A", "B", "C", "D"):
        got = first_token.upper()
    got = got or option_text_letter(text, choices) or first_token
    return (1.0 if got and got.lower() == str(gt).strip().lower() else 0.0), got


def osibench_number(reply: str) -> float | None:
    """OSI-Bench's number: one inside ``\\boxed{}``; else the *first* ``[+-]?digits[.digits]``; else the first
    token as a float."""
    boxed = re.search(r"\\boxed\{\s*([+-]?\d+(?:\.\d+)?)", reply)
    if boxed:
        return float(boxed.group(1))
    match = re.search(r"[+-]?\d+(?:\.\d+)?", reply)
    if match:
        return float(match.group())
    tokens = reply.split()
    return to_float(tokens[0]) if tokens else None


def osibench_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OSI-Bench numbers (``param``: the category): MRA over the ten thresholds with ``<=`` and ``|g|``; a zero
    answer for absolute_speed or absolute_displacement (0.30) or trajectory_length (2.0) scores 1 when the
    prediction is below the threshold, else MRA against the threshold; any other zero needs an exact 0."""
    got = osibench_number(reply)
    target = to_float(gt)
    if got is None or target is None or not math.isfinite(got) or not math.isfinite(target):
        return 0.0, got
    threshold = _OSI_ZERO_THRESHOLD.get(param or "")
    if target == 0 and threshold is not None:
        return (1.0 if got < threshold else official_mra(got, threshold)), got
    if target == 0:
        return (1.0 if got == 0 else 0.0), got
    return official_mra(got, target), got


# ---------------------------------------------------------------------------------------------- registry

#: metric name -> (scorer, the template a structured answer is rendered with before scoring)
PAPER_METRICS_P2: dict[str, tuple[Callable[[str, Any, Sequence[str] | None, str | None], tuple[float, Any]], str]] = {
    "blink_paper": (blink_paper, "({})"),
    "cvbench_paper": (cvbench_paper, "{}"),
    "dsibench_paper": (dsibench_paper, "{}"),
    "erqa_paper": (erqa_paper, "{}"),
    "mindcube_paper": (mindcube_paper, "{}"),
    "mmsi_paper": (mmsi_paper, "{}"),
    "mmsivideo_paper": (mmsivideo_paper, "{}"),
    "omni3d_paper": (omni3d_paper, "{}"),
    "omnispatial_paper": (omnispatial_paper, "Answer: {}"),
    "osibench_mcq": (osibench_mcq, "{}"),
    "osibench_na": (osibench_na, "{}"),
}
