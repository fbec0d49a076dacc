"""Benchmark names to tasks: the one entry point the runner uses.

``load_benchmark("synthetic", limit=20, seed=3)``, ``load_benchmark("cv-bench")`` (from the hub),
``load_benchmark("cv-bench", source="~/data/CV-Bench")`` (a local copy), ``load_benchmark("local",
source="tasks.jsonl")`` or simply ``load_benchmark("tasks.jsonl")``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from spatialclaw.benchmarks.names import canonical_benchmark_name
from spatialclaw.task import Task

if TYPE_CHECKING:
    from spatialclaw.benchmarks.spec import BenchmarkSpec

__all__ = ["LoadedBenchmark", "benchmark_names", "benchmark_table", "load_benchmark"]


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
    from spatialclaw.benchmarks.specs import SPECS

    return ["synthetic", "local", *SPECS]


def benchmark_table() -> str:
    """Every benchmark with its source (hub id or URL), splits and metric: the ``bench --list`` table."""
    from spatialclaw.benchmarks.specs import SPECS

    rows = [
        ("benchmark", "source", "splits", "metric"),
        ("synthetic", "generated (--seed)", "-", "accuracy and MRA on rendered scenes with exact geometry"),
        ("local", "a .jsonl task file (--source)", "-", "per task: choice, mra, exact, number_exact, yes_no"),
    ]
    rows += [(s.name, _source(s), ", ".join(s.all_splits), s.metric) for s in SPECS.values()]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)) + "  " + row[3]
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 6)
    return "\n".join(lines) + f"\n{len(rows) - 1} benchmarks; names match in any spelling (VSI-Bench = vsi_bench)."


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
) -> LoadedBenchmark:
    """Load a benchmark's tasks.

    ``limit``: keep N tasks. For ``synthetic`` the seed generates the scenes and ``limit`` (default
    ``synthetic_size``) is the number generated; for datasets, a ``seed`` other than 0 shuffles the records
    with that seed before taking the first ``limit`` (seed 0 keeps the dataset's order).
    """
    if name.endswith(".jsonl") and source is None:
        name, source = "local", name
    name = canonical_benchmark_name(name, ("synthetic", "local")) or name
    if name == "synthetic":
        from spatialclaw.benchmarks.synthetic import generate

        return LoadedBenchmark("synthetic", generate(limit or synthetic_size, seed=seed, out_dir=source), "micro")
    if name == "local":
        if source is None:
            raise ValueError("the local benchmark needs --source TASKS.jsonl (see docs/benchmarks.md for the format)")
        from spatialclaw.benchmarks.local import load_local_tasks

        tasks = load_local_tasks(source)
        return LoadedBenchmark(Path(source).stem, _take(tasks, limit, seed), "micro")
    from spatialclaw.benchmarks.spec import load_tasks
    from spatialclaw.benchmarks.specs import SPECS

    canonical = canonical_benchmark_name(name, SPECS)
    spec = SPECS.get(canonical) if canonical else None
    if spec is None:
        raise ValueError(f"unknown benchmark {name!r}; choose one of: {', '.join(benchmark_names())}, or a .jsonl file")
    tasks = load_tasks(spec, source=source, media_root=media_root, split=split, limit=None if seed else limit)
    return LoadedBenchmark(spec.name, _take(tasks, limit, seed), spec.aggregation)


def _take(tasks: list[Task], limit: int | None, seed: int) -> list[Task]:
    if seed:
        tasks = list(tasks)
        random.Random(seed).shuffle(tasks)
    return tasks[:limit] if limit is not None else tasks
