"""Explicit limits on one episode, and the record of the limit that ended it.

>>> from spatialclaw.agent.limits import Limits
>>> Limits(time_s=600, tokens=200_000, cost_usd=0.50)          # None (the default) means no limit
Limits(time_s=600, tokens=200000, cost_usd=0.5, fallback_grace_s=0.0)

The step budget stays :attr:`spatialclaw.agent.config.AgentConfig.max_steps`; a limit that ends an episode is
recorded the same way for all four kinds, as a :class:`LimitHit` (``{"kind": "time", "value": 600,
"used": 601.2}``) in the ``end`` event and in :attr:`spatialclaw.agent.result.EpisodeResult.limit`.

Tokens and dollars are *reserved* before a call (:meth:`LimitClock.reserve`: its prompt estimate plus its
``max_tokens``, see :func:`side_call_need`) and settled after it (:meth:`LimitClock.settle`), so calls made at
once (a cell's threads calling ``vlm.ask`` together) cannot all pass a check that none of them has paid yet.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from spatialclaw.chat import Message, ModelReply, Usage

__all__ = ["LimitClock", "LimitHit", "LimitReached", "Limits", "Reservation", "side_call_need"]

LIMIT_KINDS = ("steps", "time", "tokens", "cost")
SIDE_CALL_MAX_TOKENS = 1024
"""The completion tokens a side-channel (``vlm``) call may use under a token or cost limit when the model's
parameters set no ``max_tokens``: what is reserved for it, and passed to the model as its ``max_tokens``."""


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
    """Raised inside the agent loop when a limit ends the episode (or refuses one call: ``detail`` says why);
    carries the :class:`LimitHit`."""

    def __init__(self, hit: LimitHit, detail: str = "") -> None:
        super().__init__(hit.describe() + (f": {detail}" if detail else ""))
        self.hit = hit


@dataclass(frozen=True)
class Reservation:
    """Tokens and US dollars held for one call in flight until :meth:`LimitClock.settle`."""

    tokens: int = 0
    cost_usd: float = 0.0


def estimate_prompt_tokens(messages: list[Message]) -> int:
    """An upper estimate of a request's prompt tokens: a token per 3 characters of text, and per image what
    providers charge for its size (about one token per 750 pixels, 85 to 1600 per image, plus 85)."""
    tokens = 0
    for message in messages:
        tokens += 8 + math.ceil(len(message.text_content) / 3)
        for image in message.images:
            tokens += 85 + min(max(math.ceil(image.width * image.height / 750), 85), 1600)
    return tokens


def side_call_need(model: Any, messages: list[Message], params: dict[str, Any]) -> tuple[int, float, dict[str, Any]]:
    """What to reserve for one side-channel call: ``(tokens, usd, params)``, where ``params`` carry the
    ``max_tokens`` the reservation counts on (:data:`SIDE_CALL_MAX_TOKENS` when none is set)."""
    from spatialclaw.models.pricing import cost_usd

    completion = int(params.get("max_tokens") or SIDE_CALL_MAX_TOKENS)
    prompt = estimate_prompt_tokens(messages)
    name = str(getattr(model, "name", ""))
    price = cost_usd(name, Usage(prompt_tokens=prompt, completion_tokens=completion), getattr(model, "prices", None))
    return prompt + completion, price or 0.0, {**params, "max_tokens": completion}


class LimitClock:
    """Checks an episode's :class:`Limits` against its clock and spending. ``started`` is a
    ``time.monotonic()`` reading (seconds)."""

    def __init__(self, limits: Limits, started: float) -> None:
        self.limits = limits
        self.started = started
        self._ledger = threading.Lock()
        self.spent_tokens = 0  # settled calls (the same sums as the episode's usage and cost)
        self.spent_usd = 0.0
        self.held_tokens = 0  # reserved by calls in flight
        self.held_usd = 0.0

    def reserve(self, tokens: int = 0, cost_usd: float = 0.0) -> Reservation:
        """Hold ``tokens`` and ``cost_usd`` for one call, or raise :class:`LimitReached` when they do not fit in
        what is left after the calls settled and those in flight (``0``: only check that something is left)."""
        limits = self.limits
        with self._ledger:
            committed, committed_usd = self.spent_tokens + self.held_tokens, self.spent_usd + self.held_usd
            if limits.tokens is not None and (committed >= limits.tokens or committed + tokens > limits.tokens):
                raise LimitReached(
                    LimitHit("tokens", limits.tokens, committed),
                    f"{self.spent_tokens} used, {self.held_tokens} held by calls in flight, and this call may need "
                    f"up to {tokens}; the call was not made",
                )
            if limits.cost_usd is not None and (
                committed_usd >= limits.cost_usd or committed_usd + cost_usd > limits.cost_usd
            ):
                raise LimitReached(
                    LimitHit("cost", limits.cost_usd, round(committed_usd, 6)),
                    f"{self.spent_usd:.6f} USD spent, {self.held_usd:.6f} held by calls in flight, and this call may "
                    f"cost up to {cost_usd:.6f}; the call was not made",
                )
            self.held_tokens += tokens
            self.held_usd += cost_usd
        return Reservation(tokens, cost_usd)

    def reserve_call(
        self, model: Any, purpose: str, messages: list[Message], params: dict[str, Any], check: bool = True
    ) -> tuple[Reservation | None, dict[str, Any]]:
        """The reservation for one model call and its parameters. A side-channel call (``vlm.*``) under a
        token or cost limit holds its prompt estimate and ``max_tokens`` (:func:`side_call_need`); a step call
        (one at a time) holds nothing but needs something left. ``check`` False (a fallback's grace): none."""
        if not check:
            return None, params
        tokens, usd = 0, 0.0
        if purpose.startswith("vlm.") and (self.limits.tokens or self.limits.cost_usd):
            tokens, usd, params = side_call_need(model, messages, params)
        return self.reserve(tokens, usd), params

    def settle(self, reservation: Reservation | None, reply: ModelReply | None) -> None:
        """Release ``reservation`` and count what its call spent (``reply`` None: the call failed)."""
        with self._ledger:
            if reservation is not None:
                self.held_tokens -= reservation.tokens
                self.held_usd -= reservation.cost_usd
            if reply is not None:
                self.spent_tokens += reply.usage.prompt_tokens + reply.usage.completion_tokens
                self.spent_usd += reply.cost_usd or 0.0

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
