"""The Ray actor that serves a backend from its own environment (``runtime_env={"py_executable": DIR/venv/bin/python}``).

:mod:`spatialclaw.services.ray_services` creates one per backend; this module is what Ray imports in the
backend's environment to build it, so it imports nothing but the standard library at the top (that
environment has the backend's packages, Ray and spatialclaw without dependencies, nothing else).

The actor serves the backend module's messages (``module.answer(batcher, request) -> reply``, the same bytes
the module's Unix socket server answers): requests arrive as concurrent actor calls (one thread each, up to
the actor's ``max_concurrency``) and meet in the module's ``Batcher``, so the requests of concurrent episodes
run in one batch as they do behind ``spatialclaw serve``. Nothing here unpickles what a kernel sent: the
request is bytes in the backend's JSON wire format.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
import threading
from typing import Any

__all__ = ["ServiceActor"]


class ServiceActor:
    """The actor body (wrapped with ``ray.remote`` by :func:`spatialclaw.services.ray_services.start_service_actors`).

    ``module``: the backend's service module (``BackendSpec.module``); ``model``: its model id or folder
    (``"stand-in"``: random weights); ``device``: "cuda" or "cpu" (Ray's ``num_gpus`` decides which GPUs
    "cuda" sees); ``batch_window_s`` / ``max_batch``: the batcher's (see the module's ``Batcher``)."""

    def __init__(
        self, module: str, model: str, device: str = "cpu", batch_window_s: float = 0.005, max_batch: int = 8
    ) -> None:
        _installed_spatialclaw_first()
        backend = importlib.import_module(module)
        self._answer = backend.answer
        self.batcher = backend.Batcher(backend.load_model(model, device), batch_window_s, max_batch)
        self.model = model
        self.device = device
        self.in_flight = 0
        self._lock = threading.Lock()

    def call(self, request: bytes) -> bytes:
        """The reply message to one request message of the backend's wire format (``run`` or ``stats``)."""
        with self._lock:
            self.in_flight += 1
        try:
            reply: bytes = self._answer(self.batcher, request)
            return reply
        finally:
            with self._lock:
                self.in_flight -= 1

    def stats(self) -> dict[str, Any]:
        """The batcher's counts, requests in flight now, the model, device, interpreter, process id and node."""
        return {
            **self.batcher.counts,
            "in_flight": self.in_flight,
            "model": self.model,
            "device": self.device,
            "python": sys.executable,
            "pid": os.getpid(),
            "node": platform.node(),
        }


def _installed_spatialclaw_first() -> None:
    """Ray puts the driver's working directory (and script directory) at the front of each worker's
    ``sys.path``. When that is a spatialclaw checkout, its ``spatialclaw/`` (which lacks ``primitives/``:
    setuptools maps that folder in at install time) shadows the copy installed in this environment. Move such
    entries behind this environment's own and forget the modules loaded from them, so that the backend module
    and everything it imports come from the environment."""
    prefix = os.path.realpath(sys.prefix) + os.sep
    shadowing = [
        entry
        for entry in sys.path
        if os.path.isfile(os.path.join(entry or ".", "spatialclaw", "__init__.py"))
        and not os.path.realpath(entry or ".").startswith(prefix)
    ]
    if not shadowing:
        return
    sys.path[:] = [entry for entry in sys.path if entry not in shadowing] + shadowing
    for name, loaded in list(sys.modules.items()):
        if name == "spatialclaw" or name.startswith("spatialclaw."):
            where = os.path.realpath(getattr(loaded, "__file__", None) or prefix)
            if not where.startswith(prefix):
                del sys.modules[name]
    importlib.invalidate_caches()
