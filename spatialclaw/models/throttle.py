"""Per-provider limits on model requests: at most N in flight, and at most R per second/minute/hour.

``--max-concurrency openai=4`` and ``--rate-limit openai=60/min`` (or the ``[max-concurrency]`` and
``[rate-limit]`` tables of a ``bench --config`` file) become one :class:`ProviderLimit` per provider, the
backend name of a model spec (``openai``, ``anthropic``, ``openai-compat``). :func:`throttle_for` hands out
one :class:`Throttle` per provider and limit for the whole process, so every worker thread of a run (and the
judge, and the kernels' ``vlm`` calls, which go through the same model objects) share one semaphore and one
token bucket. Each HTTP request an SDK model sends (each retry included) holds a concurrency slot for its
duration and first takes a token: the bucket holds one token and refills at the rate, so requests are
spaced evenly (``60/min``: one a second) rather than sent in bursts. Under the Ray executor each actor is
its own process with its own throttle: divide the limits by the workers there.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["PROVIDERS", "ProviderLimit", "Throttle", "TokenBucket", "parse_provider_limits", "throttle_for"]

#: The providers a limit can name: the backends that send HTTP requests.
PROVIDERS = ("openai", "anthropic", "openai-compat")
_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0, "h": 3600.0, "hour": 3600.0}


@dataclass(frozen=True)
class ProviderLimit:
    """At most ``max_concurrency`` requests in flight, at most ``per_second`` started per second (None: no limit)."""

    max_concurrency: int | None = None
    per_second: float | None = None


class TokenBucket:
    """A bucket of ``capacity`` tokens refilled at ``rate`` tokens per second; :meth:`take` blocks for one.
    ``clock`` and ``sleep`` are injectable for tests."""

    def __init__(
        self,
        rate: float,
        capacity: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"a rate limit must be above 0 per second, got {rate}")
        self.rate, self.capacity = rate, capacity
        self._clock, self._sleep = clock, sleep
        self._tokens = capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Take one token, waiting until there is one; returns the seconds waited."""
        with self._lock:  # waiters queue here, so tokens go out in arrival order
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            wait = 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.rate
            if wait:
                self._sleep(wait)
                self._tokens, self._stamp = 1.0, self._clock()
            self._tokens -= 1
            return wait


class Throttle:
    """A provider's limit in force: a semaphore for concurrency and a token bucket for the rate."""

    def __init__(self, limit: ProviderLimit) -> None:
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit.max_concurrency) if limit.max_concurrency else None
        self._bucket = TokenBucket(limit.per_second) if limit.per_second else None

    @contextmanager
    def request(self) -> Iterator[None]:
        """Hold a slot (and spend a token) for one request."""
        if self._slots is not None:
            self._slots.acquire()
        try:
            if self._bucket is not None:
                self._bucket.take()
            yield
        finally:
            if self._slots is not None:
                self._slots.release()


_throttles: dict[tuple[str, ProviderLimit], Throttle] = {}
_throttles_lock = threading.Lock()


def throttle_for(provider: str, limit: ProviderLimit) -> Throttle:
    """The process's one throttle for ``provider`` under ``limit`` (every caller with both gets the same)."""
    with _throttles_lock:
        return _throttles.setdefault((provider, limit), Throttle(limit))


def _provider(item: str, flag: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    name = name.strip()
    if not sep or not value.strip():
        raise ValueError(f"{flag} needs PROVIDER=VALUE (e.g. {flag} openai=4), got {item!r}")
    if name not in PROVIDERS:
        raise ValueError(f"{flag}: unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}")
    return name, value.strip()


def parse_rate(text: str) -> float:
    """``60/min``, ``2/s``, ``1000/hour`` (or a bare number, per second) as requests per second."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(?:/\s*([a-z]+))?\s*", text)
    unit = match.group(2) or "s" if match else None
    if match is None or unit not in _UNITS or not float(match.group(1)) > 0:
        raise ValueError(f"a rate limit is N/s, N/min or N/hour with N above 0, got {text!r}")
    return float(match.group(1)) / _UNITS[unit]


def parse_provider_limits(concurrency: list[str], rates: list[str]) -> dict[str, ProviderLimit]:
    """``--max-concurrency PROVIDER=N`` and ``--rate-limit PROVIDER=N/UNIT`` items (the last per provider
    wins) as one limit per provider named."""
    slots: dict[str, int] = {}
    per_second: dict[str, float] = {}
    for item in concurrency:
        name, value = _provider(item, "--max-concurrency")
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"--max-concurrency {name}= takes a whole number of requests, at least 1, got {value!r}")
        slots[name] = int(value)
    for item in rates:
        name, value = _provider(item, "--rate-limit")
        per_second[name] = parse_rate(value)
    return {name: ProviderLimit(slots.get(name), per_second.get(name)) for name in sorted(set(slots) | set(per_second))}
