"""The metric registry: each metric name a benchmark's tasks carry, its scorer, and how a structured answer is
rendered before that scorer reads it.

Every scorer re-implements (in our own code) what one benchmark's published evaluation, or the paper's
evaluation of it, does to one model reply: answer extraction, case rules and comparison. Each lives in its
benchmark's module under :mod:`spatialclaw.benchmarks.specs`, whose docstring cites the repository and file;
the steps several benchmarks share are in :mod:`spatialclaw.benchmarks.scoring.letters` and
:mod:`spatialclaw.benchmarks.scoring.numbers`. The goldens in the tests were derived by tracing that code on
each input.

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

import re
from collections.abc import Callable, Sequence
from typing import Any

from spatialclaw.benchmarks.scoring.letters import option_text
from spatialclaw.benchmarks.scoring.numbers import to_float
from spatialclaw.benchmarks.specs import (
    blink,
    cross_video_bench,
    cv_bench,
    dsi_bench,
    erqa,
    mindcube,
    mmsi_bench,
    mmsi_video_bench,
    omni3d_bench,
    omnispatial,
    osi_bench,
    pai_bench,
    perceptioncomp,
    spar_bench,
    spatialtree_bench,
    spbench,
    threedsr_bench,
    video_mme,
    video_mme_v2,
    viewspatial_bench,
    vsi_bench,
    vsi_bench_debiased,
    vsti_bench,
)

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
    "vsi_mca": (vsi_bench.vsi_mca, "{}"),
    "vsi_na": (vsi_bench.vsi_na, "{}"),
    "cv_letter": (cv_bench.cv_letter, "{}"),
    "mmsi_choice": (mmsi_bench.mmsi_choice, "{}"),
    "mindcube_choice": (mindcube.mindcube_choice, "{}"),
    "viewspatial_choice": (viewspatial_bench.viewspatial_choice, "{}"),
    "omnispatial_choice": (omnispatial.omnispatial_choice, "Answer: {}"),
    "erqa_choice": (erqa.erqa_choice, "{}"),
    "perceptioncomp_choice": (perceptioncomp.perceptioncomp_choice, "{}"),
    "spatialtree_choice": (spatialtree_bench.spatialtree_choice, "answer: {}"),
    "spatialtree_mra": (spatialtree_bench.spatialtree_mra, "{}"),
    "videomme_choice": (video_mme.videomme_choice, "{}"),
    "videomme_v2_choice": (video_mme_v2.videomme_v2_choice, "{}"),
    "dsi_choice": (dsi_bench.dsi_choice, "<answer>{}</answer>"),
    "mmsi_video_choice": (mmsi_video_bench.mmsi_video_choice, "{}"),
    "pai_choice": (pai_bench.pai_choice, "<answer>{}</answer>"),
    "omni3d": (omni3d_bench.omni3d_score, "<ans>{}</ans>"),
    "spar_mca": (spar_bench.spar_mca, "{}"),
    "spar_na": (spar_bench.spar_na, "{}"),
    "spar_vci": (spar_bench.spar_vci, "{}"),
    "osi_na": (osi_bench.osi_na, "{}"),
    "vlmeval_choice": (threedsr_bench.vlmeval_choice, "{}"),
    "blink_paper": (blink.blink_paper, "({})"),
    "cvbench_paper": (cross_video_bench.cvbench_paper, "{}"),
    "dsibench_paper": (dsi_bench.dsibench_paper, "{}"),
    "erqa_paper": (erqa.erqa_paper, "{}"),
    "mindcube_paper": (mindcube.mindcube_paper, "{}"),
    "mmsi_paper": (mmsi_bench.mmsi_paper, "{}"),
    "mmsivideo_paper": (mmsi_video_bench.mmsivideo_paper, "{}"),
    "omni3d_paper": (omni3d_bench.omni3d_paper, "{}"),
    "omnispatial_paper": (omnispatial.omnispatial_paper, "Answer: {}"),
    "osibench_mcq": (osi_bench.osibench_mcq, "{}"),
    "osibench_na": (osi_bench.osibench_na, "{}"),
    "pai_paper": (pai_bench.pai_paper_choice, "{}"),
    "perceptioncomp_paper": (perceptioncomp.perceptioncomp_paper_choice, "{}"),
    "spar_paper_mca": (spar_bench.spar_paper_mca, "{}"),
    "spar_paper_na": (spar_bench.spar_paper_na, "{}"),
    "spar_paper_vci": (spar_bench.spar_paper_vci, "{}"),
    "spatialtree_paper": (spatialtree_bench.spatialtree_paper, "{}"),
    "spbench_mca": (vsi_bench_debiased.vsi_paper_mca, "{}"),
    "spbench_na": (spbench.spbench_paper_na, "{}"),
    "spbench_other": (spbench.unscored_type, "{}"),
    "videomme_paper": (video_mme.videomme_paper_choice, "{}"),
    "videommev2_paper": (video_mme_v2.videommev2_paper_choice, "{}"),
    "viewspatial_paper": (viewspatial_bench.viewspatial_paper_choice, "{}"),
    "vsi_paper_mca": (vsi_bench_debiased.vsi_paper_mca, "{}"),
    "vsi_paper_na": (vsi_bench_debiased.vsi_paper_na, "{}"),
    "vsti_na": (vsti_bench.vsti_paper_na, "{}"),
}


def parse_metric(metric: str) -> tuple[str, str | None]:
    """``"spar_na:depth_prediction_oc_mv"`` -> ``("spar_na", "depth_prediction_oc_mv")``."""
    name, _, param = metric.partition(":")
    return name, (param or None)
