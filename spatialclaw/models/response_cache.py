"""A response cache around any :class:`~spatialclaw.models.base.Model`: a request seen before is answered from disk.

:class:`ResponseCache` wraps a model. Each ``chat`` call is keyed by :func:`request_key`, a sha256 over the
exact request: the model spec (an ``openai-compat:`` spec without its ``@URL``, since the server may move),
the messages (text, tool calls, and each image as the sha256 of its PNG bytes), the purpose, every call
parameter except ``timeout_s`` (the time left, which differs between calls), the tools, and the
:attr:`ResponseCache.scope` the caller sets (a benchmark run sets ``task_id`` and ``repeat``, so the
repeats of one task never share an answer). A hit returns the stored reply without calling the model; a
miss calls it and stores the reply as ``DIR/<key>.json``. Only replies are stored; a failed call stores
nothing.

The cache folder lies in a run directory a kernel could have written to, so no entry is trusted blindly:
entries are read and written without following links (:mod:`spatialclaw.trajectories.safe_files`), and an
entry that is a link, not JSON, for another key, or whose reply does not match its own checksum is
counted as ``corrupt``, ignored (the model is called) and replaced. :attr:`ResponseCache.counts` holds
``hits``, ``misses``, ``corrupt`` and ``unwritable`` (entries that could not be stored) since the last
:meth:`ResponseCache.take_counts`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

from spatialclaw.chat import Message, ModelReply, ToolCall, Usage
from spatialclaw.models.base import Model
from spatialclaw.trajectories.safe_files import BadReference, read_ref, write_file

__all__ = ["CACHE_DIR", "ResponseCache", "request_key"]

log = logging.getLogger(__name__)

CACHE_DIR = "cache"
"""The cache's folder inside a run directory: ``RUN/cache/``."""

_FORMAT = 1
_NOT_KEYED = frozenset({"timeout_s"})


def _plain(value: Any) -> Any:
    """``value`` as JSON-ready data with a stable order (dataclasses as dicts, bytes as their sha256)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return {"sha256": hashlib.sha256(value).hexdigest()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_spec(spec: str) -> str:
    """The spec as the key sees it: an ``openai-compat:MODEL@URL`` spec without ``@URL``."""
    return spec.rsplit("@", 1)[0] if spec.startswith("openai-compat:") else spec


def request_key(
    spec: str, messages: list[Message], purpose: str, params: dict[str, Any], scope: dict[str, Any] | None = None
) -> str:
    """The sha256 (64 hex digits) of one request: spec (see :func:`cache_spec`), messages (images by the
    sha256 of their PNG bytes), purpose, parameters (tools included; ``timeout_s`` left out) and ``scope``
    (for a benchmark run: ``task_id`` and ``repeat``)."""
    return _digest(
        {
            "spec": cache_spec(spec),
            "messages": [m.to_dict() for m in messages],
            "purpose": purpose,
            "params": _plain({k: v for k, v in params.items() if k not in _NOT_KEYED}),
            "scope": _plain(scope or {}),
        }
    )


def _reply_data(reply: ModelReply) -> dict[str, Any]:
    return {
        "text": reply.text,
        "reasoning": reply.reasoning,
        "usage": dataclasses.asdict(reply.usage),
        "cost_usd": reply.cost_usd,
        "latency_s": reply.latency_s,
        "raw": _plain(reply.raw),
        "finish_reason": reply.finish_reason,
        "tool_calls": [call.to_dict() for call in reply.tool_calls],
    }


def _reply(data: dict[str, Any]) -> ModelReply:
    """A reply from stored data; TypeError, KeyError or ValueError when the data is not one."""
    if not isinstance(data["text"], str):
        raise TypeError("text is not a string")
    return ModelReply(
        text=data["text"],
        reasoning=data.get("reasoning"),
        usage=Usage(**data.get("usage") or {}),
        cost_usd=data.get("cost_usd"),
        latency_s=float(data.get("latency_s") or 0.0),
        raw=data.get("raw"),
        finish_reason=data.get("finish_reason"),
        tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls") or []],
    )


class ResponseCache(Model):
    """``model`` with its replies kept in ``run_dir/cache/`` (see the module docstring). ``scope``: what
    else the key holds (a benchmark episode sets ``{"task_id": ..., "repeat": ...}`` before it runs).
    One instance per thread: ``scope`` and ``counts`` are not shared between threads."""

    def __init__(self, model: Model, run_dir: str | Path) -> None:
        self.model = model
        self.spec = model.spec
        self.name = model.name
        self.run_dir = Path(run_dir)
        self.scope: dict[str, Any] = {}
        self.refresh = False  # True: ask the model anew (a retry of a failed attempt) and store what it says
        self.counts: Counter[str] = Counter()
        folder = self.run_dir / CACHE_DIR
        if not folder.is_symlink():  # a linked folder is never used: reads and writes below refuse it
            folder.mkdir(exist_ok=True, mode=0o700)

    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply:
        key = request_key(self.spec, messages, purpose, params, self.scope)
        cached = None if self.refresh else self._load(key)
        if cached is not None:
            self.counts["hits"] += 1
            return cached
        self.counts["misses"] += 1
        reply = self.model.chat(messages, purpose=purpose, **params)
        self._store(key, reply)
        return reply

    def _load(self, key: str) -> ModelReply | None:
        try:
            data = json.loads(read_ref(self.run_dir, CACHE_DIR, key, ".json").decode("utf-8"))
            if not isinstance(data, dict) or data.get("key") != key or data.get("format") != _FORMAT:
                raise ValueError("the entry is not this request's")
            if _digest(data["reply"]) != data.get("reply_sha256"):
                raise ValueError("the reply does not match its checksum")
            return _reply(data["reply"])
        except FileNotFoundError:
            return None
        except (BadReference, OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as problem:
            self.counts["corrupt"] += 1
            log.warning("response cache entry %s ignored (%s: %s)", key[:12], type(problem).__name__, problem)
            return None

    def _store(self, key: str, reply: ModelReply) -> None:
        data = json.loads(json.dumps(_reply_data(reply), default=str))  # as it reads back, for the checksum
        entry = {"format": _FORMAT, "key": key, "spec": cache_spec(self.spec), "reply": data}
        entry["reply_sha256"] = _digest(data)
        try:
            write_file(
                self.run_dir / CACHE_DIR / f"{key}.json",
                json.dumps(entry, ensure_ascii=False, default=str),
                inside=self.run_dir,
                permissions=0o600,  # the replies are the run's: private like it
            )
        except OSError as problem:  # a linked entry or folder (UnsafeTarget), a full disk: the reply still counts
            self.counts["unwritable"] += 1
            log.warning("response cache entry %s not written (%s)", key[:12], problem)

    def take_counts(self) -> dict[str, int]:
        """The counts since the last call (``hits``, ``misses``, ``corrupt``, ``unwritable``), then reset."""
        counts = {name: self.counts[name] for name in ("hits", "misses", "corrupt", "unwritable")}
        self.counts.clear()
        return counts

    def describe(self) -> dict[str, Any]:
        return self.model.describe()

    def close(self) -> None:
        self.model.close()
