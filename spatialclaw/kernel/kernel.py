"""``Kernel``: one persistent IPython kernel per episode, preloaded with the spatial namespace.

It composes three pieces: :class:`~spatialclaw.kernel.process.KernelProcess` (the process and its
channels), :class:`~spatialclaw.kernel.collector.CellCollector` (one request's messages into a
:class:`~spatialclaw.kernel.cell.CellResult`) and the kernel-side runtime
(:mod:`spatialclaw.primitives.runtime.kernel_runtime`). Reading the channels is
:mod:`spatialclaw.kernel.messages`, a cell's run to its end :mod:`spatialclaw.kernel.cell_loop`, loading and
restoring an episode :mod:`spatialclaw.kernel.episode_state`, the sandbox's host side
:mod:`spatialclaw.kernel.kernel_sandbox`. ``execute`` never raises for what a cell does: errors,
timeouts and kernel deaths all come back as results, and the kernel is usable afterwards.

By default (``sandbox="auto"``) the process runs in the kernel sandbox where the platform has one
(:mod:`spatialclaw.kernel.sandbox`; Linux with bubblewrap): the cell sees the system, the Python environment, its
frames (read-only) and its own workdir, and nothing else of the host; it has no network and hard resource
limits. See docs/security.md.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from spatialclaw.kernel.cell import CellError, CellResult
from spatialclaw.kernel.cell_loop import collect_cell
from spatialclaw.kernel.collector import CellCollector
from spatialclaw.kernel.disk_usage import disk_usage
from spatialclaw.kernel.environment import kernel_environment
from spatialclaw.kernel.episode_state import load_episode, restore_state
from spatialclaw.kernel.errors import KernelDied
from spatialclaw.kernel.kernel_sandbox import KernelSandbox
from spatialclaw.kernel.messages import ProtocolBroken, run_internal
from spatialclaw.kernel.process import KernelProcess
from spatialclaw.kernel.sandbox import ResourceLimits, check_mode, use_sandbox
from spatialclaw.task import FrameSpec, Task

__all__ = ["Kernel", "default_memory_limit_mb"]


def default_memory_limit_mb() -> int:
    """``$SPATIALCLAW_KERNEL_MEMORY_MB`` or half of this machine's physical memory, in MiB (0 disables)."""
    configured = os.environ.get("SPATIALCLAW_KERNEL_MEMORY_MB")
    if configured is not None:
        return int(configured)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0
    return int(total / 2**20 / 2)


def _input_specs(frames: Any, videos: Iterable[Any] | None) -> list[dict[str, Any]]:
    if videos is not None:
        return [FrameSpec.coerce(v).to_dict() for v in videos]
    if frames is None:
        return []
    if isinstance(frames, (list, tuple)) and frames and all(isinstance(f, (FrameSpec, dict)) for f in frames):
        return [FrameSpec.coerce(f).to_dict() for f in frames]
    return [FrameSpec.coerce(frames).to_dict()]


def _empty_directory(directory: Path, keep: str) -> None:
    for entry in directory.iterdir():
        if entry.name == keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


class Kernel:
    """A persistent IPython kernel for one episode.

    ``frames``: a :class:`FrameSpec`, a list of image paths, a video path, or a list of specs (several
    inputs; then ``frames`` is the first and ``videos`` all). ``meta``: question, choices, answer type
    (what the kernel's ``meta`` and ``answer`` see). ``workdir``: the kernel's scratch working directory
    (a new temporary one, removed at shutdown, if not given). ``vlm``: side-channel configuration for the
    kernel's ``vlm`` object. ``memory_limit_mb``: cap on the kernel's data memory (rlimit; ``None``: the
    default of :func:`default_memory_limit_mb`; ``0``: no cap). ``interrupt_grace_s``: how long an
    interrupted cell may take to stop before the kernel is restarted.

    ``sandbox``: ``"auto"`` (the sandbox where the platform has one, else a plain process and one log line
    saying what is not isolated), ``"required"`` (raise :class:`SandboxUnavailable` without it) or ``"off"``.
    ``limits``: the sandbox's hard limits (:class:`ResourceLimits`; its ``memory_mb`` is replaced by
    ``memory_limit_mb``). ``readable``: more host paths a sandboxed kernel may read (model folders,
    datasets; ``$SPATIALCLAW_MODELS`` always is). A sandboxed kernel's mounts are fixed when it starts: its workdir is the one given
    here (or its own temporary one), and ``reset(workdir=...)`` cannot move it elsewhere.

    ``primitives``: your own functions bound as kernel names, ``{"name": "package.module:function"}`` or
    ``{"name": "path/to/file.py:function"}``, imported in the kernel on first call; a module must be
    importable there (installed, or its folder on ``env={"PYTHONPATH": ...}``); a file's folder is put on
    the kernel's ``PYTHONPATH`` and made readable. Installed packages' primitives (entry-point group
    ``spatialclaw.primitives``) are bound too (:mod:`spatialclaw.kernel.own_primitives`). The tool-calls
    interface offers them as tools and the code interface's manual lists them; docs/design.md, "Adding a
    primitive".
    """

    def __init__(
        self,
        frames: Any = None,
        meta: dict[str, Any] | None = None,
        workdir: str | Path | None = None,
        *,
        videos: Iterable[Any] | None = None,
        vlm: dict[str, Any] | None = None,
        memory_limit_mb: int | None = None,
        snapshot_total_mb: int = 256,
        snapshot_variable_mb: int = 64,
        interrupt_grace_s: float = 5.0,
        startup_timeout_s: float = 60.0,
        output_cap_chars: int = 1_000_000,
        env: dict[str, str] | None = None,
        sandbox: str = "auto",
        limits: ResourceLimits | None = None,
        readable: Iterable[str | Path] = (),
        primitives: dict[str, str] | None = None,
    ) -> None:
        from spatialclaw.kernel.own_primitives import resolve_primitives
        from spatialclaw.primitives.runtime.namespace import parse_primitives

        own = resolve_primitives(primitives, env)
        parse_primitives(own.targets)  # a bad name or target fails here, before a process starts
        self.primitives: dict[str, str] = own.targets
        self.primitive_path: tuple[str, ...] = own.path  # where the host imports them from too
        if own.path:
            env = {**(env or {}), "PYTHONPATH": os.pathsep.join(own.path)}
            readable = [*readable, *own.path]
        self.sandbox_mode = check_mode(sandbox)
        self.sandboxed = use_sandbox(self.sandbox_mode)
        self.memory_limit_mb = default_memory_limit_mb() if memory_limit_mb is None else memory_limit_mb
        self.snapshot_total_mb = snapshot_total_mb
        self.snapshot_variable_mb = snapshot_variable_mb
        self.interrupt_grace_s = interrupt_grace_s
        self.output_cap_chars = output_cap_chars
        self._owns_workdir = workdir is None
        self._sandbox: KernelSandbox | None = KernelSandbox() if self.sandboxed else None
        try:
            # resolved once, against the caller's working directory (the kernel process starts inside it)
            self.workdir = Path(workdir).resolve() if workdir is not None else self._own_folder("work")
            self.workdir.mkdir(parents=True, exist_ok=True)
            # snapshots can be large and are only useful while this kernel lives: keep them out of the
            # workdir (which may sit inside a trajectory directory) and remove them at shutdown
            self._snapshot_dir = self._own_folder("snapshot")
        except BaseException:
            self._close_sandbox()
            raise
        self._spec: dict[str, Any] = {}
        self._known_names: list[str] = []
        self._unsaved: dict[str, str] = {}
        self.restarts = 0
        self._pristine = True  # no cell has run in this process yet: a first episode needs no reset
        environment = kernel_environment(env)
        if self._sandbox is not None:
            limits = replace(limits or ResourceLimits(), memory_mb=self.memory_limit_mb)
            self.limits: ResourceLimits | None = limits
            self._process = self._sandbox.process(
                environment,
                self.workdir,
                self._snapshot_dir,
                limits,
                startup_timeout_s,
                [Path(p) for p in readable],
                required=self.sandbox_mode == "required",
            )
        else:
            self.limits = None
            self._process = KernelProcess(
                self.workdir,
                self.workdir / ".spatialclaw",
                environment,
                startup_timeout_s=startup_timeout_s,
            )
        try:
            self._process.start()
        except BaseException:
            self._close_sandbox()
            raise
        try:
            self._load(self._episode_spec(frames, meta, videos, vlm, self.workdir))
        except BaseException:
            self.shutdown()
            raise

    # -- construction helpers -----------------------------------------------------------------------
    def _own_folder(self, name: str) -> Path:
        """A new folder of this kernel's own: inside its sandbox's private directory (a cell can open the
        folder to others, never the one above it), or a temporary one (0700) without the sandbox."""
        if self._sandbox is not None:
            return self._sandbox.dirs.private(name)
        return Path(tempfile.mkdtemp(prefix=f"spatialclaw-{name}-"))

    @property
    def sandbox(self) -> dict[str, Any]:
        """What this kernel runs in: ``{"mode", "active", "process_cap", "memory_cap", "limits", "holds"}`` (for
        logs and manifests). ``holds``: which guarantees the running sandbox keeps, read on the host when
        the process started (:mod:`spatialclaw.kernel.sandbox_holds`): ``capabilities_dropped``,
        ``proc_read_only``, ``nosuid_nodev``, ``private_workdir``."""
        record: dict[str, Any] = {"mode": self.sandbox_mode, "active": self.sandboxed}
        if self.sandboxed and self.limits is not None:
            record["process_cap"] = self._process.process_cap
            record["memory_cap"] = self._process.memory_cap
            record["limits"] = asdict(self.limits)
            record["holds"] = self._process.holds
        return record

    def _close_sandbox(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    @classmethod
    def for_task(cls, task: Task, workdir: str | Path | None = None, **kwargs: Any) -> Kernel:
        """A kernel loaded with a task's inputs and its ``meta`` (never its ground truth)."""
        return cls(videos=task.inputs, meta=task.kernel_meta(), workdir=workdir, **kwargs)

    def _episode_spec(
        self,
        frames: Any,
        meta: dict[str, Any] | None,
        videos: Iterable[Any] | None,
        vlm: dict[str, Any] | None,
        workdir: Path,
    ) -> dict[str, Any]:
        inputs = _input_specs(frames, videos)
        if self._sandbox is not None:  # the sandbox sees its own links to this episode's files, nothing around them
            inputs, vlm = self._sandbox.stage(inputs, vlm)
        return {
            "frames": inputs,
            "meta": dict(meta or {}),
            "vlm": vlm,
            "workdir": str(workdir),
            "snapshot_dir": str(self._snapshot_dir),
            "memory_limit_mb": self.memory_limit_mb,
            "snapshot_total_mb": self.snapshot_total_mb,
            "snapshot_variable_mb": self.snapshot_variable_mb,
            "primitives": self.primitives,
        }

    # -- public API -----------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def connection_file(self) -> Path:
        return self._process.connection_file

    def is_alive(self) -> bool:
        return self._process.is_alive()

    def execute(self, code: str, timeout: float = 120.0) -> CellResult:
        """Run one cell and return everything it produced.

        ``timeout`` is in seconds of wall-clock time. On timeout the cell is interrupted; if the kernel
        does not come back within ``interrupt_grace_s`` it is restarted and the variables of the last
        successful cell are restored. A dying kernel is detected within a fraction of a second and
        recovered the same way. The result's ``status`` says which of these happened.
        """
        client = self._process.client
        if client is None or not self.is_alive():
            result = CellResult(code=code, status="crashed")
            self._recover(result, "the kernel was not running before this cell")
            return result
        started = time.monotonic()
        self._pristine = False
        msg_id = client.execute(code, silent=False, store_history=True, allow_stdin=False, stop_on_error=False)
        collector = CellCollector(code, stream_cap=self.output_cap_chars, answer_spec=self._spec.get("meta"))
        try:
            result = self._collect(msg_id, collector, started, timeout)
        except ProtocolBroken as broken:  # a cell patched what the kernel's own messaging relies on (json...)
            result = collector.finish(None, time.monotonic() - started)
            result.status = "crashed"
            result.error = CellError(
                "KernelProtocolError",
                f"the kernel's messages no longer decode ({broken}): the cell "
                "broke the kernel's own messaging, for example by patching json",
            )
            self._recover(result, "the kernel was restarted because its messages no longer decoded")
        self._report_workdir(result)
        return result

    def workdir_bytes(self) -> int:
        """Disk space the workdir's files take, in bytes (allocated blocks; symlinks not followed); a lower
        bound when the workdir holds more entries than one bounded measurement looks at (:func:`disk_usage`)."""
        return disk_usage(self.workdir)[0]

    def _report_workdir(self, result: CellResult) -> None:
        """A sandboxed kernel's workdir over its quota (``limits.workdir_mb``): say so in the cell's notes."""
        if self.limits is None or not self.limits.workdir_mb:
            return
        used, complete = disk_usage(self.workdir)
        if used > self.limits.workdir_mb * 2**20 or not complete:
            result.notes.append(
                f"the workdir holds {'' if complete else 'at least '}{used / 2**20:.0f} MiB"
                + ("" if complete else " in more files than the host counts after each cell")
                + f", against its quota of {self.limits.workdir_mb} MiB: delete files you no longer need "
                f"(each file is also capped at {self.limits.file_mb} MiB)"
            )

    def _collect(self, msg_id: str, collector: CellCollector, started: float, timeout: float) -> CellResult:
        """The messages of request ``msg_id`` into a result: the body of :meth:`execute`."""
        result = collect_cell(self._process, msg_id, collector, started, timeout, self.interrupt_grace_s, self._recover)
        if collector.done:  # the cell ran to its end (a restarted kernel's state is set by ``_recover``)
            self._remember_state(collector)
        return result

    def tool_status(self) -> dict[str, dict[str, Any]] | None:
        """What the kernel's learned tools reported when its namespace was last built (see
        :func:`spatialclaw.primitives.perception.availability.tool_status`): ``{name: {"available", "reason",
        "note"}}``; None when the kernel cannot say."""
        expression = (
            "__import__('spatialclaw.primitives.perception.availability', fromlist=['last_report']).last_report()"
        )
        try:
            reply = run_internal(self._process, "", user_expressions={"tools": expression}, timeout=10.0)
        except (RuntimeError, KernelDied):
            return None
        data = reply.get("tools", {})
        if data.get("status") != "ok":
            return None
        try:
            report = ast.literal_eval(data.get("data", {}).get("text/plain", "None"))
        except (ValueError, SyntaxError):
            return None
        return report if isinstance(report, dict) else None

    def reset(
        self,
        frames: Any = None,
        meta: dict[str, Any] | None = None,
        workdir: str | Path | None = None,
        *,
        videos: Iterable[Any] | None = None,
        vlm: dict[str, Any] | None = None,
    ) -> None:
        """Start a new episode in the same process: no variable, figure, history or snapshot of the
        previous episode survives; the namespace is rebuilt for the new frames and meta.

        For interactive use. Benchmarks and RL give every episode a fresh process instead
        (``KernelPool(fresh=True)``): a cell can change a process in ways a reset does not undo (patched
        modules, threads it started). A sandboxed kernel keeps its workdir (its mounts are fixed at start):
        another ``workdir`` is ignored and the kernel's own one is emptied when it created it."""
        if workdir is not None and self.sandboxed and Path(workdir).resolve() != self.workdir.resolve():
            workdir = None
        if workdir is not None:
            workdir = Path(workdir).resolve()
            workdir.mkdir(parents=True, exist_ok=True)
        if workdir is None and self._owns_workdir:
            _empty_directory(self.workdir, keep=".spatialclaw")
        spec = self._episode_spec(frames, meta, videos, vlm, workdir or self.workdir)
        self._known_names, self._unsaved = [], {}
        if not self.is_alive():
            self._process.restart()
            self.restarts += 1
            self._load(spec)
            return
        # a process no cell has touched (a spare) only needs the new namespace, not the slower full reset
        self._load(spec, reset=not self._pristine)

    def shutdown(self) -> None:
        """Stop the kernel process; removes the working directory if the kernel created it."""
        self._process.shutdown()
        self._close_sandbox()
        shutil.rmtree(self._snapshot_dir, ignore_errors=True)
        if self._owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        state = "alive" if self.is_alive() else "stopped"
        where = ", sandboxed" if self.sandboxed else ""
        return f"Kernel(pid={self.pid}, {state}{where}, workdir='{self.workdir}')"

    # -- internals ------------------------------------------------------------------------------------
    def _remember_state(self, collector: CellCollector) -> None:
        if collector.state is not None:
            self._known_names = list(collector.state.get("names", []))
            self._unsaved = dict(collector.state.get("snapshot_skipped", {}))

    def _load(self, spec: dict[str, Any], reset: bool = False) -> None:
        """Install the runtime and load ``spec`` (or, with ``reset``, wipe the previous episode first)."""
        self._spec = spec
        load_episode(self._process, spec, reset=reset)

    def _recover(self, result: CellResult, note: str) -> None:
        """Restart the process, preload the episode again and restore the last good variables."""
        known = list(self._known_names)
        self._process.restart()
        self.restarts += 1
        result.restarted = True
        restore_state(self._process, self._spec, known, self._unsaved, result, note)
        self._known_names = list(result.restored)
