"""Lazy loading of learned models (``transformers``), shared by every learned primitive.

A model is named by a Hugging Face hub id (``"depth-anything/Depth-Anything-V2-Metric-Indoor-Small-hf"``)
or by a local folder written with ``save_pretrained``. Loading goes through ``from_pretrained`` either way,
so a downloaded checkpoint and a local one take the same code path. Loaded models are kept per process,
keyed by (kind, resolved id, device, dtype), so a second call costs nothing.

Where weights come from, in order:

1. ``model_id`` is an existing folder: loaded from it, never touching the network.
2. ``$SPATIALCLAW_MODELS/<hub id>`` exists (for example ``~/models/depth-anything/Depth-Anything-V2-...``):
   loaded from that folder.
3. The Hugging Face cache (``$HF_HOME``): loaded with ``local_files_only=True``.
4. A download from the hub, unless ``HF_HUB_OFFLINE=1`` / ``TRANSFORMERS_OFFLINE=1`` is set or the hub
   cannot be reached (checked with a short connection probe first, so a machine without network gets an
   answer in seconds instead of a long retry loop).

When none of these works, :class:`MissingWeightsError` says which hub id is needed and how to provide it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from spatialclaw.primitives.perception.device import default_dtype, select_device

__all__ = [
    "KINDS",
    "PERCEPTION_PACKAGES",
    "LoadedModel",
    "MissingDependencyError",
    "MissingWeightsError",
    "clear",
    "hub_offline",
    "hub_reachable",
    "hub_unavailable",
    "load_model",
    "loaded_models",
    "model_version",
    "require_perception_extra",
    "resolve",
]

# kind -> (transformers model class, transformers processor class). Extend with ``model_class=`` /
# ``processor_class=`` arguments to ``load_model`` for anything not listed.
KINDS: dict[str, tuple[str, str]] = {
    "depth": ("AutoModelForDepthEstimation", "AutoImageProcessor"),
    "zero-shot-object-detection": ("AutoModelForZeroShotObjectDetection", "AutoProcessor"),
    "mask-generation": ("AutoModelForMaskGeneration", "AutoProcessor"),
    "image-feature-extraction": ("AutoModel", "AutoImageProcessor"),
    "keypoint-matching": ("AutoModelForKeypointMatching", "AutoImageProcessor"),
}

_PROBE_TIMEOUT_S = 3.0
_loaded: dict[tuple[str, str, str, str], LoadedModel] = {}
_lock = threading.Lock()


class MissingWeightsError(RuntimeError):
    """The weights of a learned model are not available locally and cannot be downloaded."""

    def __init__(self, model_id: str, reason: str):
        self.model_id = model_id
        self.reason = reason
        super().__init__(
            f"weights for {model_id!r} are not available: {reason}. To fix: on a machine with network run "
            f"`huggingface-cli download {model_id}` (or `hf download {model_id}`) and copy the Hugging Face "
            f"cache ($HF_HOME) here; or save the model with `save_pretrained(DIR)` and pass that folder as the "
            f"model (a local path), or put it at $SPATIALCLAW_MODELS/{model_id}. With HF_HUB_OFFLINE=1 only "
            f"local files are used. Classical backends need no weights (e.g. stereo depth for rectified "
            f"pairs, reconstruct(frames, depth=None))."
        )


class MissingDependencyError(ImportError):
    """A model's processor (or the model) needs an optional package that is not installed (e.g. torchvision)."""


@dataclass(frozen=True)
class LoadedModel:
    """A loaded model with its processor, where it runs and a version string for cache keys."""

    model: Any
    processor: Any
    model_id: str
    source: str  # the folder or hub id it was loaded from
    device: str
    dtype: Any
    version: str

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``model, processor = load_model(...)``."""
        return iter((self.model, self.processor))


def hub_offline() -> bool:
    """True when the user asked for offline mode (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    return any(
        os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


_UNREACHABLE_MEMORY_S = 300.0
_unreachable_since: dict[str, float] = {}


def _hub_address() -> tuple[str, str, int]:
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    parsed = urlparse(endpoint)
    return endpoint, parsed.hostname or "huggingface.co", parsed.port or (443 if parsed.scheme != "http" else 80)


def hub_reachable() -> bool:
    """Whether the Hugging Face hub (``$HF_ENDPOINT``) accepts a connection, probed once with a short
    timeout (3 s). A failed probe is remembered for five minutes so that later hub accesses in the same
    process (weights, tokenizers, datasets) fail at once instead of probing or retrying again."""
    endpoint, host, port = _hub_address()
    failed_at = _unreachable_since.get(endpoint)
    if failed_at is not None and time.monotonic() - failed_at < _UNREACHABLE_MEMORY_S:
        return False
    try:
        with socket.create_connection((host, port), timeout=_PROBE_TIMEOUT_S):
            _unreachable_since.pop(endpoint, None)
            return True
    except OSError:
        _unreachable_since[endpoint] = time.monotonic()
        return False


def hub_unavailable() -> str | None:
    """Why the hub cannot be used right now (offline mode asked for, or the probe failed), else None.
    Callers load from local folders / the cache only when this is not None, and put the reason in
    their one-line error."""
    if hub_offline():
        return "HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set"
    if not hub_reachable():
        _, host, port = _hub_address()
        return f"the Hugging Face hub ({host}:{port}) cannot be reached (no network)"
    return None


def resolve(model_id: str | os.PathLike[str]) -> str:
    """Return a local folder for ``model_id`` when one exists (the path itself, or under $SPATIALCLAW_MODELS),
    else the hub id unchanged."""
    text = os.fspath(model_id)
    path = Path(text).expanduser()
    if path.is_dir():
        return str(path.resolve())
    looks_like_path = text.startswith((".", "/", "~")) or text.count("/") > 1  # hub ids are "org/name"
    if looks_like_path:
        raise MissingWeightsError(text, f"the local folder {path} does not exist")
    root = os.environ.get("SPATIALCLAW_MODELS")
    if root and (Path(root).expanduser() / text).is_dir():
        return str((Path(root).expanduser() / text).resolve())
    return text


def model_version(model_id: str | os.PathLike[str], model: Any = None) -> str:
    """A string that changes when the weights change, for cache keys; cheap (no model load): the hub commit
    hash (from the loaded model, or the Hugging Face cache's snapshot), else for a local folder a hash of its
    file names, sizes and modification times; "unknown" when the weights are not available yet."""
    commit = getattr(getattr(model, "config", None), "_commit_hash", None)
    if commit:
        return str(commit)
    try:
        source = resolve(model_id)
    except MissingWeightsError:
        return "unknown"
    path = Path(source)
    if path.is_dir():
        hasher = hashlib.sha256()
        for item in sorted(path.rglob("*")):
            if item.is_file():
                stat = item.stat()
                hasher.update(f"{item.relative_to(path)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        return hasher.hexdigest()[:16]
    from huggingface_hub import try_to_load_from_cache

    cached_config = try_to_load_from_cache(source, "config.json")
    if isinstance(cached_config, str):
        return Path(cached_config).parent.name  # .../snapshots/<commit>/config.json
    return "unknown"


def loaded_models() -> list[tuple[str, str, str]]:
    """(kind, classes:source, device) of every model loaded in this process."""
    with _lock:
        return [key[:3] for key in _loaded]


def _transformers_class(name_or_class: Any) -> Any:
    if not isinstance(name_or_class, str):
        return name_or_class
    import transformers

    try:
        return getattr(transformers, name_or_class)
    except AttributeError as error:
        raise ImportError(
            f"transformers {transformers.__version__} has no {name_or_class}; upgrade with "
            f"`pip install -U transformers`"
        ) from error


def _from_pretrained(cls: Any, source: str, local_only: bool, **kwargs: Any) -> Any:
    return cls.from_pretrained(source, local_files_only=local_only, **kwargs)


def _load_processor(processor_cls: Any, source: str, local_only: bool) -> Any:
    try:
        return _from_pretrained(processor_cls, source, local_only)
    except (ImportError, ValueError) as error:
        text = str(error)
        if isinstance(error, ImportError) or "Missing optional dependencies" in text or "requires the" in text:
            raise MissingDependencyError(f"the processor of {source!r} cannot be built: {text.strip()}") from error
        raise


PERCEPTION_PACKAGES = ("torch", "transformers", "huggingface_hub")


def require_perception_extra(what: str) -> None:
    """Raise ``MissingDependencyError`` naming the ``perception`` extra when its packages are not installed (a
    base ``pip install spatialclaw``): ``what`` (a learned model) cannot load, the classical tools still run."""
    missing = [name for name in PERCEPTION_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingDependencyError(
            f"{what} needs the `perception` extra ({', '.join(missing)} not installed): "
            f"pip install 'spatialclaw[perception]'; the classical tools (motion, reconstruct(frames, depth=None), "
            f"stereo_depth, track(method='flow'), geom, find_color) run without it"
        )


def load_model(
    kind: str,
    model_id: str | os.PathLike[str],
    *,
    device: str | None = None,
    dtype: Any = None,
    model_class: Any = None,
    processor_class: Any = None,
    load_processor: bool = True,
    model_kwargs: dict[str, Any] | None = None,
) -> LoadedModel:
    """Load (once per process) a model and its processor through ``from_pretrained``.

    ``kind`` picks the transformers auto classes (see ``KINDS``: "depth", "zero-shot-object-detection",
    "mask-generation", ...); ``model_class``/``processor_class`` (a class or its name in ``transformers``)
    override them; ``model_kwargs`` go to the model's ``from_pretrained`` (e.g. a ``key_mapping``). ``model_id``
    is a hub id or a local folder. ``device`` defaults to
    ``select_device()`` (CUDA, MPS, CPU; ``SPATIALCLAW_DEVICE`` overrides) and ``dtype`` to
    ``default_dtype(device)``. The model is in eval mode on that device.
    Returns a :class:`LoadedModel` (unpacks as ``model, processor``).
    Raises :class:`MissingWeightsError` when the weights are neither local nor downloadable.
    """
    require_perception_extra(f"the {kind} model {os.fspath(model_id)}")
    if kind not in KINDS and (model_class is None or processor_class is None):
        raise ValueError(
            f"unknown model kind {kind!r}; known kinds: {sorted(KINDS)} (or pass model_class= and processor_class=)"
        )
    model_cls = _transformers_class(model_class or KINDS[kind][0])
    processor_cls = _transformers_class(processor_class or KINDS[kind][1]) if load_processor else None
    hub_id = os.fspath(model_id)
    source = resolve(hub_id)
    device = select_device(device)
    dtype = dtype if dtype is not None else default_dtype(device)
    classes = f"{getattr(model_cls, '__name__', model_cls)}+{getattr(processor_cls, '__name__', processor_cls)}"
    key = (kind, f"{classes}:{source}", device, str(dtype))
    with _lock:
        if key in _loaded:
            return _loaded[key]
        loaded = _load(model_cls, processor_cls, hub_id, source, device, dtype, model_kwargs or {})
        _loaded[key] = loaded
        return loaded


def _quiet_transformers() -> None:
    """Progress bars of weight loading would land in the cell's stdout, which the model reads."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        # re-exported by huggingface_hub.utils without an explicit marker, so its typing hides it
        from huggingface_hub.utils import disable_progress_bars  # type: ignore[attr-defined]

        disable_progress_bars()
    except ImportError:
        pass


def _load(
    model_cls: Any, processor_cls: Any, hub_id: str, source: str, device: str, dtype: Any, model_kwargs: dict[str, Any]
) -> LoadedModel:
    _quiet_transformers()
    local_folder = Path(source).is_dir()
    attempts = [True] if local_folder or hub_offline() else [True, False]
    last_error: Exception | None = None
    for local_only in attempts:
        if not local_only and not hub_reachable():
            reason = "they are not in the local Hugging Face cache and the hub cannot be reached (no network)"
            raise MissingWeightsError(hub_id, reason) from last_error
        try:
            # the processor first: it is small, and a missing optional backend (ImportError) shows up
            # before the weights are read
            processor = None if processor_cls is None else _load_processor(processor_cls, source, local_only)
            model = _from_pretrained(model_cls, source, local_only, dtype=dtype, **model_kwargs)
            break
        except OSError as error:  # transformers reports missing files and failed downloads as OSError
            last_error = error
    else:
        if local_folder:
            reason = f"the folder {source} does not hold a complete model ({last_error})"
        elif hub_offline():
            reason = "they are not in the local Hugging Face cache and HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set"
        else:
            reason = f"the download failed ({last_error})"
        raise MissingWeightsError(hub_id, reason) from last_error
    model = model.to(device).eval()
    return LoadedModel(model, processor, hub_id, source, device, dtype, model_version(source, model))


def clear() -> None:
    """Forget every loaded model (frees memory; the next ``load_model`` loads again)."""
    with _lock:
        _loaded.clear()
