"""Re-execute an episode's recorded cells in a fresh kernel and compare, cell by cell, what they produce.

The kernel is built from the recorded task exactly as the agent builds it (:meth:`Kernel.for_task`:
the task's inputs and its ``meta``), and each recorded cell runs in order. Perception results come
from the content-addressed cache when it holds them (``SPATIALCLAW_CACHE``). Compared per cell:
``stdout`` (exact text), the error type (or no error), the number of images, and the answer (whether
``answer`` was called and with what value). Side questions a cell asked the model (``vlm.ask``,
``vlm.locate``) are answered with the replies logged for them, in order, through the same side channel
the agent uses, so no model is needed; a cell that asks more than was logged gets an error.

A sandboxed kernel names its inputs by the user's paths, so what a cell prints does not depend on where
its sandbox lived. Episodes recorded before that named the sandbox's private links
(``/tmp/spatialclaw-sandbox-XXXX/inputs/E-I/...``): those are read as the user's paths they link to
(:func:`host_paths`), so such episodes reproduce too.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.chat import Message, ModelReply
from spatialclaw.kernel.cell import CellResult
from spatialclaw.kernel.sandbox_dirs import PREFIX, staging_base
from spatialclaw.trajectories.episode_log import Episode, load_episode
from spatialclaw.trajectories.episodes import SIDE_CALL_PURPOSES, episode_task

__all__ = [
    "COMPARED",
    "CellComparison",
    "RecordedSideCalls",
    "ReplayReport",
    "compare_cells",
    "host_paths",
    "replay_episode",
]

COMPARED = ("stdout", "error", "images", "answer")
"""The observation fields compared, in report order."""


#: a staged input folder of some sandbox: ``<tmp>/spatialclaw-sandbox-XXXX/inputs/<episode>-<input>``
_STAGED = re.compile(r"(?:/[\w.-]+)*/" + re.escape(PREFIX) + r"\w+/inputs/\d+-(\d+)(?!\d)")


def host_paths(text: str, task: Any) -> str:
    """``text`` with every staged input folder of a sandbox (see :mod:`spatialclaw.kernel.sandbox_dirs`)
    replaced by the folder of ``task``'s input it held, so a file inside reads as the user's path."""
    bases = [staging_base(list(spec.paths)) for spec in task.inputs]

    def original(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return bases[number] if number < len(bases) and bases[number] else match.group(0)

    return _STAGED.sub(original, text)


def _observed(result: CellResult, task: Any = None) -> dict[str, Any]:
    return {
        "stdout": result.stdout if task is None else host_paths(result.stdout, task),
        "error": result.error.type if result.error is not None else (None if result.ok else result.status),
        "images": len(result.images),
        "answer": (result.answered, result.answer),
    }


@dataclass
class CellComparison:
    """One cell: what was recorded, what the replay produced, and which fields match."""

    step: int
    code: str
    recorded: dict[str, Any]
    replayed: dict[str, Any]

    @property
    def matches(self) -> dict[str, bool]:
        return {name: self.recorded[name] == self.replayed[name] for name in COMPARED}

    @property
    def ok(self) -> bool:
        return all(self.matches.values())

    def differences(self) -> list[str]:
        """One line per mismatching field: ``field: recorded ... / replayed ...`` (text shortened)."""
        return [
            f"{name}: recorded {_short(self.recorded[name])} / replayed {_short(self.replayed[name])}"
            for name, same in self.matches.items()
            if not same
        ]


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare_cells(step: int, recorded: CellResult, replayed: CellResult, task: Any = None) -> CellComparison:
    """Compare two results of the same code; with the episode's ``task``, sandbox paths of its inputs
    are read as the user's paths (:func:`host_paths`) on both sides."""
    return CellComparison(
        step=step, code=recorded.code, recorded=_observed(recorded, task), replayed=_observed(replayed, task)
    )


@dataclass
class ReplayReport:
    """The comparison of every recorded cell of one episode, in order."""

    episode: Path
    cells: list[CellComparison] = field(default_factory=list)
    complete: bool = True

    @property
    def ok(self) -> bool:
        return all(cell.ok for cell in self.cells)

    def table(self) -> str:
        """A human-readable table: one row per cell with ``=`` (match) or ``X`` (differs) per field."""
        lines = [
            f"replay of {self.episode}" + ("" if self.complete else " (incomplete episode)"),
            "step  " + "  ".join(f"{name:>7}" for name in COMPARED),
        ]
        for cell in self.cells:
            marks = "  ".join(f"{'=' if same else 'X':>7}" for same in cell.matches.values())
            lines.append(f"{cell.step:>4}  {marks}")
            lines.extend(f"      {line}" for line in cell.differences())
        matched = sum(cell.ok for cell in self.cells)
        lines.append(f"{matched} of {len(self.cells)} cell(s) reproduced")
        return "\n".join(lines)


def _check_inputs(task: Any, directory: Path) -> None:
    missing = [p for spec in task.inputs for p in spec.paths if not Path(p).exists()]
    if missing:
        raise FileNotFoundError(
            f"{directory}: the task's input files are not on this machine ({', '.join(missing[:3])}"
            f"{' ...' if len(missing) > 3 else ''}); replay needs the original frames or video at those paths"
        )


class RecordedSideCalls:
    """Answers ``vlm.ask``/``vlm.locate`` with the replies an episode logged, in log order per purpose.

    A logged failure is replayed as the same failure; asking beyond the log raises ``ModelError``.
    """

    def __init__(self, episode: Episode) -> None:
        self._queues: dict[str, deque[dict[str, Any]]] = {purpose: deque() for purpose in SIDE_CALL_PURPOSES}
        for event in episode.of_type("model_call"):
            if event.get("purpose") in self._queues:
                self._queues[event["purpose"]].append(event)

    def __call__(self, messages: list[Message], purpose: str) -> ModelReply:
        from spatialclaw.models import ModelError

        queue = self._queues.get(purpose)
        if not queue:
            raise ModelError(f"replay: the episode logged no further {purpose} reply")
        event = queue.popleft()
        response = event.get("response") or {}
        if response.get("text") is None:
            raise ModelError(event.get("error") or f"the logged {purpose} call failed")
        return ModelReply(text=response["text"], reasoning=response.get("reasoning"))


def replay_episode(
    directory: str | Path, timeout_s: float = 120.0, kernel: Any = None, sandbox: str = "auto"
) -> ReplayReport:
    """Replay the cells of the episode in ``directory``; ``timeout_s`` bounds each cell (seconds).

    ``kernel``: an existing :class:`~spatialclaw.Kernel` to reset and reuse (it is not shut down);
    by default a fresh one is started (in ``sandbox`` mode: ``auto``, ``required`` or ``off``) and shut
    down afterwards.
    """
    from spatialclaw.agent.vlm_server import VLMServer
    from spatialclaw.kernel.kernel import Kernel

    directory = Path(directory)
    episode = load_episode(directory)
    if episode.unreadable:  # a replay of a log with holes would compare against the wrong cells
        raise ValueError("; ".join(episode.unreadable) + "; cannot replay it")
    task = episode_task(episode)
    _check_inputs(task, directory)
    report = ReplayReport(episode=directory, complete=episode.complete)
    owned = kernel is None
    with VLMServer() as server:
        vlm = server.open_channel(RecordedSideCalls(episode))
        if owned:
            kernel = Kernel.for_task(task, vlm=vlm, sandbox=sandbox)
        else:
            kernel.reset(videos=task.inputs, meta=task.kernel_meta(), vlm=vlm)
        try:
            for event, recorded in episode.cells():
                replayed = kernel.execute(recorded.code, timeout=timeout_s)
                step = int(event.get("step", len(report.cells)))
                report.cells.append(compare_cells(step, recorded, replayed, task))
        finally:
            if owned:
                kernel.shutdown()
    return report
