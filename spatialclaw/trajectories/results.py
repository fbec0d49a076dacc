"""``RUN/results.jsonl``: one JSON row per task, appended atomically, rewritten atomically.

Appends are one ``write`` of a complete line, then ``flush`` and ``fsync``, under a lock: a crash leaves
the rows written so far plus at most one torn last line, which :meth:`ResultsStore.load` ignores.
:meth:`ResultsStore.rewrite` writes a temporary file and renames it over the old one, so readers see
either the old rows or the new ones, never a mix. When a task has several rows, the last one wins.

A line that cannot be read (not JSON, or no ``task_id``/``status``) never stops a reader: the other rows
load, and :meth:`ResultsStore.read` names it (``results.jsonl: line N unreadable``). A rewrite keeps such
lines, byte for byte, in ``results.jsonl.unreadable`` beside the file.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spatialclaw import jsonl

__all__ = ["ResultsStore"]

log = logging.getLogger(__name__)

ROW_FIELDS = {"task_id": str, "status": str}
"""What every row must have to be counted."""


class ResultsStore:
    """The results file of a run directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    @property
    def unreadable_path(self) -> Path:
        """Where :meth:`rewrite` keeps the lines it could not read."""
        return self.path.with_name(self.path.name + ".unreadable")

    def read(self) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """Rows by task id (the last row of each task), in first-seen order, and one message per unreadable
        line; a torn last line is skipped silently, a missing file has no rows."""
        if not self.path.exists():
            return {}, []
        found = jsonl.read(self.path, ROW_FIELDS)
        rows: dict[str, dict[str, Any]] = {}
        for row in found.records:
            rows[row["task_id"]] = row
        return rows, found.problems()

    def load(self) -> dict[str, dict[str, Any]]:
        """The rows of :meth:`read`; unreadable lines are logged as warnings."""
        rows, problems = self.read()
        for problem in problems:
            log.warning("%s", problem)
        return rows

    def append(self, row: dict[str, Any]) -> None:
        """Append one row (thread-safe, durable once this returns)."""
        with self._lock:
            jsonl.append(self.path, row, default=str)

    def rewrite(self, rows: Iterable[dict[str, Any]]) -> None:
        """Replace the file with exactly these rows (atomic rename); lines of the old file that could not be
        read are first appended to :attr:`unreadable_path`, so nothing is lost."""
        with self._lock:
            if self.path.exists():
                bad = jsonl.read(self.path, ROW_FIELDS).bad
                if bad:
                    with open(self.unreadable_path, "ab") as kept:
                        kept.write(b"".join(line.raw + b"\n" for line in bad))
            jsonl.write_atomic(self.path, rows, default=str)
