"""Learned perception on a shared service: forward ``depth``, ``detect`` and ``segment`` to Ray actors.

When the environment variable ``SPATIALCLAW_PERCEPTION`` names a perception service, the learned primitives
do not load models in this process: they send their inputs (frames as NumPy arrays, arguments) to a Ray
actor that hosts the models (``spatialclaw.runner.perception_service``) and return its result. The
content-addressed cache (``spatialclaw.primitives.cache``) stays in front of the call, so a cache hit never
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
"""

from __future__ import annotations

import builtins
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from spatialclaw.primitives import models

__all__ = ["ENV_VAR", "PerceptionServiceError", "PerceptionClient", "RemoteModel", "ServiceSpec", "parse_spec", "service"]

ENV_VAR = "SPATIALCLAW_PERCEPTION"
SCHEME = "ray://"
_PROBE_TIMEOUT_S = 5.0
_FIX = ("To fix: start the service (`spatialclaw bench --executor ray --perception-actors N` does it for a run), "
        f"check that the Ray cluster is up (`ray status`) and that RAY_ADDRESS points at it, or unset {ENV_VAR} "
        "to run the models in this process.")


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
    namespace, _, names = value[len(SCHEME):].partition("/") if value.startswith(SCHEME) else ("", "", "")
    actors = tuple(name.strip() for name in names.split(",") if name.strip())
    if not namespace or not actors:
        raise ValueError(f"{ENV_VAR}={text!r} is not a perception service; expected "
                         f"'{SCHEME}<namespace>/<actor>[,<actor>...]', e.g. '{SCHEME}my-run/perception-0'")
    return ServiceSpec(namespace, actors)


@dataclass(frozen=True)
class RemoteModel:
    """A model hosted by the service: its id, its version (for cache keys) and what the actor reported
    about it (``info``, e.g. the detector family); ``run(**inputs)`` computes on the actor."""

    kind: str
    model_id: str
    version: str
    info: dict[str, Any]
    client: "PerceptionClient" = field(repr=False, compare=False)

    def run(self, **inputs: Any) -> Any:
        """The value the local path would cache for these inputs, computed by the actor."""
        return self.client.call("run", self.kind, self.model_id, inputs)


class PerceptionClient:
    """Connection to the actors of one service (made on first use)."""

    def __init__(self, spec: ServiceSpec) -> None:
        self.spec = spec
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
        process id and node."""
        import ray

        return ray.get([handle.stats.remote() for handle in self._actors()])

    def call(self, method: str, *args: Any) -> Any:
        """Call ``method`` on the next actor; re-raise the actor's error here with its own type."""
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
                f"{type(error).__name__}: {error}. {_FIX}") from None
        if "error" in reply:
            _raise_remote(reply["error"], f"{self.spec.url} actor {name!r}")
        return reply["ok"]

    def _actors(self) -> list[Any]:
        if self._handles is None:
            self._handles = _connect(self.spec)
        return self._handles


_clients: dict[str, PerceptionClient] = {}


def service() -> PerceptionClient | None:
    """The client for ``$SPATIALCLAW_PERCEPTION``, or None when it is unset (models run in this process)."""
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return None
    if text not in _clients:
        _clients[text] = PerceptionClient(parse_spec(text))
    return _clients[text]


def _connect(spec: ServiceSpec) -> list[Any]:
    import logging

    try:
        import ray
    except ImportError:
        raise PerceptionServiceError(f"{ENV_VAR}={spec.url} needs Ray in the kernel's environment: "
                                     f"pip install 'spatialclaw[ray]'") from None
    address = os.environ.get("RAY_ADDRESS") or "auto"
    if not ray.is_initialized():
        _probe(address, spec)
        _token_auth_like_a_local_cluster()
        try:
            ray.init(address=address, namespace=spec.namespace, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as error:
            raise PerceptionServiceError(f"cannot connect to the Ray cluster at {address!r} for the perception "
                                         f"service {spec.url}: {error}. {_FIX}") from None
    handles = []
    for name in spec.actors:
        try:
            handles.append(ray.get_actor(name, namespace=spec.namespace))
        except ValueError:
            raise PerceptionServiceError(f"no perception actor named {name!r} in Ray namespace {spec.namespace!r} "
                                         f"(cluster {address!r}); the service has stopped or was never started. "
                                         f"{_FIX}") from None
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
        raise PerceptionServiceError(f"the Ray cluster at {address!r} (RAY_ADDRESS) for the perception service "
                                     f"{spec.url} does not answer ({error}); the run that started it may have "
                                     f"ended. {_FIX}") from None


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
