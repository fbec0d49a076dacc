"""Explicit limits on one episode, and the record of the limit that ended it.

>>> from spatialclaw.agent.limits import Limits
>>> Limits(time_s=600, tokens=200_000, cost_usd=0.50)          # None (the default) means no limit
Limits(time_s=600, tokens=200000, cost_usd=0.5, fallback_grace_s=0.0)

The step budget stays :attr:`spatialclaw.agent.config.AgentConfig.max_steps`; a limit that ends an episode is
recorded the same way for all four kinds, as a :class:`LimitHit` (``{"kind": "time", "value": 600,
"used": 601.2}``) in the ``end`` event and in :attr:`spatialclaw.agent.result.EpisodeResult.limit`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from spatialclaw.chat import Usage

__all__ = ["LimitClock", "LimitHit", "LimitReached", "Limits"]

LIMIT_KINDS = ("steps", "time", "tokens", "cost")


@dataclass(frozen=True)
class Limits:
    """Bounds on one episode; None means unbounded.

    ``time_s``: wall-clock seconds from the start of :meth:`~spatialclaw.agent.loop.Agent.run` (kernel setup
    included). Each cell's timeout and each model call's timeout are capped by the time left, so the
    episode ends within about a second of the limit (a cut cell gets the kernel's interrupt grace).
    ``tokens``: prompt plus completion tokens over all model calls of the episode (side-channel ``vlm``
    calls included). ``cost_usd``: US dollars over all model calls; it needs a model with a known price
    (see :mod:`spatialclaw.models.pricing`), else the episode ends with an error saying so.
    ``fallback_grace_s``: when the time limit ends the steps, a direct-answer fallback call is made only if
    this is above 0, with this many seconds for it (so the episode may last ``time_s + fallback_grace_s``).
    Token and cost limits never make a fallback call (it would spend past the limit).
    """

    time_s: float | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    fallback_grace_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("time_s", "tokens", "cost_usd"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"Limits.{name} must be above 0 (or None for no limit), got {value!r}")
        if self.fallback_grace_s < 0:
            raise ValueError(f"Limits.fallback_grace_s must be 0 or more seconds, got {self.fallback_grace_s!r}")

    @classmethod
    def coerce(cls, value: Limits | dict[str, Any] | None) -> Limits:
        """A :class:`Limits` from itself, a dict of its fields (a JSON config) or None (no limits)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            unknown = set(value) - set(cls.__dataclass_fields__)
            if unknown:
                raise ValueError(f"unknown limit(s) {sorted(unknown)}; known: {sorted(cls.__dataclass_fields__)}")
            return cls(**value)
        raise TypeError(f"limits must be a Limits or a dict of its fields, got {type(value).__name__}")


@dataclass(frozen=True)
class LimitHit:
    """The limit that ended an episode: ``kind`` (``steps``, ``time``, ``tokens`` or ``cost``), its
    ``value`` (steps, seconds, tokens or US dollars) and what was ``used`` when it ended the episode."""

    kind: str
    value: float
    used: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        unit = {"steps": " steps", "time": " s", "tokens": " tokens", "cost": " USD"}[self.kind]
        return f"the {self.kind} limit of {self.value:g}{unit} was reached (used {self.used:g}{unit})"


class LimitReached(Exception):
    """Raised inside the agent loop when a limit ends the episode; carries the :class:`LimitHit`."""

    def __init__(self, hit: LimitHit) -> None:
        super().__init__(hit.describe())
        self.hit = hit


class LimitClock:
    """Checks an episode's :class:`Limits` against its clock and spending. ``started`` is a
    ``time.monotonic()`` reading (seconds)."""

    def __init__(self, limits: Limits, started: float) -> None:
        self.limits = limits
        self.started = started

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def remaining_s(self) -> float | None:
        """Seconds left before the time limit (may be negative); None without a time limit."""
        if self.limits.time_s is None:
            return None
        return self.limits.time_s - self.elapsed_s()

    def cap(self, seconds: float | None) -> float | None:
        """``seconds`` (None: unbounded) capped by the time left (never below 0)."""
        remaining = self.remaining_s()
        if remaining is None:
            return seconds
        remaining = max(remaining, 0.0)
        return remaining if seconds is None else min(seconds, remaining)

    def time_hit(self) -> LimitHit | None:
        """The time limit's record when it is spent, else None."""
        time_s, remaining = self.limits.time_s, self.remaining_s()
        if time_s is None or remaining is None or remaining > 0:
            return None
        return LimitHit("time", float(time_s), round(self.elapsed_s(), 3))

    def spend_hit(self, usage: Usage, cost_usd: float | None) -> LimitHit | None:
        """The token or cost limit's record when ``usage``/``cost_usd`` reached it, else None."""
        tokens = usage.prompt_tokens + usage.completion_tokens
        if self.limits.tokens is not None and tokens >= self.limits.tokens:
            return LimitHit("tokens", self.limits.tokens, tokens)
        if self.limits.cost_usd is not None and cost_usd is not None and cost_usd >= self.limits.cost_usd:
            return LimitHit("cost", self.limits.cost_usd, round(cost_usd, 6))
        return None
