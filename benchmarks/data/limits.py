"""How much a dataset may make the host read or write: each bound a default, changed by an environment variable.

A downloaded dataset is someone else's files. :func:`max_media_bytes` bounds one media file a record names (the
host hashes and decodes it before an episode's time limit applies); :func:`max_archive_bytes` and
:func:`max_archive_members` bound what one archive extracts (a zip bomb of a few kilobytes fills the disk).
A value that is not a positive whole number is an error naming the variable.
"""

from __future__ import annotations

import os

__all__ = ["max_archive_bytes", "max_archive_members", "max_media_bytes"]

MEDIA_MB = ("SPATIALCLAW_MAX_MEDIA_MB", 4096)
ARCHIVE_MB = ("SPATIALCLAW_MAX_ARCHIVE_MB", 256 * 1024)
ARCHIVE_MEMBERS = ("SPATIALCLAW_MAX_ARCHIVE_MEMBERS", 1_000_000)


def _setting(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"${name} must be a positive whole number, got {text!r}")
    return int(text)


def max_media_bytes() -> int:
    """The largest media file a record may name: ``$SPATIALCLAW_MAX_MEDIA_MB`` MiB (default 4096)."""
    return _setting(*MEDIA_MB) << 20


def max_archive_bytes() -> int:
    """The most bytes one archive may extract in all: ``$SPATIALCLAW_MAX_ARCHIVE_MB`` MiB (default 256 GiB)."""
    return _setting(*ARCHIVE_MB) << 20


def max_archive_members() -> int:
    """The most files and folders one archive may hold: ``$SPATIALCLAW_MAX_ARCHIVE_MEMBERS`` (default 1,000,000)."""
    return _setting(*ARCHIVE_MEMBERS)
