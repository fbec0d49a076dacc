"""The per-session daemon: owns one :class:`spatialclaw.Kernel`, serves requests on a Unix socket,
and is the only writer of the session's trajectory.

Started by :func:`spatialclaw.interactive.session.start_session` as ``python -m spatialclaw.interactive.daemon DIR``.
That process forks; the child detaches (new session, stdio to ``DIR/daemon.log``), starts the kernel,
binds the socket, writes ``DIR/daemon.json`` and reports "ready" through a pipe; the parent then exits
with status 0 (or 1 and the reason on stderr), so the command that started the session returns only
once the kernel is usable. ``--foreground`` skips the fork (for debugging).

The kernel is driven only from the main thread; an acceptor thread reads requests and hands them
over through a queue (``status`` is answered directly, so it works while a long cell runs). Kernel
crashes inside a cell are handled by the kernel itself (restart, variables restored from the last
good cell); if the kernel cannot be recovered, the daemon starts a fresh one and says so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import select
import signal
import socket
import sys
import threading
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any

READY = "ready"
MAX_REQUEST_BYTES = 8 << 20
"""A request line longer than this (8 MiB) is refused; cells are code, images travel the other way."""
READ_TIMEOUT_S = 5.0
"""A client has this many seconds to send its whole request line (a stalled one is answered and dropped)."""
MAX_CONNECTIONS = 32
"""Connections served at once; more are refused with an error instead of piling up threads."""


class RequestError(Exception):
    """A request that cannot be served; the message goes back to the client verbatim."""


class _Pending:
    """A request waiting for the main thread, with the slot its reply goes into."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.reply: dict[str, Any] | None = None
        self.done = threading.Event()
        self.sent = threading.Event()


class SessionDaemon:
    """Serves one session directory until it is closed, goes idle, or receives SIGTERM."""

    def __init__(self, directory: Path) -> None:
        from spatialclaw.interactive.session import SESSION_FILE

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
        self.model: Any = None
        self.vlm_server: Any = None
        self.vlm_config: dict[str, Any] | None = None
        self.usage: Any = None
        self.cost_usd: float | None = None
        self._write_lock = threading.Lock()
        self._queue: queue.Queue[_Pending] = queue.Queue()
        self._stop_reason: str | None = None
        self._server: socket.socket | None = None
        self._connections = threading.BoundedSemaphore(MAX_CONNECTIONS)

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        from spatialclaw.interactive.driver_turns import SessionTurns
        from spatialclaw.task import Task
        from spatialclaw.trajectories.episode_log import TrajectoryWriter

        self.task = Task.from_dict(self.info["task"])
        self.writer = TrajectoryWriter(self.directory)
        self._write_header()
        self.turns = SessionTurns(self.task, self.max_steps, self._write, self.writer.messages)
        self._start_vlm()
        self.kernel = self._new_kernel()
        self._rewrite_prompt()
        if self.socket_path.exists():
            self.socket_path.unlink()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o600)
        server.listen(16)
        server.settimeout(0.5)
        self._server = server
        self.state = "running"
        self._write_daemon_file()
        threading.Thread(target=self._accept_loop, name="session-acceptor", daemon=True).start()

    def _rewrite_prompt(self) -> None:
        """Rewrite the prompt with what the kernel's learned tools reported at start (unavailable ones
        are marked, with the reason)."""
        from spatialclaw.interactive.session import PROMPT_FILE
        from spatialclaw.interactive.session_prompt import build_session_prompt

        tools = self.kernel.tool_status() if hasattr(self.kernel, "tool_status") else None
        if tools is None:
            return
        prompt = build_session_prompt(self.task, self.id, self.directory, int(self.info.get("max_steps") or 0),
                                      vlm_available=bool(self.info.get("vlm_model")), tools=tools)
        (self.directory / PROMPT_FILE).write_text(prompt, encoding="utf-8")

    def _new_kernel(self) -> Any:
        from spatialclaw.kernel.kernel import Kernel

        return Kernel.for_task(
            self.task,
            workdir=self.directory / "work",
            vlm=self.vlm_config,
            memory_limit_mb=self.info.get("memory_limit_mb"),
            sandbox=self.info.get("sandbox", "auto"),
        )

    def _start_vlm(self) -> None:
        """With ``vlm_model`` set, the kernel's ``vlm.ask``/``vlm.locate`` reach that model through a
        local side-channel server in this process (credentials never enter the kernel).

        The spec may come from a client (an MCP tool call), so an ``openai-compat:`` URL gets a key only
        when the starter named one for it (``vlm_api_key_env``); never one from the environment."""
        spec = self.info.get("vlm_model")
        if not spec:
            return
        from spatialclaw.models import load_model, parse_spec
        from spatialclaw.agent.vlm_server import VLMServer

        options = {}
        if parse_spec(spec)[0] == "openai-compat" or self.info.get("vlm_api_key_env"):
            options["api_key_env"] = self.info.get("vlm_api_key_env")
        self.model = load_model(spec, **options)
        self.vlm_server = VLMServer().start()
        self.vlm_config = self.vlm_server.open_channel(self._call_model)

    def _call_model(self, messages: list[Any], purpose: str) -> Any:
        """One ``vlm.*`` model call, logged as a ``model_call`` event like the agent's."""
        from spatialclaw.models import ModelError

        logged = {"step": self.steps, "purpose": purpose, "model": self.model.spec, "params": {}, "messages": messages}
        started = time.perf_counter()
        try:
            reply = self.model.chat(messages, purpose=purpose)
            with self._write_lock:
                self.usage = reply.usage if self.usage is None else self.usage + reply.usage
                if reply.cost_usd is not None:
                    self.cost_usd = (self.cost_usd or 0.0) + reply.cost_usd
        except ModelError as failure:
            self.writer.model_call(**logged, error=str(failure), latency_s=time.perf_counter() - started)
            raise
        self.writer.model_call(**logged, reply=reply)
        return reply

    def _write(self, event_type: str, **fields: Any) -> None:
        with self._write_lock:
            self.writer.write(event_type, **fields)

    def _kernel_details(self) -> dict[str, Any]:
        """The kernel's pid and connection file, copied to ``DIR/kernel.json`` for other Jupyter clients."""
        details: dict[str, Any] = {"kernel_pid": getattr(self.kernel, "pid", None), "connection_file": None}
        source = getattr(self.kernel, "connection_file", None)
        if source and Path(source).exists():
            target = self.directory / "kernel.json"
            target.write_bytes(Path(source).read_bytes())
            os.chmod(target, 0o600)
            details["connection_file"] = str(target)
        return details

    def _write_daemon_file(self) -> None:
        from spatialclaw.interactive.session import DAEMON_FILE

        data = {"pid": os.getpid(), "socket": str(self.socket_path), "started": self.started, **self._kernel_details()}
        tmp = self.directory / f".{DAEMON_FILE}.tmp"
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, self.directory / DAEMON_FILE)

    def _write_header(self) -> None:
        import hashlib

        from spatialclaw import __version__
        from spatialclaw.kernel.sandbox import describe
        from spatialclaw.interactive.session_prompt import prompt_version
        from spatialclaw.trajectories.episode_log import FORMAT_VERSION, config_hash

        config = {
            "driver": "session",
            "max_steps": self.max_steps,
            "cell_timeout_s": self.cell_timeout_s,
            "idle_timeout_s": self.idle_timeout_s,
            "memory_limit_mb": self.info.get("memory_limit_mb"),
            "vlm_model": self.info.get("vlm_model"),
            "sandbox": describe(self.info.get("sandbox", "auto")),
        }
        self.writer.write(
            "header",
            format_version=FORMAT_VERSION,
            package_version=__version__,
            prompt_version=prompt_version(),
            model="session",
            config=config,
            config_hash=config_hash(config),
            session=self.id,
        )
        files = {}
        for spec in self.task.inputs:
            for path in spec.paths:
                digest = hashlib.sha256()
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                files[path] = digest.hexdigest()
        self.writer.write("task", task=self.task.to_dict(), files=files)

    def serve_forever(self) -> int:
        """Run requests on the main thread until closed; returns the process exit code."""
        while True:
            if self._stop_reason is not None:
                self._shutdown(self._stop_reason)
                return 0
            try:
                pending = self._queue.get(timeout=0.5)
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
                self._release_socket()
                return 0

    def request_stop(self, reason: str) -> None:
        self._stop_reason = reason

    def _shutdown(self, reason: str) -> None:
        self._end(reason)
        self._release_resources()
        self.state = "closed"
        self.busy_since = None
        self._release_socket()

    def _release_resources(self) -> None:
        if self.vlm_server is not None:
            self.vlm_server.stop()
            self.vlm_server = None
        if self.model is not None:
            self.model.close()
            self.model = None
        if self.kernel is not None:
            try:
                self.kernel.shutdown()
            except Exception:
                traceback.print_exc()
            self.kernel = None
        if self.writer is not None:
            self.writer.close()

    def _release_socket(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        try:
            self.socket_path.unlink()
        except FileNotFoundError:
            pass

    def _end(self, reason: str, error: str | None = None) -> None:
        if self.writer is None or self.state in {"answered", "closed"}:
            return
        self._write(
            "end",
            reason=reason,
            error=error,
            steps=self.steps,
            usage=asdict(self.usage) if self.usage is not None else {},
            cost_usd=self.cost_usd,
            duration_s=time.time() - self.started,
        )

    # ----- requests --------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        while self._server is not None:
            try:
                conn, _ = self._server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            if not self._connections.acquire(blocking=False):
                threading.Thread(target=self._refuse_connection, args=(conn,), daemon=True).start()
                continue
            threading.Thread(target=self._serve_connection, args=(conn,), daemon=True).start()

    @staticmethod
    def _refuse_connection(conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(1.0)
                error = f"the session daemon is serving {MAX_CONNECTIONS} connections already; retry shortly"
                conn.sendall((json.dumps({"ok": False, "error": error}) + "\n").encode("utf-8"))
            except OSError:
                pass

    def _serve_connection(self, conn: socket.socket) -> None:
        try:
            self._serve_request(conn)
        finally:
            self._connections.release()

    def _serve_request(self, conn: socket.socket) -> None:
        pending: _Pending | None = None
        with conn:
            try:
                request = _read_request(conn)
            except RequestError as exc:
                reply = {"ok": False, "error": str(exc)}
            else:
                if request.get("op") == "status":
                    reply = {"ok": True, "result": self.status()}
                else:
                    pending = _Pending(request)
                    self._queue.put(pending)
                    pending.done.wait()
                    reply = pending.reply or {"ok": False, "error": "no reply"}
            try:
                conn.settimeout(60.0)  # a client that stops reading does not hold a connection slot for ever
                conn.sendall((json.dumps(reply, default=str) + "\n").encode("utf-8"))
            except OSError:
                pass  # the client went away; the step is in the trajectory all the same
            finally:
                if pending is not None:
                    pending.sent.set()

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
            valid = isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and math.isfinite(timeout) and timeout > 0
            if timeout is not None and not valid:
                raise RequestError(f"exec timeout must be a positive, finite number of seconds, got {timeout!r}")
            return self._execute(code, timeout, _reasoning(request)).to_dict()
        if op == "answer":
            if "value" not in request:
                raise RequestError("answer needs a value")
            return self._execute(f"answer({request['value']!r})", None, _reasoning(request)).to_dict()
        if op == "close":
            self._shutdown("closed")
            return self.status()
        raise RequestError(f"unknown operation {op!r}; use exec, answer, status or close")

    def _execute(self, code: str, timeout: Any, reasoning: str | None = None) -> Any:
        from spatialclaw.kernel.cell import CellError, CellResult
        from spatialclaw.interactive.session import StepOutcome

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
            result = self.kernel.execute(code, timeout=limit)
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
            self._write("answer", value=result.answer, source="cell")
            self._end("answered")
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
        from spatialclaw.interactive.session import LOG_FILE, PROMPT_FILE

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


def _reasoning(request: dict[str, Any]) -> str | None:
    """The driver's words sent with an ``exec``/``answer`` request (``reasoning``), if any."""
    reasoning = request.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        raise RequestError(f"reasoning must be text (the driving model's words for this cell), got {type(reasoning).__name__}")
    return reasoning


def _read_request(conn: socket.socket) -> dict[str, Any]:
    """One JSON object sent as one line, within :data:`READ_TIMEOUT_S` and :data:`MAX_REQUEST_BYTES`;
    anything else is a :class:`RequestError` whose message goes back to the client."""
    deadline = time.monotonic() + READ_TIMEOUT_S
    buffer = b""
    while not buffer.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RequestError(f"malformed request: no complete request line within {READ_TIMEOUT_S:g} s")
        conn.settimeout(remaining)
        try:
            chunk = conn.recv(1 << 16)
        except socket.timeout:
            continue
        except OSError as exc:
            raise RequestError(f"malformed request: {exc}") from None
        if not chunk:
            break
        buffer += chunk
        if len(buffer) > MAX_REQUEST_BYTES:
            raise RequestError(f"request too large: more than {MAX_REQUEST_BYTES >> 20} MiB; send a smaller cell")
    try:
        request = json.loads(buffer.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RequestError(f"malformed request: {exc}") from None
    if not isinstance(request, dict):
        raise RequestError(f"malformed request: expected a JSON object such as {{\"op\": \"status\"}}, got {type(request).__name__}")
    return request


def _run(directory: Path, ready_fd: int | None) -> int:
    os.umask(0o077)  # the trajectory, images, kernel files and workdir: this user only
    daemon = SessionDaemon(directory)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda s, _f: daemon.request_stop("interrupted"))
    try:
        daemon.start()
    except BaseException as exc:
        traceback.print_exc()
        daemon._end("error", error=f"{type(exc).__name__}: {exc}")
        daemon._release_resources()
        daemon._release_socket()
        if ready_fd is not None:
            os.write(ready_fd, f"{type(exc).__name__}: {exc}".encode("utf-8", "replace"))
            os.close(ready_fd)
        return 1
    print(f"session {daemon.id} ready: pid {os.getpid()}, socket {daemon.socket_path}", flush=True)
    if ready_fd is not None:
        os.write(ready_fd, f"{READY} {daemon.id}".encode())
        os.close(ready_fd)
    return daemon.serve_forever()


def _detach_stdio(log_path: Path) -> None:
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spatialclaw.interactive.daemon", description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path, help="the session directory (with session.json)")
    parser.add_argument("--foreground", action="store_true", help="do not fork; log to this terminal")
    parser.add_argument("--start-timeout", type=float, default=180.0, help="seconds to wait for the kernel")
    args = parser.parse_args(argv)
    directory = args.directory.resolve()
    if not (directory / "session.json").exists():
        print(f"{directory} is not a session directory (no session.json)", file=sys.stderr)
        return 2
    if args.foreground:
        return _run(directory, None)

    read_fd, write_fd = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_fd)
        os.setsid()
        _detach_stdio(directory / "daemon.log")
        try:
            code = _run(directory, write_fd)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    os.close(write_fd)
    deadline = time.monotonic() + args.start_timeout
    message = b""
    while True:
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([read_fd], [], [], max(remaining, 0))
        if not ready:
            os.kill(child, signal.SIGTERM)
            print(f"the kernel did not start within {args.start_timeout} s; see {directory / 'daemon.log'}", file=sys.stderr)
            return 1
        chunk = os.read(read_fd, 4096)
        if not chunk:
            break
        message += chunk
    text = message.decode("utf-8", "replace")
    if text.startswith(READY):
        print(text)
        return 0
    print(text or f"the session daemon exited before it was ready; see {directory / 'daemon.log'}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
