"""Running one cell's request to its end: the deadline, the interrupt, crash detection, and ending the
processes an interrupted cell left behind.

:func:`collect_cell` is the body of :meth:`spatialclaw.kernel.kernel.Kernel.execute`; when the kernel has to
be restarted it calls back ``recover(result, note)`` (the Kernel's restart and state restore).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from spatialclaw.kernel.cell import CellError, CellResult
from spatialclaw.kernel.collector import CellCollector
from spatialclaw.kernel.messages import await_reply, next_iopub, parent_id
from spatialclaw.kernel.process import KernelProcess

__all__ = ["collect_cell", "end_cell_processes"]


def collect_cell(
    process: KernelProcess,
    msg_id: str,
    collector: CellCollector,
    started: float,
    timeout: float,
    interrupt_grace_s: float,
    recover: Callable[[CellResult, str], None],
) -> CellResult:
    """The messages of request ``msg_id`` into a result: the body of :meth:`Kernel.execute`."""
    deadline = started + timeout
    interrupted_at: float | None = None
    while not collector.done:
        now = time.monotonic()
        if interrupted_at is None and now >= deadline:
            process.interrupt()
            interrupted_at = now
        if interrupted_at is not None and now >= interrupted_at + interrupt_grace_s:
            result = collector.finish(None, time.monotonic() - started)
            result.status = "timeout"
            result.error = CellError(
                "TimeoutError", f"the cell ran longer than {timeout:g} s and did not stop when interrupted"
            )
            recover(result, "the kernel was restarted because the cell would not stop")
            return result
        wait = (deadline if interrupted_at is None else interrupted_at + interrupt_grace_s) - now
        message = next_iopub(process, min(max(wait, 0.0), 0.25))
        if message is None:
            if not process.is_alive():
                result = collector.finish(None, time.monotonic() - started)
                result.status = "crashed"
                how = process.exit_description() or "it exited"
                result.error = CellError("KernelDied", f"the kernel process died while running this cell ({how})")
                recover(result, f"the kernel died ({how}) and was restarted")
                return result
            continue
        if parent_id(message) == msg_id:
            collector.add(message)
        else:  # output of an earlier cell (a thread that outlived it): dropped, counted
            collector.add_stale(message)
    execution_count = await_reply(process, msg_id)
    result = collector.finish(execution_count, time.monotonic() - started)
    if interrupted_at is not None:
        ended = end_cell_processes(process.pid)
        if ended:
            result.notes.append(f"ended {ended} process(es) the interrupted cell had started")
        result.status = "timeout"
        where = result.error
        result.error = CellError(
            "TimeoutError",
            f"the cell ran longer than {timeout:g} s and was interrupted",
            traceback=where.traceback if where else "",
            line=where.line if where else None,
            source=where.source if where else None,
        )
    return result


def end_cell_processes(pid: int | None) -> int:
    """Kill the processes an interrupted cell left behind (a fork bomb's sleepers would otherwise hold
    the process cap and the kernel could not start a thread): every process under the kernel's process
    tree (rooted at ``pid``) that started after the kernel itself. In the sandbox that includes detached
    ones, which the PID namespace keeps in the tree. Returns how many were killed."""
    import psutil

    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
        # the kernel's own interpreter (``python -m ipykernel_launcher``), not the sandbox launcher whose
        # arguments name it; a cell's forks share its command line but start later
        kernels = [p for p in tree if any("ipykernel" in part for part in p.cmdline()[:3])]
        kernel = min(kernels, key=lambda p: p.create_time()) if kernels else root
        strays = [p for p in tree if p.pid != kernel.pid and p.create_time() > kernel.create_time()]
    except psutil.Error:
        return 0
    for process in strays:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(strays, timeout=2.0)
    return len(strays)
