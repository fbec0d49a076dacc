"""JSON Lines files: every record on exactly one physical line, written durably, read without raising on a bad line.

Every JSONL file the project writes or reads (``episode.jsonl``, ``results.jsonl``, ``tasks.jsonl``, local task
files, exported rows) goes through this module, because text a cell printed or a kernel published can hold any
character. ``json.dumps(..., ensure_ascii=False)`` keeps U+2028, U+2029 and U+0085 raw, and ``str.splitlines``
splits on them (and on ``\\x0b \\x0c \\x1c \\x1d \\x1e``), so a record could become two unreadable lines.

- :func:`dumps_line` escapes every character ``str.splitlines`` breaks on (and lone surrogates, which UTF-8
  cannot encode), so a record is one line ending in ``"\\n"``; :func:`json.loads` gives the same value back.
- Every file these functions create is private to its owner (``0600``, whatever the umask): runs and episodes
  hold ground truth, replies and results.
- :func:`append` and :class:`Appender` write a record with one ``write`` then ``flush`` and ``fsync``;
  :func:`write_atomic` replaces a file with a temporary file and a rename.
- :func:`loads` is the one JSON parser for text a dataset, a run or a cell wrote: malformed or too deeply nested
  JSON (a 200,000-deep list overflows Python's parser with ``RecursionError``) is a :class:`ValueError`.
- :func:`read` splits on ``"\\n"`` only and never raises on content: it returns the good records and the bad
  lines (number and reason); an unparsable last line without its ``"\\n"`` is a write in progress (``torn``).
  A missing or unreadable file is an error naming the path.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

__all__ = ["Appender", "BadLine", "JsonlRead", "append", "dumps_line", "loads", "read", "write_atomic"]

PRIVATE = 0o600
"""The mode of every file this module creates (a umask only ever removes bits, so it stays ``0600``)."""

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Every character ``str.splitlines`` splits on; none of them appears raw in a line :func:`dumps_line` makes."""

_UNSAFE = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps_line(obj: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``obj`` as one JSON line, ending in ``"\\n"``: non-ASCII text stays readable, line breaks are escaped.

    Raw line-break characters can only occur inside JSON strings, where ``\\uXXXX`` means the same character.
    """
    text = json.dumps(obj, ensure_ascii=False, default=default)
    return _UNSAFE.sub(_escape, text) + "\n"


def _ends_mid_line(file: IO[bytes]) -> bool:
    """Whether a file opened with ``"a+b"`` ends without its ``"\\n"`` (a torn record from a crash)."""
    size = file.seek(0, os.SEEK_END)
    if size == 0:
        return False
    file.seek(size - 1)
    return file.read(1) != b"\n"


class Appender:
    """An open JSONL file that records are appended to, one ``write`` each (thread-safe); a context manager.

    A torn last line left by a crash is closed with a ``"\\n"`` first, so the next record starts a line of its own.
    """

    def __init__(self, path: str | Path, fsync: bool = True, default: Callable[[Any], Any] | None = None) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._default = default
        self._lock = threading.Lock()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), PRIVATE)
        self._file = os.fdopen(fd, "a+b")  # held open until close()
        if _ends_mid_line(self._file):
            self._put(b"\n")

    def _put(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def write(self, obj: Any) -> None:
        """Append ``obj`` as one line; durable (with ``fsync``) once this returns."""
        data = dumps_line(obj, self._default).encode("utf-8")
        with self._lock:
            self._put(data)

    @property
    def closed(self) -> bool:
        return self._file.closed

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def __enter__(self) -> Appender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append(path: str | Path, obj: Any, fsync: bool = True, default: Callable[[Any], Any] | None = None) -> None:
    """Append one record to ``path`` (created if missing): one ``write``, ``flush``, ``fsync``."""
    with Appender(path, fsync=fsync, default=default) as file:
        file.write(obj)


def write_atomic(path: str | Path, records: Iterable[Any], default: Callable[[Any], Any] | None = None) -> None:
    """Replace ``path`` with exactly ``records``, one per line: a temporary file, ``fsync``, then a rename."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}.{threading.get_ident()}")
    try:
        with os.fdopen(
            os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), PRIVATE), "wb"
        ) as file:
            for record in records:
                file.write(dumps_line(record, default).encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@dataclass
class BadLine:
    """A line :func:`read` could not use: its 1-based ``number``, a short ``reason`` and its bytes (``raw``)."""

    number: int
    reason: str
    raw: bytes = b""


@dataclass
class JsonlRead:
    """What :func:`read` found: the good ``records`` (JSON objects) and their line ``numbers``, the ``bad``
    lines, and whether the last line is a write in progress (``torn``, not counted as bad)."""

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    torn: bool = False

    def problems(self, label: str | None = None) -> list[str]:
        """One message per bad line: ``"LABEL: line N unreadable (reason)"`` (``LABEL`` defaults to the path)."""
        return [f"{label or self.path}: line {b.number} unreadable ({b.reason})" for b in self.bad]


def _check(record: Any, fields: Mapping[str, type | tuple[type, ...]]) -> str | None:
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    for name, kind in fields.items():
        if not isinstance(record.get(name), kind):
            return f"no {name!r}" if name not in record else f"{name!r} is a {type(record[name]).__name__}"
    return None


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, where JSON that is malformed, not UTF-8 or nested too deeply for Python's parser is a
    :class:`ValueError` saying which (never a ``RecursionError``): the caller names the file and line."""
    try:
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except json.JSONDecodeError as error:
        where = f" at line {error.lineno} column {error.colno}" if error.lineno > 1 else ""
        raise ValueError(f"not JSON: {error.msg}{where}") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    except RecursionError:
        raise ValueError("not JSON: nested too deeply") from None


def _parse(line: bytes, fields: Mapping[str, type | tuple[type, ...]]) -> tuple[Any, str | None]:
    try:
        record = loads(line)
    except ValueError as error:
        return None, str(error)
    return record, _check(record, fields)


def read(path: str | Path, fields: Mapping[str, type | tuple[type, ...]] | None = None) -> JsonlRead:
    """Read a JSONL file: records must be JSON objects whose ``fields`` (name: type) are present and typed.

    Splits on ``"\\n"`` only; blank lines are skipped; a line that is not UTF-8, not JSON or not such an object
    is reported in ``bad``, never raised. Raises ``FileNotFoundError`` or ``ValueError`` naming ``path`` when the
    file itself is missing or cannot be read.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist") from None
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    found = JsonlRead(path)
    lines = data.split(b"\n")
    last = len(lines) - 1  # lines[last] is what follows the final "\n": empty, or a line still being written
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        record, reason = _parse(line, fields or {})
        if reason is None:
            found.records.append(record)
            found.numbers.append(index + 1)
        elif index == last and reason.startswith("not JSON"):
            found.torn = True
        else:
            found.bad.append(BadLine(index + 1, reason, line))
    return found
