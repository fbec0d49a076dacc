"""Benchmark names to tasks: the one entry point the runner uses.

``load_benchmark("synthetic", limit=20, seed=3)``, ``load_benchmark("cv-bench")`` (from the hub),
``load_benchmark("cv-bench", source="~/data/CV-Bench")`` (a local copy), ``load_benchmark("local",
source="tasks.jsonl")`` or simply ``load_benchmark("tasks.jsonl")``; ``load_benchmark("my_bench.py")`` runs
the spec a file of yours defines, and specs from ``SPATIALCLAW_BENCHMARK_PATH`` folders and installed
packages resolve by name (:mod:`spatialclaw.benchmarks.external`). The paper's short names
(``load_benchmark("vsibench_unbiased", source=DIR)``) resolve too, through ``names.ALIASES`` or a spec's
``paper_name``. Dataset tasks carry their spec's frame policy and instruction
(:func:`~spatialclaw.benchmarks.paper_setting.apply_setting`); ``frames={"key_frames": 16}`` changes the policy.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spatialclaw.benchmarks.names import canonical_benchmark_name
from spatialclaw.task import Task

if TYPE_CHECKING:
    from spatialclaw.benchmarks.spec import BenchmarkSpec

__all__ = ["LoadedBenchmark", "benchmark_names", "benchmark_table", "find_spec", "load_benchmark"]


@dataclass
class LoadedBenchmark:
    """Tasks plus how to aggregate their scores (a rule from ``aggregation.AGGREGATORS``)."""

    name: str
    tasks: list[Task]
    aggregation: str


def benchmark_names() -> list[str]:
    """Every name :func:`load_benchmark` accepts (besides a path to a ``.jsonl`` file); any spelling that
    :func:`~spatialclaw.benchmarks.names.normalise_benchmark_name` folds to one of them works too
    (``VSI-Bench``, ``vsi_bench``)."""
    return ["synthetic", "local", *_all_specs()]


def _all_specs() -> dict[str, BenchmarkSpec]:
    """The package's specs, then those from outside it (a name the package has stays the package's)."""
    from spatialclaw.benchmarks.external import external_specs
    from spatialclaw.benchmarks.specs import SPECS

    return {**{name: spec for name, (spec, _) in external_specs().items()}, **SPECS}


def benchmark_table() -> str:
    """Every benchmark with its source (hub id or URL), splits and metric: the ``bench --list`` table; a
    benchmark from outside the package says where it came from (its file or entry point)."""
    from spatialclaw.benchmarks.external import external_specs
    from spatialclaw.benchmarks.specs import SPECS

    outside = {name: found for name, found in external_specs().items() if name not in SPECS}
    rows = [
        ("benchmark", "source", "splits", "metric"),
        ("synthetic", "generated (--seed)", "-", "accuracy and MRA on rendered scenes with exact geometry"),
        ("local", "a .jsonl task file (--source)", "-", "per task: choice, mra, exact, number_exact, yes_no"),
    ]
    rows += [(_listed(s), _source(s), ", ".join(s.all_splits), s.metric) for s in SPECS.values()]
    rows += [
        (_listed(s), _source(s), ", ".join(s.all_splits), f"{s.metric} [from {where}]") for s, where in outside.values()
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)) + "  " + row[3]
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 6)
    return "\n".join(lines) + f"\n{len(rows) - 1} benchmarks; names match in any spelling (VSI-Bench = vsi_bench)."


def _listed(spec: BenchmarkSpec) -> str:
    return spec.name + (f" ({spec.paper_name})" if spec.paper_name and spec.paper_name != spec.name else "")


def find_spec(name: str) -> BenchmarkSpec | None:
    """The spec ``name`` names: its registry name in any spelling, an alias, or a spec's ``paper_name``."""
    from spatialclaw.benchmarks.names import normalise_benchmark_name

    specs = _all_specs()
    canonical = canonical_benchmark_name(name, specs)
    if canonical is not None:
        return specs[canonical]
    wanted = {normalise_benchmark_name(name), name.strip().lower()}
    return next((s for s in specs.values() if s.paper_name and s.paper_name.lower() in wanted), None)


def _source(spec: BenchmarkSpec) -> str:
    configs = [c for c in spec.configs if c]
    where = spec.source + (f" {spec.data_files}" if spec.data_files else "")
    if len(configs) > 2:
        return f"{where} [{len(configs)} subsets]"
    return where + (f" [{', '.join(configs)}]" if configs else "")


def load_benchmark(
    name: str,
    source: str | Path | None = None,
    media_root: str | Path | None = None,
    limit: int | None = None,
    seed: int = 0,
    split: str | None = None,
    synthetic_size: int = 60,
    frames: dict[str, Any] | None = None,
    scoring: str | None = None,
    kernel_frames: str = "aspect_fit",
) -> LoadedBenchmark:
    """Load a benchmark's tasks.

    ``limit``: keep N tasks. For ``synthetic`` the seed generates the scenes and ``limit`` (default
    ``synthetic_size``) is the number generated; for datasets, a ``seed`` other than 0 shuffles the records
    with that seed before taking the first ``limit`` (seed 0 keeps the dataset's order):
    ``random.Random(seed).shuffle`` is the permutation ``random.seed(seed); random.shuffle(...)`` gives, the
    paper's ``--subsample N`` (seed 42), so specs with ``paper_order`` draw the paper's subsample. ``frames``:
    ``fps``, ``key_frames``, ``long_side`` replacing the spec's frame policy (for ``local`` and ``synthetic``
    tasks they set the shown frames per input and their size). ``scoring``: ``reference`` (the default for the
    paper's benchmarks: the text given to ``answer()`` through the benchmark's own extractor) or ``lenient``
    (structured answers rendered first; the default elsewhere). ``kernel_frames``: ``aspect_fit`` (the paper's
    benchmarks' kernels hold the paper's resized copies) or ``full`` (full resolution).
    """
    if name.endswith(".jsonl") and source is None:
        name, source = "local", name
    name = canonical_benchmark_name(name, ("synthetic", "local")) or name
    if name == "synthetic":
        from spatialclaw.benchmarks.synthetic import generate

        tasks = generate(limit or synthetic_size, seed=seed, out_dir=source)
        return LoadedBenchmark("synthetic", _scored(_policy_only(tasks, frames), scoring), "micro")
    if name == "local":
        if source is None:
            raise ValueError("the local benchmark needs --source TASKS.jsonl (see docs/benchmarks.md for the format)")
        from spatialclaw.benchmarks.data.local import load_local_tasks

        tasks = load_local_tasks(source)
        return LoadedBenchmark(
            Path(source).stem, _scored(_policy_only(_take(tasks, limit, seed), frames), scoring), "micro"
        )
    from spatialclaw.benchmarks.paper_setting import apply_setting, frame_policy
    from spatialclaw.benchmarks.spec import load_tasks

    spec = _spec_of_file(name) if name.endswith(".py") else find_spec(name)
    if spec is None:
        raise ValueError(
            f"unknown benchmark {name!r}; choose one of: {', '.join(benchmark_names())}, a .jsonl task file or a "
            ".py spec file"
        )
    policy = frame_policy(spec, **(frames or {}))
    tasks = load_tasks(spec, source=source, media_root=media_root, split=split, limit=None if seed else limit)
    chosen = apply_setting(spec, _take(tasks, limit, seed), policy, kernel_frames=kernel_frames, scoring=scoring)
    return LoadedBenchmark(spec.name, chosen, spec.aggregation)


def _spec_of_file(path: str) -> BenchmarkSpec:
    from spatialclaw.benchmarks.external import specs_in_file

    specs = specs_in_file(path)
    if len(specs) > 1:
        raise ValueError(
            f"{path} defines {len(specs)} benchmarks ({', '.join(s.name for s in specs)}); give its folder with "
            "--include-path and the name with --benchmark"
        )
    return specs[0]


def _scored(tasks: list[Task], scoring: str | None) -> list[Task]:
    """Local and synthetic tasks: ``meta["scoring"]`` when one is asked for (default: lenient)."""
    from spatialclaw.benchmarks.scoring.score import SCORINGS

    if scoring is not None:
        if scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}; got {scoring!r}")
        for task in tasks:
            task.meta["scoring"] = scoring
    return tasks


def _policy_only(tasks: list[Task], frames: dict[str, Any] | None) -> list[Task]:
    """Local and synthetic tasks: the given frame settings only (none given: the agent's defaults)."""
    if not frames:
        return tasks
    unknown = set(frames) - {"fps", "key_frames", "long_side"}
    if unknown:
        raise ValueError(f"unknown frame setting(s) {sorted(unknown)}; use fps, key_frames, long_side")
    for task in tasks:
        if frames.get("key_frames") is not None:
            task.meta["key_frames"] = int(frames["key_frames"])
        if frames.get("long_side") is not None:
            task.meta["frame_long_side"] = int(frames["long_side"])
        if frames.get("fps") is not None:
            task.meta["frame_fps"] = float(frames["fps"])
            task.inputs = [
                replace(f, fps=float(frames["fps"])) if f.kind == "video" and not (f.count or f.indices) else f
                for f in task.inputs
            ]
    return tasks


def _take(tasks: list[Task], limit: int | None, seed: int) -> list[Task]:
    if seed:
        tasks = list(tasks)
        random.Random(seed).shuffle(tasks)
    return tasks[:limit] if limit is not None else tasks
