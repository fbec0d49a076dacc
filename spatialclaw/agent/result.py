"""What an episode reports: :class:`EpisodeResult` (how it ended), :class:`StepEvent` (what ``on_step``
receives after each step) and :func:`episode_error` (the recorded reason of an episode that failed)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.agent.limits import LimitHit
from spatialclaw.chat import Usage
from spatialclaw.kernel.cell import CellResult
from spatialclaw.models import ModelError

__all__ = ["EpisodeResult", "StepEvent", "episode_error"]

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
