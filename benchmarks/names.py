"""Benchmark names: one comparison form everywhere (registry, scoring, report, export filters).

``VSI-Bench``, ``vsi-bench``, ``vsi_bench`` and ``vsi bench`` are one benchmark: :func:`normalise_benchmark_name`
gives the form names are compared in, :func:`canonical_benchmark_name` the registry's own spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["canonical_benchmark_name", "normalise_benchmark_name"]

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
    "cvbench": "cv_bench",
    "viewspatial": "viewspatial_bench",
    "sp_bench_si": "spbench_si",
    "sp_bench_mv": "spbench_mv",
}


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
