"""Agent-loop overhead: a 10-step episode against a local server with instant replies and trivial cells.

Run: ``.venv/bin/python benchmarks/perf/loop.py [--episodes N] [--steps S]``.

The model is the OpenAI-compatible backend (real ``openai`` SDK, real HTTP) talking to
:class:`spatialclaw.testing.ScriptedProvider`, which answers at once; each cell is a one-line
assignment and print in a real kernel (started once and ``reset`` per episode, as a pool does). One
64x48 input frame goes with the question. Measured, per episode (median over ``--episodes``):

- ``agent``: :meth:`Agent.run` wall time, split by the agent itself into model time (inside
  ``Model.chat``: message conversion, SDK, HTTP), cell time (inside ``Kernel.execute``), kernel setup
  (``Kernel.reset`` for the episode, once per episode, reported separately as kernel time) and the rest:
  ``overhead_ms_per_step = (total - model - cell - kernel setup) / steps`` -- prompt and request
  building, extraction, observation rendering, trajectory writes (with fsync), the side channel;
- ``baseline``: the same model calls and cells in a bare loop (fixed messages, no agent, no log); its
  per-step time is the denominator of ``step_ratio`` (agent step / bare step, 1 = no overhead).

Prints a table, then one JSON line with ``overhead_ms_per_step`` (target <= 20), ``overhead_ms_per_step_nofsync``,
``kernel_setup_ms_per_step``, ``agent_step_ms``, ``baseline_step_ms``, ``step_ratio``, ``model_ms_per_step``,
``cell_ms_per_step``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image

from spatialclaw import Kernel
from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.chat import Message
from spatialclaw.models import load_model
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing import ScriptedProvider


def script(steps: int) -> list[str]:
    cells = [f"Step {i}.\n```python\nx = {i}\nprint(x)\n```" for i in range(1, steps)]
    return cells + ["Done.\n```python\nanswer('A')\n```"]


def agent_episode(kernel: Kernel, task: Task, steps: int, root: Path, number: int, fsync: bool) -> dict[str, float]:
    with ScriptedProvider(script(steps)) as server:
        model = load_model(f"openai-compat:bench@{server.url}")
        with Agent(model, AgentConfig(max_steps=steps, fsync=fsync)) as agent:
            result = agent.run(task, root / f"episode-{number}-{fsync}", kernel=kernel)
        model.close()
    assert result.status == "answered" and result.steps == steps, (result.status, result.error)
    return {
        "total": result.duration_s / steps,
        "model": result.timing["model_s"] / steps,
        "cell": result.timing["cell_s"] / steps,
        "setup": result.timing["kernel_setup_s"] / steps,
        "overhead": result.timing["loop_s"] / steps,
    }


def bare_episode(kernel: Kernel, steps: int) -> float:
    """Seconds per step of the same work without the agent: one chat call and one cell per step."""
    with ScriptedProvider(script(steps)) as server:
        model = load_model(f"openai-compat:bench@{server.url}")
        messages = [Message.text("system", "bench"), Message.text("user", "go")]
        started = time.perf_counter()
        for step in range(steps):
            reply = model.chat(messages)
            code = reply.text.split("```python\n", 1)[1].split("```", 1)[0]
            kernel.execute(code if step < steps - 1 else "x = 0")
        elapsed = time.perf_counter() - started
        model.close()
    return elapsed / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Kernel() as kernel:
        root = Path(folder)
        Image.new("RGB", (64, 48), (90, 120, 200)).save(root / "frame.png")
        task = Task("Which?", inputs=[FrameSpec.images([root / "frame.png"])], choices=["a", "b"])
        agent_episode(kernel, task, args.steps, root, -1, True)  # warm-up: imports, prompt generation, SDK
        bare_episode(kernel, args.steps)
        runs = [agent_episode(kernel, task, args.steps, root, i, True) for i in range(args.episodes)]
        runs_nofsync = [agent_episode(kernel, task, args.steps, root, i, False) for i in range(args.episodes)]
        bare = [bare_episode(kernel, args.steps) for _ in range(args.episodes)]

    def median(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in rows) * 1000

    figures = {
        "episodes": args.episodes,
        "steps": args.steps,
        "overhead_ms_per_step": round(median(runs, "overhead"), 2),
        "overhead_ms_per_step_nofsync": round(median(runs_nofsync, "overhead"), 2),
        "agent_step_ms": round(median(runs, "total"), 2),
        "model_ms_per_step": round(median(runs, "model"), 2),
        "cell_ms_per_step": round(median(runs, "cell"), 2),
        "kernel_setup_ms_per_step": round(median(runs, "setup"), 2),
        "baseline_step_ms": round(statistics.median(bare) * 1000, 2),
    }
    figures["step_ratio"] = round(figures["agent_step_ms"] / figures["baseline_step_ms"], 3)
    print(f"agent loop, {args.steps}-step episodes, median of {args.episodes}")
    print(f"{'':38}{'ms/step':>10}")
    for label, key in [
        ("agent step (total)", "agent_step_ms"),
        ("  model (Model.chat)", "model_ms_per_step"),
        ("  cell (Kernel.execute)", "cell_ms_per_step"),
        ("  kernel reset (per episode / steps)", "kernel_setup_ms_per_step"),
        ("  loop overhead", "overhead_ms_per_step"),
        ("  loop overhead without fsync", "overhead_ms_per_step_nofsync"),
        ("bare loop (same calls, no agent)", "baseline_step_ms"),
    ]:
        print(f"{label:38}{figures[key]:>10.2f}")
    print(f"agent step / bare step: {figures['step_ratio']:.3f}   (target: overhead <= 20 ms/step)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
