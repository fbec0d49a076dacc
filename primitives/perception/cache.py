"""A content-addressed on-disk cache for perception results.

The key hashes the model id, its version, the call's arguments and the input bytes, so a cached result
is reused only for exactly the same computation. Values are pickled; writes are atomic. The location is
``$SPATIALCLAW_CACHE`` (default ``~/.cache/spatialclaw``); ``SPATIALCLAW_CACHE=off`` disables it.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

__all__ = ["cache_dir", "cache_key", "cached", "stats"]

T = TypeVar("T")
stats = {"hits": 0, "misses": 0}


def cache_dir() -> Path | None:
    """The cache directory, or ``None`` when caching is disabled."""
    value = os.environ.get("SPATIALCLAW_CACHE")
    if value and value.lower() in {"off", "0", "none", "false"}:
        return None
    return Path(value) if value else Path.home() / ".cache" / "spatialclaw"


def _feed(hasher: Any, value: Any) -> None:
    if isinstance(value, np.ndarray):
        hasher.update(f"nd{value.dtype}{value.shape}".encode())
        hasher.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (bytes, bytearray, memoryview)):
        hasher.update(b"b")
        hasher.update(bytes(value))
    elif hasattr(value, "array") and hasattr(value, "index"):
        _feed(hasher, value.array)
    elif hasattr(value, "tobytes") and hasattr(value, "mode"):
        hasher.update(f"pil{value.mode}{value.size}".encode())
        hasher.update(value.tobytes())
    elif isinstance(value, (list, tuple)):
        hasher.update(f"seq{len(value)}".encode())
        for item in value:
            _feed(hasher, item)
    elif isinstance(value, dict):
        hasher.update(b"dict")
        for key in sorted(value, key=str):
            hasher.update(str(key).encode())
            _feed(hasher, value[key])
    else:
        hasher.update(json.dumps(value, sort_keys=True, default=repr).encode())


def cache_key(model_id: str, version: str, *parts: Any) -> str:
    """The sha256 hex key of a computation: model id, model version, arguments and input data."""
    hasher = hashlib.sha256(f"{model_id}\0{version}\0".encode())
    for part in parts:
        _feed(hasher, part)
    return hasher.hexdigest()


def cached(namespace: str, key: str, compute: Callable[[], T]) -> T:
    """Return the cached value for ``key`` or compute, store and return it. A corrupt entry is recomputed."""
    root = cache_dir()
    if root is None:
        stats["misses"] += 1
        return compute()
    path = root / namespace / key[:2] / f"{key}.pkl"
    if path.exists():
        try:
            with open(path, "rb") as handle:
                value = cast(T, pickle.load(handle))
            stats["hits"] += 1
            return value
        except Exception:
            path.unlink(missing_ok=True)
    stats["misses"] += 1
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    with open(tmp, "wb") as handle:
        pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return value
