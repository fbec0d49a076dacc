"""Benchmark names: one comparison form everywhere (registry, scoring, report, export filters).

``VSI-Bench``, ``vsi-bench``, ``vsi_bench`` and ``vsi bench`` are one benchmark: :func:`normalise_benchmark_name`
gives the form names are compared in, :func:`canonical_benchmark_name` the registry's own spelling. The paper's
short names (``mmsi``, ``vsibench_unbiased``, ...) fold to ours; ``cvbench`` is the cross-video CVBench and
``CV-Bench`` (``cambrian_cvbench``) the single-image one, registered as ``cv-bench-2d3d``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["ALIASES", "PAPER_NAMES", "canonical_benchmark_name", "normalise_benchmark_name"]

#: Other spellings in use for some benchmarks (papers, lmms-eval task names), in comparison form.
ALIASES = {
    "threedsrbench": "3dsrbench",
    "3dsr": "3dsrbench",
    "vsi_debiased": "vsi_bench_debiased",
    "vsibench_debiased": "vsi_bench_debiased",
    "perceptcomp": "perceptioncomp",
    "videomme": "video_mme",
    "videomme_v2": "video_mme_v2",
    "mmsi_video": "mmsi_video_bench",
    "spatialtreebench": "spatialtree_bench",
    "spatialtree": "spatialtree_bench",
    "omni3d": "omni3d_bench",
    "omni3dbench": "omni3d_bench",
    "vstibench": "vsti_bench",
    "vsibench": "vsi_bench",
    "dsibench": "dsi_bench",
    "osibench": "osi_bench",
    "paibench": "pai_bench",
    "sparbench": "spar_bench",
    "mmsibench": "mmsi_bench",
    "cv_bench": "cv_bench_2d3d",  # nyu-visionx/CV-Bench (Cambrian's single-image CV-Bench)
    "cambrian_cvbench": "cv_bench_2d3d",
    "cv_bench_single_image": "cv_bench_2d3d",
    "viewspatial": "viewspatial_bench",
    "sp_bench_si": "spbench_si",
    "sp_bench_mv": "spbench_mv",
    # the paper's short names (its run.py --benchmark values) not already the names above fold to
    "mmsi": "mmsi_bench",
    "mmsivideo": "mmsi_video_bench",
    "videommev2": "video_mme_v2",
    "vsibench_unbiased": "vsi_bench_debiased",
    "vsi_bench_unbiased": "vsi_bench_debiased",
    "sp_bench": "spbench",
}

#: The paper's 20 benchmark short names, in its order (``blink`` ... ``vstibench``); a spec whose
#: ``paper_name`` is one of them belongs to ``bench --suite paper``.
PAPER_NAMES = (
    "blink",
    "cvbench",
    "dsibench",
    "erqa",
    "mindcube",
    "mmsi",
    "mmsivideo",
    "omni3d",
    "omnispatial",
    "osibench",
    "paibench",
    "perceptioncomp",
    "sparbench",
    "spatialtree",
    "spbench",
    "videomme",
    "videommev2",
    "viewspatial",
    "vsibench_unbiased",
    "vstibench",
)


def normalise_benchmark_name(name: str | None) -> str:
    """A benchmark name in the form names are compared in: lower case, runs of ``-``, ``_``, ``.`` and
    spaces as one ``_``, known alternative spellings folded (``VSI-Bench`` and ``vsi_bench`` give
    ``vsi_bench``, ``3DSRBench`` and ``ThreeDSRBench`` give ``3dsrbench``); ``""`` for no name."""
    key = re.sub(r"[\s.\-_]+", "_", (name or "").strip().lower()).strip("_")
    return ALIASES.get(key, key)


def canonical_benchmark_name(name: str, known: Iterable[str]) -> str | None:
    """The name among ``known`` that ``name`` normalises to the same form as, or None."""
    wanted = normalise_benchmark_name(name)
    return next((k for k in known if normalise_benchmark_name(k) == wanted), None)
