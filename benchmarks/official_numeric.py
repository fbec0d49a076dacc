"""Official numeric scorers: VSI-Bench and SpatialTree-Bench MRA, Omni3D-Bench by answer type, SPAR-Bench
numbers and view changes, OSI-Bench numbers.

Each scorer: (reply text, ground truth, choices, parameter) -> (score in [0, 1], what was extracted).
Deviation: a zero ground truth is scored by our documented policy (the official VSI-Bench code divides by
it and crashes; see :mod:`spatialclaw.benchmarks.official`).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from spatialclaw.benchmarks.official_common import VSI_CONFIDENCE, official_mra, to_float, vsi_fuzzy

__all__ = [
    "OMNI3D_TOLERANCES",
    "first_number",
    "omni3d_score",
    "osi_na",
    "spar_na",
    "spar_number",
    "spar_vci",
    "spatialtree_mra",
    "spatialtree_number",
    "vsi_na",
]


def vsi_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench numbers: ``float()`` of the first token (so ``"3.5 m"`` reads 3.5, ``"about 3"`` nothing),
    then the official MRA."""
    got = to_float(vsi_fuzzy(reply))
    return _mra_or_zero_policy(got, float(gt)), got


def _mra_or_zero_policy(pred: float | None, gt: float) -> float:
    if gt == 0.0:
        return 1.0 if pred is not None and abs(pred) <= 1e-9 else 0.0
    return official_mra(pred, gt)


def spatialtree_number(text: str) -> str:
    """SpatialTree-Bench ``find_number``: the first number outside coordinate pairs such as ``(1, 2)``;
    as upstream, commas are dropped before the pair patterns run, so a written pair is not recognised."""
    text = text.replace(",", "")
    stripped = text
    for pattern in (
        r"\(\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\)",
        r"\[\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\]",
        r"\{\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\}",
        r"\b-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\b",
    ):
        stripped = re.sub(pattern, "", stripped)
    match = re.search(r"-?\d+\.?\d*", stripped)
    if match:
        return match.group()
    every = list(re.finditer(r"-?\d+\.?\d*", text))
    return every[0].group() if every else ""


def spatialtree_mra(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SpatialTree-Bench ``meanrelativeacc``: :func:`spatialtree_number`, then the VSI-Bench MRA (a reply
    without a number raises in the official code, which scores 0)."""
    got = to_float(spatialtree_number(reply))
    return _mra_or_zero_policy(got, float(gt)), got


def _omni3d_reply(reply: str) -> str:
    return reply.split("<ans>")[1].split("</ans>")[0] if "<ans>" in reply else reply


#: VLMEvalKit's Omni3D-Bench tolerances, compared with a strict ``<`` (unlike VSI-Bench's ``<=``).
OMNI3D_TOLERANCES = (0.5, 0.45, 0.40, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05)


def omni3d_score(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Omni3D-Bench (VLMEvalKit ``Omni3DBench_acc``) by ``answer_type`` (``param``): ``int`` counts by
    ``int()`` equality; ``str`` yes/no when the reply (lower-cased) contains the answer or true/false;
    other ``str`` answers by exact equality with the lower-cased reply; ``float`` by the share of
    tolerances t with ``|gt - pred| / gt < t``."""
    pred = _omni3d_reply(reply)
    if param == "int":
        try:
            return (1.0 if int(pred) == int(gt) else 0.0), int(pred)
        except (TypeError, ValueError):
            return 0.0, None
    if param == "float":
        value = to_float(pred)
        if value is None:
            return 0.0, None
        target = float(gt)
        hits = [abs(target - value) / target < t for t in OMNI3D_TOLERANCES] if target else [value == 0] * 10
        return sum(hits) / len(OMNI3D_TOLERANCES), value
    answer = str(gt)
    low = pred.lower()
    if answer in ("yes", "no"):
        right = answer in low or (answer == "yes" and "true" in low) or (answer == "no" and "false" in low)
        return (1.0 if right else 0.0), pred
    return (1.0 if answer == low else 0.0), pred


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


_OSI_ZERO_THRESHOLD = {"absolute_speed": 0.30, "absolute_displacement": 0.30, "trajectory_length": 2.0}


def first_number(text: str) -> float | None:
    match = re.search(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text.replace(",", ""))
    return float(match.group()) if match else None


def osi_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OSI-Bench numbers (VLMEvalKit ``_apply_osi_na_mra``; ``param`` is the category): VSI-Bench MRA; a
    zero answer for speed, displacement or trajectory length counts when the prediction is below the
    category's threshold (else MRA against the threshold), any other zero answer only when exact. The
    number is the reply's first number (EASI's extraction step was not available offline)."""
    got = first_number(reply)
    target = to_float(gt)
    if got is None or target is None or math.isnan(got) or math.isnan(target):
        return 0.0, got
    threshold = _OSI_ZERO_THRESHOLD.get(param or "")
    if threshold is not None and target == 0:
        return (1.0 if got < threshold else official_mra(got, threshold)), got
    if target == 0:
        return (1.0 if got == 0 else 0.0), got
    return official_mra(got, target), got
