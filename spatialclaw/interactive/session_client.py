"""The client side of a session: a :class:`Session` handle that talks to the session's daemon, and what
one step returns (:class:`StepOutcome`).

The wire protocol is one JSON request line and one JSON reply line per connection::

    {"op": "exec", "code": "...", "timeout": 120.0}  ->  {"ok": true, "result": {...}}
    {"op": "answer", "value": "B"}                   ->  {"ok": true, "result": {...}}
    (both take an optional "reasoning": the driving model's words for the cell; see spatialclaw.interactive.driver_turns)
    {"op": "status"} / {"op": "close"}               ->  {"ok": true, "result": {...}}
    failures                                         ->  {"ok": false, "error": "what went wrong and what to do"}
"""

from __future__ import annotations

import json
import math
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from spatialclaw.interactive.session_dir import (
    DAEMON_FILE,
    LOG_FILE,
    PROMPT_FILE,
    SESSION_FILE,
    SessionError,
    check_private_directory,
    find_session,
    read_json,
)

__all__ = ["Session", "StepOutcome", "positive_number"]


def positive_number(name: str, value: object, *, integer: bool = False) -> float:
    """``value`` as a positive, finite number (a whole one with ``integer``), else a one-line
    :class:`SessionError` naming ``name``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        if not integer:
            return float(value)
        if float(value) == int(value):
            return int(value)
    kind = "a whole number of at least 1" if integer else "a positive, finite number"
    raise SessionError(f"{name} must be {kind}, got {value!r}")


@dataclass
class StepOutcome:
    """What one ``exec`` (or ``answer``) returned.

    ``text`` is the observation exactly as a model would see it (:meth:`CellResult.to_text`);
    ``images`` are absolute paths of PNG files in the session directory, in the order the cell
    produced them; ``answer`` is the submitted answer when this step answered, else ``None``.
    """

    session: str
    step: int
    status: str
    text: str
    images: list[str] = field(default_factory=list)
    answer: Any = None
    answered: bool = False
    state: str = "running"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepOutcome:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def _pid_alive(pid: int | None) -> bool:
    """True when ``pid`` is a live process (a zombie counts as gone)."""
    import psutil

    if not pid:
        return False
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:  # gone, or a reused pid we may not inspect
        return False


class Session:
    """A handle on one session directory; every method talks to its daemon.

    Handles are cheap and stateless (any number of processes may hold one): ``Session.open(ID)``.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.id = self.directory.name

    @classmethod
    def open(cls, session_id: str, root: str | Path | None = None) -> Session:
        return cls(find_session(session_id, root))

    def __repr__(self) -> str:
        return f"Session({self.id!r}, directory={str(self.directory)!r})"

    @property
    def prompt_path(self) -> Path:
        return self.directory / PROMPT_FILE

    @property
    def log_path(self) -> Path:
        return self.directory / LOG_FILE

    def info(self) -> dict[str, Any]:
        return read_json(self.directory / SESSION_FILE) or {}

    def daemon_info(self) -> dict[str, Any]:
        return read_json(self.directory / DAEMON_FILE) or {}

    def request(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request to the daemon and return its ``result``; raises :class:`SessionError`."""
        daemon = self.daemon_info()
        sock_path = daemon.get("socket")
        if not sock_path:
            raise SessionError(
                f"session {self.id} has no running daemon ({self.directory / DAEMON_FILE} missing); "
                f"see {self.log_path}, or start a new session"
            )
        check_private_directory(Path(sock_path).parent)
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(timeout)
        try:
            try:
                client.connect(sock_path)
            except (FileNotFoundError, ConnectionRefusedError):
                state = "closed" if self._ended() else "dead"
                raise SessionError(
                    f"session {self.id} is {state}: its daemon (pid {daemon.get('pid')}) is not listening. "
                    + (
                        "Start a new session with `spatialclaw session start`."
                        if state == "closed"
                        else f"Its log is {self.log_path}; start a new session with `spatialclaw session start`."
                    )
                ) from None
            client.sendall((json.dumps(payload, default=str) + "\n").encode("utf-8"))
            chunks = []
            while True:
                chunk = client.recv(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        except TimeoutError:
            raise SessionError(
                f"session {self.id}: no reply from the daemon within {timeout} s; it may be busy with a long cell"
            ) from None
        finally:
            client.close()
        raw = b"".join(chunks).decode("utf-8")
        if not raw.strip():
            raise SessionError(
                f"session {self.id}: the daemon closed the connection without replying; see {self.log_path}"
            )
        reply = json.loads(raw)
        if not reply.get("ok"):
            raise SessionError(reply.get("error") or "the session daemon reported an unknown error")
        return cast(dict[str, Any], reply["result"])

    def execute(self, code: str, timeout: float | None = None, reasoning: str | None = None) -> StepOutcome:
        """Run one cell in the session's kernel. ``timeout`` in seconds (default: the session's limit).
        ``reasoning`` is the driving model's words for this cell: recorded as its turn in the trajectory,
        so the session exports as fine-tuning rows (:mod:`spatialclaw.interactive.driver_turns`).

        Cell errors, crashes and timeouts are part of the observation, not exceptions.
        """
        payload: dict[str, Any] = {"op": "exec", "code": code}
        if reasoning is not None:
            payload["reasoning"] = reasoning
        if timeout is not None:
            payload["timeout"] = positive_number("the cell timeout (--timeout, seconds)", timeout)
        return StepOutcome.from_dict(self.request(payload))

    def answer(self, value: Any, reasoning: str | None = None) -> StepOutcome:
        """Submit the final answer. The daemon checks ``value`` against the task's choices and answer type
        itself and records it (nothing in the kernel is consulted, so a cell that redefined ``answer`` cannot
        change it); a value that does not fit is an ``AnswerError`` step and the session stays open.
        ``reasoning`` as for :meth:`execute`."""
        payload: dict[str, Any] = {"op": "answer", "value": value}
        if reasoning is not None:
            payload["reasoning"] = reasoning
        return StepOutcome.from_dict(self.request(payload))

    def status(self) -> dict[str, Any]:
        """``state``, ``steps``, ``answer``/``answered`` and paths.

        States: ``running`` (waiting for a cell), ``busy`` (running one), ``answered`` (the episode is
        over, the kernel still up until ``close``), ``closed`` (daemon and kernel gone; see
        ``answered`` and ``end_reason``), ``dead`` (the daemon died without closing), ``unresponsive``.
        Works after the daemon is gone: a closed or dead session is described from its trajectory.
        """
        try:
            return self.request({"op": "status"}, timeout=10.0)
        except SessionError:
            return self._offline_status()

    def close(self, wait_s: float = 30.0) -> dict[str, Any]:
        """Shut the kernel and the daemon down and wait until both processes have exited.

        Closing a session that is already closed (or whose daemon died) is not an error.
        """
        daemon = self.daemon_info()
        pids = [p for p in (daemon.get("pid"), daemon.get("kernel_pid")) if p]
        try:
            result = self.request({"op": "close"}, timeout=wait_s)
        except SessionError:
            self._reap_orphaned_kernel(daemon)
            result = self._offline_status()
        deadline = time.monotonic() + wait_s
        while any(_pid_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = [p for p in pids if _pid_alive(p)]
        if alive:
            raise SessionError(
                f"session {self.id}: processes {alive} still running {wait_s} s after close; see {self.log_path}"
            )
        result = dict(result, state="closed", closed=True)
        return result

    def _reap_orphaned_kernel(self, daemon: dict[str, Any]) -> None:
        """A daemon that died (killed, out of memory) leaves its kernel behind; stop it.

        Only a process whose command line names this session's directory is touched, so a reused
        pid never hits an unrelated process."""
        pid = daemon.get("kernel_pid")
        if _pid_alive(daemon.get("pid")) or not _pid_alive(pid):
            return
        import psutil

        try:
            kernel = psutil.Process(pid)
            if not any(str(self.directory) in part for part in kernel.cmdline()):
                return
            kernel.terminate()
            try:
                kernel.wait(5.0)
            except psutil.TimeoutExpired:
                kernel.kill()
        except psutil.Error:
            return

    def _ended(self) -> bool:
        path = self.directory / "episode.jsonl"
        if not path.exists():
            return False
        from spatialclaw.trajectories.episode_log import load_episode

        return load_episode(self.directory).complete and not _pid_alive(self.daemon_info().get("pid"))

    def _offline_status(self) -> dict[str, Any]:
        """The status of a session whose daemon is not answering, read from its files."""
        from spatialclaw.trajectories.episode_log import load_episode

        info = self.info()
        daemon = self.daemon_info()
        steps, answer, answered, end = 0, None, False, None
        if (self.directory / "episode.jsonl").exists():
            episode = load_episode(self.directory)
            steps = len(episode.of_type("cell"))
            answered = bool(episode.of_type("answer"))
            answer = episode.answer
            end = episode.end
        if _pid_alive(daemon.get("pid")):
            state = "unresponsive"
        elif end is not None:
            state = "closed"
        else:
            state = "dead"
        return {
            "session": self.id,
            "state": state,
            "steps": steps,
            "answer": answer,
            "answered": answered,
            "question": info.get("task", {}).get("question"),
            "directory": str(self.directory),
            "prompt": str(self.prompt_path),
            "log": str(self.log_path),
            "end_reason": end.get("reason") if end else None,
        }
