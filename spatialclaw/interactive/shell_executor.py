"""Run agent cells inside the *current* IPython shell (a person's notebook) instead of a separate kernel.

:class:`ShellExecutor` has the part of :class:`spatialclaw.Kernel`'s interface the agent loop uses
(``execute(code, timeout) -> CellResult``, ``reset``, ``shutdown``), so ``%%spatialclaw`` can run the
agent against the user's own namespace: every variable the agent creates stays there afterwards, and
the user's own variables are visible to the agent.

Differences from a separate kernel, by design: there is no process isolation (a cell that crashes the
process crashes the notebook's kernel; there is no restart and no variable snapshot), the timeout
interrupts the cell with ``SIGALRM`` (only possible on the main thread, which is where IPython runs
cells), and no memory cap is applied.
"""

from __future__ import annotations

import ast
import base64
import linecache
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from spatialclaw.kernel.cell import CellError, CellImage, CellResult, VariableInfo
from spatialclaw.kernel.collector import record_claim, report_rejected_answers
from spatialclaw.primitives.protocol import ANSWER_MIME, IMAGE_METADATA_KEY, STATE_MIME
from spatialclaw.task import FrameSpec, Task

__all__ = ["CellTimeout", "ShellExecutor"]

_HOST_FRAMES = re.compile(r"/IPython/|/ipykernel/|spatialclaw/shell_executor\.py")


class CellTimeout(TimeoutError):
    """Raised inside a cell that ran longer than its limit."""


@contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`CellTimeout` in the running code after ``seconds`` (main thread only; else no limit)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise CellTimeout(f"the cell ran longer than {seconds:g} s and was interrupted")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class ShellExecutor:
    """Executes cells in ``shell`` (an ``InteractiveShell``) and returns :class:`CellResult` objects.

    ``on_cell_start(step, code)`` and ``on_cell_end(step, result, outputs)`` are called around each
    cell; ``outputs`` are the captured rich outputs (IPython ``RichOutput``), so a caller can render
    them in the notebook exactly as the cell produced them.
    """

    def __init__(
        self,
        shell: Any,
        on_cell_start: Callable[[int, str], None] | None = None,
        on_cell_end: Callable[[int, CellResult, list[Any]], None] | None = None,
    ) -> None:
        self.shell = shell
        self.on_cell_start = on_cell_start
        self.on_cell_end = on_cell_end
        self.steps = 0
        self.pid = None
        self.workdir = None
        self.answer_spec: dict[str, Any] | None = None  # the host's copy of the answer spec (kernel meta)

    # -- the Kernel-compatible surface ----------------------------------------------------------
    def load(self, task: Task) -> None:
        """Bind the namespace of DESIGN.md for ``task`` into the shell (frames, meta, answer, scene, ...).

        Rebinds only those names; the user's other variables are left alone."""
        from spatialclaw.primitives.runtime.namespace import build_namespace

        specs = [spec.to_dict() for spec in task.inputs]
        self.answer_spec = task.kernel_meta()
        self.shell.user_ns.update(build_namespace(specs or None, task.kernel_meta(), None))

    def reset(
        self,
        frames: Any = None,
        meta: dict[str, Any] | None = None,
        workdir: Any = None,
        *,
        videos: Any = None,
        vlm: Any = None,
    ) -> None:
        """Kernel-compatible ``reset``: rebinds the namespace names (user variables are kept)."""
        from spatialclaw.primitives.runtime.namespace import build_namespace

        inputs = videos if videos is not None else ([frames] if frames is not None else [])
        specs = [FrameSpec.coerce(i).to_dict() for i in inputs]
        self.answer_spec = dict(meta or {})
        self.shell.user_ns.update(build_namespace(specs or None, meta, vlm))

    def is_alive(self) -> bool:
        return True

    def shutdown(self) -> None:
        """Nothing to stop: the shell belongs to the user."""

    def __enter__(self) -> ShellExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def execute(self, code: str, timeout: float = 120.0) -> CellResult:
        """Run ``code`` in the shell's user namespace; never raises for what the cell does."""
        from IPython.utils.capture import capture_output

        self.steps += 1
        step = self.steps
        if self.on_cell_start is not None:
            self.on_cell_start(step, code)
        result = CellResult(code=code)
        before = self._signatures()
        started = time.monotonic()
        with capture_output(stdout=True, stderr=True, display=True) as captured:
            error = self._run(code, step, timeout, result)
            self._flush_figures()
        result.duration_s = time.monotonic() - started
        result.stdout = captured.stdout
        result.stderr = captured.stderr
        rejected: list[str] = []
        outputs = self._collect(captured.outputs, result, rejected)
        if error is not None:
            result.error = error
            result.status = "timeout" if error.type == CellTimeout.__name__ else "error"
        report_rejected_answers(result, rejected)
        if result.error is not None and result.status == "ok":
            result.status = "error"
        result.variables = self._changed(before)
        if self.on_cell_end is not None:
            self.on_cell_end(step, result, outputs)
        return result

    # -- internals ------------------------------------------------------------------------------
    def _run(self, code: str, step: int, timeout: float | None, result: CellResult) -> CellError | None:
        shell = self.shell
        try:
            source = shell.transform_cell(code)
            filename = f"<spatialclaw step {step}>"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            tree = ast.parse(source, filename=filename)
        except SyntaxError as exc:
            return CellError("SyntaxError", exc.msg or str(exc), "", exc.lineno, (exc.text or "").rstrip("\n") or None)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        namespace = shell.user_ns
        try:
            with _time_limit(timeout):
                exec(compile(tree, filename, "exec"), namespace)
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
                    if value is not None:
                        self._show_result(value, result)
        except KeyboardInterrupt:
            raise  # the person interrupted the notebook: stop the whole run, not just this cell
        except BaseException as exc:
            return self._describe(exc, filename)
        return None

    def _show_result(self, value: Any, result: CellResult) -> None:
        """The last expression's value, as Jupyter would show it: an image if it renders as one, else text."""
        self.shell.user_ns["_"] = value
        data, metadata = self.shell.display_formatter.format(value)
        if "image/png" in data:
            from IPython.display import publish_display_data

            publish_display_data(  # type: ignore[no-untyped-call]  # IPython leaves it unannotated
                data=data, metadata={**metadata, IMAGE_METADATA_KEY: {"label": None, "origin": "result"}}
            )
        else:
            result.result_text = data.get("text/plain", repr(value))

    @staticmethod
    def _describe(exc: BaseException, filename: str) -> CellError:
        from spatialclaw.primitives.runtime.kernel_runtime import describe_error

        return CellError(
            **describe_error(
                exc, lambda name: name == filename, where="notebook", internal=_HOST_FRAMES, keep_last=False
            )
        )

    @staticmethod
    def _flush_figures() -> None:
        """Figures left open by the cell become images (origin ``figure``), as in the agent's kernel."""
        if "matplotlib.pyplot" not in sys.modules:
            return
        from spatialclaw.primitives.display.mpl_backend import flush_figures

        flush_figures("figure")

    def _collect(self, outputs: list[Any], result: CellResult, rejected: list[str]) -> list[Any]:
        """Move images and the answer from captured displays into ``result`` (an answer claim only when
        it passes the host's check, else its reason goes to ``rejected``); returns what to render."""
        shown: list[Any] = []
        for output in outputs:
            data, metadata = output.data, output.metadata or {}
            if STATE_MIME in data:
                continue
            if ANSWER_MIME in data:
                record_claim(result, data[ANSWER_MIME], self.answer_spec, rejected)
                shown.append(output)
                continue
            if "image/png" in data:
                raw = data["image/png"]
                png = base64.b64decode(raw) if isinstance(raw, str) else raw
                info = metadata.get(IMAGE_METADATA_KEY, {})
                result.images.append(CellImage.from_png(png, info.get("label"), info.get("origin", "display")))
            elif "text/plain" in data:
                result.stdout += data["text/plain"] + "\n"
            shown.append(output)
        return shown

    def _signatures(self) -> dict[str, tuple[int, type]]:
        hidden = self.shell.user_ns_hidden
        return {n: (id(v), type(v)) for n, v in self.shell.user_ns.items() if not n.startswith("_") and n not in hidden}

    def _changed(self, before: dict[str, tuple[int, type]]) -> list[VariableInfo]:
        from spatialclaw.primitives.runtime.kernel_runtime import describe_value

        after = self._signatures()
        names = [n for n, sig in after.items() if before.get(n) != sig]
        return [VariableInfo(**describe_value(n, self.shell.user_ns[n])) for n in names]
