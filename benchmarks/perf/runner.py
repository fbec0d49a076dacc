"""Benchmark-runner throughput and overhead: synthetic episodes with instant model replies.

Run: ``.venv/bin/python benchmarks/perf/runner.py [--episodes 200] [--workers 1 2 4]``.

The model is the OpenAI-compatible backend (real ``openai`` SDK, real HTTP) talking to
:class:`spatialclaw.testing.ScriptedProvider`, which answers every request at once with a one-line cell
``answer(...)``; every episode is a real agent episode in a real kernel (one step). Measured:

- ``baseline``: the same episodes in a bare loop, one :class:`~spatialclaw.agent.loop.Agent` and one kernel
  (its start timed, as the runner's is), no runner (no run directory, no results file, no pool, no
  scoring, no threads);
- ``runner`` at each worker count: ``spatialclaw.runner.run_benchmark`` on the same tasks into a fresh
  run directory (manifest, task list, fsync'd result rows, scoring, score events, progress off).

Figures: episodes per second per setting; ``idle_ms_per_episode`` at each worker count = (wall time x
workers - time spent inside episodes) / episodes, the time worker slots spend outside episodes
(dispatch, pool, scoring, result writes; with more workers than cores it also counts waiting for a
core). ``runner_overhead_ms_per_episode`` = the runner's idle time per episode at 1 worker minus the bare
loop's (both include the kernel start, amortised): the runner's own cost, measured the same way for both
in the same process, so it is robust to the machine getting busier or quieter. ``wall_overhead_ms_per_episode``
compares whole wall times instead (runner at 1 worker minus the bare loop, which runs first and last and
is averaged); ``baseline_spread`` says how far its two runs differ, and on a shared machine the wall
figure means little when the spread is large.

Prints a table, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from spatialclaw import Kernel, jsonl
from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.benchmarks.synthetic import generate
from spatialclaw.models import load_model
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.task import Task
from spatialclaw.testing import ScriptedProvider

ANSWER_CELL = "```python\nanswer('B' if meta['choices'] else 2)\n```"
AGENT: dict[str, Any] = {"fsync": False, "vlm_side_channel": False, "preview_images": 1}


def baseline(tasks: list[Task], url: str, root: Path) -> tuple[float, float]:
    """Wall time of the bare loop, and the time inside the episodes (seconds)."""
    model = load_model(f"openai-compat:scripted@{url}", api_key="perf")
    agent = Agent(model, AgentConfig(**AGENT))
    started = time.perf_counter()
    kernel = Kernel()  # timed: a run starts its kernels too
    try:
        inside = 0.0
        for number, task in enumerate(tasks):
            result = agent.run(task, root / f"episode-{number}", kernel=kernel)
            assert result.status == "answered", result.error
            inside += result.duration_s
        return time.perf_counter() - started, inside
    finally:
        kernel.shutdown()
        model.close()


def runner(episodes: int, workers: int, url: str, root: Path) -> tuple[float, float]:
    """Wall time of ``run_benchmark`` and the summed episode durations (seconds)."""
    out = root / f"run-{workers}"
    config = RunConfig(
        benchmark="synthetic",
        model=f"openai-compat:scripted@{url}",
        out=out,
        limit=episodes,
        seed=0,
        workers=workers,
        progress=False,
        agent=AGENT,
        model_options={"api_key": "perf"},
    )
    started = time.perf_counter()
    summary = run_benchmark(config)
    wall = time.perf_counter() - started
    assert summary.statuses == {"ok": episodes}, summary.statuses
    rows = jsonl.read(out / "results.jsonl").records
    return wall, sum(r["duration_s"] for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ.setdefault("SPATIALCLAW_CACHE", str(root / "cache"))
        tasks = generate(args.episodes, seed=0)  # rendered once; the runner reuses the cached images
        with ScriptedProvider(lambda request, index: ANSWER_CELL) as server:
            # The baseline runs before and after the runner settings; their mean is the reference, so a
            # machine that gets busier or quieter during the script does not pass for runner overhead.
            before = baseline(tasks, server.url, root / "baseline-before")
            results = {workers: runner(args.episodes, workers, server.url, root) for workers in args.workers}
            after = baseline(tasks, server.url, root / "baseline-after")
    n = args.episodes
    base_wall = (before[0] + after[0]) / 2
    print(f"{n} synthetic episodes, instant model replies, {os.cpu_count()} CPU cores")
    print(f"{'setting':<24}{'wall s':>9}{'episodes/s':>12}{'idle ms/ep':>12}")
    for name, (wall, inside) in (("baseline, before", before), ("baseline, after", after)):
        print(f"{name:<24}{wall:>9.2f}{n / wall:>12.2f}{1000 * (wall - inside) / n:>12.1f}")
    figures: dict[str, Any] = {
        "episodes": n,
        "cpu_cores": os.cpu_count(),
        "baseline_episodes_per_s": round(n / base_wall, 3),
        "baseline_spread": round(abs(before[0] - after[0]) / base_wall, 3),
    }
    for workers, (wall, inside) in results.items():
        idle = 1000 * (wall * workers - inside) / n
        print(f"{f'runner, {workers} worker(s)':<24}{wall:>9.2f}{n / wall:>12.2f}{idle:>12.1f}")
        figures[f"episodes_per_s_{workers}w"] = round(n / wall, 3)
        figures[f"idle_ms_per_episode_{workers}w"] = round(idle, 2)
    if 1 in results:
        wall_1w, inside_1w = results[1]
        base_idle = ((before[0] - before[1]) + (after[0] - after[1])) / 2
        overhead = 1000 * ((wall_1w - inside_1w) - base_idle) / n
        wall_overhead = 1000 * (wall_1w - base_wall) / n
        figures["runner_overhead_ms_per_episode"] = round(overhead, 2)
        figures["wall_overhead_ms_per_episode"] = round(wall_overhead, 2)
        figures["runner_to_baseline_wall_ratio_1w"] = round(wall_1w / base_wall, 3)
        print(
            f"runner's own overhead at 1 worker: {overhead:.1f} ms per episode (outside-episode time, runner minus bare loop)"
        )
        print(
            f"wall time at 1 worker: {wall_overhead:+.1f} ms per episode against the bare loop "
            f"({wall_1w / base_wall:.3f}x; the two bare-loop runs differ by {100 * figures['baseline_spread']:.0f}%)"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
