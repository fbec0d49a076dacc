"""Session overhead: what driving a kernel step by step from outside costs, per cell, against calling
``Kernel.execute`` directly in the same process.

Run: ``.venv/bin/python benchmarks/perf/session.py [--steps N]``. Starts one session (daemon + kernel)
on two small frames and one in-process :class:`spatialclaw.Kernel`, then times the same cells,
interleaved round by round so that machine noise hits every path alike:

- ``baseline``: ``Kernel.execute`` in this process;
- ``python``: :meth:`spatialclaw.interactive.session_client.Session.execute` (Unix socket to the daemon, which runs the
  cell in its kernel and logs it to the trajectory);
- ``cli``: ``spatialclaw session exec ID --code -`` as a new process per cell (what a coding agent in
  a terminal pays: interpreter start-up and imports included);
- ``mcp``: a ``session_exec`` tool call from an MCP client to ``spatialclaw mcp`` over stdio.

Two cells: ``small`` (an assignment and a print) and ``image`` (``show`` of a 640x480 frame, so the
PNG travels through the trajectory and, for MCP, back to the client as image content).

Prints a table of median milliseconds per cell, then one JSON line with ``<path>_<cell>_ms`` and
``<path>_<cell>_ratio`` (path / baseline; 1 = no overhead).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

CELLS = {
    "small": "x = 41\nprint(x + 1)\n",
    "image": "show(frames[0])\n",
}


def make_frames(folder: Path) -> list[str | Path]:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    paths: list[str | Path] = []
    for index in range(2):
        path = folder / f"frame{index}.png"
        Image.fromarray(rng.integers(0, 255, (480, 640, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="timed rounds per cell and path")
    args = parser.parse_args()

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import TextContent

    from spatialclaw.interactive.session import start_session
    from spatialclaw.kernel.kernel import Kernel
    from spatialclaw.task import FrameSpec, Task

    root = Path(tempfile.mkdtemp(prefix="sc-session-perf-"))
    os.environ["SPATIALCLAW_SESSIONS"] = str(root / "sessions")
    frames = make_frames(root)
    task = Task("benchmark", inputs=[FrameSpec.images(frames)])
    session = start_session(task, max_steps=10_000)
    kernel = Kernel.for_task(task, workdir=root / "kernel")
    cli = [sys.executable, "-m", "spatialclaw.cli", "session", "exec", session.id, "--code", "-"]
    times: dict[str, dict[str, list[float]]] = {p: {c: [] for c in CELLS} for p in ("baseline", "python", "cli", "mcp")}

    async def run_all() -> None:
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", "spatialclaw.cli", "mcp", "--keep-sessions"],
            env={"SPATIALCLAW_SESSIONS": os.environ["SPATIALCLAW_SESSIONS"]},
        )
        async with (
            stdio_client(server, errlog=open(os.devnull, "w")) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            for round_index in range(args.steps + 1):  # round 0 warms every path up and is not counted
                for name, code in CELLS.items():
                    samples = {
                        "baseline": timed(partial(kernel.execute, code)),
                        "python": timed(partial(session.execute, code)),
                        "cli": timed(
                            partial(subprocess.run, cli, input=code, text=True, capture_output=True, check=True)
                        ),
                    }
                    started = time.perf_counter()
                    result = await client.call_tool("session_exec", {"session": session.id, "code": code})
                    samples["mcp"] = (time.perf_counter() - started) * 1000.0
                    if result.is_error:
                        first = result.content[0]
                        raise RuntimeError(first.text if isinstance(first, TextContent) else str(first))
                    if round_index:
                        for path, value in samples.items():
                            times[path][name].append(value)

    try:
        anyio.run(run_all)
    finally:
        kernel.shutdown()
        session.close()

    figures: dict[str, float] = {"steps": args.steps}
    print(f"{'path':<10}" + "".join(f"{c + ' ms':>14}{c + ' ratio':>14}" for c in CELLS))
    for path, per_cell in times.items():
        row = f"{path:<10}"
        for cell, samples in per_cell.items():
            median = statistics.median(samples)
            ratio = median / statistics.median(times["baseline"][cell])
            figures[f"{path}_{cell}_ms"] = round(median, 2)
            figures[f"{path}_{cell}_ratio"] = round(ratio, 2)
            row += f"{median:>14.1f}{ratio:>14.2f}"
        print(row)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
