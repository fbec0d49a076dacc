"""An exclusive lock on a run directory, so that two processes never run the same run's tasks.

:class:`RunLock` takes ``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``RUN/run.lock`` and writes the holder
(pid, host, start time) into it. The kernel drops the lock when the holder exits, however it exits
(SIGKILL included), so a stale lock file never blocks a later resume. A second process that finds the
lock held gets :class:`RunLockedError`, whose message names the holder. ``flock`` locks are local to a
host on most network file systems: a run shared over NFS between hosts is protected only if the NFS
server supports ``flock`` (Linux NFSv4 maps it to byte-range locks, which do work across clients).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from spatialclaw.trajectories.run_dir import PRIVATE_FILE, PRIVATE_FOLDER

__all__ = ["LOCK_NAME", "RunLock", "RunLockedError"]

LOCK_NAME = "run.lock"


class RunLockedError(RuntimeError):
    """Another process holds the run's lock; ``holder`` is what it wrote (pid, host, started), or {}."""

    def __init__(self, message: str, holder: dict[str, Any]) -> None:
        super().__init__(message)
        self.holder = holder


class RunLock:
    """The lock of the run directory ``run_dir`` (created if missing); a context manager."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock, or raise :class:`RunLockedError` at once (never waits)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)  # a new run is private from the start
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            who = (
                f"pid {holder.get('pid')} on host {holder.get('host')} (since {holder.get('started')})"
                if holder
                else "another process"
            )
            raise RunLockedError(
                f"{self.path.parent} is in use by {who}; wait for that run to end (or stop it), then resume again",
                holder,
            ) from None
        holder = {
            "pid": os.getpid(),
            "host": platform.node(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(holder) + "\n").encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (the file stays; its content names the last holder)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):  # the holder is between truncating and writing
        return {}
    return data if isinstance(data, dict) else {}
