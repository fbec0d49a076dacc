"""Backends in environments of their own: create a service's virtual environment, start it, restart it.

In the spirit of SpaceTools' Toolshed, a backend whose requirements conflict with ours (DA3 pins numpy<2,
xformers, moviepy==1.0.3) runs as a service from its own virtual environment. ``spatialclaw serve NAME --env
DIR`` (or :func:`start_service`) lays out::

    DIR/venv/            the backend's virtual environment (python -m venv, no system site packages)
    DIR/run/             mode 0700, owned by the host user
        service.sock     the service's Unix socket (what $SPATIALCLAW_MULTIVIEW_SOCKET names)
        service.json     how to start it again (argv), its pid
        service.log      its output

What each backend installs is data (:data:`BACKENDS`): pip arguments for the real backend and for its
stand-in (random weights, for tests and machines without the backend's package). A sandboxed kernel never
sees ``DIR``: its host relays the kernel's requests from a socket in the kernel's channel directory
(:class:`spatialclaw.kernel.channels.ServiceRelay`), and :func:`ensure_running` starts a service that died
again on the next request.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from spatialclaw.kernel.environment import allowed_environment

__all__ = ["BACKENDS", "BackendSpec", "ServiceError", "create_env", "ensure_running", "start_service", "stop_service"]

SOURCE = Path(__file__).resolve().parents[2]
"""This checkout (pip installs spatialclaw into a service environment from here, without dependencies)."""


class ServiceError(RuntimeError):
    """A backend service could not be created, started or restarted."""


@dataclass(frozen=True)
class BackendSpec:
    """One backend served from its own environment.

    ``module``: run as ``python -m module --socket PATH --model MODEL --device DEVICE``; as a Ray actor
    (:mod:`spatialclaw.services.service_actor`) its ``load_model(model, device)``, ``Batcher(model, ...)`` and
    ``answer(batcher, request) -> reply`` serve the same messages. ``requirements`` and
    ``stand_in_requirements``: pip install arguments (the backend's own packages; what its random-weight
    stand-in needs). ``socket_env``: the kernel variable naming its socket. ``good_for``: one line for the
    model's manual."""

    name: str
    module: str
    requirements: tuple[str, ...]
    stand_in_requirements: tuple[str, ...]
    default_model: str
    socket_env: str
    good_for: str


BACKENDS: dict[str, BackendSpec] = {
    "da3": BackendSpec(
        name="da3",
        module="spatialclaw.primitives.reconstruction.da3_service",
        requirements=("depth-anything-3", "pillow"),
        stand_in_requirements=("numpy", "pillow"),
        default_model="depth-anything/DA3METRIC-LARGE",
        socket_env="SPATIALCLAW_MULTIVIEW_SOCKET",
        good_for="Depth Anything 3: metric depth and camera poses from unposed RGB views (reconstruct backend='da3')",
    )
}


def _spec(name: str) -> BackendSpec:
    if name not in BACKENDS:
        raise ServiceError(f"no backend service named {name!r}; known: {sorted(BACKENDS)}")
    return BACKENDS[name]


def run_dir(env_dir: Path) -> Path:
    """``DIR/run`` (created 0700; refused when another user owns it or others may enter it)."""
    path = Path(env_dir) / "run"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ServiceError(f"{path} must be owned by this user with mode 0700 (it holds the service's socket)")
    return path


def python_of(env_dir: Path) -> Path:
    return Path(env_dir) / "venv" / "bin" / "python"


def create_env(
    name: str, env_dir: Path, *, stand_in: bool = False, pip_args: tuple[str, ...] = (), ray: bool = False
) -> Path:
    """Create ``DIR/venv`` for backend ``name`` and pip-install its requirements (the stand-in's with
    ``stand_in``) and spatialclaw itself (``--no-deps``, for the service module and the wire format).
    ``pip_args``: extra pip options (``--no-index --find-links DIR`` offline). ``ray``: also Ray, the version
    this environment runs (a Ray worker in ``DIR/venv`` must match its cluster), for the Ray executor's
    service actors (:mod:`spatialclaw.services.ray_services`). Returns the interpreter."""
    spec = _spec(name)
    python = python_of(env_dir)
    steps = [] if python.exists() else [[sys.executable, "-m", "venv", str(Path(env_dir) / "venv")]]
    pip = [str(python), "-m", "pip", "install", "--quiet", *pip_args]
    requirements = [*(spec.stand_in_requirements if stand_in else spec.requirements)]
    if ray:
        from importlib.metadata import PackageNotFoundError, version

        try:
            requirements.append(f"ray=={version('ray')}")
        except PackageNotFoundError:
            raise ServiceError("Ray is not installed here: pip install 'spatialclaw[ray]' first") from None
    steps.append([*pip, *requirements])
    steps.append([*pip, "--no-deps", str(SOURCE)])
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode:
            raise ServiceError(f"`{' '.join(step)}` failed:\n{(done.stdout + done.stderr)[-2000:]}")
    return python


def _reachable(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
            return True
        except OSError:
            return False


def _launch(state: dict[str, object], folder: Path, timeout_s: float) -> int:
    sock = folder / "service.sock"
    sock.unlink(missing_ok=True)
    with open(folder / "service.log", "ab") as log:
        process = subprocess.Popen(
            [str(part) for part in state["argv"]],  # type: ignore[attr-defined]
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=folder,  # not a checkout: its spatialclaw/ would shadow the installed one
            start_new_session=True,  # outlives a host that is interrupted; stop_service ends it
            # the kernel's allow list, values scrubbed: no API key or password reaches the service's process
            env={key: value for key, value in allowed_environment().items() if key != "PYTHONPATH"},
        )
    deadline = time.monotonic() + timeout_s
    while not _reachable(sock):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            tail = (folder / "service.log").read_text(errors="replace")[-1500:]
            raise ServiceError(f"the service did not start (see {folder / 'service.log'}):\n{tail}")
        time.sleep(0.05)
    (folder / "service.json").write_text(json.dumps({**state, "pid": process.pid}))
    return process.pid


def start_service(
    name: str, env_dir: Path, *, model: str | None = None, device: str = "cpu", timeout_s: float = 120.0
) -> Path:
    """Start backend ``name`` from ``DIR/venv`` (made by :func:`create_env`) and return its socket path."""
    spec = _spec(name)
    python = python_of(env_dir)
    if not python.exists():
        raise ServiceError(f"no environment at {python}: create it first (spatialclaw serve {name} --env DIR)")
    folder = run_dir(env_dir)
    if _reachable(folder / "service.sock"):
        return folder / "service.sock"  # already serving
    argv = [str(python), "-m", spec.module, "--socket", str(folder / "service.sock")]
    argv += ["--model", model or spec.default_model, "--device", device]
    with _locked(folder):
        _launch({"backend": name, "argv": argv}, folder, timeout_s)
    return folder / "service.sock"


class _locked:
    """An exclusive lock on ``folder/lock`` (one start at a time, across processes)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "lock"

    def __enter__(self) -> None:
        self.handle = open(self.path, "a")
        fcntl.flock(self.handle, fcntl.LOCK_EX)

    def __exit__(self, *_: object) -> None:
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


def ensure_running(sock: Path, timeout_s: float = 120.0) -> bool:
    """Make the service of socket ``sock`` answer: True when it already did, False when it was restarted
    from its ``service.json``; ``ServiceError`` when there is no record or it does not come back."""
    if _reachable(sock):
        return True
    folder = Path(sock).parent
    with _locked(folder):
        if _reachable(sock):  # another relay restarted it meanwhile
            return False
        try:
            state = json.loads((folder / "service.json").read_text())
        except (OSError, ValueError):
            raise ServiceError(f"the service at {sock} is down and was not started by spatialclaw serve") from None
        _launch(state, folder, timeout_s)
    return False


def stop_service(env_dir: Path) -> None:
    """Stop the service started from ``DIR`` (its recorded pid), if it runs."""
    try:
        pid = int(json.loads((Path(env_dir) / "run" / "service.json").read_text())["pid"])
        os.kill(pid, 15)
    except (OSError, ValueError, KeyError):
        pass
