"""The episode log: one directory per episode, ``episode.jsonl`` plus content-addressed images.

Layout::

    EPISODE_DIR/
      episode.jsonl        one JSON event per line, appended and flushed as the episode runs
      images/<sha256>.png  every image that appears in a model request or a cell result
      texts/<sha256>.txt   every long text part of a request (the system prompt, ...), stored once

Event types (every event has ``type``, ``seq`` (0, 1, ...) and ``time`` (Unix seconds)):

``header``       format_version, package_version, prompt_version, model, config, config_hash
``task``         the :class:`~spatialclaw.task.Task` (``task``) and its input files' hashes (``files``)
``model_call``   step, purpose (plan/step/fallback/vlm.ask/vlm.locate), model, params, request
                 (messages with images, and text parts of ``LONG_TEXT_CHARS`` or more, as hash
                 references ``{"type": "text", "text_ref": sha256}``; :meth:`Episode.messages` resolves
                 both), response (text, reasoning, finish_reason,
                 raw), usage, cost_usd, latency_s, error
``cell``         step, code, result (a :class:`~spatialclaw.kernel.cell.CellResult` with images as hash references)
``format_error`` step, response text, message shown to the model
``answer``       value, source (``cell`` or ``fallback``)
``score``        score, ground_truth, details
``end``          reason (answered/budget/timeout/format_errors/error/interrupted), steps, usage, cost_usd,
                 duration_s, and ``limit`` (``{"kind", "value", "used"}``) when a limit ended the episode

Each event is written with one ``write`` of a complete line followed by ``flush`` and ``fsync``, so a
crash leaves a readable prefix; the loader ignores a torn last line and marks the episode incomplete
when no ``end`` event is present. Lines are written and read by :mod:`spatialclaw.jsonl` (one physical line
per event, whatever the text holds); a line that cannot be read is named in ``Episode.unreadable``.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.chat import ImagePart, Message, ModelReply, Usage
from spatialclaw.kernel.cell import CellImage, CellResult
from spatialclaw.trajectories.safe_files import is_episode_dir, read_ref, write_file

__all__ = ["FORMAT_VERSION", "Episode", "TrajectoryWriter", "iter_episode_dirs", "load_episode"]

FORMAT_VERSION = 1
EPISODE_FILE = "episode.jsonl"
IMAGE_DIR = "images"
TEXT_DIR = "texts"
LONG_TEXT_CHARS = 4096
"""Text parts at least this long are stored once under ``texts/`` instead of inline in every request."""


def config_hash(config: dict[str, Any]) -> str:
    """A short stable hash of a JSON-compatible configuration."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class TrajectoryWriter:
    """Appends events to ``DIR/episode.jsonl`` and stores images under ``DIR/images``.

    Use as a context manager; :meth:`close` without an ``end`` event leaves the episode marked incomplete.
    Thread-safe: the agent loop and the ``vlm`` side channel's server thread write to the same episode.
    """

    def __init__(self, directory: str | Path, fsync: bool = True) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)  # private, as its run (or session)
        (self.directory / IMAGE_DIR).mkdir(exist_ok=True, mode=0o700)
        # Held open for the writer's lifetime; closed by close() / __exit__.
        self._file = jsonl.Appender(self.directory / EPISODE_FILE, fsync=fsync, default=_json_default)
        with open(self.directory / EPISODE_FILE, "rb") as existing:
            self._seq = existing.read().count(b"\n")
        self._stored: set[str] = set()
        self._lock = threading.RLock()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def _store_blob(self, data: bytes, folder: str, suffix: str) -> str:
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            if digest in self._stored:
                return digest
            path = self.directory / folder / f"{digest}{suffix}"
            if not os.path.lexists(path):
                path.parent.mkdir(exist_ok=True, mode=0o700)
                write_file(path, data, inside=self.directory, permissions=jsonl.PRIVATE)  # never through a link
            self._stored.add(digest)
        return digest

    def store_image(self, png: bytes) -> str:
        """Store PNG bytes content-addressed (atomic rename) and return the sha256 hex digest."""
        return self._store_blob(png, IMAGE_DIR, ".png")

    def store_text(self, text: str) -> str:
        """Store a long text content-addressed (UTF-8, atomic rename) and return its sha256 hex digest."""
        return self._store_blob(text.encode("utf-8"), TEXT_DIR, ".txt")

    def write(self, event_type: str, **fields: Any) -> dict[str, Any]:
        """Append one event; returns the event as written."""
        with self._lock:
            event = {"type": event_type, "seq": self._seq, "time": time.time(), **fields}
            self._file.write(event)  # one physical line, whatever characters the event holds
            self._seq += 1
        return event

    def model_call(
        self,
        *,
        step: int,
        purpose: str,
        model: str,
        params: dict[str, Any],
        messages: list[Message],
        reply: ModelReply | None = None,
        error: str | None = None,
        latency_s: float | None = None,
    ) -> dict[str, Any]:
        """Append a ``model_call`` event: the request exactly as sent, and the reply or the error."""
        request = {"messages": self.messages(messages)}
        if reply is None:
            return self.write(
                "model_call",
                step=step,
                purpose=purpose,
                model=model,
                params=params,
                request=request,
                response=None,
                usage=asdict(Usage()),
                cost_usd=None,
                latency_s=latency_s,
                error=error,
            )
        response = {
            "text": reply.text,
            "reasoning": reply.reasoning,
            "finish_reason": reply.finish_reason,
            "raw": reply.raw,
        }
        return self.write(
            "model_call",
            step=step,
            purpose=purpose,
            model=model,
            params=params,
            request=request,
            response=response,
            usage=asdict(reply.usage),
            cost_usd=reply.cost_usd,
            latency_s=reply.latency_s,
            error=None,
        )

    def messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Serialise messages for a ``model_call`` event, storing their images and long texts."""
        for message in messages:
            for part in message.content:
                if isinstance(part, ImagePart):
                    self.store_image(part.png)
        serialised = [m.to_dict() for m in messages]
        for record in serialised:
            for part in record["content"]:
                if part["type"] == "text" and len(part["text"]) >= LONG_TEXT_CHARS:
                    part["text_ref"] = self.store_text(part.pop("text"))
        return serialised

    def cell_result(self, result: CellResult) -> dict[str, Any]:
        """Serialise a cell result for a ``cell`` event, storing its images."""
        for image in result.images:
            self.store_image(image.png)
        return result.to_dict(with_image_bytes=False)


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Path):
        return str(value)
    return repr(value)


@dataclass
class Episode:
    """A loaded episode. ``complete`` is false when the log has no ``end`` event (a crash or a kill);
    ``unreadable`` names each line of the log that could not be read (the other events are loaded)."""

    directory: Path
    events: list[dict[str, Any]]
    complete: bool
    torn_tail: bool = False
    header: dict[str, Any] = field(default_factory=dict)
    task: dict[str, Any] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == event_type]

    @property
    def end(self) -> dict[str, Any] | None:
        ends = self.of_type("end")
        return ends[-1] if ends else None

    @property
    def answer(self) -> Any:
        answers = self.of_type("answer")
        return answers[-1]["value"] if answers else None

    @property
    def score(self) -> float | None:
        scores = self.of_type("score")
        return scores[-1]["score"] if scores else None

    def image_bytes(self, sha256: str) -> bytes:
        """The PNG ``images/<sha256>.png``, read without following links (:func:`read_ref`): raises
        :class:`BadReference` for a malformed reference or a link, ``FileNotFoundError`` when missing."""
        return read_ref(self.directory, IMAGE_DIR, sha256, ".png", owner=self.directory / EPISODE_FILE)

    def text(self, sha256: str) -> str:
        """The long text ``texts/<sha256>.txt``, read as :meth:`image_bytes` reads images."""
        data = read_ref(self.directory, TEXT_DIR, sha256, ".txt", owner=self.directory / EPISODE_FILE)
        return data.decode("utf-8", errors="replace")

    def request_messages(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The request messages of a ``model_call`` event as JSON dicts, long texts resolved."""
        resolved = []
        for message in (event.get("request") or {}).get("messages") or []:
            parts = [
                {"type": "text", "text": self.text(p["text_ref"])} if p["type"] == "text" and "text_ref" in p else p
                for p in message["content"]
            ]
            resolved.append({**message, "content": parts})
        return resolved

    def messages(self, event: dict[str, Any]) -> list[Message]:
        """The exact request messages of a ``model_call`` event, with image bytes and long texts loaded."""
        return [Message.from_dict(m, self.image_bytes) for m in self.request_messages(event)]

    def cells(self) -> list[tuple[dict[str, Any], CellResult]]:
        """Each ``cell`` event with its :class:`CellResult` (image bytes loaded)."""
        out = []
        for event in self.of_type("cell"):
            result = event["result"]
            images = [CellImage.from_dict(i, png=self.image_bytes(i["sha256"])) for i in result.get("images", [])]
            out.append((event, CellResult.from_dict(result, images=images)))
        return out


def load_episode(directory: str | Path) -> Episode:
    """Read an episode directory. A torn last line (a crash mid-write) is dropped, not an error; a line that
    cannot be read is left out and named in :attr:`Episode.unreadable` (``"episode DIR: line N unreadable"``)."""
    directory = Path(directory)
    path = directory / EPISODE_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: not an episode directory")
    log = jsonl.read(path, {"type": str})
    events = log.records
    header = next((e for e in events if e["type"] == "header"), {})
    task: dict[str, Any] = next(
        (e["task"] for e in events if e["type"] == "task" and isinstance(e.get("task"), dict)), {}
    )
    complete = any(e["type"] == "end" for e in events)
    unreadable = log.problems(f"episode {directory}")
    return Episode(directory, events, complete, torn_tail=log.torn, header=header, task=task, unreadable=unreadable)


SKIPPED_DIRS = frozenset({"workdir", "work"})
"""Folders never searched for episodes (kernel working directories of older layouts)."""


def iter_episode_dirs(root: str | Path) -> Iterator[Path]:
    """Episode directories under ``root`` (itself, if it is one), sorted by path.

    The tree is treated as hostile: links (to folders or to an ``episode.jsonl``) are never followed,
    the search stops at an episode directory (nothing inside one is another episode) and skips
    ``workdir``/``work`` folders."""
    root = Path(root)
    if (root / EPISODE_FILE).exists():
        yield root
        return
    found = []
    for current, folders, files in os.walk(root):  # followlinks=False: linked folders are not entered
        here = Path(current)
        if EPISODE_FILE in files and is_episode_dir(here, EPISODE_FILE):
            found.append(here)
            folders[:] = []
            continue
        folders[:] = [f for f in folders if f not in SKIPPED_DIRS and not os.path.islink(here / f)]
    yield from sorted(found)
