"""A typed, step-by-step view of a loaded episode, and how episodes are found and selected.

:mod:`spatialclaw.trajectories.episode_log` reads ``episode.jsonl`` into a list of events; this module groups those
events into :class:`Step` objects (the model call that wrote a cell, the cell and its
:class:`~spatialclaw.kernel.cell.CellResult`, a format error, the side calls ``vlm.ask``/``vlm.locate`` made
from inside the cell) and answers the questions that exporters, the replayer and the viewer all ask:
which model calls belong to the main loop, is the episode correct, how many steps did it take.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.names import normalise_benchmark_name
from spatialclaw.kernel.cell import CellResult
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import Episode, iter_episode_dirs, load_episode

__all__ = [
    "SIDE_CALL_PURPOSES",
    "EpisodeFilter",
    "Step",
    "episode_is_correct",
    "episode_label",
    "episode_steps",
    "episode_task",
    "find_episode_dirs",
    "main_model_calls",
    "step_count",
]

SIDE_CALL_PURPOSES = frozenset({"vlm.ask", "vlm.locate"})
"""``model_call`` purposes that are questions asked from inside a cell, not turns of the main loop."""


@dataclass
class Step:
    """Everything recorded for one step of the loop (``index`` is the ``step`` field of its events).

    ``call`` is the main-loop ``model_call`` event that produced the step's output (``None`` if the log
    holds none, e.g. an episode cut short), ``cell_event``/``cell`` the executed cell (``None`` when the
    output had no runnable code), ``format_error`` the ``format_error`` event in that case, and
    ``side_calls`` the ``vlm.*`` model calls the cell made. ``fallback`` is the ``fallback`` call that
    asked for a direct answer after the step budget ran out (logged with the last step's number).
    """

    index: int
    call: dict[str, Any] | None = None
    cell_event: dict[str, Any] | None = None
    cell: CellResult | None = None
    format_error: dict[str, Any] | None = None
    side_calls: list[dict[str, Any]] = field(default_factory=list)
    fallback: dict[str, Any] | None = None

    @property
    def response_text(self) -> str:
        """The model's raw output text for this step ('' when no call was recorded)."""
        response = (self.call or {}).get("response") or {}
        return response.get("text") or ""

    @property
    def reasoning(self) -> str | None:
        """Separate reasoning/thinking text the provider returned, if any."""
        response = (self.call or {}).get("response") or {}
        return response.get("reasoning") or None

    @property
    def failed(self) -> bool:
        """True when the step's output could not be run (format error) or its cell did not finish ok."""
        if self.format_error is not None:
            return True
        return self.cell is not None and not self.cell.ok


def episode_label(directory: Path) -> str:
    """A short name for an episode directory: its name, prefixed by its parent's when it is one of the
    benchmark runner's attempt folders (``episodes/<task>/attempt-<n>`` gives ``<task>-attempt-<n>``)."""
    if re.fullmatch(r"attempt-\d+", directory.name):
        return f"{directory.parent.name}-{directory.name}"
    return directory.name


def main_model_calls(episode: Episode) -> list[dict[str, Any]]:
    """``model_call`` events of the main loop (plan, step, fallback), in log order, excluding side calls."""
    return [e for e in episode.of_type("model_call") if e.get("purpose") not in SIDE_CALL_PURPOSES]


def episode_steps(episode: Episode) -> list[Step]:
    """Group the episode's events by step, in step order. Cell images are loaded as PNG bytes."""
    steps: dict[int, Step] = {}

    def get(index: Any) -> Step:
        key = int(index) if index is not None else -1
        return steps.setdefault(key, Step(index=key))

    cells = iter(episode.cells())
    for event in episode.events:
        kind = event["type"]
        if kind == "model_call":
            step = get(event.get("step"))
            if event.get("purpose") in SIDE_CALL_PURPOSES:
                step.side_calls.append(event)
            elif event.get("purpose") == "fallback":
                step.fallback = event
            elif step.call is None or (event.get("response") and not event.get("error")):
                step.call = event
        elif kind == "cell":
            cell_event, result = next(cells)
            step = get(cell_event.get("step"))
            step.cell_event, step.cell = cell_event, result
        elif kind == "format_error":
            get(event.get("step")).format_error = event
    return [steps[k] for k in sorted(steps)]


def episode_task(episode: Episode) -> Task:
    """The episode's :class:`Task`; raises ``ValueError`` when the log has no ``task`` event."""
    if not episode.task:
        raise ValueError(f"{episode.directory} has no task event: the episode was cut before it started")
    return Task.from_dict(episode.task)


def step_count(episode: Episode) -> int:
    """Steps taken: the ``end`` event's count, else the number of distinct steps with a call or a cell."""
    end = episode.end
    if end and end.get("steps") is not None:
        return int(end["steps"])
    return sum(1 for s in episode_steps(episode) if s.call is not None or s.cell is not None)


def episode_is_correct(episode: Episode) -> bool | None:
    """Whether the answer was right: the score event's ``details.correct`` when given, else ``score >= 1``.

    ``None`` when the episode was not scored (no ground truth, or the log ends before scoring).
    """
    scores = episode.of_type("score")
    if not scores or scores[-1].get("score") is None:
        return None
    details = scores[-1].get("details") or {}
    if isinstance(details, dict) and isinstance(details.get("correct"), bool):
        return bool(details["correct"])
    return float(scores[-1]["score"]) >= 1.0


@dataclass
class EpisodeFilter:
    """Which episodes to keep. Every excluded episode is counted under the reason it was excluded.

    ``min_score`` compares with the recorded score (unscored episodes fail it); ``max_steps`` counts
    steps as :func:`step_count`; ``benchmarks`` match the task's ``benchmark`` by
    :func:`normalise_benchmark_name` (``vsi-bench`` keeps ``vsi_bench`` episodes); incomplete
    episodes (no ``end`` event: a crash or a kill) and episodes that ended with an error (a model
    failure: end reason ``error``, or ``interrupted``) are excluded unless ``include_incomplete``.
    """

    correct_only: bool = False
    min_score: float | None = None
    max_steps: int | None = None
    benchmarks: tuple[str, ...] = ()
    include_incomplete: bool = False

    def reject_reason(self, episode: Episode) -> str | None:
        """``None`` to keep the episode, else a short reason such as ``"incorrect"`` or ``"incomplete"``."""
        if not self.include_incomplete:
            if not episode.complete:
                return "incomplete"
            if (episode.end or {}).get("reason") in ("error", "interrupted"):
                return "ended with error"
        if self.benchmarks:
            wanted = {normalise_benchmark_name(name) for name in self.benchmarks}
            if normalise_benchmark_name((episode.task or {}).get("benchmark")) not in wanted:
                return "other benchmark"
        if self.correct_only:
            correct = episode_is_correct(episode)
            if correct is None:
                return "not scored"
            if not correct:
                return "incorrect"
        if self.min_score is not None:
            score = episode.score
            if score is None:
                return "not scored"
            if float(score) < self.min_score:
                return "score below minimum"
        if self.max_steps is not None and step_count(episode) > self.max_steps:
            return "too many steps"
        return None

    def select(
        self, directories: Iterable[Path], excluded: Counter[str], benchmarks_seen: Counter[str] | None = None
    ) -> Iterable[Episode]:
        """Load each directory and yield the kept episodes; count rejections in ``excluded`` and, when
        given, every episode's benchmark name (as recorded, ``"(none)"`` for none) in ``benchmarks_seen``."""
        for directory in directories:
            episode = load_episode(directory)
            if benchmarks_seen is not None:
                benchmarks_seen[(episode.task or {}).get("benchmark") or "(none)"] += 1
            reason = self.reject_reason(episode)
            if reason is None:
                yield episode
            else:
                excluded[reason] += 1


def find_episode_dirs(inputs: Iterable[str | Path]) -> list[Path]:
    """Episode directories under each input (an episode directory or a run directory holding many).

    Raises ``FileNotFoundError`` naming the input when a path does not exist or holds no episode.
    """
    found: list[Path] = []
    for item in inputs:
        path = Path(item)
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist; give an episode directory or a run directory")
        if path.is_file():
            hint = (
                f"the directory holding it, {path.parent}"
                if path.name == "episode.jsonl"
                else "an episode directory or a run directory"
            )
            raise FileNotFoundError(f"{path} is a file; give {hint}")
        dirs = list(iter_episode_dirs(path))
        if not dirs:
            raise FileNotFoundError(
                f"{path} holds no episode (no episode.jsonl below it); give an episode directory or a run directory"
            )
        found.extend(dirs)
    return list(dict.fromkeys(found))
