"""The metric names of the paper-setting scorers for PAI-Bench .. VSTI-Bench, merged into ``OFFICIAL_METRICS``.

Each entry: metric name -> (scorer, the template a structured answer is rendered with). The adapters in
:mod:`spatialclaw.benchmarks.specs` name these in ``task.meta["metric"]`` (``"name:parameter"`` where the
scorer takes one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from spatialclaw.benchmarks.official_common import vsi_fuzzy
from spatialclaw.benchmarks.official_paper_p3 import (
    pai_paper_choice,
    perceptioncomp_paper_choice,
    spar_paper_mca,
    videomme_paper_choice,
    videommev2_paper_choice,
    viewspatial_paper_choice,
    vsi_paper_mca,
)
from spatialclaw.benchmarks.official_paper_p3_numeric import (
    spar_paper_na,
    spar_paper_vci,
    spatialtree_paper,
    spbench_paper_na,
    vsi_paper_na,
    vsti_paper_na,
)

__all__ = ["P3_METRICS"]


def unscored_type(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """A question type the paper's scorer does not know (SPBench): always 0."""
    return 0.0, vsi_fuzzy(reply)


P3_METRICS: dict[str, tuple[Callable[[str, Any, Sequence[str] | None, str | None], tuple[float, Any]], str]] = {
    "pai_paper": (pai_paper_choice, "{}"),
    "perceptioncomp_paper": (perceptioncomp_paper_choice, "{}"),
    "spar_paper_mca": (spar_paper_mca, "{}"),
    "spar_paper_na": (spar_paper_na, "{}"),
    "spar_paper_vci": (spar_paper_vci, "{}"),
    "spatialtree_paper": (spatialtree_paper, "{}"),
    "spbench_mca": (vsi_paper_mca, "{}"),
    "spbench_na": (spbench_paper_na, "{}"),
    "spbench_other": (unscored_type, "{}"),
    "videomme_paper": (videomme_paper_choice, "{}"),
    "videommev2_paper": (videommev2_paper_choice, "{}"),
    "viewspatial_paper": (viewspatial_paper_choice, "{}"),
    "vsi_paper_mca": (vsi_paper_mca, "{}"),
    "vsi_paper_na": (vsi_paper_na, "{}"),
    "vsti_na": (vsti_paper_na, "{}"),
}
