"""The session daemon's socket: accepting connections, reading one request line from each, and replying.

An acceptor thread reads requests and hands them to the main thread through a queue (``status`` is answered
directly, so it works while a long cell runs). Limits: :data:`MAX_REQUEST_BYTES` per request,
:data:`READ_TIMEOUT_S` to send it, :data:`MAX_CONNECTIONS` served at once.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_CONNECTIONS",
    "MAX_REQUEST_BYTES",
    "READ_TIMEOUT_S",
    "Pending",
    "RequestError",
    "RequestListener",
    "read_request",
    "request_reasoning",
]

MAX_REQUEST_BYTES = 8 << 20
"""A request line longer than this (8 MiB) is refused; cells are code, images travel the other way."""
READ_TIMEOUT_S = 5.0
"""A client has this many seconds to send its whole request line (a stalled one is answered and dropped)."""
MAX_CONNECTIONS = 32
"""Connections served at once; more are refused with an error instead of piling up threads."""


class RequestError(Exception):
    """A request that cannot be served; the message goes back to the client verbatim."""


class Pending:
    """A request waiting for the main thread, with the slot its reply goes into."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.reply: dict[str, Any] | None = None
        self.done = threading.Event()
        self.sent = threading.Event()


class RequestListener:
    """The daemon's Unix socket at ``path`` and its acceptor thread; requests other than ``status``
    (answered with ``status()`` on the connection's thread) wait in :attr:`queue` for the main thread."""

    def __init__(self, path: Path, status: Callable[[], dict[str, Any]]) -> None:
        self.path = path
        self.status = status
        self.queue: queue.Queue[Pending] = queue.Queue()
        self._server: socket.socket | None = None
        self._connections = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def bind(self) -> None:
        """Listen on the socket (this user only); a stale socket file is replaced."""
        if self.path.exists():
            self.path.unlink()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(self.path))
        os.chmod(self.path, 0o600)
        server.listen(16)
        server.settimeout(0.5)
        self._server = server

    def start(self) -> None:
        """Start the acceptor thread."""
        threading.Thread(target=self._accept_loop, name="session-acceptor", daemon=True).start()

    def close(self) -> None:
        """Stop listening and remove the socket file."""
        if self._server is not None:
            self._server.close()
            self._server = None
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def _accept_loop(self) -> None:
        while self._server is not None:
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
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
        pending: Pending | None = None
        with conn:
            try:
                request = read_request(conn)
            except RequestError as exc:
                reply = {"ok": False, "error": str(exc)}
            else:
                if request.get("op") == "status":
                    reply = {"ok": True, "result": self.status()}
                else:
                    pending = Pending(request)
                    self.queue.put(pending)
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


def request_reasoning(request: dict[str, Any]) -> str | None:
    """The driver's words sent with an ``exec``/``answer`` request (``reasoning``), if any."""
    reasoning = request.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        raise RequestError(
            f"reasoning must be text (the driving model's words for this cell), got {type(reasoning).__name__}"
        )
    return reasoning


def read_request(conn: socket.socket) -> dict[str, Any]:
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
        except TimeoutError:
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
        raise RequestError(
            f'malformed request: expected a JSON object such as {{"op": "status"}}, got {type(request).__name__}'
        )
    return request
