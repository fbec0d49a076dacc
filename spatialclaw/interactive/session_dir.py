"""The session directory: where sessions live, their ids, their files and the daemon's socket path.

Session directory::

    SESSION_DIR/
      session.json     id, task, limits, creation time (written by the starter)
      prompt.md        the full prompt for whoever drives the session
      daemon.json      daemon pid, kernel pid, socket path, connection file (written when ready)
      daemon.log       the daemon's own stdout/stderr
      kernel.json      the kernel's Jupyter connection file (when the kernel exposes one)
      episode.jsonl    the trajectory (see :mod:`spatialclaw.trajectories.episode_log`)
      images/          every image a cell produced, as <sha256>.png; ``exec`` returns these paths
      preview/         PNG previews of the inputs (0700)

The kernel's working directory is its own private temporary folder, never inside the session directory.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, cast

__all__ = [
    "DAEMON_FILE",
    "LOG_FILE",
    "PROMPT_FILE",
    "SESSIONS_ENV",
    "SESSION_FILE",
    "SessionError",
    "check_private_directory",
    "check_session_id",
    "check_sessions_root",
    "find_session",
    "is_session_directory",
    "new_session_id",
    "read_json",
    "resolve_root",
    "sessions_root",
    "socket_path_for",
    "write_private",
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


def check_sessions_root(root: Path) -> Path:
    """``root`` (absolute, links resolved) if no other local user can move, replace or redirect what a
    session id names there: ``root`` is this user's and every folder above it this user's or root's, none of
    them writable by group or others unless sticky (others may then add entries, never move this user's).
    Otherwise a :class:`SessionError` naming the folder. Folders not made yet are this user's to make."""
    uid = os.getuid()
    for folder in [*reversed(root.parents), root]:
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            break
        if info.st_uid != uid and (folder == root or info.st_uid != 0):
            problem = f"belongs to another user (uid {info.st_uid}, you are {uid})"
        elif not stat.S_ISDIR(info.st_mode):
            problem = "is not a directory"
        elif info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            problem = f"may be written by group or others (mode {stat.S_IMODE(info.st_mode):o})"
        else:
            continue
        subject = f"the sessions folder {root}" if folder == root else f"{folder} (above the sessions folder {root})"
        raise SessionError(
            f"{subject} {problem}: another local user could move a session there and put another in its "
            f"place; use a folder of your own (mode 700) with --root or ${SESSIONS_ENV}"
        )
    return root


def is_session_directory(path: Path) -> bool:
    """Whether ``path`` is a session of this user: a real directory (never a link) of this user's with a
    ``session.json``."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and (path / SESSION_FILE).is_file()


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


def write_private(path: Path, text: str) -> None:
    """Create ``path`` readable and writable by this user only (mode 0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return cast(dict[str, Any], data)


def resolve_root(root: str | Path | None) -> Path:
    """An absolute sessions folder (socket paths must not depend on the caller's working directory) that no
    other local user can change (:func:`check_sessions_root`)."""
    return check_sessions_root((Path(root).expanduser() if root is not None else sessions_root()).resolve())


def find_session(session_id: str, root: str | Path | None = None) -> Path:
    """The directory of session ``session_id`` (a full id or a unique prefix), or a clear error. An id is
    never followed through a link (which could name another session): such an entry is refused by name."""
    base = resolve_root(root)
    check_session_id(session_id)
    exact = base / session_id
    if exact.is_symlink() or (exact / SESSION_FILE).exists():
        return check_private_directory(exact)
    matches = sorted(p for p in base.glob(f"{session_id}*") if is_session_directory(p)) if base.is_dir() else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionError(
            f"no session {session_id!r} under {base}; list them with `spatialclaw session list` "
            f"(set ${SESSIONS_ENV} if your sessions live elsewhere)"
        )
    raise SessionError(
        f"{session_id!r} matches several sessions ({', '.join(p.name for p in matches)}); give more of the id"
    )
