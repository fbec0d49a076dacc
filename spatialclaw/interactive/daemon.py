"""The per-session daemon: owns one :class:`spatialclaw.Kernel`, serves requests on a Unix socket,
and is the only writer of the session's trajectory.

Started by :func:`spatialclaw.interactive.session.start_session` as ``python -m spatialclaw.interactive.daemon DIR``.
That process forks; the child detaches (new session, stdio to ``DIR/daemon.log``), starts the kernel,
binds the socket, writes ``DIR/daemon.json`` and reports "ready" through a pipe; the parent then exits
with status 0 (or 1 and the reason on stderr), so the command that started the session returns only
once the kernel is usable. ``--foreground`` skips the fork (for debugging).

The session itself (kernel, requests, trajectory) is :class:`~spatialclaw.interactive.daemon_service.SessionDaemon`.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import time
import traceback
from pathlib import Path

from spatialclaw.interactive.daemon_service import SessionDaemon

__all__ = ["READY", "main"]

READY = "ready"


def _run(directory: Path, ready_fd: int | None) -> int:
    os.umask(0o077)  # the trajectory, images, kernel files and workdir: this user only
    daemon = SessionDaemon(directory)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda s, _f: daemon.request_stop("interrupted"))
    try:
        daemon.start()
    except BaseException as exc:
        traceback.print_exc()
        daemon.end("error", error=f"{type(exc).__name__}: {exc}")
        daemon.release_resources()
        daemon.listener.close()
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
    parser = argparse.ArgumentParser(
        prog="python -m spatialclaw.interactive.daemon", description=__doc__.split("\n")[0]
    )
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
            print(
                f"the kernel did not start within {args.start_timeout} s; see {directory / 'daemon.log'}",
                file=sys.stderr,
            )
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
