"""A shared perception service: Ray actors that host the learned models of ``depth``, ``detect`` and ``segment``
for every episode of a run.

``start_perception_service(actors=N, num_gpus=G)`` (Ray already initialised) creates ``N`` named actors in a
fresh Ray namespace, waits until they are placed, and returns a :class:`PerceptionService` whose ``env``
(``SPATIALCLAW_PERCEPTION=ray://<namespace>/<actor>,...`` and ``RAY_ADDRESS``) is given to each episode's
kernel; the kernel-side forwarding is ``spatialclaw.primitives.perception.remote``. The actors live as long as the
driver that created them (``close()`` stops them at the end of the run; a driver that dies takes them
along, so no GPU stays held by a forgotten actor).

Each actor runs the same public functions as the local path (``depth.depth``, ``detect.detect``,
``segment.sam_masks``, ``segment.segment``) on the arrays it receives, so results are identical; models load
once per actor (on first use) and stay loaded. A kernel names a model by its id, and the actors (outside
every sandbox) load only the ids the operator allowed (:func:`allowed_models`: each kind's default and
aliases, the ``SPATIALCLAW_*_MODEL`` settings and ``$SPATIALCLAW_PERCEPTION_MODELS`` of the process that
starts the service, and its ``models`` argument): any other id, a host path above all, is refused with a
``ValueError`` before anything is looked up, so a cell can neither probe nor load host folders. Caching is the kernel's job (in front of the remote call):
the actors run with ``SPATIALCLAW_CACHE=off``. Calls on one actor run one at a time (the actor serialises
them), so ``N`` actors with ``G`` GPUs each serve ``N`` inferences at once.
"""

from __future__ import annotations

import os
import platform
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["MODELS_ENV", "PerceptionActor", "PerceptionService", "allowed_models", "start_perception_service"]

KINDS = ("depth", "detect", "sam", "sam3")
MODELS_ENV = "SPATIALCLAW_PERCEPTION_MODELS"
"""Comma-separated model ids (hub ids or local folders) the operator lets kernels name besides the defaults."""
_MODEL_SETTINGS = (
    "SPATIALCLAW_DEPTH_MODEL",
    "SPATIALCLAW_DETECT_MODEL",
    "SPATIALCLAW_SEGMENT_MODEL",
    "SPATIALCLAW_SAM3_MODEL",
)


def allowed_models(extra: Sequence[str] = ()) -> frozenset[str]:
    """The model ids a service's actors load for kernels: every kind's default and alias targets, the
    ``SPATIALCLAW_*_MODEL`` settings and ``$SPATIALCLAW_PERCEPTION_MODELS`` of this process, and ``extra``."""
    from spatialclaw.primitives.perception.depth import DEFAULT_MODEL
    from spatialclaw.primitives.perception.detect import DEFAULT_DETECT_MODEL, DETECT_ALIASES
    from spatialclaw.primitives.perception.segment import DEFAULT_SAM3_MODEL, DEFAULT_SAM_MODEL, SAM_ALIASES

    ids = {DEFAULT_MODEL, DEFAULT_DETECT_MODEL, DEFAULT_SAM_MODEL, DEFAULT_SAM3_MODEL}
    ids |= set(DETECT_ALIASES.values()) | set(SAM_ALIASES.values())
    ids |= {os.environ[name] for name in _MODEL_SETTINGS if os.environ.get(name)}
    ids |= {part.strip() for part in os.environ.get(MODELS_ENV, "").split(",") if part.strip()}
    return frozenset(ids | {str(model) for model in extra})


def _describe(kind: str, model_id: str, device: str | None) -> dict[str, Any]:
    """The model's version for cache keys (+ what the kernel needs to build its key), as the local path finds it."""
    from spatialclaw.primitives.perception import depth, detect, models, sam3, segment

    if kind == "depth":
        version = models.model_version(model_id)
        if version == "unknown":
            version = depth.load_depth_model(model_id, device).version
        return {"version": version}
    if kind == "detect":
        loaded = detect.load_detector(model_id, device)
        return {"version": loaded.version, "family": detect.detector_family(loaded)}
    if kind == "sam":
        return {"version": segment.load_sam(model_id, device).version}
    if kind == "sam3":
        return {"version": sam3.load_sam3(model_id, device).version}
    raise ValueError(f"unknown perception kind {kind!r}; the service hosts {list(KINDS)}")


def _run(kind: str, model_id: str, device: str | None, inputs: dict[str, Any]) -> Any:
    """The value the local path caches for these inputs (same functions, same arguments)."""
    from spatialclaw.primitives.perception import depth, detect, segment

    if kind == "depth":
        result = depth.depth(inputs["rgb"], model_id, intrinsics=inputs["intrinsics"], device=device)
        return {
            "depth": result.depth,
            "intrinsics": result.intrinsics,
            "confidence": result.confidence,
            "intrinsics_source": result.intrinsics_source,
        }
    if kind == "detect":
        found = detect.detect(
            inputs["array"],
            inputs["labels"],
            model=model_id,
            threshold=inputs["threshold"],
            text_threshold=inputs["text_threshold"],
            nms_iou=inputs["nms_iou"],
            max_instances=inputs["max_instances"],
            device=device,
        )
        return list(found)
    if kind == "sam":
        points = inputs["points"]
        return segment.sam_masks(
            segment.load_sam(model_id, device),
            inputs["array"],
            inputs["boxes"],
            None if points is None else np.asarray(points, dtype=np.float64),
            inputs["point_labels"],
            inputs["mask_threshold"],
        )
    if kind == "sam3":
        found = segment.segment(
            inputs["array"], text=inputs["labels"], text_model=model_id, threshold=inputs["threshold"], device=device
        )
        return list(found)
    raise ValueError(f"unknown perception kind {kind!r}; the service hosts {list(KINDS)}")


def _reply(compute: Callable[[], Any]) -> dict[str, Any]:
    """``{"ok": value}`` or ``{"error": {...}}``: errors travel as data so that the kernel re-raises them with
    their own type (``MissingWeightsError`` needs its model id and reason)."""
    try:
        return {"ok": compute()}
    except Exception as error:  # every failure goes back to the calling kernel, typed
        return {
            "error": {
                "type": type(error).__name__,
                "message": str(error),
                "model_id": getattr(error, "model_id", None),
                "reason": getattr(error, "reason", None),
                "traceback": traceback.format_exc(limit=8),
            }
        }


class PerceptionActor:
    """The actor body (wrapped with ``ray.remote`` by :func:`start_perception_service`).

    ``device``: "cuda", "mps" or "cpu"; default automatic (the GPUs Ray assigned to this actor). ``models``:
    the only model ids it loads (default :func:`allowed_models` of the actor's process).
    """

    def __init__(self, device: str | None = None, models: Sequence[str] | None = None) -> None:
        # The actor computes; it must neither forward to itself nor keep a second cache.
        os.environ.pop("SPATIALCLAW_PERCEPTION", None)
        os.environ["SPATIALCLAW_CACHE"] = "off"
        self.device = device
        self.models = frozenset(models) if models is not None else allowed_models()
        self.calls: Counter[str] = Counter()

    def _allowed(self, model_id: str) -> str:
        if not isinstance(model_id, str) or model_id not in self.models:
            raise ValueError(
                f"{model_id!r} is not a model this perception service hosts (it loads only the models its "
                f"operator allowed: {', '.join(sorted(self.models))}; more with ${MODELS_ENV} or "
                "start_perception_service(models=[...]))"
            )
        return model_id

    def describe(self, kind: str, model_id: str) -> dict[str, Any]:
        self.calls[f"describe:{kind}"] += 1
        return _reply(lambda: _describe(kind, self._allowed(model_id), self.device))

    def run(self, kind: str, model_id: str, inputs: dict[str, Any]) -> dict[str, Any]:
        self.calls[f"run:{kind}"] += 1
        return _reply(lambda: _run(kind, self._allowed(model_id), self.device, inputs))

    def stats(self) -> dict[str, Any]:
        """Calls per ``method:kind``, the models loaded (kind, classes:source, device), process id and node."""
        from spatialclaw.primitives.perception import models

        return {
            "calls": dict(self.calls),
            "models": models.loaded_models(),
            "pid": os.getpid(),
            "node": platform.node(),
        }


@dataclass
class PerceptionService:
    """The running actors of one service: ``env`` for the kernels, ``setup`` for the manifest."""

    namespace: str
    names: list[str]
    handles: list[Any] = field(repr=False)
    num_gpus: float
    num_cpus: float
    address: str | None

    @property
    def url(self) -> str:
        from spatialclaw.primitives.perception.remote import SCHEME

        return f"{SCHEME}{self.namespace}/{','.join(self.names)}"

    @property
    def env(self) -> dict[str, str]:
        """Environment for a kernel that should use this service."""
        from spatialclaw.primitives.perception.remote import ENV_VAR

        env = {ENV_VAR: self.url}
        if self.address:
            env["RAY_ADDRESS"] = self.address
        return env

    def setup(self) -> dict[str, Any]:
        """What the manifest records about where perception ran."""
        return {
            "where": "ray-actors",
            "actors": len(self.names),
            "gpus_per_actor": self.num_gpus,
            "cpus_per_actor": self.num_cpus,
            "service": self.url,
        }

    def stats(self) -> list[dict[str, Any]]:
        import ray

        return ray.get([handle.stats.remote() for handle in self.handles])

    def close(self) -> None:
        """Stop the actors (their models are freed)."""
        import ray

        for handle in self.handles:
            ray.kill(handle, no_restart=True)
        self.handles = []


def start_perception_service(
    actors: int = 1,
    num_gpus: float = 1.0,
    num_cpus: float = 1.0,
    *,
    namespace: str | None = None,
    name: str = "perception",
    device: str | None = None,
    startup_timeout_s: float = 600.0,
    fail_fast: bool = False,
    models: Sequence[str] = (),
) -> PerceptionService:
    """Create ``actors`` named perception actors (``num_gpus``/``num_cpus`` each, fractions allowed) in
    ``namespace`` (default a fresh ``spatialclaw-perception-<hex>``) on the Ray cluster this process is
    connected to, and wait until all are running. Raises ``RuntimeError`` naming the missing resources when
    they cannot be placed within ``startup_timeout_s`` seconds, or at once with ``fail_fast`` (for a cluster
    that cannot grow, such as a local instance) when its total GPUs or CPUs are too few. Kernels may name only
    the model ids of :func:`allowed_models` (with ``models`` added), as this process sees them."""
    import ray

    if actors < 1:
        raise ValueError(f"--perception-actors must be at least 1, got {actors}")
    if num_gpus < 0 or num_cpus < 0:
        raise ValueError(f"perception actor resources must be >= 0, got num_gpus={num_gpus}, num_cpus={num_cpus}")
    if not ray.is_initialized():
        raise RuntimeError("start_perception_service needs a Ray connection: call ray.init(...) first")
    if fail_fast:
        total = ray.cluster_resources()  # type: ignore[no-untyped-call]  # unannotated in Ray
        for resource, each in (("GPU", num_gpus), ("CPU", num_cpus)):
            if each * actors > total.get(resource, 0.0):
                raise RuntimeError(
                    f"{actors} perception actor(s) with {each} {resource}(s) each need {each * actors} {resource}s; "
                    f"the Ray cluster has {total.get(resource, 0.0)}. To fix: lower --perception-gpus (0 runs the "
                    f"models on CPUs) or --perception-actors, or join a cluster with GPU nodes (--ray-address)"
                )
    namespace = namespace or f"spatialclaw-perception-{uuid.uuid4().hex[:8]}"
    names = [f"{name}-{index}" for index in range(actors)]
    # Ray's annotations give the decorated class as a union with the plain class; actor handles are dynamic.
    actor_class: Any = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus)(PerceptionActor)
    allowed = sorted(allowed_models(models))
    handles = [
        actor_class.options(name=actor_name, namespace=namespace).remote(device, allowed) for actor_name in names
    ]
    ready, waiting = ray.wait(
        [handle.stats.remote() for handle in handles], num_returns=len(handles), timeout=startup_timeout_s
    )
    if waiting:
        for handle in handles:
            ray.kill(handle, no_restart=True)
        resources = ray.cluster_resources()  # type: ignore[no-untyped-call]  # unannotated in Ray
        raise RuntimeError(
            f"{len(waiting)} of {actors} perception actors could not be started within {startup_timeout_s:.0f} s: each "
            f"needs {num_gpus} GPU(s) and {num_cpus} CPU(s); the cluster has {resources}. To fix: "
            f"lower --perception-gpus (0 runs the models on CPUs) or --perception-actors, or add GPU nodes"
        )
    ray.get(ready)  # an actor whose constructor failed raises here
    try:
        address = ray.get_runtime_context().gcs_address
    except Exception:  # a Ray Client connection has no GCS address here; kernels find the cluster on their node
        address = None
    return PerceptionService(namespace, names, handles, num_gpus, num_cpus, address)
