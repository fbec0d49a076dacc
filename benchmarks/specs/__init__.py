"""One small declarative spec per public benchmark; :data:`SPECS` maps each name to its spec.

Record layouts follow each dataset's published card on the Hugging Face hub; the test fixtures in
``tests/fixtures/benchmarks/`` are written in those layouts.
"""

from __future__ import annotations

from spatialclaw.benchmarks.spec import BenchmarkSpec
from spatialclaw.benchmarks.specs import (
    blink,
    cv_bench,
    erqa,
    mindcube,
    mmsi_bench,
    omnispatial,
    spar_bench,
    threedsr_bench,
    viewspatial_bench,
    vsi_bench,
)

__all__ = ["SPECS"]

SPECS: dict[str, BenchmarkSpec] = {
    module.SPEC.name: module.SPEC
    for module in (
        vsi_bench,
        mmsi_bench,
        mindcube,
        blink,
        cv_bench,
        erqa,
        spar_bench,
        viewspatial_bench,
        omnispatial,
        threedsr_bench,
    )
}
