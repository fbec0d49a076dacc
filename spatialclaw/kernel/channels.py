"""Host-side ends of a sandboxed kernel's side channels, as Unix sockets in its channel directory.

A sandboxed kernel has no network of its own (not even the host's loopback), so what it may reach on the
host comes to it as Unix sockets in a directory bound into the sandbox, one set per kernel:

* :class:`UnixForwarder` (``vlm.sock``): copies each connection to the episode's
  :class:`~spatialclaw.agent.vlm_server.VLMServer` (its private Unix socket, or a loopback address; the token
  still routes it to the episode's model); retargeted per episode, closed when there is no model.
* :class:`PerceptionRelay` (``perception.sock``): makes the kernel's perception calls
  (:mod:`spatialclaw.primitives.perception.remote`) on the Ray actors of the run's service. Only ``describe`` and
  ``run`` of the service's model kinds and the actors' read-only ``stats`` pass; requests are decoded from
  JSON (never unpickled), and one over :data:`~spatialclaw.primitives.perception.remote.MAX_REQUEST_BYTES` is
  refused from its length alone.
* :class:`ServiceRelay` (``multiview.sock``): passes the kernel's requests to a backend service in its own
  environment (:mod:`spatialclaw.services.toolshed`; its socket sits in a host-owned 0700 directory the
  sandbox cannot see). Only ``run`` and ``stats`` pass, over the same size limit, and one request of the
  kernel at a time (the service is shared: with one request of each kernel in its queue at most, it serves
  kernels in turn, whatever one of them sends); a service that died is started again before the request is
  passed on.

Every channel serves at most ``max_connections`` connections of its kernel at once (one more is refused at
once), and drops a connection that sends nothing for :data:`IDLE_TIMEOUT_S`: a cell cannot use up the host's
file descriptors or threads, whatever it opens.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

__all__ = ["IDLE_TIMEOUT_S", "PerceptionRelay", "ServiceRelay", "UnixForwarder"]

log = logging.getLogger(__name__)

IDLE_TIMEOUT_S = 30.0
"""Seconds a channel connection may stay silent while the host waits for its request."""
_REFUSED_KEPT = 32
_BUSY_BODY = b'{"error": "this kernel already holds the most vlm connections at once; retry shortly"}'
_BUSY_VLM = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
    + f"Content-Length: {len(_BUSY_BODY)}\r\n\r\n".encode()
    + _BUSY_BODY
)


class _UnixListener:
    """Accept connections on a Unix socket (mode 0600) and handle each on its own daemon thread, at most
    ``max_connections`` at once (one more gets ``busy`` and is closed)."""

    def __init__(
        self, path: Path, handle: Callable[[socket.socket], None], name: str, max_connections: int, busy: bytes = b""
    ) -> None:
        self.path = path
        self._handle = handle
        self._busy = busy
        self._slots = threading.BoundedSemaphore(max_connections)
        self._refused: deque[tuple[float, socket.socket]] = deque()
        path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        os.chmod(path, 0o600)
        self._sock.listen(128)
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name=name, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                connection, _ = self._sock.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                self._refuse(connection)
                continue
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _refuse(self, connection: socket.socket) -> None:
        """Answer ``busy`` and close a moment later (closing at once would cut the request the kernel is still
        writing, and it would never read the answer); at most :data:`_REFUSED_KEPT` wait to be closed."""
        try:
            connection.setblocking(False)
            connection.send(self._busy)
            connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        now = time.monotonic()
        self._refused.append((now, connection))
        while self._refused and (len(self._refused) > _REFUSED_KEPT or self._refused[0][0] < now - 1.0):
            self._refused.popleft()[1].close()

    def _serve(self, connection: socket.socket) -> None:
        try:
            with connection:
                connection.settimeout(IDLE_TIMEOUT_S)
                self._handle(connection)
        except OSError:
            pass  # the kernel side went away mid-request, or stayed silent
        finally:
            self._slots.release()

    def close(self) -> None:
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        while self._refused:
            self._refused.popleft()[1].close()
        self.path.unlink(missing_ok=True)


class UnixForwarder:
    """``path`` (a Unix socket) forwarded byte for byte to ``target``: a Unix socket path, or (host, port) on
    the host's loopback. At most :attr:`MAX_CONNECTIONS` at once; a connection ends when the server ends it."""

    MAX_CONNECTIONS = 16

    def __init__(self, path: Path) -> None:
        self.target: str | tuple[str, int] | None = None
        self._listener = _UnixListener(
            path, self._forward, "spatialclaw-vlm-forwarder", self.MAX_CONNECTIONS, busy=_BUSY_VLM
        )

    @property
    def path(self) -> Path:
        return self._listener.path

    def _forward(self, inside: socket.socket) -> None:
        target = self.target
        if target is None:
            return  # no model for this episode: the kernel's vlm reports that the host does not answer
        if isinstance(target, str):
            outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            outside.settimeout(10)
            outside.connect(target)
        else:
            outside = socket.create_connection(target, timeout=10)
        with outside:
            outside.settimeout(None)  # the server bounds its own waits (its read timeout, the model's)
            inside.settimeout(None)
            pump = threading.Thread(target=_copy, args=(outside, inside), daemon=True)
            pump.start()
            _copy(inside, outside)
            pump.join()

    def close(self) -> None:
        self._listener.close()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    """Copy until ``source`` ends; then end ``sink`` both ways, so the pump in the other direction ends too
    (the server closing a connection closes the kernel's side, however long the kernel stays silent)."""
    try:
        while True:
            data = source.recv(1 << 16)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for end in (sink, source):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class PerceptionRelay:
    """Serve the kernel's perception calls on ``path`` with the actors of ``service_url``
    (``ray://<namespace>/<actor>,...``) on the Ray cluster at ``address`` (None: ``$RAY_ADDRESS`` or local)."""

    METHODS = ("describe", "run", "stats")

    MAX_CONNECTIONS = 4

    def __init__(self, path: Path, service_url: str, address: str | None = None) -> None:
        from spatialclaw.primitives.perception.remote import PerceptionClient, parse_spec

        self.client = PerceptionClient(parse_spec(service_url), address=address)
        self._listener = _UnixListener(path, self._answer, "spatialclaw-perception-relay", self.MAX_CONNECTIONS)

    @property
    def path(self) -> Path:
        return self._listener.path

    def _answer(self, connection: socket.socket) -> None:
        from spatialclaw.primitives.perception.remote import (
            _FIX,
            MAX_REQUEST_BYTES,
            PerceptionServiceError,
            decode_request,
            parse_spec,
            write_frame,
        )
        from spatialclaw.services.perception import KINDS

        reply: dict[str, Any]
        size = struct.unpack(">Q", _read_into(connection, bytearray(8)))[0]
        if size > MAX_REQUEST_BYTES:
            message = (
                f"bad perception request: a request of {size} bytes is over the relay's limit of "
                f"{MAX_REQUEST_BYTES >> 20} MiB; send fewer or smaller frames per call"
            )
            write_frame(connection, pickle.dumps({"error": {"type": "ValueError", "message": message}}, protocol=5))
            _discard(connection, size)  # so that the kernel, still sending, gets to read the refusal
            return
        try:
            service_url, method, args = decode_request(
                cast(bytes, _read_into(connection, bytearray(size)))
            )  # json reads it in place
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


class ServiceRelay:
    """Serve the kernel's requests on ``path`` with the backend service at ``target`` (a Unix socket outside
    the sandbox), restarting the service when it does not answer. At most :attr:`MAX_CONNECTIONS` at once, and
    one request at the service at a time (the others of this kernel wait here, not in the shared queue)."""

    METHODS = ("run", "stats")
    MAX_CONNECTIONS = 4

    def __init__(self, path: Path, target: str) -> None:
        self.target = target
        self.restarts = 0
        self._in_flight = threading.Lock()
        self._listener = _UnixListener(path, self._answer, "spatialclaw-service-relay", self.MAX_CONNECTIONS)

    @property
    def path(self) -> Path:
        return self._listener.path

    def _answer(self, connection: socket.socket) -> None:
        from spatialclaw.primitives.perception.remote import MAX_FRAME_BYTES, MAX_REQUEST_BYTES, read_frame, write_frame
        from spatialclaw.primitives.reconstruction.da3 import pack, unpack
        from spatialclaw.services.toolshed import ServiceError, ensure_running

        size = struct.unpack(">Q", _read_into(connection, bytearray(8)))[0]
        if size > MAX_REQUEST_BYTES:
            error = f"a request of {size} bytes is over the relay's limit of {MAX_REQUEST_BYTES >> 20} MiB"
            write_frame(connection, pack("reply", {"ok": False, "error": error}))
            _discard(connection, size)
            return
        request = bytes(_read_into(connection, bytearray(size)))
        try:
            method, _ = unpack(request)
            if method not in self.METHODS:
                raise ValueError(f"the service relay passes {list(self.METHODS)}, not {method!r}")
            if not ensure_running(Path(self.target)):
                self.restarts += 1
                log.warning("restarted the backend service at %s", self.target)
            with self._in_flight, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as outside:
                outside.connect(self.target)
                write_frame(outside, request)
                reply = read_frame(outside, MAX_FRAME_BYTES)
        except (ValueError, ServiceError, OSError, ConnectionError) as error:
            message = f"the backend service at the host does not answer: {error}"
            reply = pack("reply", {"ok": False, "error": message})
        write_frame(connection, reply)

    def close(self) -> None:
        self._listener.close()


def _read_into(connection: socket.socket, buffer: bytearray) -> bytearray:
    """Fill ``buffer`` from ``connection`` in place (no second copy); ``ConnectionError`` when the kernel stops
    early, ``TimeoutError`` (an ``OSError``) when it stays silent for :data:`IDLE_TIMEOUT_S`."""
    view, filled = memoryview(buffer), 0
    while filled < len(buffer):
        count = connection.recv_into(view[filled:], min(len(buffer) - filled, 1 << 20))
        if not count:
            raise ConnectionError("the kernel closed the perception connection mid-request")
        filled += count
    return buffer


def _discard(connection: socket.socket, size: int, within_s: float = 10.0) -> None:
    """Read and drop up to ``size`` bytes for at most ``within_s`` seconds."""
    scratch, deadline = bytearray(1 << 16), time.monotonic() + within_s
    while size > 0 and time.monotonic() < deadline:
        count = connection.recv_into(scratch, min(size, len(scratch)))
        if not count:
            return
        size -= count
