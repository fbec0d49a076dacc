"""Measuring a directory a kernel may write (its workdir) within a budget of entries and time.

A cell can fill its workdir with hundreds of thousands of files; the host measures it after every cell, so the
walk stops after :data:`MAX_ENTRIES` entries or :data:`MAX_SECONDS` and reports "at least" what it counted.
Links are never followed, and nothing but ``lstat`` data is read.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["MAX_ENTRIES", "MAX_SECONDS", "disk_usage"]

MAX_ENTRIES = 20_000
"""Directory entries one measurement looks at, at most."""
MAX_SECONDS = 0.1
"""Seconds one measurement may take, at most (checked every few hundred entries)."""


def disk_usage(root: Path, max_entries: int = MAX_ENTRIES, max_seconds: float = MAX_SECONDS) -> tuple[int, bool]:
    """``(bytes, complete)``: the allocated bytes of the files under ``root`` (symlinks not followed) and
    whether every entry was counted (False: the budget ran out and the real total is at least that)."""
    deadline = time.monotonic() + max_seconds
    total, seen, pending = 0, 0, [str(root)]
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > max_entries or (seen % 256 == 0 and time.monotonic() > deadline):
                    return total, False
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    else:
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
                except OSError:
                    pass
    return total, True
