"""Kernel speed: our execute round trip against raw jupyter-client, show(), cold start, pooled reset, and
the sandboxed kernel against the unsandboxed one in the same run.

Run: ``.venv/bin/python benchmarks/perf/kernel.py``. Prints a table, then one JSON line with
``overhead_ratio`` (median ours / median raw jupyter-client round trip of the same trivial cell),
``show_ms`` (median execute of ``show()`` on a 768x576 photo), ``start_s`` (cold start with preload)
and ``reset_s`` (pooled reset between episodes). Targets: ratio <= 1.5, show <= 50 ms, start <= 2 s,
reset <= 0.3 s. "Ours" is the default kernel (sandboxed where the platform has the sandbox).

Sandbox figures (Linux with bubblewrap; absent elsewhere): ``sandbox_cell_ratio`` (median sandboxed /
unsandboxed round trip, interleaved; target <= 1.1), ``sandbox_start_ratio`` (cold start, sandboxed /
unsandboxed; target <= 1.5) and ``spare_episode_ms`` (an episode's start from a pre-started spare of a
``KernelPool(fresh=True)``: acquire and load; target <= 50 ms).

Limit figures (same run, sandboxed kernels with ``memory_limit_mb=1024``): ``limits_cell_ratio`` and
``limits_start_ratio`` compare today's sandbox (memory cgroup, size-limited ``/tmp`` and ``/dev/shm``,
read-only root and ``/dev``, seccomp filter, dataset masks, owner record and sweep, parent-death signal)
with the same sandbox built without those pieces (:func:`without_new_limits`); as root,
``uid_start_ratio`` is the start of a sandbox that runs as its own uid (no pids cgroup) against one with
the cgroup. ``--limits`` runs only these.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import queue
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

from jupyter_client.manager import KernelManager

from spatialclaw import Kernel, KernelPool
from spatialclaw.kernel import process, sandbox, sandbox_dirs, sandbox_limits
from spatialclaw.kernel.environment import kernel_environment
from spatialclaw.kernel.sandbox import support

TRIVIAL = "x = 1"
ROUNDS = 200


class RawKernel:
    """The floor: a bare ipykernel (no spatialclaw runtime) driven by a plain jupyter-client loop."""

    def __init__(self) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=kernel_environment(), cwd=tempfile.mkdtemp())
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def execute(self, code: str) -> None:
        msg_id = self.client.execute(code)
        while True:
            reply = self.client.get_shell_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        while True:
            try:
                message = self.client.get_iopub_msg(timeout=30)
            except queue.Empty:
                raise RuntimeError("the raw kernel stopped answering") from None
            if (
                message["parent_header"].get("msg_id") == msg_id
                and message["msg_type"] == "status"
                and message["content"]["execution_state"] == "idle"
            ):
                return

    def shutdown(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def interleaved_round_trips_ms(raw: RawKernel, kernel: Kernel, rounds: int) -> tuple[list[float], list[float]]:
    """Alternate raw and ours cell by cell, so that machine noise hits both alike."""
    raw_times, our_times = [], []
    for _ in range(rounds + 10):
        start = time.perf_counter()
        raw.execute(TRIVIAL)
        raw_times.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        result = kernel.execute(TRIVIAL)
        our_times.append((time.perf_counter() - start) * 1000)
        if not result.ok:
            raise RuntimeError(result.to_text())
    return raw_times[10:], our_times[10:]


def round_trips_ms(kernel: Kernel, code: str, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds + 3):
        start = time.perf_counter()
        result = kernel.execute(code)
        times.append((time.perf_counter() - start) * 1000)
        if not result.ok:
            raise RuntimeError(result.to_text())
    return times[3:]


def interleaved_pair_ms(first: Kernel, second: Kernel, rounds: int) -> tuple[list[float], list[float]]:
    """Alternate two kernels cell by cell (``TRIVIAL``), as for raw against ours."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds + 10):
        for kernel, sink in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            result = kernel.execute(TRIVIAL)
            sink.append((time.perf_counter() - start) * 1000)
            if not result.ok:
                raise RuntimeError(result.to_text())
    return times[0][10:], times[1][10:]


def sandbox_figures() -> dict[str, float]:
    """Sandboxed against unsandboxed kernels, measured interleaved in this run."""
    starts: dict[str, list[float]] = {"off": [], "required": []}
    for _ in range(3):
        for mode in ("off", "required"):
            start = time.perf_counter()
            Kernel(sandbox=mode).shutdown()
            starts[mode].append(time.perf_counter() - start)
    with Kernel(sandbox="off") as plain, Kernel(sandbox="required") as boxed:
        plain_ms, boxed_ms = interleaved_pair_ms(plain, boxed, ROUNDS)
    episode_ms = []
    with KernelPool(size=1, fresh=True, spares=1, sandbox="required") as pool:
        for episode in range(8):
            if not pool.wait_for_spares(timeout=60):
                raise RuntimeError("no spare kernel started within 60 s")
            start = time.perf_counter()
            kernel = pool.acquire(meta={"question": f"episode {episode}"})
            episode_ms.append((time.perf_counter() - start) * 1000)
            kernel.execute("data = np.ones((256, 256))")
            pool.release(kernel)
    return {
        "unsandboxed_ms": statistics.median(plain_ms),
        "sandboxed_ms": statistics.median(boxed_ms),
        "sandbox_cell_ratio": statistics.median(boxed_ms) / statistics.median(plain_ms),
        "unsandboxed_start_s": statistics.median(starts["off"]),
        "sandboxed_start_s": statistics.median(starts["required"]),
        "sandbox_start_ratio": statistics.median(starts["required"]) / statistics.median(starts["off"]),
        "spare_episode_ms": statistics.median(episode_ms),
    }


@contextlib.contextmanager
def without_new_limits() -> Iterator[None]:
    """Sandboxes built as before the limits of issue 19: no memory cgroup, seccomp filter, masks, sizes,
    read-only root and /dev, owner sweep or parent-death signal (for comparison only)."""
    build_policy, build_argv, create = sandbox_dirs.SandboxDirs.policy, sandbox.bwrap_argv, sandbox_limits._create

    def policy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return dataclasses.replace(build_policy(self, *args, **kwargs), seccomp=None, masked=())

    def argv(*args, **kwargs):  # type: ignore[no-untyped-def]
        full, kept = build_argv(*args, **kwargs), []
        skip = 0
        for index, arg in enumerate(full):
            if skip:
                skip -= 1
            elif (
                (arg in ("--size", "--perms") and "--" not in full[:index])
                or (arg == "--remount-ro" and full[index + 1] in ("/", "/dev"))
                or (arg == "--tmpfs" and full[index + 1] == "/dev/shm")
            ):
                skip = 1
            else:
                kept.append(arg)
        return kept

    with (
        mock.patch.object(sandbox_dirs.SandboxDirs, "policy", policy),
        mock.patch.object(sandbox, "bwrap_argv", argv),
        mock.patch.object(sandbox_limits, "_create", lambda c, n, s: create(c, n, s) if c == "pids" else None),
        mock.patch.object(sandbox_dirs, "sweep_sandbox_dirs", lambda parent=None: []),
        mock.patch.object(process, "die_with_owner", lambda: None),
    ):
        yield


def limits_figures() -> dict[str, float]:
    """Today's limits against the sandbox without them, interleaved in this run (and root's own-uid start)."""
    starts: dict[str, list[float]] = {"old": [], "new": [], "uid": []}
    variants: dict[str, Callable[[], contextlib.AbstractContextManager[Any]]] = {
        "old": without_new_limits,
        "new": contextlib.nullcontext,
    }
    if os.getuid() == 0:
        variants["uid"] = lambda: mock.patch.object(
            sandbox_limits, "_V1", {"pids": "/nonexistent", "memory": "/nonexistent"}
        )
    for _ in range(5):
        for name, variant in variants.items():
            with variant():
                start = time.perf_counter()
                Kernel(sandbox="required", memory_limit_mb=1024).shutdown()
                starts[name].append(time.perf_counter() - start)
    with without_new_limits():
        old = Kernel(sandbox="required", memory_limit_mb=1024)
    with old, Kernel(sandbox="required", memory_limit_mb=1024) as new:
        old_ms, new_ms = interleaved_pair_ms(old, new, ROUNDS)
    figures = {
        "limits_old_cell_ms": statistics.median(old_ms),
        "limits_new_cell_ms": statistics.median(new_ms),
        "limits_cell_ratio": statistics.median(new_ms) / statistics.median(old_ms),
        "limits_old_start_s": statistics.median(starts["old"]),
        "limits_new_start_s": statistics.median(starts["new"]),
        "limits_start_ratio": statistics.median(starts["new"]) / statistics.median(starts["old"]),
    }
    if starts["uid"]:
        figures["uid_start_s"] = statistics.median(starts["uid"])
        figures["uid_start_ratio"] = statistics.median(starts["uid"]) / statistics.median(starts["new"])
    return figures


def main() -> None:
    if "--limits" in sys.argv:
        if not support().available:
            raise SystemExit(f"no kernel sandbox here ({support().missing})")
        limits = limits_figures()
        for label, figure in limits.items():
            print(f"{label:<34}{figure:>12.4f}")
        sys.stdout.flush()
        print(json.dumps({k: round(v, 4) for k, v in limits.items()}))
        return
    start_times = []
    for _ in range(3):
        start = time.perf_counter()
        kernel = Kernel()
        start_times.append(time.perf_counter() - start)
        if len(start_times) < 3:
            kernel.shutdown()
    raw_kernel = RawKernel()
    raw, ours = interleaved_round_trips_ms(raw_kernel, kernel, ROUNDS)
    raw_kernel.shutdown()
    setup = kernel.execute(
        "from skimage import data as _data\nphoto = Image.fromarray(_data.astronaut()).resize((768, 576))\nshow(photo)"
    )
    if not setup.ok:
        raise RuntimeError(setup.to_text())
    show_times = round_trips_ms(kernel, "show(photo)", 30)
    kernel.shutdown()

    reset_times = []
    with KernelPool(size=1) as pool:
        pooled = pool.acquire()
        for episode in range(8):
            pooled.execute(f"data = np.ones((256, 256))\nepisode = {episode}")
            pool.release(pooled)
            start = time.perf_counter()
            pooled = pool.acquire(meta={"question": f"episode {episode}"})
            reset_times.append(time.perf_counter() - start)
        pool.release(pooled)
    sandbox = {**sandbox_figures(), **limits_figures()} if support().available else {}

    figures = {
        "raw_ms": statistics.median(raw),
        "execute_ms": statistics.median(ours),
        "overhead_ratio": statistics.median(ours) / statistics.median(raw),
        "show_ms": statistics.median(show_times),
        "start_s": statistics.median(start_times),
        "reset_s": statistics.median(reset_times),
        **sandbox,
    }
    print(f"{'measure':<34}{'value':>12}{'target':>10}")
    rows = [
        ("raw jupyter-client round trip", f"{figures['raw_ms']:.2f} ms", ""),
        ("Kernel.execute round trip", f"{figures['execute_ms']:.2f} ms", ""),
        ("overhead ratio (ours / raw)", f"{figures['overhead_ratio']:.2f}", "<= 1.5"),
        ("show() of a 768x576 image", f"{figures['show_ms']:.1f} ms", "<= 50"),
        ("cold start with preload", f"{figures['start_s']:.2f} s", "<= 2.0"),
        ("pooled reset", f"{figures['reset_s'] * 1000:.0f} ms", "<= 300"),
    ]
    if sandbox:
        rows += [
            ("unsandboxed round trip", f"{figures['unsandboxed_ms']:.2f} ms", ""),
            ("sandboxed round trip", f"{figures['sandboxed_ms']:.2f} ms", ""),
            ("per-cell ratio (sandboxed / not)", f"{figures['sandbox_cell_ratio']:.2f}", "<= 1.1"),
            ("cold start unsandboxed", f"{figures['unsandboxed_start_s']:.2f} s", ""),
            ("cold start sandboxed", f"{figures['sandboxed_start_s']:.2f} s", ""),
            ("cold start ratio (sandboxed / not)", f"{figures['sandbox_start_ratio']:.2f}", "<= 1.5"),
            ("episode start from a spare", f"{figures['spare_episode_ms']:.0f} ms", "<= 50"),
            ("per-cell ratio (new limits / old)", f"{figures['limits_cell_ratio']:.2f}", "<= 1.1"),
            ("cold start ratio (new limits / old)", f"{figures['limits_start_ratio']:.2f}", "<= 1.2"),
        ]
    else:
        print(f"no kernel sandbox here ({support().missing}): sandbox figures skipped")
    for name, value, target in rows:
        print(f"{name:<34}{value:>12}{target:>10}")
    sys.stdout.flush()
    print(json.dumps({k: round(v, 4) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
