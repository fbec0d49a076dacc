"""Find episodes, filter them, build their conversations and hand them to one format's writer.

Between the conversation and the writer every row gets its system prompt (:mod:`spatialclaw.export.system`)
and, with a tokenizer, its length measured and fitted to ``max_tokens`` (:mod:`spatialclaw.export.length`).
Writers create nothing until their first record, so an export that keeps no episode writes nothing; its
report says why (:meth:`ExportReport.why_empty`).
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from spatialclaw.export.conversation import Conversation, episode_conversation
from spatialclaw.export.length import LengthSummary, TokenCounter, fit_to_budget, row_chars
from spatialclaw.trajectories.episode_log import Episode
from spatialclaw.trajectories.episodes import EpisodeFilter, find_episode_dirs
from spatialclaw.trajectories.safe_files import BadReference

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
    ``excluded`` episodes counted by reason (filters, unusable logs, format limits), the benchmark names
    of every episode found (``benchmarks_seen``) and the per-row ``lengths``."""

    format: str
    out: Path
    found: int
    exported: int
    stats: ExportStats
    excluded: Counter[str]
    benchmarks_seen: Counter[str] = field(default_factory=Counter)
    lengths: LengthSummary = field(default_factory=LengthSummary)
    problems: list[str] = field(default_factory=list)
    """One line per episode left out because its files could not be read safely, naming its directory."""

    def why_empty(self) -> str:
        """For an export that kept nothing: which filter or limit removed how many, and the benchmark
        names the episodes had."""
        removed = ", ".join(f"{reason}: {n}" for reason, n in sorted(self.excluded.items(), key=lambda kv: -kv[1]))
        seen = ", ".join(f"{name} ({n})" for name, n in sorted(self.benchmarks_seen.items()))
        return (
            f"no episode passed the filters ({self.found} found), so nothing was written to {self.out}; "
            f"removed by {removed or 'nothing'}; benchmarks seen: {seen or 'none'}"
        )

    def summary(self) -> str:
        excluded = ", ".join(f"{n} {reason}" for reason, n in sorted(self.excluded.items())) or "none"
        return (
            f"{self.format}: exported {self.exported} of {self.found} episode(s) -> {self.out} "
            f"({self.stats.records} record(s), {self.stats.turns} turn(s), {self.stats.images} image(s)); "
            f"excluded: {excluded}"
        )


UNREADABLE_FILES = "unreadable episode files"
UNREADABLE_LINES = "unreadable lines in episode.jsonl"
SESSION_WITHOUT_TURNS = "session without driver turns (give session exec --reasoning)"


def _no_output_reason(episode: Episode) -> str:
    """Why an episode has no model output to train on: a session whose driver gave no reasoning, or none."""
    if (episode.header.get("config") or {}).get("driver") == "session":
        return SESSION_WITHOUT_TURNS
    return "no model output"


def _conversations(
    directories: list[Path],
    episode_filter: EpisodeFilter,
    excluded: Counter[str],
    benchmarks_seen: Counter[str],
    mask_failed: bool,
    system: Callable[[Conversation], Conversation],
    counter: TokenCounter | None,
    lengths: LengthSummary,
    problems: list[str],
) -> Iterator[Conversation]:
    for episode in episode_filter.select(directories, excluded, benchmarks_seen):
        if episode.unreadable:  # a conversation with a hole is no training example
            excluded[UNREADABLE_LINES] += 1
            problems += [f"{problem}: episode left out" for problem in episode.unreadable]
            continue
        try:
            conversation = system(episode_conversation(episode, mask_failed=mask_failed))
        except (BadReference, FileNotFoundError) as failure:  # a link, a malformed or a missing stored file
            excluded[UNREADABLE_FILES] += 1
            problems.append(f"{episode.directory}: left out: {failure}")
            continue
        except ValueError:
            excluded[_no_output_reason(episode)] += 1
            continue
        fitted = fit_to_budget(conversation, counter, lengths.max_tokens) if counter is not None else None
        lengths.add(row_chars(conversation), fitted)
        if fitted is None:
            yield conversation
        elif fitted.conversation is None:
            excluded[f"longer than {lengths.max_tokens} tokens"] += 1
        else:
            yield fitted.conversation


def export_episodes(
    fmt: str,
    inputs: Iterable[str | Path],
    out: str | Path,
    episode_filter: EpisodeFilter | None = None,
    mask_failed: bool = True,
    system: str = "core",
    tokenizer: str | None = None,
    max_tokens: int | None = None,
    **options: object,
) -> ExportReport:
    """Export every episode under ``inputs`` (episode or run directories) that passes ``episode_filter``.

    ``out`` is a file for ``openai`` (JSONL) and ``verl`` (parquet), a directory for ``trl``,
    ``sharegpt`` and ``ipynb``. ``system`` picks each row's system prompt (``core``, ``full``, ``none``
    or a file path; see :func:`spatialclaw.export.system.system_rewriter`). ``tokenizer`` (a model folder
    or repo id) measures every row in that model's tokens, image tokens included; ``max_tokens`` (needs
    ``tokenizer``) removes trailing turns whole until a row fits, or drops it. ``options`` go to the
    format's ``write`` (e.g. ``name`` for sharegpt). Nothing is written when no episode is kept.
    Raises ``ValueError`` for an unknown format, an ``out`` of the wrong kind or ``max_tokens`` without
    ``tokenizer``, ``FileNotFoundError`` when an input holds no episode or ``system`` names no file.
    """
    from spatialclaw.export.system import system_rewriter

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
    if max_tokens is not None and tokenizer is None:
        raise ValueError(
            "--max-tokens needs --tokenizer (the model whose tokens to count), e.g. --tokenizer Qwen/Qwen2.5-VL-3B-Instruct"
        )
    rewrite_system = system_rewriter(system)
    found = find_episode_dirs(inputs)
    excluded: Counter[str] = Counter()
    directories = counted_attempts(found, excluded)
    counter = TokenCounter(tokenizer) if tokenizer is not None else None
    benchmarks_seen: Counter[str] = Counter()
    lengths = LengthSummary(tokenizer=tokenizer, max_tokens=max_tokens)
    problems: list[str] = []
    writer = importlib.import_module(FORMATS[fmt])
    counted = _Counting(
        _conversations(
            directories,
            episode_filter or EpisodeFilter(),
            excluded,
            benchmarks_seen,
            mask_failed,
            rewrite_system,
            counter,
            lengths,
            problems,
        )
    )
    stats: ExportStats = writer.write(counted, out, **options)
    excluded.update(stats.skipped)
    return ExportReport(
        format=fmt,
        out=out,
        found=len(found),
        exported=counted.count - sum(stats.skipped.values()),
        stats=stats,
        excluded=excluded,
        benchmarks_seen=benchmarks_seen,
        lengths=lengths,
        problems=problems,
    )


NOT_COUNTED = "attempt the run does not count (results.jsonl names another)"


def counted_attempts(directories: list[Path], excluded: Counter[str]) -> list[Path]:
    """``directories`` without the attempts a benchmark run does not count: an episode at
    ``RUN/episodes/<task>/attempt-<n>`` of a run directory (one with ``manifest.json``) is kept only when
    it is the attempt the task's ``results.jsonl`` row names, so an export of a run has one record per
    counted task (an attempt cut by Ctrl-C, or one a resume ran again, is left out). A task with no readable
    row (its row was lost or is unreadable) keeps its latest attempt, so a damaged results file loses no
    episode. Other episode directories are kept. Each one left out is counted in ``excluded``."""
    from spatialclaw.trajectories.run_dir import RunDir

    counted: dict[Path, set[Path]] = {}
    kept: list[Path] = []
    unrowed: dict[Path, list[Path]] = {}  # task folder -> its attempts, for tasks with no counted attempt
    for directory in directories:
        run = directory.resolve().parent.parent.parent
        if directory.resolve().parent.parent.name != "episodes" or not RunDir(run).exists():
            kept.append(directory)
            continue
        if run not in counted:
            rows, _ = RunDir(run).results.read()
            counted[run] = {(run / str(row.get("trajectory_dir", ""))).resolve() for row in rows.values()}
        if directory.resolve() in counted[run]:
            kept.append(directory)
        elif any(path.parent == directory.resolve().parent for path in counted[run]):
            excluded[NOT_COUNTED] += 1
        else:
            unrowed.setdefault(directory.resolve().parent, []).append(directory)
    for attempts in unrowed.values():
        latest = max(attempts, key=lambda path: _attempt_number(path.name))
        kept.append(latest)
        excluded[NOT_COUNTED] += len(attempts) - 1
    return kept


def _attempt_number(name: str) -> int:
    """``attempt-3`` -> 3 (-1 for a name of another form)."""
    number = name.rpartition("-")[2]
    return int(number) if number.isdigit() else -1


class _Counting:
    """An iterator wrapper that counts what passed through it."""

    def __init__(self, items: Iterator[Conversation]) -> None:
        self._items = items
        self.count = 0

    def __iter__(self) -> Iterator[Conversation]:
        for item in self._items:
            self.count += 1
            yield item
