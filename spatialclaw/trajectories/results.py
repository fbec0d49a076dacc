"""``RUN/results.jsonl``: one JSON row per task and repeat, appended atomically, rewritten atomically.

Rows are keyed by :func:`row_key`, ``(task_id, repeat)``: a run with ``--repeats K`` has K rows per task
(``repeat`` 0 to K-1); a row without ``repeat`` (older runs, K = 1) is repeat 0.

Appends are one ``write`` of a complete line, then ``flush`` and ``fsync``, under a lock: a crash leaves
the rows written so far plus at most one torn last line, which :meth:`ResultsStore.load` ignores.
:meth:`ResultsStore.rewrite` writes a temporary file and renames it over the old one, so readers see
either the old rows or the new ones, never a mix. When a key has several rows, the last one wins.

A line that cannot be read (not JSON, or no ``task_id``/``status``) never stops a reader: the other rows
load, and :meth:`ResultsStore.read` names it (``results.jsonl: line N unreadable``). A rewrite keeps such
lines, byte for byte, in ``results.jsonl.unreadable`` beside the file.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spatialclaw import jsonl

__all__ = ["ResultsStore", "RowKey", "mean_over_repeats", "row_key"]

RowKey = tuple[str, int]
"""``(task_id, repeat)``: what identifies one result row."""

log = logging.getLogger(__name__)

ROW_FIELDS = {"task_id": str, "status": str}
"""What every row must have to be counted."""


def row_key(row: dict[str, Any]) -> RowKey:
    """The key of a result row: its task id and its repeat index (0 when the row names none)."""
    repeat = row.get("repeat")
    return str(row["task_id"]), repeat if isinstance(repeat, int) and not isinstance(repeat, bool) else 0


def mean_over_repeats(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per task, in first-seen order: a task with one row keeps it; a task with several (its
    repeats) gets the first one with ``score`` the mean over them (a row without a score counts as 0, as
    in aggregation; None when no row has one) and ``repeats`` their number."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_task.setdefault(str(row["task_id"]), []).append(row)
    merged = []
    for group in by_task.values():
        if len(group) == 1:
            merged.append(group[0])
            continue
        scores = [row.get("score") for row in group]
        mean = None if all(s is None for s in scores) else sum(float(s or 0.0) for s in scores) / len(group)
        merged.append({**group[0], "score": mean, "repeats": len(group)})
    return merged


class ResultsStore:
    """The results file of a run directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    @property
    def unreadable_path(self) -> Path:
        """Where :meth:`rewrite` keeps the lines it could not read."""
        return self.path.with_name(self.path.name + ".unreadable")

    def read(self) -> tuple[dict[RowKey, dict[str, Any]], list[str]]:
        """Rows by :func:`row_key` (the last row of each key), in first-seen order, and one message per
        unreadable line; a torn last line is skipped silently, a missing file has no rows."""
        if not self.path.exists():
            return {}, []
        found = jsonl.read(self.path, ROW_FIELDS)
        rows: dict[RowKey, dict[str, Any]] = {}
        for row in found.records:
            rows[row_key(row)] = row
        return rows, found.problems()

    def load(self) -> dict[RowKey, dict[str, Any]]:
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
                    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
                    with os.fdopen(os.open(self.unreadable_path, flags, jsonl.PRIVATE), "ab") as kept:
                        kept.write(b"".join(line.raw + b"\n" for line in bad))
            jsonl.write_atomic(self.path, rows, default=str)
