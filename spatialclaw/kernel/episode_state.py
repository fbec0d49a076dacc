"""Loading an episode into a kernel process, and bringing its variables back after a restart.

The kernel-side half is the runtime (:mod:`spatialclaw.primitives.runtime.kernel_runtime`): ``install`` builds
the namespace from an episode spec, ``reset`` wipes the previous episode first, ``restore`` reloads the
variables the last successful cell snapshotted.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from spatialclaw.kernel.cell import CellResult
from spatialclaw.kernel.errors import PreloadError
from spatialclaw.kernel.messages import run_internal
from spatialclaw.kernel.process import KernelProcess
from spatialclaw.primitives.protocol import RUNTIME_NAME

__all__ = ["load_episode", "restore_state"]


def load_episode(process: KernelProcess, spec: dict[str, Any], reset: bool = False) -> None:
    """Install the runtime and load ``spec`` (or, with ``reset``, wipe the previous episode first)."""
    payload = json.dumps(spec)
    if reset:
        code = f"{RUNTIME_NAME}.reset({payload!r})"
    else:
        code = f"__import__('spatialclaw.primitives.runtime.kernel_runtime', fromlist=['install']).install(get_ipython(), {payload!r})"
    try:
        run_internal(process, code)
    except RuntimeError as exc:
        raise PreloadError(f"the kernel could not load this episode: {exc}") from None


def restore_state(
    process: KernelProcess,
    spec: dict[str, Any],
    known: list[str],
    unsaved: dict[str, str],
    result: CellResult,
    note: str,
) -> None:
    """In a just restarted process: preload the episode again and restore the last good variables.

    ``known`` are the names the last good cell left, ``unsaved`` why some of them had no snapshot; fills
    ``result.restored``, ``result.lost`` and a note saying what happened (``note``) and why names were lost."""
    try:
        load_episode(process, spec)
        expressions = run_internal(process, "", {"r": f"__import__('json').dumps({RUNTIME_NAME}.restore())"})
        value = expressions["r"]
        report = (
            json.loads(ast.literal_eval(value["data"]["text/plain"]))
            if value.get("status") == "ok"
            else {"restored": [], "failed": {}}
        )
    except Exception as exc:  # the restarted kernel itself failed: report and keep the episode going
        result.notes.append(f"restoring the previous state failed: {exc}")
        report = {"restored": [], "failed": {}}
    result.restored = sorted(report["restored"])
    result.lost = sorted(set(known) - set(result.restored))
    reasons = {**unsaved, **report.get("failed", {})}
    details = "; ".join(f"{name} {reasons[name]}" for name in result.lost if name in reasons)
    log_tail = process.log_tail()
    result.notes.append(note + (f" ({details})" if details else "") + (f"; kernel log: {log_tail}" if log_tail else ""))
