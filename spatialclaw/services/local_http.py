"""A threaded HTTP server on 127.0.0.1 that lives as long as its owner: the ``vlm`` side channel and the
scripted test provider both serve from one of these. It serves at most ``max_connections`` connections
at once; one more is answered ``503`` at once and closed, so a flood of idle connections cannot pile
up threads in the host."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LocalHTTPServer"]


class _BoundedHTTPServer(ThreadingHTTPServer):
    """A :class:`ThreadingHTTPServer` with a thread per connection, up to ``max_connections`` of them."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the listen backlog: a burst of clients is queued, not left to retry SYNs

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int) -> None:
        super().__init__(address, handler)
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
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
        self.shutdown_request(request)


class LocalHTTPServer:
    """Serves ``handler`` on a free loopback port in a daemon thread; ``start``/``stop`` or a ``with`` block."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._server: ThreadingHTTPServer | None = None

    def _serve(
        self, handler: type[BaseHTTPRequestHandler], poll_interval_s: float = 0.05, max_connections: int = 256
    ) -> None:
        self._server = _BoundedHTTPServer(("127.0.0.1", 0), handler, max_connections)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": poll_interval_s}, daemon=True
        ).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"the {self.name} is not running; use it as a context manager or call start()")
        return self._server.server_address[1]
