"""``RUN/results.jsonl``: one JSON row per task, appended atomically, rewritten atomically.

Appends are one ``write`` of a complete line, then ``flush`` and ``fsync``, under a lock: a crash leaves
the rows written so far plus at most one torn last line, which :meth:`ResultsStore.load` ignores.
:meth:`ResultsStore.rewrite` writes a temporary file and renames it over the old one, so readers see
either the old rows or the new ones, never a mix. When a task has several rows, the last one wins.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["ResultsStore"]


class ResultsStore:
    """The results file of a run directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def load(self) -> dict[str, dict[str, Any]]:
        """Rows by task id (the last row of each task), in first-seen order; a torn last line is skipped."""
        rows: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return rows
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):
                    continue  # torn by a crash mid-write
                raise ValueError(f"{self.path}:{number} is not valid JSON; the results file is corrupt") from None
            rows[row["task_id"]] = row
        return rows

    def append(self, row: dict[str, Any]) -> None:
        """Append one row (thread-safe, durable once this returns)."""
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def rewrite(self, rows: Iterable[dict[str, Any]]) -> None:
        """Replace the file with exactly these rows (atomic rename)."""
        tmp = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
        with self._lock:
            with open(tmp, "w", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
