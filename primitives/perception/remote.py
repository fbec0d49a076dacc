"""Learned perception on a shared service: forward ``depth``, ``detect`` and ``segment`` to Ray actors.

When the environment variable ``SPATIALCLAW_PERCEPTION`` names a perception service, the learned primitives
do not load models in this process: they send their inputs (frames as NumPy arrays, arguments) to a Ray
actor that hosts the models (``spatialclaw.services.perception``) and return its result. The
content-addressed cache (``spatialclaw.primitives.perception.cache``) stays in front of the call, so a cache hit never
reaches the actor. Classical paths (stereo depth, geometry, reconstruction without learned depth) always
run locally. Ray is imported only when the variable is set.

Format::

    SPATIALCLAW_PERCEPTION=ray://<namespace>/<actor>[,<actor>...]

e.g. ``ray://spatialclaw-perception-1a2b3c4d/perception-0,perception-1``. With several actors, each call goes
to the next one (round robin, starting at an offset derived from this process id). The Ray cluster is the
one at ``$RAY_ADDRESS`` (``spatialclaw bench --executor ray`` sets it for every episode's kernel), else the
local node's cluster (``ray.init(address="auto")``).

Each model's version (for cache keys) comes from the actor, which holds the weights, and is remembered
for the life of this process.

A sandboxed kernel has no network of its own, so it cannot reach Ray: when ``SPATIALCLAW_PERCEPTION_SOCKET``
names a Unix socket (the host's relay, :class:`spatialclaw.kernel.channels.PerceptionRelay`), each call goes
there instead, and the host makes the Ray call. Requests travel as JSON with arrays as typed bytes (the host
never unpickles what a cell sends); replies come back pickled from the host.
"""

from __future__ import annotations

import base64
import builtins
import json
import os
import pickle
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Any, cast

from spatialclaw.primitives.perception import models

__all__ = [
    "ENV_VAR",
    "SOCKET_ENV_VAR",
    "PerceptionClient",
    "PerceptionServiceError",
    "RemoteModel",
    "ServiceSpec",
    "decode_request",
    "encode_request",
    "parse_spec",
    "read_frame",
    "service",
    "write_frame",
]

ENV_VAR = "SPATIALCLAW_PERCEPTION"
SOCKET_ENV_VAR = "SPATIALCLAW_PERCEPTION_SOCKET"
#: Largest request or reply on the relay socket, bytes (a few 4K frames with their arrays fit easily).
MAX_FRAME_BYTES = 1 << 30
MAX_REQUEST_BYTES = 256 << 20
"""The largest request the host's relay reads from a kernel: a few full-resolution frames, JSON-encoded."""
_ARRAY_KINDS = set("biufc")  # bool, integers, floats, complex: never object arrays
SCHEME = "ray://"
_PROBE_TIMEOUT_S = 5.0
_FIX = (
    "To fix: start the service (`spatialclaw bench --executor ray --perception-actors N` does it for a run), "
    f"check that the Ray cluster is up (`ray status`) and that RAY_ADDRESS points at it, or unset {ENV_VAR} "
    "to run the models in this process."
)


class PerceptionServiceError(RuntimeError):
    """The perception service named by ``$SPATIALCLAW_PERCEPTION`` cannot be reached or failed."""


@dataclass(frozen=True)
class ServiceSpec:
    """A parsed ``ray://<namespace>/<actor>[,<actor>...]``: the Ray namespace and the actor names."""

    namespace: str
    actors: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"{SCHEME}{self.namespace}/{','.join(self.actors)}"


def parse_spec(text: str) -> ServiceSpec:
    """Parse the value of ``$SPATIALCLAW_PERCEPTION``; ``ValueError`` naming the expected format otherwise."""
    value = text.strip()
    namespace, _, names = value[len(SCHEME) :].partition("/") if value.startswith(SCHEME) else ("", "", "")
    actors = tuple(name.strip() for name in names.split(",") if name.strip())
    if not namespace or not actors:
        raise ValueError(
            f"{ENV_VAR}={text!r} is not a perception service; expected "
            f"'{SCHEME}<namespace>/<actor>[,<actor>...]', e.g. '{SCHEME}my-run/perception-0'"
        )
    return ServiceSpec(namespace, actors)


@dataclass(frozen=True)
class RemoteModel:
    """A model hosted by the service: its id, its version (for cache keys) and what the actor reported
    about it (``info``, e.g. the detector family); ``run(**inputs)`` computes on the actor."""

    kind: str
    model_id: str
    version: str
    info: dict[str, Any]
    client: PerceptionClient = field(repr=False, compare=False)

    def run(self, **inputs: Any) -> Any:
        """The value the local path would cache for these inputs, computed by the actor."""
        return self.client.call("run", self.kind, self.model_id, inputs)


class PerceptionClient:
    """Connection to the actors of one service (made on first use). With ``socket_path`` (a sandboxed kernel)
    calls go to the host's relay on that Unix socket; ``address`` is the Ray cluster (default ``$RAY_ADDRESS``,
    else the local node's)."""

    def __init__(self, spec: ServiceSpec, socket_path: str | None = None, address: str | None = None) -> None:
        self.spec = spec
        self.socket_path = socket_path
        self.address = address
        self._handles: list[Any] | None = None
        self._models: dict[tuple[str, str], RemoteModel] = {}
        self._next = os.getpid()
        self._lock = threading.Lock()

    def model(self, kind: str, model_id: str) -> RemoteModel:
        """The service's ``kind`` model ("depth", "detect", "sam", "sam3") named ``model_id`` (hub id or folder
        as the actor sees it). The first request per model asks the actor (which loads it when its version is
        not known without loading); later ones are answered here."""
        key = (kind, model_id)
        if key not in self._models:
            info = self.call("describe", kind, model_id)
            self._models[key] = RemoteModel(kind, model_id, str(info.pop("version")), info, self)
        return self._models[key]

    def stats(self) -> list[dict[str, Any]]:
        """Each actor's counters: calls per ``method:kind``, models loaded (kind, classes:source, device),
        process id and node. A sandboxed kernel asks the host's relay for them."""
        if self.socket_path is not None:
            return cast(list[dict[str, Any]], self.call("stats"))
        import ray

        return ray.get([handle.stats.remote() for handle in self._actors()])

    def call(self, method: str, *args: Any) -> Any:
        """Call ``method`` on the next actor; re-raise the actor's error here with its own type."""
        if self.socket_path is not None:
            reply, name = _relay_call(self.socket_path, self.spec.url, method, args), "via the host relay"
        else:
            reply, name = self.raw_call(method, args)
        if "error" in reply:
            _raise_remote(reply["error"], f"{self.spec.url} actor {name!r}")
        return reply["ok"]

    def raw_call(self, method: str, args: tuple[Any, ...] | list[Any]) -> tuple[dict[str, Any], str]:
        """The actor's reply (``{"ok": value}`` or ``{"error": {...}}``) and the actor's name; raises
        :class:`PerceptionServiceError` when Ray cannot make the call."""
        import ray

        handles = self._actors()
        with self._lock:
            index = self._next % len(handles)
            self._next += 1
        name = self.spec.actors[index]
        try:
            reply = ray.get(getattr(handles[index], method).remote(*args))
        except ray.exceptions.RayError as error:  # the actor died, was stopped, or the call could not be made
            self._handles = None  # look the actors up again next time (a restarted service)
            raise PerceptionServiceError(
                f"the perception actor {name!r} (namespace {self.spec.namespace!r}) failed on {method}({args[0]!r}): "
                f"{type(error).__name__}: {error}. {_FIX}"
            ) from None
        return reply, name

    def _actors(self) -> list[Any]:
        if self._handles is None:
            self._handles = _connect(self.spec, self.address)
        return self._handles


_clients: dict[str, PerceptionClient] = {}


def service() -> PerceptionClient | None:
    """The client for ``$SPATIALCLAW_PERCEPTION``, or None when it is unset (models run in this process)."""
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return None
    if text not in _clients:
        _clients[text] = PerceptionClient(parse_spec(text), socket_path=os.environ.get(SOCKET_ENV_VAR) or None)
    return _clients[text]


def _encode(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(f"cannot send an array of dtype {value.dtype} to the perception service")
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode("ascii")
        return {"__ndarray__": [value.dtype.str, list(value.shape), data]}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): _encode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot send a {type(value).__name__} to the perception service")


def _decode(value: Any) -> Any:
    import numpy as np

    if isinstance(value, dict):
        if set(value) == {"__ndarray__"}:
            dtype_text, shape, data = value["__ndarray__"]
            dtype = np.dtype(str(dtype_text))
            if dtype.kind not in _ARRAY_KINDS:
                raise ValueError(f"arrays of dtype {dtype} are not accepted")
            return np.frombuffer(base64.b64decode(data), dtype=dtype).reshape([int(n) for n in shape]).copy()
        return {key: _decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode(item) for item in value]
    return value


def encode_request(service_url: str, method: str, args: tuple[Any, ...] | list[Any]) -> bytes:
    """A relay request as bytes: JSON, arrays as ``{"__ndarray__": [dtype, shape, base64]}``."""
    return json.dumps({"service": service_url, "method": method, "args": _encode(list(args))}).encode()


def decode_request(data: bytes) -> tuple[str, str, list[Any]]:
    """``(service_url, method, args)`` of a relay request; ``ValueError`` for anything malformed. Never unpickles."""
    try:
        request = json.loads(data)
        service_url, method, args = request["service"], request["method"], _decode(request["args"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"malformed perception request ({type(error).__name__}: {error})") from None
    if not isinstance(service_url, str) or not isinstance(method, str) or not isinstance(args, list):
        raise ValueError("malformed perception request (service and method must be strings, args a list)")
    return service_url, method, args


def write_frame(sock: socket.socket, payload: bytes) -> None:
    """Send ``payload`` with its 8-byte length in front."""
    sock.sendall(struct.pack(">Q", len(payload)) + payload)


def read_frame(sock: socket.socket, limit: int = MAX_FRAME_BYTES) -> bytes:
    """One length-prefixed payload; ``ConnectionError`` when the peer closes early or sends more than ``limit``."""
    size = struct.unpack(">Q", _read_exactly(sock, 8))[0]
    if size > limit:
        raise ConnectionError(f"a perception message of {size} bytes is over the {limit}-byte limit")
    return _read_exactly(sock, size)


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the perception relay closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _relay_call(path: str, service_url: str, method: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """One call through the host's relay (sandboxed kernels); the reply is the actor's, pickled by the host."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            write_frame(sock, encode_request(service_url, method, args))
            return cast(dict[str, Any], pickle.loads(read_frame(sock)))
    except OSError as error:
        raise PerceptionServiceError(
            f"the host's perception relay at {path} does not answer ({error}); the "
            f"kernel's host process may have stopped. {_FIX}"
        ) from None


def _connect(spec: ServiceSpec, address: str | None = None) -> list[Any]:
    import logging

    try:
        import ray
    except ImportError:
        raise PerceptionServiceError(
            f"{ENV_VAR}={spec.url} needs Ray in the kernel's environment: pip install 'spatialclaw[ray]'"
        ) from None
    address = address or os.environ.get("RAY_ADDRESS") or "auto"
    if not ray.is_initialized():
        _probe(address, spec)
        _token_auth_like_a_local_cluster()
        try:
            ray.init(address=address, namespace=spec.namespace, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as error:
            raise PerceptionServiceError(
                f"cannot connect to the Ray cluster at {address!r} for the perception "
                f"service {spec.url}: {error}. {_FIX}"
            ) from None
    handles = []
    for name in spec.actors:
        try:
            handles.append(ray.get_actor(name, namespace=spec.namespace))
        except ValueError:
            raise PerceptionServiceError(
                f"no perception actor named {name!r} in Ray namespace {spec.namespace!r} "
                f"(cluster {address!r}); the service has stopped or was never started. "
                f"{_FIX}"
            ) from None
    return handles


def _probe(address: str, spec: ServiceSpec) -> None:
    """Fail in seconds when a HOST:PORT address does not answer (Ray itself keeps retrying for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if "://" in address or not sep or not port.isdigit():
        return  # "auto" or a Ray Client address: Ray reports those itself
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_TIMEOUT_S):
            pass
    except OSError as error:
        raise PerceptionServiceError(
            f"the Ray cluster at {address!r} (RAY_ADDRESS) for the perception service "
            f"{spec.url} does not answer ({error}); the run that started it may have "
            f"ended. {_FIX}"
        ) from None


def _token_auth_like_a_local_cluster() -> None:
    """Use Ray's token authentication when a token is available (``~/.ray/auth_token``) and ``RAY_AUTH_MODE``
    is unset (the kernel inherits ``RAY_AUTH_MODE`` when the host sets it): Ray does this itself when it finds
    a local cluster, but not for an explicit address such as ``$RAY_ADDRESS``."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    import logging

    try:
        from ray._private.authentication import authentication_token_setup as setup
    except ImportError:  # a Ray without token authentication
        return
    logger = logging.getLogger(setup.__name__)
    level = logger.level
    logger.setLevel(logging.ERROR)  # its notice would land in the cell's output, which the model reads
    try:
        setup.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    finally:
        logger.setLevel(level)


def _raise_remote(error: dict[str, Any], where: str) -> None:
    """Raise an actor-side error here as the same type, so callers (e.g. segment's fallback from SAM 3 when
    its weights are missing) behave as in the local path."""
    kind, message = error["type"], error["message"]
    if kind == "PerceptionServiceError":  # the host relay could not make the Ray call
        raise PerceptionServiceError(message)
    if kind == "MissingWeightsError":
        raise models.MissingWeightsError(error["model_id"], f"{error['reason']} (on the perception service {where})")
    if kind == "MissingDependencyError":
        raise models.MissingDependencyError(f"{message} (on the perception service {where})")
    builtin = getattr(builtins, kind, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        try:
            same_type = builtin(f"{message} (on the perception service {where})")
        except TypeError:  # a type with a richer constructor (e.g. UnicodeDecodeError)
            same_type = None
        if same_type is not None:
            raise same_type
    raise PerceptionServiceError(f"{kind} on the perception service {where}: {message}\n{error.get('traceback', '')}")
