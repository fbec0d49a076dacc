"""What an episode reports: :class:`EpisodeResult` (how it ended), :class:`StepEvent` (what ``on_step``
receives after each step), :func:`episode_error` (the recorded reason of an episode that failed) and
:func:`finish_episode` (the ``answer`` and ``end`` events and the result, the same for every episode runner)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from spatialclaw.agent.limits import LimitHit
from spatialclaw.chat import Usage
from spatialclaw.kernel.cell import CellResult
from spatialclaw.models import ModelError

__all__ = ["EpisodeResult", "StepEvent", "episode_error", "finish_episode"]

log = logging.getLogger(__name__)


@dataclass
class EpisodeResult:
    """How an episode ended. ``status``: ``answered`` (a cell called ``answer``), ``budget`` (the steps,
    the token limit or the cost limit ran out; after the steps, ``answer`` is parsed from the fallback
    reply, possibly None), ``timeout`` (the time limit ran out; ``answer`` is None unless
    ``Limits.fallback_grace_s`` allowed a fallback), ``format_errors`` (too many replies without code in a
    row) or ``error`` (``error`` says what failed). ``limit`` names the limit that ended the episode
    (``budget`` and ``timeout`` only). ``steps`` counts model
    steps including format errors. ``cost_usd`` is None when no call had a known price. ``timing``
    splits ``duration_s`` (seconds) into ``model_s`` (inside ``Model.chat``), ``cell_s`` (inside
    ``Kernel.execute``), ``kernel_setup_s`` (starting or resetting the kernel) and ``loop_s`` (the rest:
    the agent's own overhead)."""

    answer: Any
    status: str
    steps: int
    usage: Usage
    cost_usd: float | None
    duration_s: float
    trajectory_dir: Path
    answer_source: str | None = None
    error: str | None = None
    timing: dict[str, float] = field(default_factory=dict)
    limit: LimitHit | None = None


@dataclass
class StepEvent:
    """What ``on_step`` receives after each step: ``kind`` is ``plan``, ``cell``, ``format_error`` or
    ``fallback``; ``image_paths`` are the observation's images as stored in the trajectory."""

    step: int
    kind: str
    reply: str
    code: str | None = None
    result: CellResult | None = None
    message: str | None = None
    image_paths: list[Path] = field(default_factory=list)


def episode_error(failure: Exception, task_id: str) -> str:
    """The recorded reason of an episode that ``failure`` ended, logged: a model error as its one-line
    message, anything else with its traceback (call it inside the ``except`` block)."""
    if isinstance(failure, ModelError):
        log.error("episode %s ended by a model error: %s", task_id, failure)
        return str(failure)
    log.exception("episode %s failed", task_id)
    return f"{type(failure).__name__}: {failure}"


class _EpisodeState(Protocol):
    """What :func:`finish_episode` reads of a running episode's bookkeeping."""

    step: int
    usage: Usage
    cost: float | None
    limit: LimitHit | None
    model_s: float
    cell_s: float


def finish_episode(
    write: Callable[..., Any],
    episode: _EpisodeState,
    *,
    status: str,
    answer: Any,
    source: str | None,
    error: str | None,
    started: float,
    kernel_setup_s: float,
    out_dir: Path,
) -> EpisodeResult:
    """Write the ``answer`` event (when there is an answer) and the ``end`` event with the episode's usage,
    cost and timing split (seconds, from ``started``, a ``time.perf_counter()`` value), and return the
    :class:`EpisodeResult` that says the same."""
    if source is not None:
        write("answer", value=answer, source=source)
    duration = time.perf_counter() - started
    timing = {
        "model_s": episode.model_s,
        "cell_s": episode.cell_s,
        "kernel_setup_s": kernel_setup_s,
        "loop_s": max(duration - episode.model_s - episode.cell_s - kernel_setup_s, 0.0),
    }
    write(
        "end",
        reason=status,
        steps=episode.step,
        usage=asdict(episode.usage),
        cost_usd=episode.cost,
        duration_s=duration,
        error=error,
        timing=timing,
        limit=episode.limit.to_dict() if episode.limit is not None else None,
    )
    return EpisodeResult(
        answer=answer,
        status=status,
        steps=episode.step,
        usage=episode.usage,
        cost_usd=episode.cost,
        duration_s=duration,
        trajectory_dir=out_dir,
        answer_source=source,
        error=error,
        timing=timing,
        limit=episode.limit,
    )
