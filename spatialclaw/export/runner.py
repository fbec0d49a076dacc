"""Find episodes, filter them, build their conversations and hand them to one format's writer."""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from spatialclaw.episodes import EpisodeFilter, find_episode_dirs
from spatialclaw.export.conversation import Conversation, episode_conversation

__all__ = ["FORMATS", "ExportReport", "ExportStats", "SkipEpisode", "export_episodes"]

FORMATS: dict[str, str] = {
    "openai": "spatialclaw.export.openai",
    "trl": "spatialclaw.export.trl",
    "sharegpt": "spatialclaw.export.sharegpt",
    "verl": "spatialclaw.export.verl",
    "ipynb": "spatialclaw.export.ipynb",
}
"""Format name -> module defining ``write(conversations, out, **options) -> ExportStats``."""

SINGLE_FILE_FORMATS = frozenset({"openai", "verl"})


class SkipEpisode(ValueError):
    """Raised by a format's record builder for an episode the format cannot express; the writer counts
    it under ``reason`` (a short phrase, the same for every episode skipped for that cause)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{detail} ({reason})")
        self.reason = reason


@dataclass
class ExportStats:
    """What a format writer wrote: ``records`` (rows, notebooks), ``turns`` and ``images`` in them, the
    files or directories it created, and episodes it could not express in its format, by reason."""

    records: int = 0
    turns: int = 0
    images: int = 0
    paths: list[Path] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


@dataclass
class ExportReport:
    """The outcome of :func:`export_episodes`: ``found`` episode directories, ``exported`` episodes, and
    ``excluded`` episodes counted by reason (filters, unusable logs, format limits)."""

    format: str
    out: Path
    found: int
    exported: int
    stats: ExportStats
    excluded: Counter[str]

    def summary(self) -> str:
        excluded = ", ".join(f"{n} {reason}" for reason, n in sorted(self.excluded.items())) or "none"
        return (
            f"{self.format}: exported {self.exported} of {self.found} episode(s) -> {self.out} "
            f"({self.stats.records} record(s), {self.stats.turns} turn(s), {self.stats.images} image(s)); "
            f"excluded: {excluded}"
        )


def _conversations(
    directories: list[Path], episode_filter: EpisodeFilter, excluded: Counter[str], mask_failed: bool
) -> Iterator[Conversation]:
    for episode in episode_filter.select(directories, excluded):
        try:
            yield episode_conversation(episode, mask_failed=mask_failed)
        except ValueError:
            excluded["no model output"] += 1


def export_episodes(
    fmt: str,
    inputs: Iterable[str | Path],
    out: str | Path,
    episode_filter: EpisodeFilter | None = None,
    mask_failed: bool = True,
    **options: object,
) -> ExportReport:
    """Export every episode under ``inputs`` (episode or run directories) that passes ``episode_filter``.

    ``out`` is a file for ``openai`` (JSONL) and ``verl`` (parquet), a directory for ``trl``,
    ``sharegpt`` and ``ipynb``. ``options`` go to the format's ``write`` (e.g. ``name`` for sharegpt).
    Raises ``ValueError`` for an unknown format or an ``out`` of the wrong kind, ``FileNotFoundError``
    when an input holds no episode.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    out = Path(out)
    if fmt in SINGLE_FILE_FORMATS and out.is_dir():
        raise ValueError(f"--out {out} is a directory, but format {fmt!r} writes one file; give a file path")
    if fmt not in SINGLE_FILE_FORMATS and out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, but format {fmt!r} writes a directory; give a directory path")
    blocking = next((parent for parent in out.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise ValueError(f"--out {out} cannot be written: {blocking} is a file, not a folder; choose another path")
    directories = find_episode_dirs(inputs)
    excluded: Counter[str] = Counter()
    writer = importlib.import_module(FORMATS[fmt])
    counted = _Counting(_conversations(directories, episode_filter or EpisodeFilter(), excluded, mask_failed))
    stats: ExportStats = writer.write(counted, out, **options)
    excluded.update(stats.skipped)
    return ExportReport(format=fmt, out=out, found=len(directories), exported=counted.count - sum(stats.skipped.values()),
                        stats=stats, excluded=excluded)


class _Counting:
    """An iterator wrapper that counts what passed through it."""

    def __init__(self, items: Iterator[Conversation]) -> None:
        self._items = items
        self.count = 0

    def __iter__(self) -> Iterator[Conversation]:
        for item in self._items:
            self.count += 1
            yield item
