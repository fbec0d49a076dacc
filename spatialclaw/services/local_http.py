"""A threaded HTTP server that lives as long as its owner: the ``vlm`` side channel (on a Unix socket in a
private 0700 directory) and the scripted test provider (on 127.0.0.1) both serve from one of these. It serves
at most ``max_connections`` connections at once; one more is answered ``503`` at once and closed, so a flood
of idle connections cannot pile up threads in the host."""

from __future__ import annotations

import json
import os
import shutil
import socket
import socketserver
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["LocalHTTPServer"]


class _Bounded:
    """Serve at most ``max_connections`` connections at once (a thread each); refuse more with a 503."""

    max_connections = 256
    _slots: threading.BoundedSemaphore

    def _bound(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)  # type: ignore[misc]
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)  # type: ignore[misc]
        finally:
            self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        body = json.dumps(
            {"error": f"the server is serving {self.max_connections} connections already; retry shortly"}
        ).encode()
        head = f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        try:
            request.settimeout(1.0)
            request.sendall(head.encode() + body)
        except OSError:
            pass
        self.shutdown_request(request)  # type: ignore[attr-defined]


class _BoundedHTTPServer(_Bounded, ThreadingHTTPServer):
    """A :class:`ThreadingHTTPServer` on loopback with a thread per connection, up to ``max_connections``."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the listen backlog: a burst of clients is queued, not left to retry SYNs

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int) -> None:
        super().__init__(address, handler)
        self._bound(max_connections)


class _BoundedUnixHTTPServer(_Bounded, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """The same on a Unix socket (mode 0600, in a directory only its owner can enter)."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, path: str, handler: type[BaseHTTPRequestHandler], max_connections: int) -> None:
        super().__init__(path, handler)
        os.chmod(path, 0o600)
        self._bound(max_connections)


class LocalHTTPServer:
    """Serves ``handler`` in a daemon thread; ``start``/``stop`` or a ``with`` block.

    On 127.0.0.1 (``_serve``: a free port or the one asked for, reachable by every local user) or on a Unix socket
    (``_serve_unix``: ``socket_path`` in a new 0700 directory, reachable by this user only)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._server: socketserver.BaseServer | None = None
        self._directory: Path | None = None

    def _serve(
        self,
        handler: type[BaseHTTPRequestHandler],
        poll_interval_s: float = 0.05,
        max_connections: int = 256,
        port: int = 0,
    ) -> None:
        """Serve on ``127.0.0.1:port`` (``0``: a free port)."""
        self._start(_BoundedHTTPServer(("127.0.0.1", port), handler, max_connections), poll_interval_s)

    def _serve_unix(
        self, handler: type[BaseHTTPRequestHandler], poll_interval_s: float = 0.05, max_connections: int = 256
    ) -> None:
        self._directory = Path(tempfile.mkdtemp(prefix="spatialclaw-channel-"))  # mode 0700
        self._start(
            _BoundedUnixHTTPServer(str(self._directory / "http.sock"), handler, max_connections), poll_interval_s
        )

    def _start(self, server: socketserver.BaseServer, poll_interval_s: float) -> None:
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_interval_s}, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def socket_path(self) -> str:
        """The Unix socket served on (``_serve_unix``)."""
        if self._server is None or self._directory is None:
            raise RuntimeError(f"the {self.name} is not serving on a Unix socket; use it as a context manager")
        return str(self._directory / "http.sock")

    @property
    def port(self) -> int:
        server = self._server
        if server is None or not isinstance(server, ThreadingHTTPServer):
            raise RuntimeError(
                f"the {self.name} is not running on loopback; use it as a context manager or call start()"
            )
        return int(server.server_address[1])
