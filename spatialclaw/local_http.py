"""A threaded HTTP server on 127.0.0.1 that lives as long as its owner: the ``vlm`` side channel and the
scripted test provider both serve from one of these."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["LocalHTTPServer"]


class LocalHTTPServer:
    """Serves ``handler`` on a free loopback port in a daemon thread; ``start``/``stop`` or a ``with`` block."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._server: ThreadingHTTPServer | None = None

    def _serve(self, handler: type[BaseHTTPRequestHandler], poll_interval_s: float = 0.05) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": poll_interval_s}, daemon=True).start()

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
