"""Backends in their own environments as Ray actors of the Ray executor (``bench --executor ray --service``).

``--service NAME=DIR[,gpus=G][,cpus=C][,model=ID][,restarts=N]`` (:func:`parse_service_option`) names a
backend of :data:`~spatialclaw.services.toolshed.BACKENDS` and the directory ``spatialclaw serve NAME --env DIR
--ray`` prepared: ``DIR/venv`` holds the backend's packages, spatialclaw without dependencies and this
cluster's Ray version. :func:`start_service_actors` starts one named actor per backend in a fresh Ray
namespace, running :class:`~spatialclaw.services.service_actor.ServiceActor` under ``DIR/venv/bin/python``
(``runtime_env={"py_executable": ...}``) with ``G`` GPUs and ``C`` CPUs, restarted by Ray up to ``N`` times
(default 3) when its process dies; a call in flight when it dies is retried once on the restarted actor.

Kernels reach an actor only through their host's existing relay: each episode actor opens a
:class:`ServiceProxy`, a Unix socket in a private 0700 directory outside every sandbox, and names it to its
kernels in the backend's variable (``$SPATIALCLAW_MULTIVIEW_SOCKET`` for DA3); the kernel's
:class:`~spatialclaw.kernel.channels.ServiceRelay` passes ``run`` and ``stats`` to it, and the proxy passes the
bytes on as an actor call. Requests of concurrent episodes meet in the actor's batcher.
"""

from __future__ import annotations

import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.services.toolshed import BACKENDS, ServiceError, python_of

__all__ = ["RayServices", "ServiceOption", "ServiceProxy", "parse_service_option", "start_service_actors"]

_KEYS = {"gpus": float, "cpus": float, "model": str, "restarts": int}


@dataclass(frozen=True)
class ServiceOption:
    """One ``--service``: backend ``name`` from ``env`` (the ``spatialclaw serve --env`` directory) with
    ``gpus`` GPUs and ``cpus`` CPUs (fractions allowed), ``model`` (None: the backend's default; "stand-in":
    random weights) and at most ``restarts`` restarts by Ray."""

    name: str
    env: Path
    gpus: float = 1.0
    cpus: float = 1.0
    model: str | None = None
    restarts: int = 3

    @property
    def device(self) -> str:
        """Where the model runs: the GPUs Ray assigns (``gpus`` > 0) or the CPUs."""
        return "cuda" if self.gpus > 0 else "cpu"

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": str(self.env),
            "gpus": self.gpus,
            "cpus": self.cpus,
            "model": self.model,
            "restarts": self.restarts,
        }


def parse_service_option(text: str) -> ServiceOption:
    """``NAME=DIR[,gpus=G][,cpus=C][,model=ID][,restarts=N]`` as a :class:`ServiceOption` (DIR made absolute);
    ``ValueError`` naming ``text`` when it is malformed."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep or not name or not rest.strip():
        raise ValueError(f"--service needs NAME=DIR[,gpus=G][,cpus=C][,model=ID][,restarts=N], got {text!r}")
    if name not in BACKENDS:
        raise ValueError(f"--service {text!r}: no backend named {name!r}; known: {sorted(BACKENDS)}")
    directory, *pairs = rest.split(",")
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or key not in _KEYS:
            raise ValueError(f"--service {text!r}: {pair!r} is not one of {', '.join(k + '=...' for k in _KEYS)}")
        try:
            settings[key] = _KEYS[key](value.strip())
        except ValueError:
            raise ValueError(f"--service {text!r}: {key} takes a {_KEYS[key].__name__}, got {value!r}") from None
    option = ServiceOption(name, Path(directory.strip()).expanduser().absolute(), **settings)
    if option.gpus < 0 or option.cpus < 0 or option.restarts < 0:
        raise ValueError(f"--service {text!r}: gpus, cpus and restarts must be >= 0")
    return option


def check_env(option: ServiceOption) -> Path:
    """The interpreter of ``option.env``; ``ServiceError`` saying how to prepare it when it is missing or its
    Python or Ray differ from this process's (a Ray worker must match its cluster)."""
    import ray

    python = python_of(option.env)
    prepare = f"spatialclaw serve {option.name} --env {option.env} --ray"
    if not python.exists():
        raise ServiceError(f"--service {option.name}: no environment at {python}; prepare it with `{prepare}`")
    probe = "import sys; print('%d.%d' % sys.version_info[:2]); import ray; print(ray.__version__)"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=option.env)
    found = done.stdout.split()
    wanted = [f"{sys.version_info[0]}.{sys.version_info[1]}", ray.__version__]
    if done.returncode or found != wanted:
        have = f"Python {found[0]}" if found else "an interpreter that does not run"
        have += f" with Ray {found[1]}" if len(found) > 1 else " without Ray"
        raise ServiceError(
            f"--service {option.name}: {python} has {have}; this run needs Python {wanted[0]} with Ray "
            f"{wanted[1]}. To fix: `{prepare}` (installs ray=={wanted[1]} there)"
        )
    return python


@dataclass
class RayServices:
    """The running service actors of one run: ``handles`` by backend name, for the episode actors."""

    namespace: str
    options: dict[str, ServiceOption]
    handles: dict[str, Any] = field(repr=False)

    def stats(self) -> dict[str, dict[str, Any]]:
        import ray

        return {name: ray.get(handle.stats.remote()) for name, handle in self.handles.items()}

    def close(self) -> None:
        """Stop the actors (their models and GPUs are freed)."""
        import ray

        for handle in self.handles.values():
            ray.kill(handle, no_restart=True)
        self.handles = {}


def start_service_actors(
    options: list[ServiceOption],
    *,
    namespace: str | None = None,
    startup_timeout_s: float = 600.0,
    fail_fast: bool = False,
    batch_window_s: float = 0.005,
    max_batch: int = 8,
) -> RayServices:
    """Start one actor per option on the Ray cluster this process is connected to (see the module docstring)
    and wait until each has loaded its model. ``ServiceError`` when an environment is not ready, an actor
    cannot be placed within ``startup_timeout_s`` (at once with ``fail_fast``, for a local instance that
    cannot grow, when the cluster's total GPUs or CPUs are too few) or its constructor fails."""
    import ray

    from spatialclaw.services.service_actor import ServiceActor

    if not ray.is_initialized():
        raise RuntimeError("start_service_actors needs a Ray connection: call ray.init(...) first")
    names = [option.name for option in options]
    if len(set(names)) != len(names):
        raise ServiceError(f"--service names a backend twice: {names}")
    pythons = {option.name: check_env(option) for option in options}
    if fail_fast:
        total = ray.cluster_resources()  # type: ignore[no-untyped-call]  # unannotated in Ray
        for resource, needed in (("GPU", sum(o.gpus for o in options)), ("CPU", sum(o.cpus for o in options))):
            if needed > total.get(resource, 0.0):
                raise ServiceError(
                    f"the service actors ({', '.join(names)}) need {needed} {resource}s; the Ray cluster has "
                    f"{total.get(resource, 0.0)}. To fix: lower gpus= in --service (gpus=0 runs on CPUs) or join a "
                    f"cluster with GPU nodes (--ray-address)"
                )
    namespace = namespace or f"spatialclaw-services-{uuid.uuid4().hex[:8]}"
    actor_class: Any = ray.remote(ServiceActor)  # Ray's annotations give a union with the plain class
    handles: dict[str, Any] = {}
    for option in options:
        handles[option.name] = actor_class.options(
            name=option.name,
            namespace=namespace,
            num_gpus=option.gpus,
            num_cpus=option.cpus,
            max_restarts=option.restarts,
            max_task_retries=1,  # the call in flight when the actor died runs once more on its restart
            max_concurrency=64,  # concurrent calls wait together in the batcher
            runtime_env={"py_executable": str(pythons[option.name])},
        ).remote(
            BACKENDS[option.name].module,
            option.model or BACKENDS[option.name].default_model,
            option.device,
            batch_window_s,
            max_batch,
        )
    services = RayServices(namespace, {o.name: o for o in options}, handles)
    probes = {handle.stats.remote(): name for name, handle in handles.items()}
    _, waiting = ray.wait(list(probes), num_returns=len(probes), timeout=startup_timeout_s)
    try:
        if waiting:
            raise ServiceError(
                f"service actor(s) {', '.join(probes[ref] for ref in waiting)} did not start within "
                f"{startup_timeout_s:.0f} s; the cluster has {ray.cluster_resources()}. To fix: lower gpus= in "  # type: ignore[no-untyped-call]
                "--service, or add GPU nodes"
            )
        for ref, name in probes.items():
            try:
                ray.get(ref)
            except ray.exceptions.RayError as error:
                raise ServiceError(
                    f"the {name} service actor could not start in {pythons[name]}: {_cause(error)}. To fix: "
                    f"`spatialclaw serve {name} --env {services.options[name].env} --ray` installs the backend's "
                    "packages there (and refreshes an environment an older spatialclaw made); model= in --service "
                    "names the weights (model=stand-in: random weights, no backend package)"
                ) from None
    except BaseException:
        services.close()
        raise
    return services


def _cause(error: BaseException) -> str:
    """The last line of a Ray error's text that says something (its cause, without the traceback)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    cause = lines[-1] if lines else type(error).__name__
    return cause if len(cause) <= 240 else cause[:240] + " ..."


class ServiceProxy:
    """A Unix socket (in a new 0700 directory) whose requests become calls of the service actor ``handle``:
    what a kernel's :class:`~spatialclaw.kernel.channels.ServiceRelay` connects to. One request per
    connection, as the backend's own server takes them; ``close()`` removes the socket."""

    def __init__(self, name: str, handle: Any, timeout_s: float = 600.0) -> None:
        from spatialclaw.primitives.perception.remote import MAX_REQUEST_BYTES, read_frame, write_frame

        self.name = name
        self.calls = 0
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    request = read_frame(self.request, MAX_REQUEST_BYTES)
                except (ConnectionError, OSError):
                    return  # a probe that only checks the socket answers, or a caller that went away
                try:
                    write_frame(self.request, proxy.forward(request, handle, timeout_s))
                except OSError:
                    pass

        self._directory = Path(tempfile.mkdtemp(prefix=f"spatialclaw-{name}-"))  # mode 0700
        self.path = str(self._directory / "service.sock")
        self._server = socketserver.ThreadingUnixStreamServer(self.path, Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def forward(self, request: bytes, handle: Any, timeout_s: float) -> bytes:
        """The actor's reply to ``request``, or an error reply naming the service when the call failed."""
        import ray

        from spatialclaw.primitives.reconstruction.da3 import pack

        self.calls += 1
        try:
            reply: bytes = ray.get(handle.call.remote(request), timeout=timeout_s)
            return reply
        except ray.exceptions.GetTimeoutError:
            error = f"no reply within {timeout_s:.0f} s"
        except ray.exceptions.ActorDiedError as failure:
            error = f"its actor died and Ray did not start it again: its restarts are used up ({_cause(failure)})"
        except ray.exceptions.RayError as failure:
            error = f"the call failed ({_cause(failure)})"
        message = f"the {self.name} service (a Ray actor of this run) does not answer: {error}"
        return pack("reply", {"ok": False, "error": message})

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        shutil.rmtree(self._directory, ignore_errors=True)
