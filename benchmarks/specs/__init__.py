"""One small declarative spec per public benchmark; :data:`SPECS` maps each name to its spec.

Record layouts follow each dataset's published card on the Hugging Face hub; the test fixtures in
``tests/fixtures/benchmarks/`` are written in those layouts.
"""

from __future__ import annotations

from spatialclaw.benchmarks.spec import BenchmarkSpec
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

__all__ = ["SPECS"]

SPECS: dict[str, BenchmarkSpec] = {
    spec.name: spec
    for spec in (
        vsi_bench.SPEC,
        vsi_bench_debiased.SPEC,
        mmsi_bench.SPEC,
        mindcube.SPEC,
        blink.SPEC,
        cv_bench.SPEC,
        cross_video_bench.SPEC,
        erqa.SPEC,
        spar_bench.SPEC,
        viewspatial_bench.SPEC,
        omnispatial.SPEC,
        threedsr_bench.SPEC,
        dsi_bench.SPEC,
        osi_bench.SPEC,
        pai_bench.SPEC,
        perceptioncomp.SPEC,
        spatialtree_bench.SPEC,
        spbench.SPEC,
        spbench.SPEC_SI,
        spbench.SPEC_MV,
        video_mme.SPEC,
        video_mme_v2.SPEC,
        vsti_bench.SPEC,
        mmsi_video_bench.SPEC,
        omni3d_bench.SPEC,
    )
}
