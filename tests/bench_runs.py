"""Benchmark runs against the scripted model for tests in any folder: a run's configuration, its ``bench``
command line, and the rows it wrote."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from spatialclaw.runner import RunConfig

#: The agent settings of a quiet test run: no fsync per write, no VLM side channel, one preview image.
QUIET_AGENT = {"fsync": False, "vlm_side_channel": False, "preview_images": 1}
#: The same settings as ``bench`` command-line options.
QUIET_AGENT_OPTIONS = [
    option for name, value in QUIET_AGENT.items() for option in ("--agent-option", f"{name}={value}".lower())
]


def synthetic_run(url: str, out: Path, **settings: Any) -> RunConfig:
    """A run of the synthetic benchmark, answered by the scripted model served at ``url``, writing ``out``, with
    no progress bar; ``settings`` are the rest of its configuration."""
    return RunConfig(benchmark="synthetic", model=f"openai-compat:scripted@{url}", out=out, progress=False, **settings)


def quiet_run(
    url: str,
    out: Path,
    *,
    agent: dict[str, Any] | None = None,
    model_options: dict[str, Any] | None = None,
    **settings: Any,
) -> RunConfig:
    """:func:`synthetic_run` with one model attempt (no retries) and the :data:`QUIET_AGENT`; ``agent`` and
    ``model_options`` entries are added to (or replace) those, ``settings`` are the rest of the configuration."""
    return synthetic_run(
        url,
        out,
        model_options={"max_attempts": 1, **(model_options or {})},
        agent={**QUIET_AGENT, **(agent or {})},
        **settings,
    )


def one_task_run(url: str, out: Path, **settings: Any) -> RunConfig:
    """:func:`quiet_run` of the synthetic benchmark's first task (seed 3, one worker)."""
    return quiet_run(url, out, limit=1, seed=3, workers=1, **settings)


def bench_command(url: str, run: Path, *options: str) -> list[str]:
    """``spatialclaw bench`` of the synthetic benchmark as its own process, answered by the scripted model served
    at ``url``, writing ``run``, with no progress bar, plus ``options``."""
    return [
        *(sys.executable, "-m", "spatialclaw.cli", "bench", "--benchmark", "synthetic"),
        *("--model", f"openai-compat:scripted@{url}", "--out", str(run), "--no-progress"),
        *options,
    ]


def one_task_bench_args(model: str, out: Path, *options: str) -> list[str]:
    """The arguments of ``spatialclaw bench`` running the synthetic benchmark's first task with ``model``,
    writing ``out``, plus ``options``."""
    return ["bench", "--benchmark", "synthetic", "--limit", "1", "--model", model, "--out", str(out), *options]


def results_rows(run: Path) -> list[dict]:
    """The rows of ``run``'s results.jsonl, in file order (none before the first is written)."""
    path = run / "results.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
