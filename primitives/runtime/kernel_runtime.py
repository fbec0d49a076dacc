"""The runtime installed into the agent's kernel: preload, per-cell state reports, snapshots, reset.

After every cell it publishes one ``STATE_MIME`` message with the variables the cell created or
changed, the structured error (cell line number and source, compact traceback) and what the snapshot
kept. After every *successful* cell, changed variables are pickled (cloudpickle) into the episode's
snapshot directory under a size cap, so that a restarted kernel can get them back (:meth:`restore`).
"""

from __future__ import annotations

import gc
import json
import linecache
import os
import re
import resource
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spatialclaw.primitives.protocol import RUNTIME_NAME, STATE_MIME

__all__ = ["KernelRuntime", "describe_error", "describe_value", "install"]

_INTERNAL_PATH = re.compile(r"[/\\](IPython|ipykernel|jupyter_client|zmq|tornado|asyncio|traitlets)[/\\]")
_MODULE_REF = "__spatialclaw_module__"


class _ModuleRef:
    """Stands in for a module in a snapshot; restored by importing it again."""

    def __init__(self, name: str) -> None:
        self.name = name


def _signature(value: Any) -> tuple[Any, ...]:
    shape = getattr(value, "shape", None)
    try:
        length = (
            len(value)
            if shape is None and hasattr(value, "__len__") and not isinstance(value, types.ModuleType)
            else None
        )
    except Exception:
        length = None
    return (id(value), type(value), tuple(shape) if isinstance(shape, tuple) else None, length)


def describe_value(name: str, value: Any) -> dict[str, Any]:
    """The variable summary of :class:`spatialclaw.kernel.cell.VariableInfo` as a dict."""
    kind = type(value)
    info: dict[str, Any] = {
        "name": name,
        "type": kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__.split('.')[0]}.{kind.__name__}",
    }
    shape: Any = getattr(value, "shape", None)
    if isinstance(shape, tuple) or type(shape).__name__ == "Size":
        info["shape"] = [int(s) for s in shape]
        dtype = getattr(value, "dtype", None)
        info["dtype"] = str(dtype) if dtype is not None else None
        if hasattr(value, "nbytes"):
            info["nbytes"] = int(value.nbytes)
        elif hasattr(value, "element_size") and hasattr(value, "nelement"):
            info["nbytes"] = int(value.element_size() * value.nelement())
    else:
        if hasattr(value, "__len__") and not isinstance(value, (types.ModuleType, type)):
            try:
                info["length"] = len(value)
            except Exception:
                pass
        try:
            info["nbytes"] = int(sys.getsizeof(value))
        except Exception:
            pass
    return info


class Snapshot:
    """Pickled copies of the variables of the last successful cell, one file per variable.

    ``per_variable_bytes`` and ``total_bytes`` cap what is kept; variables over the cap or that cannot
    be pickled are listed in ``skipped`` with the reason, and reported as lost after a restart.
    """

    def __init__(self, directory: Path, total_bytes: int, per_variable_bytes: int) -> None:
        self.directory = directory
        self.total_bytes = total_bytes
        self.per_variable_bytes = per_variable_bytes
        self.sizes: dict[str, int] = {}
        self.skipped: dict[str, str] = {}
        directory.mkdir(parents=True, exist_ok=True)

    def clear(self) -> None:
        for path in self.directory.glob("*.pkl"):
            path.unlink(missing_ok=True)
        self.sizes.clear()
        self.skipped.clear()

    def _path(self, name: str) -> Path:
        return self.directory / f"{name}.pkl"

    def forget(self, name: str) -> None:
        self._path(name).unlink(missing_ok=True)
        self.sizes.pop(name, None)
        self.skipped.pop(name, None)

    def save(self, name: str, value: Any) -> None:
        import cloudpickle

        self.forget(name)
        estimate = getattr(value, "nbytes", 0)
        if isinstance(estimate, int) and estimate > self.per_variable_bytes:
            self.skipped[name] = (
                f"too large to snapshot ({estimate / 2**20:.0f} MiB > {self.per_variable_bytes / 2**20:.0f} MiB)"
            )
            return
        target = _ModuleRef(value.__name__) if isinstance(value, types.ModuleType) else value
        try:
            blob = cloudpickle.dumps(target, protocol=5)
        except Exception as exc:  # anything unpicklable: open files, sockets, generators, models on GPU...
            self.skipped[name] = f"cannot be pickled ({type(exc).__name__})"
            return
        if len(blob) > self.per_variable_bytes or sum(self.sizes.values()) + len(blob) > self.total_bytes:
            self.skipped[name] = f"over the snapshot size cap ({len(blob) / 2**20:.1f} MiB)"
            return
        tmp = self.directory / f".{name}.tmp"
        tmp.write_bytes(blob)
        os.replace(tmp, self._path(name))
        self.sizes[name] = len(blob)

    def load(self, namespace: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
        """Unpickle every saved variable into ``namespace``; returns (restored names, failures)."""
        import importlib

        import cloudpickle

        restored: list[str] = []
        failed: dict[str, str] = dict(self.skipped)
        for path in sorted(self.directory.glob("*.pkl")):
            name = path.stem
            try:
                value = cloudpickle.loads(path.read_bytes())
                if isinstance(value, _ModuleRef):
                    value = importlib.import_module(value.name)
                elif isinstance(value, types.FunctionType) and value.__module__ == "__main__":
                    value = _rebind_globals(value, namespace)
                namespace[name] = value
                restored.append(name)
            except Exception as exc:
                failed[name] = f"could not be unpickled ({type(exc).__name__}: {exc})"
        return restored, failed


def _rebind_globals(function: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    """Make a restored cell-defined function see the live namespace, as it did before the restart."""
    rebound = types.FunctionType(
        function.__code__, namespace, function.__name__, function.__defaults__, function.__closure__
    )
    rebound.__kwdefaults__ = function.__kwdefaults__
    rebound.__dict__.update(function.__dict__)
    rebound.__doc__ = function.__doc__
    return rebound


class KernelRuntime:
    """Owns the episode's namespace inside the kernel and reports each cell's state to the host."""

    def __init__(self, shell: Any, spec: dict[str, Any]) -> None:
        self.shell = shell
        self.signatures: dict[str, tuple[Any, ...]] = {}
        self.baseline: dict[str, int] = {}
        self.memory_limit_mb: int | None = None
        self.snapshot: Snapshot | None = None
        self._apply_memory_limit(spec.get("memory_limit_mb"))
        shell.events.register("post_run_cell", self.post_run_cell)
        formatter = shell.display_formatter.formatters["image/png"]
        formatter.for_type_by_name("matplotlib.figure", "Figure", _figure_png)

    # -- episode lifecycle -------------------------------------------------------------------------
    def load(self, spec: dict[str, Any]) -> None:
        """Populate the namespace for an episode described by ``spec`` (frames, meta, vlm, workdir)."""
        from spatialclaw.primitives.runtime.namespace import build_namespace

        workdir = Path(spec.get("workdir") or os.getcwd())
        workdir.mkdir(parents=True, exist_ok=True)
        os.chdir(workdir)
        snapshot_dir = Path(spec.get("snapshot_dir") or workdir / ".spatialclaw" / "snapshot")
        self.snapshot = Snapshot(
            snapshot_dir,
            total_bytes=int(spec.get("snapshot_total_mb", 256)) * 2**20,
            per_variable_bytes=int(spec.get("snapshot_variable_mb", 64)) * 2**20,
        )
        namespace = build_namespace(
            spec.get("frames"), spec.get("meta"), spec.get("vlm"), primitives=spec.get("primitives")
        )
        self.shell.user_ns.update(namespace)
        self.shell.user_ns[RUNTIME_NAME] = self
        self.shell.user_ns_hidden[RUNTIME_NAME] = self
        self.baseline = {name: id(value) for name, value in namespace.items()}
        self.signatures = {}

    def reset(self, spec: dict[str, Any] | str) -> None:
        """Forget everything of the previous episode (variables, history, figures, snapshot), then load ``spec``."""
        episode: dict[str, Any] = json.loads(spec) if isinstance(spec, str) else spec
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
        if self.snapshot is not None:
            self.snapshot.clear()
        end_other_processes()
        self.shell.reset(new_session=True, aggressive=False)
        gc.collect()
        self.load(episode)

    def restore(self) -> dict[str, Any]:
        """Load the last successful cell's variables from the snapshot; returns restored and failed names."""
        assert self.snapshot is not None
        restored, failed = self.snapshot.load(self.shell.user_ns)
        self.signatures = {name: _signature(self.shell.user_ns[name]) for name in restored}
        return {"restored": restored, "failed": failed}

    def _apply_memory_limit(self, limit_mb: int | None) -> None:
        if not limit_mb:
            return
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = int(limit_mb) * 2**20
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
        self.memory_limit_mb = int(limit_mb)

    # -- per-cell report ---------------------------------------------------------------------------
    def user_variables(self) -> dict[str, Any]:
        hidden = self.shell.user_ns_hidden
        return {
            name: value
            for name, value in self.shell.user_ns.items()
            if not name.startswith("_") and name not in hidden and self.baseline.get(name) != id(value)
        }

    def post_run_cell(self, result: Any) -> None:
        from IPython.display import publish_display_data

        try:
            state = self._cell_state(result)
        except Exception as exc:  # never let reporting break the user's cell
            state = {"variables": [], "names": [], "error": None, "runtime_error": f"{type(exc).__name__}: {exc}"}
        publish_display_data(data={STATE_MIME: state}, metadata={})  # type: ignore[no-untyped-call]

    def _cell_state(self, result: Any) -> dict[str, Any]:
        if "matplotlib.pyplot" in sys.modules:
            from spatialclaw.primitives.display.mpl_backend import flush_figures

            flush_figures("figure")
        current = self.user_variables()
        changed = [name for name, value in current.items() if self.signatures.get(name) != _signature(value)]
        deleted = [name for name in self.signatures if name not in current]
        error = result.error_before_exec or result.error_in_exec
        if error is None and self.snapshot is not None:
            for name in changed:
                self.snapshot.save(name, current[name])
            for name in deleted:
                self.snapshot.forget(name)
            self.signatures = {name: _signature(value) for name, value in current.items()}
        return {
            "variables": [describe_value(name, current[name]) for name in changed],
            "deleted": deleted,
            "names": sorted(current),
            "error": self._describe_error(error, result) if error is not None else None,
            "snapshot_skipped": dict(self.snapshot.skipped) if self.snapshot else {},
        }

    def _describe_error(self, error: BaseException, result: Any) -> dict[str, Any]:
        cell_files = getattr(self.shell.compile, "_filename_map", {})
        described = describe_error(error, lambda filename: filename in cell_files, where="kernel")
        if isinstance(error, MemoryError) and self.memory_limit_mb:
            described["message"] = (
                f"{described['message'] or 'out of memory'}: the kernel's memory cap of {self.memory_limit_mb} MiB was reached. "
                "Work on less data at once (subsample frames, downscale images, use stride=) or raise memory_limit_mb."
            )
        return described


def end_other_processes() -> list[int]:
    """In the sandbox (``$SPATIALCLAW_SANDBOXED``, its own PID namespace), kill every process of the previous
    episode except this kernel and the namespace's init: detached (``setsid``, double-forked) ones included.
    Returns the pids killed; does nothing outside the sandbox, where other pids are the host's."""
    import signal

    if os.environ.get("SPATIALCLAW_SANDBOXED") != "1":
        return []
    killed = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, os.getpid()):
            try:
                os.kill(int(entry), signal.SIGKILL)
                killed.append(int(entry))
            except (ProcessLookupError, PermissionError):
                pass
    return killed


def describe_error(
    error: BaseException,
    is_cell_file: Callable[[str], bool],
    where: str,
    internal: re.Pattern[str] = _INTERNAL_PATH,
    keep_last: bool = True,
) -> dict[str, Any]:
    """A cell's exception as the fields of :class:`spatialclaw.kernel.cell.CellError`.

    ``line``/``source`` are the last cell frame's 1-based line and its text; the compact traceback lists
    the cell's frames and user-visible code, leaving out frames whose path matches ``internal`` (except
    the frame that raised, with ``keep_last``). ``where`` names the omitted frames (``kernel``, ``notebook``).
    """
    if isinstance(error, SyntaxError):
        text = (error.text or "").rstrip("\n") or None
        return {
            "type": type(error).__name__,
            "message": error.msg,
            "traceback": "",
            "line": error.lineno,
            "source": text,
        }
    line: int | None = None
    source: str | None = None
    lines: list[str] = []
    frames = traceback.extract_tb(error.__traceback__)
    for index, frame in enumerate(frames):
        if is_cell_file(frame.filename):
            line, source = (
                frame.lineno,
                (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).rstrip() or None,
            )
            place = "cell" if frame.name == "<module>" else f"cell, in {frame.name}"
            lines.append(f"  {place}, line {frame.lineno}: {(source or '').strip()}")
        elif (keep_last and index == len(frames) - 1) or not internal.search(frame.filename):
            lines.append(
                f'  File "{_short_path(frame.filename)}", line {frame.lineno}, in {frame.name}: {(frame.line or "").strip()}'
            )
    compact = f"Traceback ({where}-internal frames omitted):\n" + "\n".join(lines) if lines else ""
    return {"type": type(error).__name__, "message": str(error), "traceback": compact, "line": line, "source": source}


def _short_path(path: str) -> str:
    marker = f"{os.sep}site-packages{os.sep}"
    if marker in path:
        return path.split(marker, 1)[1]
    return path


def _figure_png(figure: Any) -> bytes:
    from spatialclaw.primitives.display.mpl_backend import figure_png

    return figure_png(figure)[0]


def install(shell: Any, spec: dict[str, Any] | str) -> KernelRuntime:
    """Install the runtime into ``shell`` (once per kernel process) and load the episode in ``spec``."""
    episode: dict[str, Any] = json.loads(spec) if isinstance(spec, str) else spec
    runtime = shell.user_ns.get(RUNTIME_NAME)
    if not isinstance(runtime, KernelRuntime):
        runtime = KernelRuntime(shell, episode)
    runtime.load(episode)
    return runtime
