"""The session daemon's service: one :class:`SessionDaemon` owns the session's :class:`spatialclaw.Kernel`,
runs its requests and is the only writer of the session's trajectory.

The kernel is driven only from the main thread (:meth:`SessionDaemon.serve_forever`); an acceptor thread
(:class:`~spatialclaw.interactive.daemon_requests.RequestListener`) reads requests and hands them over
through a queue (``status`` is answered directly, so it works while a long cell runs). Kernel crashes
inside a cell are handled by the kernel itself (restart, variables restored from the last good cell); if
the kernel cannot be recovered, the daemon starts a fresh one and says so.
"""

from __future__ import annotations

import json
import math
import os
import queue
import threading
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spatialclaw.interactive.daemon_model import SessionVLM
from spatialclaw.interactive.daemon_records import rewrite_prompt, write_daemon_file, write_header
from spatialclaw.interactive.daemon_requests import RequestError, RequestListener, request_reasoning

if TYPE_CHECKING:
    from spatialclaw.interactive.session_client import StepOutcome
    from spatialclaw.kernel.cell import CellResult

__all__ = ["SessionDaemon"]


class SessionDaemon:
    """Serves one session directory until it is closed, goes idle, or receives SIGTERM."""

    def __init__(self, directory: Path) -> None:
        from spatialclaw.interactive.session_dir import SESSION_FILE

        self.directory = directory
        self.info: dict[str, Any] = json.loads((directory / SESSION_FILE).read_text(encoding="utf-8"))
        self.id = self.info["id"]
        self.max_steps = int(self.info.get("max_steps", 30))
        self.cell_timeout_s = float(self.info.get("cell_timeout_s", 120.0))
        self.idle_timeout_s = float(self.info.get("idle_timeout_s", 6 * 3600.0))
        self.socket_path = Path(self.info["socket"])
        self.state = "starting"
        self.steps = 0
        self.answer: Any = None
        self.answered = False
        self.busy_since: float | None = None
        self.last_request = time.monotonic()
        self.started = time.time()
        self.kernel: Any = None
        self.writer: Any = None
        self.task: Any = None
        self.turns: Any = None
        self._write_lock = threading.Lock()
        self.vlm = SessionVLM(self.info, self._write_lock, lambda: self.steps)
        self._stop_reason: str | None = None
        self.listener = RequestListener(self.socket_path, self.status)

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        from spatialclaw.interactive.driver_turns import SessionTurns
        from spatialclaw.task import Task
        from spatialclaw.trajectories.episode_log import TrajectoryWriter

        self.task = Task.from_dict(self.info["task"])
        self.writer = TrajectoryWriter(self.directory)
        write_header(
            self.writer, self.task, self.id, self.info, self.max_steps, self.cell_timeout_s, self.idle_timeout_s
        )
        self.turns = SessionTurns(self.task, self.max_steps, self._write, self.writer.messages)
        self.vlm.start(self.writer)
        self.kernel = self._new_kernel()
        rewrite_prompt(self.directory, self.task, self.id, self.info, self.kernel)
        self.listener.bind()
        self.state = "running"
        self._write_daemon_file()
        self.listener.start()

    def _new_kernel(self) -> Any:
        from spatialclaw.kernel.kernel import Kernel

        return Kernel.for_task(  # its own private workdir (removed with it), never inside the session directory
            self.task,
            vlm=self.vlm.config,
            memory_limit_mb=self.info.get("memory_limit_mb"),
            sandbox=self.info.get("sandbox", "auto"),
            primitives=self.info.get("primitives"),
        )

    def _write(self, event_type: str, **fields: Any) -> None:
        with self._write_lock:
            self.writer.write(event_type, **fields)

    def _write_daemon_file(self) -> None:
        write_daemon_file(self.directory, self.socket_path, self.started, self.kernel)

    def serve_forever(self) -> int:
        """Run requests on the main thread until closed; returns the process exit code."""
        while True:
            if self._stop_reason is not None:
                self._shutdown(self._stop_reason)
                return 0
            try:
                pending = self.listener.queue.get(timeout=0.5)
            except queue.Empty:
                if time.monotonic() - self.last_request > self.idle_timeout_s:
                    print(f"idle for {self.idle_timeout_s:.0f} s; closing", flush=True)
                    self._shutdown("idle")
                    return 0
                continue
            try:
                pending.reply = {"ok": True, "result": self._handle(pending.request)}
            except RequestError as exc:
                pending.reply = {"ok": False, "error": str(exc)}
            except Exception as exc:  # a bug here must not take the session down silently
                traceback.print_exc()
                pending.reply = {"ok": False, "error": f"session daemon error: {type(exc).__name__}: {exc}"}
            finally:
                self.busy_since = None
                self.last_request = time.monotonic()
                pending.done.set()
            if self.state == "closed":
                pending.sent.wait(10.0)  # let the client read its reply before the process exits
                self.listener.close()
                return 0

    def request_stop(self, reason: str) -> None:
        self._stop_reason = reason

    def _shutdown(self, reason: str) -> None:
        self.end(reason)
        self.release_resources()
        self.state = "closed"
        self.busy_since = None
        self.listener.close()

    def release_resources(self) -> None:
        self.vlm.stop()
        if self.kernel is not None:
            try:
                self.kernel.shutdown()
            except Exception:
                traceback.print_exc()
            self.kernel = None
        if self.writer is not None:
            self.writer.close()

    def end(self, reason: str, error: str | None = None) -> None:
        if self.writer is None or self.state in {"answered", "closed"}:
            return
        self._write(
            "end",
            reason=reason,
            error=error,
            steps=self.steps,
            usage=asdict(self.vlm.usage) if self.vlm.usage is not None else {},
            cost_usd=self.vlm.cost_usd,
            duration_s=time.time() - self.started,
        )

    # ----- requests --------------------------------------------------------------------------

    def _handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        self.busy_since = time.monotonic()
        if op == "exec":
            code = request.get("code")
            if not isinstance(code, str) or not code.strip():
                raise RequestError("exec needs non-empty code")
            if self.max_steps and self.steps >= self.max_steps and not self.answered:
                raise RequestError(
                    f"the step budget of {self.max_steps} cells is spent; submit your answer with "
                    f"`spatialclaw session answer {self.id} VALUE` (MCP: session_answer)"
                )
            timeout = request.get("timeout")
            valid = (
                isinstance(timeout, (int, float))
                and not isinstance(timeout, bool)
                and math.isfinite(timeout)
                and timeout > 0
            )
            if timeout is not None and not valid:
                raise RequestError(f"exec timeout must be a positive, finite number of seconds, got {timeout!r}")
            return self._execute(code, timeout, request_reasoning(request)).to_dict()
        if op == "answer":
            if "value" not in request:
                raise RequestError("answer needs a value")
            return self._answer(request["value"], request_reasoning(request)).to_dict()
        if op == "close":
            self._shutdown("closed")
            return self.status()
        raise RequestError(f"unknown operation {op!r}; use exec, answer, status or close")

    def _answer(self, value: Any, reasoning: str | None) -> StepOutcome:
        """The caller's answer, checked and recorded by this process against its own copy of the task.
        No kernel name decides it (a cell may have redefined ``answer`` or patched ``Answerer``): the
        kernel is not asked at all, and the step is logged as the cell ``answer(VALUE)`` it stands for."""
        from spatialclaw.kernel.cell import CellError, CellResult
        from spatialclaw.primitives.answers import AnswerError, normalise_for

        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise RequestError(f"the answer must be text or a number, got {type(value).__name__}")
        code = f"answer({value!r})"
        meta = self.task.kernel_meta()
        try:
            normalised = normalise_for(value, meta)
        except AnswerError as exc:
            error = CellError("AnswerError", str(exc), line=1, source=code)
            return self._execute(code, None, reasoning, CellResult(code=code, status="error", error=error))
        return self._execute(code, None, reasoning, CellResult(code=code, answer=normalised, answered=True))

    def _execute(
        self, code: str, timeout: Any, reasoning: str | None = None, decided: CellResult | None = None
    ) -> StepOutcome:
        """Run ``code`` as the next step, or record ``decided`` (a CellResult the host made) in its place."""
        from spatialclaw.interactive.session_client import StepOutcome
        from spatialclaw.kernel.cell import CellError, CellResult

        if self.answered:
            raise RequestError(
                f"session {self.id} is already answered ({self.answer!r}); close it, or start a new session"
            )
        if self.kernel is None:
            raise RequestError(f"session {self.id} is closed")
        self.steps += 1
        self.turns.before_cell(self.steps, code, reasoning)  # the driver's words, logged as its model call
        limit = float(timeout) if timeout is not None else self.cell_timeout_s
        try:
            result = decided if decided is not None else self.kernel.execute(code, timeout=limit)
        except Exception as exc:  # the kernel could not recover by itself: replace it
            traceback.print_exc()
            result = CellResult(
                code=code,
                status="crashed",
                error=CellError(type(exc).__name__, str(exc)),
                restarted=True,
                notes=["the kernel could not be recovered; a fresh kernel was started and every variable is lost"],
            )
            try:
                self.kernel.shutdown()
            except Exception:
                traceback.print_exc()
            self.kernel = self._new_kernel()
            self._write_daemon_file()
        with self._write_lock:
            serialised = self.writer.cell_result(result)
        self._write("cell", step=self.steps, code=code, result=serialised)
        self.turns.after_cell(self.steps, code, result)
        if getattr(result, "restarted", False):
            self._write_daemon_file()  # the kernel has a new pid and connection file
        images = [str((self.directory / "images" / f"{image.sha256}.png").resolve()) for image in result.images]
        if result.answered:
            self._write("answer", value=result.answer, source="cell" if decided is None else "session")
            self.end("answered")
            self.answer, self.answered, self.state = result.answer, True, "answered"
        return StepOutcome(
            session=self.id,
            step=self.steps,
            status=result.status,
            text=result.to_text(),
            images=images,
            answer=result.answer if result.answered else None,
            answered=bool(result.answered),
            state=self.state,
        )

    def status(self) -> dict[str, Any]:
        from spatialclaw.interactive.session_dir import LOG_FILE, PROMPT_FILE

        state = self.state
        if state == "running" and self.busy_since is not None:
            state = "busy"
        return {
            "session": self.id,
            "state": state,
            "steps": self.steps,
            "max_steps": self.max_steps,
            "answer": self.answer,
            "answered": self.answered,
            "question": self.info["task"].get("question"),
            "directory": str(self.directory),
            "prompt": str(self.directory / PROMPT_FILE),
            "log": str(self.directory / LOG_FILE),
            "pid": os.getpid(),
            "kernel_pid": getattr(self.kernel, "pid", None) if self.kernel is not None else None,
            "sandboxed": bool(getattr(self.kernel, "sandboxed", False)) if self.kernel is not None else None,
            "busy_s": time.monotonic() - self.busy_since if self.busy_since is not None else None,
            "idle_s": time.monotonic() - self.last_request,
        }
