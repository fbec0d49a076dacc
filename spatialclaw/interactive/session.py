"""Step-by-step sessions: a persistent spatial kernel that any harness drives one cell at a time.

A session is a directory under :func:`sessions_root` (``$SPATIALCLAW_SESSIONS`` or
``~/.spatialclaw/sessions``) and a small daemon process (:mod:`spatialclaw.interactive.daemon`) that owns
one :class:`spatialclaw.Kernel` and serves requests over a Unix socket. The daemon outlives the command
that started it, so separate shell commands (``spatialclaw session exec``), an MCP server or a Python
program can all drive the same kernel. The daemon is the only writer of the session's trajectory.

Session directory::

    SESSION_DIR/
      session.json     id, task, limits, creation time (written by the starter)
      prompt.md        the full prompt for whoever drives the session
      daemon.json      daemon pid, kernel pid, socket path, connection file (written when ready)
      daemon.log       the daemon's own stdout/stderr
      kernel.json      the kernel's Jupyter connection file (when the kernel exposes one)
      episode.jsonl    the trajectory (see :mod:`spatialclaw.trajectories.episode_log`)
      images/          every image a cell produced, as <sha256>.png; ``exec`` returns these paths
      work/            the kernel's working directory

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
import os
import re
import secrets
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.task import Task

__all__ = [
    "SESSIONS_ENV",
    "Session",
    "SessionError",
    "StepOutcome",
    "check_private_directory",
    "check_session_id",
    "find_session",
    "list_sessions",
    "sessions_root",
    "start_session",
]

SESSIONS_ENV = "SPATIALCLAW_SESSIONS"
SESSION_FILE = "session.json"
DAEMON_FILE = "daemon.json"
PROMPT_FILE = "prompt.md"
LOG_FILE = "daemon.log"
SOCKET_NAME = "daemon.sock"
_MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes on Linux, 103 on macOS
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""What a session id may be: a folder name, never a path (no separators, no leading dot, no ``..``)."""


class SessionError(RuntimeError):
    """A session operation failed for a reason outside the cell (no such session, daemon gone, ...)."""


def sessions_root() -> Path:
    """Where sessions live: ``$SPATIALCLAW_SESSIONS`` or ``~/.spatialclaw/sessions``."""
    env = os.environ.get(SESSIONS_ENV)
    return Path(env).expanduser() if env else Path.home() / ".spatialclaw" / "sessions"


def check_session_id(session_id: object) -> str:
    """``session_id`` if it is a valid id (see :data:`SESSION_ID`), else a :class:`SessionError`."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id) or ".." in session_id:
        raise SessionError(
            f"{session_id!r} is not a session id (up to 64 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit, no '..'); list them with `spatialclaw session list`"
        )
    return session_id


def check_private_directory(path: Path) -> Path:
    """``path`` if it is a real directory of this user that nobody else may write into; sockets and
    session files are only used inside such a directory (another user could otherwise plant or swap them)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise SessionError(f"{path} does not exist") from None
    if not stat.S_ISDIR(info.st_mode):
        raise SessionError(f"{path} is not a directory (a link or a file); remove it and start the session again")
    if info.st_uid != os.getuid():
        raise SessionError(
            f"{path} belongs to another user (uid {info.st_uid}, you are {os.getuid()}); refusing to use it for "
            "session sockets: remove it, or point TMPDIR or $SPATIALCLAW_SESSIONS elsewhere"
        )
    if info.st_mode & 0o022:
        raise SessionError(
            f"{path} may be written by group or others (mode {stat.S_IMODE(info.st_mode):o}); "
            f"make it private with `chmod 700 {path}`"
        )
    return path


def socket_path_for(directory: Path) -> Path:
    """The daemon's socket: inside the session directory when the path is short enough for AF_UNIX,
    otherwise in a private folder under the system temp directory (recorded in ``daemon.json``), whose
    ownership and mode are checked first."""
    inside = directory / SOCKET_NAME
    if len(str(inside)) <= _MAX_SOCKET_PATH:
        return inside
    private = Path(tempfile.gettempdir()) / f"spatialclaw-{os.getuid()}"
    private.mkdir(mode=0o700, exist_ok=True)
    return check_private_directory(private) / f"{directory.name}.sock"


def _check_sandbox(mode: str) -> None:
    """A valid sandbox mode, and for ``required`` a sandbox this machine has (before anything starts)."""
    from spatialclaw.kernel.sandbox import check_mode, support

    try:
        check_mode(mode)
    except ValueError as exc:
        raise SessionError(f"{exc} (--sandbox)") from None
    if mode == "required" and not support().available:
        raise SessionError(
            f"--sandbox required, but the kernel sandbox is unavailable here: {support().missing}; "
            "install it or use --sandbox auto"
        )


def _write_private(path: Path, text: str) -> None:
    """Create ``path`` readable and writable by this user only (mode 0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def positive_number(name: str, value: object, *, integer: bool = False) -> float:
    """``value`` as a positive, finite number (a whole one with ``integer``), else a one-line
    :class:`SessionError` naming ``name``."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if ok and integer and float(value) != int(value):
        ok = False
    if not ok:
        kind = "a whole number of at least 1" if integer else "a positive, finite number"
        raise SessionError(f"{name} must be {kind}, got {value!r}")
    return int(value) if integer else float(value)


def _new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


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


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _pid_alive(pid: int | None) -> bool:
    """True when ``pid`` is a live process (a zombie counts as gone)."""
    import psutil

    if not pid:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
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
        return _read_json(self.directory / SESSION_FILE) or {}

    def daemon_info(self) -> dict[str, Any]:
        return _read_json(self.directory / DAEMON_FILE) or {}

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
        except socket.timeout:
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
        return reply["result"]

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
        """Submit the final answer (validated by the kernel's ``answer()`` against the choices);
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


def _root(root: str | Path | None) -> Path:
    """An absolute sessions folder (socket paths must not depend on the caller's working directory)."""
    return (Path(root).expanduser() if root is not None else sessions_root()).resolve()


def find_session(session_id: str, root: str | Path | None = None) -> Path:
    """The directory of session ``session_id`` (a full id or a unique prefix), or a clear error."""
    base = _root(root)
    check_session_id(session_id)
    exact = base / session_id
    if (exact / SESSION_FILE).exists():
        return exact
    matches = sorted(p for p in base.glob(f"{session_id}*") if (p / SESSION_FILE).exists()) if base.is_dir() else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionError(
            f"no session {session_id!r} under {base}; list them with `spatialclaw session list` "
            f"(set ${SESSIONS_ENV} if your sessions live elsewhere)"
        )
    raise SessionError(f"{session_id!r} matches several sessions ({', '.join(p.name for p in matches)}); give more of the id")


def list_sessions(root: str | Path | None = None) -> list[Session]:
    """All sessions under the root, oldest first."""
    base = _root(root)
    if not base.is_dir():
        return []
    return [Session(p) for p in sorted(base.iterdir()) if (p / SESSION_FILE).exists()]


def start_session(
    task: Task,
    *,
    root: str | Path | None = None,
    session_id: str | None = None,
    max_steps: int = 30,
    cell_timeout_s: float = 120.0,
    idle_timeout_s: float = 6 * 3600.0,
    memory_limit_mb: int | None = None,
    vlm_model: str | None = None,
    vlm_api_key_env: str | None = None,
    sandbox: str = "auto",
    start_timeout_s: float = 180.0,
) -> Session:
    """Create a session directory, write its prompt and start its daemon; returns when the kernel is ready.

    ``max_steps`` is the step budget stated in the prompt and enforced by the daemon (``answer`` is
    always allowed); ``cell_timeout_s`` is the default per-cell limit in seconds; the daemon closes itself (writing
    the trajectory's ``end`` event with reason ``idle``) after ``idle_timeout_s`` seconds without a
    request, so a forgotten session does not hold a kernel forever. ``vlm_model`` (a model spec) is
    what the kernel's ``vlm.ask``/``vlm.locate`` consult; without it they raise a clear error. Its
    credentials come from this process's environment and stay in the daemon: ``openai:``/``anthropic:``
    use their usual key for their usual endpoint; an ``openai-compat:`` URL gets a key only from the
    environment variable named by ``vlm_api_key_env`` (never ``OPENAI_API_KEY``, and not
    ``$SPATIALCLAW_COMPAT_API_KEY`` implicitly, since a client may have chosen the URL).
    ``sandbox`` (``auto``, ``required``, ``off``) is the kernel's isolation (:class:`spatialclaw.Kernel`):
    sandboxed, a cell sees its frames and its workdir but no session directory (its own or another's).
    Limits must be positive and finite (a one-line :class:`SessionError` otherwise).
    """
    max_steps = int(positive_number("max_steps (--max-steps)", max_steps, integer=True))
    cell_timeout_s = positive_number("cell_timeout_s (--cell-timeout, seconds)", cell_timeout_s)
    idle_timeout_s = positive_number("idle_timeout_s (--idle-timeout, seconds)", idle_timeout_s)
    start_timeout_s = positive_number("start_timeout_s (seconds)", start_timeout_s)
    if memory_limit_mb is not None:
        try:
            memory_limit_mb = int(positive_number("memory_limit_mb (--memory-limit-mb, MiB)", memory_limit_mb, integer=True))
        except SessionError as exc:
            raise SessionError(f"{exc} (for no cap at all, leave it out and set SPATIALCLAW_KERNEL_MEMORY_MB=0)") from None
    if session_id is not None:
        check_session_id(session_id)
    _check_sandbox(sandbox)
    if not task.inputs:
        raise SessionError("a session needs frames: give --frames IMAGE... or --video PATH")
    for spec in task.inputs:
        missing = [p for p in spec.paths if not Path(p).exists()]
        if missing:
            raise SessionError(f"input file(s) not found: {', '.join(missing)}")
    base = _root(root)
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    session_id = session_id or _new_session_id()
    directory = base / session_id
    try:
        directory.mkdir(mode=0o700)
        os.chmod(directory, 0o700)  # whatever the umask: other users see nothing of a session
    except FileExistsError:
        raise SessionError(f"session {session_id!r} already exists in {base}; choose another id") from None

    from spatialclaw.interactive.session_prompt import build_session_prompt

    prompt = build_session_prompt(task, session_id, directory, max_steps, vlm_available=bool(vlm_model))
    _write_private(directory / PROMPT_FILE, prompt)
    info = {
        "id": session_id,
        "created": time.time(),
        "task": task.to_dict(),
        "max_steps": int(max_steps),
        "cell_timeout_s": float(cell_timeout_s),
        "idle_timeout_s": float(idle_timeout_s),
        "memory_limit_mb": memory_limit_mb,
        "vlm_model": vlm_model,
        "vlm_api_key_env": vlm_api_key_env,
        "sandbox": sandbox,
        "socket": str(socket_path_for(directory)),
    }
    _write_private(directory / SESSION_FILE, json.dumps(info, indent=2, default=str))

    try:
        launcher = subprocess.run(
            [sys.executable, "-m", "spatialclaw.interactive.daemon", str(directory), "--start-timeout", str(start_timeout_s)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=start_timeout_s + 15.0,
        )
    except subprocess.TimeoutExpired:
        raise SessionError(
            f"session {session_id} did not become ready within {start_timeout_s} s; see {directory / LOG_FILE}"
        ) from None
    if launcher.returncode != 0:
        detail = (launcher.stderr or launcher.stdout).strip()
        raise SessionError(f"session {session_id} failed to start: {detail or 'no message'}; see {directory / LOG_FILE}")
    return Session(directory)
