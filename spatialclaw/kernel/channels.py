"""Host-side ends of a sandboxed kernel's side channels, as Unix sockets in its channel directory.

A sandboxed kernel has no network of its own (not even the host's loopback), so what it may reach on the
host comes to it as Unix sockets in a directory bound into the sandbox, one set per kernel:

* :class:`UnixForwarder` (``vlm.sock``): copies each connection to the episode's
  :class:`~spatialclaw.agent.vlm_server.VLMServer` on ``127.0.0.1`` (the token still routes it to the episode's
  model); retargeted per episode, closed when there is no model.
* :class:`PerceptionRelay` (``perception.sock``): makes the kernel's perception calls
  (:mod:`spatialclaw.primitives.perception.remote`) on the Ray actors of the run's service. Only ``describe`` and
  ``run`` of the service's model kinds and the actors' read-only ``stats`` pass; requests are decoded from
  JSON (never unpickled).
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["PerceptionRelay", "UnixForwarder"]

log = logging.getLogger(__name__)


class _UnixListener:
    """Accept connections on a Unix socket (mode 0600) and handle each on its own daemon thread."""

    def __init__(self, path: Path, handle: Callable[[socket.socket], None], name: str) -> None:
        self.path = path
        self._handle = handle
        path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        os.chmod(path, 0o600)
        self._sock.listen(16)
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name=name, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                connection, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                self._handle(connection)
            except OSError:
                pass  # the kernel side went away mid-request

    def close(self) -> None:
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self.path.unlink(missing_ok=True)


class UnixForwarder:
    """``path`` (a Unix socket) forwarded byte for byte to ``target`` (host, port) on the host's loopback."""

    def __init__(self, path: Path) -> None:
        self.target: tuple[str, int] | None = None
        self._listener = _UnixListener(path, self._forward, "spatialclaw-vlm-forwarder")

    @property
    def path(self) -> Path:
        return self._listener.path

    def _forward(self, inside: socket.socket) -> None:
        target = self.target
        if target is None:
            return  # no model for this episode: the kernel's vlm reports that the host does not answer
        with socket.create_connection(target, timeout=10) as outside:
            outside.settimeout(None)
            pump = threading.Thread(target=_copy, args=(outside, inside), daemon=True)
            pump.start()
            _copy(inside, outside)
            pump.join()

    def close(self) -> None:
        self._listener.close()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(1 << 16)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class PerceptionRelay:
    """Serve the kernel's perception calls on ``path`` with the actors of ``service_url``
    (``ray://<namespace>/<actor>,...``) on the Ray cluster at ``address`` (None: ``$RAY_ADDRESS`` or local)."""

    METHODS = ("describe", "run", "stats")

    def __init__(self, path: Path, service_url: str, address: str | None = None) -> None:
        from spatialclaw.primitives.perception.remote import PerceptionClient, parse_spec

        self.client = PerceptionClient(parse_spec(service_url), address=address)
        self._listener = _UnixListener(path, self._answer, "spatialclaw-perception-relay")

    @property
    def path(self) -> Path:
        return self._listener.path

    def _answer(self, connection: socket.socket) -> None:
        from spatialclaw.primitives.perception.remote import (
            _FIX,
            PerceptionServiceError,
            decode_request,
            parse_spec,
            read_frame,
            write_frame,
        )
        from spatialclaw.services.perception import KINDS

        reply: dict[str, Any]
        try:
            service_url, method, args = decode_request(read_frame(connection))
            if service_url != self.client.spec.url:  # a cell may name any service; this host relays its own only
                wanted = parse_spec(service_url)
                raise PerceptionServiceError(
                    f"no perception actor named {','.join(wanted.actors)!r} in Ray namespace {wanted.namespace!r} that "
                    f"this kernel may use: its host relays the service {self.client.spec.url} only. {_FIX}"
                )
            if method not in self.METHODS:
                raise ValueError(f"the perception relay answers {list(self.METHODS)}, not {method!r}")
            if method == "stats":  # the actors' counters, read only
                reply = {"ok": self.client.stats()}
            elif not args or args[0] not in KINDS:
                raise ValueError(
                    f"unknown perception kind {args[0] if args else None!r}; the service hosts {list(KINDS)}"
                )
            else:
                reply, _ = self.client.raw_call(method, args)
        except (ValueError, ConnectionError) as error:
            reply = {"error": {"type": "ValueError", "message": f"bad perception request: {error}"}}
        except PerceptionServiceError as error:
            reply = {"error": {"type": "PerceptionServiceError", "message": str(error)}}
        write_frame(connection, pickle.dumps(reply, protocol=5))

    def close(self) -> None:
        self._listener.close()
