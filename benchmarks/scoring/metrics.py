"""Each benchmark's official per-question scoring, reproduced: the metric registry and structured answers.

Every scorer (in :mod:`~spatialclaw.benchmarks.official_mcq`, :mod:`~spatialclaw.benchmarks.official_mcq_parsers`
and :mod:`~spatialclaw.benchmarks.official_numeric`, registered here in :data:`OFFICIAL_METRICS`) re-implements
(in our own code) what one benchmark's published evaluation code does to one model reply: answer extraction,
case rules and comparison; the module docstring of each benchmark spec and ``tests/test_scoring.py`` cite the
repository and file. The goldens in the tests were derived by tracing that code on each input.

Structured answers
    Our agent submits its answer through ``answer(...)``, not as free text. Before the official extraction
    runs, :func:`render_structured` turns a *structured* answer (a bare option letter such as ``"B"`` or
    ``"(b)"``, the exact text of one option, or a plain number) into the reply the official prompt asks
    for (``"<answer>B</answer>"`` for DSI-Bench, ``"Answer: B"`` for OmniSpatial, ...). Anything else is
    free text and goes through the official extraction unchanged, quirks included (for example Video-MME
    reads the first capital A-D anywhere, so ``"Definitely B"`` counts as D).

Deviations (each also stated where it applies): a zero ground truth is scored by our documented policy
(the official VSI-Bench code divides by it and crashes); where the official code draws a random option
when it finds none (PerceptionComp, SpatialTree-Bench), we score the reply as wrong instead.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from typing import Any

from spatialclaw.benchmarks.official_common import option_text, to_float
from spatialclaw.benchmarks.official_mcq import (
    cv_letter,
    dsi_choice,
    mmsi_choice,
    mmsi_video_choice,
    omnispatial_choice,
    pai_choice,
    spar_mca,
    videomme_choice,
    videomme_v2_choice,
    viewspatial_choice,
    vsi_mca,
)
from spatialclaw.benchmarks.official_mcq_parsers import (
    erqa_choice,
    mindcube_choice,
    perceptioncomp_choice,
    spatialtree_choice,
    vlmeval_choice,
)
from spatialclaw.benchmarks.official_numeric import omni3d_score, osi_na, spar_na, spar_vci, spatialtree_mra, vsi_na
from spatialclaw.benchmarks.official_paper_p2_more import PAPER_METRICS_P2
from spatialclaw.benchmarks.official_paper_p3_metrics import P3_METRICS

__all__ = [
    "OFFICIAL_METRICS",
    "render_structured",
    "structured_letter",
]


# ------------------------------------------------------------------------------------- structured answers

_BARE_LETTER = re.compile(r"\s*\(?\s*([A-Za-z])\s*\)?\s*\.?\s*")


def _squash(text: str) -> str:
    return re.sub(r"[^\w]+", " ", str(text).lower()).strip()


def structured_letter(answer: Any, choices: Sequence[str] | None) -> str | None:
    """The option letter a *structured* answer names: a bare letter (``"B"``, ``"(b)"``, ``"B."``), a
    0-based int index, or exactly one option's text (case and punctuation ignored). None for free text."""
    if isinstance(answer, bool) or answer is None:
        return None
    if isinstance(answer, int) and choices:
        return chr(ord("A") + answer) if 0 <= answer < len(choices) else None
    text = str(answer)
    bare = _BARE_LETTER.fullmatch(text)
    if bare:
        return bare.group(1).upper()
    if choices:
        wanted = _squash(text)
        same = [i for i, option in enumerate(choices) if wanted and _squash(option_text(option)) == wanted]
        if len(same) == 1:
            return chr(ord("A") + same[0])
    return None


def render_structured(answer: Any, choices: Sequence[str] | None, template: str = "{}") -> str:
    """The reply text to run the official extraction on: a structured letter or number rendered with the
    benchmark's response ``template`` (``"<answer>{}</answer>"``), free text as it is, None as ``""``."""
    if answer is None:
        return ""
    letter = structured_letter(answer, choices) if choices else None
    if letter is not None:
        return template.format(letter)
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return template.format(_number_text(float(answer)))
    if not choices and to_float(str(answer).strip()) is not None:
        return template.format(str(answer).strip())
    return str(answer)


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


# --------------------------------------------------------------------------------------- metric registry
# Each scorer: (reply text, ground truth, choices, parameter) -> (score in [0, 1], what was extracted).

Scorer = Callable[[str, Any, Sequence[str] | None, str | None], tuple[float, Any]]


#: metric name -> (scorer, the response template a structured answer is rendered with)
OFFICIAL_METRICS: dict[str, tuple[Scorer, str]] = {
    "vsi_mca": (vsi_mca, "{}"),
    "vsi_na": (vsi_na, "{}"),
    "cv_letter": (cv_letter, "{}"),
    "mmsi_choice": (mmsi_choice, "{}"),
    "mindcube_choice": (mindcube_choice, "{}"),
    "viewspatial_choice": (viewspatial_choice, "{}"),
    "omnispatial_choice": (omnispatial_choice, "Answer: {}"),
    "erqa_choice": (erqa_choice, "{}"),
    "perceptioncomp_choice": (perceptioncomp_choice, "{}"),
    "spatialtree_choice": (spatialtree_choice, "answer: {}"),
    "spatialtree_mra": (spatialtree_mra, "{}"),
    "videomme_choice": (videomme_choice, "{}"),
    "videomme_v2_choice": (videomme_v2_choice, "{}"),
    "dsi_choice": (dsi_choice, "<answer>{}</answer>"),
    "mmsi_video_choice": (mmsi_video_choice, "{}"),
    "pai_choice": (pai_choice, "<answer>{}</answer>"),
    "omni3d": (omni3d_score, "<ans>{}</ans>"),
    "spar_mca": (spar_mca, "{}"),
    "spar_na": (spar_na, "{}"),
    "spar_vci": (spar_vci, "{}"),
    "osi_na": (osi_na, "{}"),
    "vlmeval_choice": (vlmeval_choice, "{}"),
    **PAPER_METRICS_P2,
    **P3_METRICS,
}


def parse_metric(metric: str) -> tuple[str, str | None]:
    """``"spar_na:depth_prediction_oc_mv"`` -> ``("spar_na", "depth_prediction_oc_mv")``."""
    name, _, param = metric.partition(":")
    return name, (param or None)


def literal(value: Any) -> Any:
    """A Python literal stored as text (``"[1, 2, 3, 4]"``), else the value."""
    if isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value
