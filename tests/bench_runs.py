"""Benchmark runs against the scripted model for tests in any folder: a run's configuration, its ``bench``
command line, and the rows it wrote."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from spatialclaw.runner import RunConfig


def synthetic_run(url: str, out: Path, **settings: Any) -> RunConfig:
    """A run of the synthetic benchmark, answered by the scripted model served at ``url``, writing ``out``, with
    no progress bar; ``settings`` are the rest of its configuration."""
    return RunConfig(benchmark="synthetic", model=f"openai-compat:scripted@{url}", out=out, progress=False, **settings)


def bench_command(url: str, run: Path, *options: str) -> list[str]:
    """``spatialclaw bench`` of the synthetic benchmark as its own process, answered by the scripted model served
    at ``url``, writing ``run``, with no progress bar, plus ``options``."""
    return [
        *(sys.executable, "-m", "spatialclaw.cli", "bench", "--benchmark", "synthetic"),
        *("--model", f"openai-compat:scripted@{url}", "--out", str(run), "--no-progress"),
        *options,
    ]


def results_rows(run: Path) -> list[dict]:
    """The rows of ``run``'s results.jsonl, in file order (none before the first is written)."""
    path = run / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
