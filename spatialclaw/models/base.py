"""The backend interface: a :class:`Model` turns provider-neutral messages into a :class:`ModelReply`.

Every backend shares one retry loop (:func:`with_retries`): exponential backoff with full jitter on
rate limits (429), server errors (5xx), timeouts, dropped connections and malformed responses, honouring
the server's ``Retry-After``; authentication and bad-request errors fail at once with a clear message.
A call given ``timeout_s`` (seconds, retries and waits included) gives each request only the time left
and raises :class:`ModelTimeoutError` when no time is left for another attempt.
"""

from __future__ import annotations

import logging
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from spatialclaw.chat import Message, ModelReply
from spatialclaw.models.throttle import Throttle

__all__ = [
    "Model",
    "ModelAuthError",
    "ModelError",
    "ModelRequestError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "RetryPolicy",
    "SDKModel",
    "TransientError",
    "with_retries",
]

log = logging.getLogger(__name__)
T = TypeVar("T")


class ModelError(RuntimeError):
    """A model call failed for good; the message says why and what to do next."""


class ModelAuthError(ModelError):
    """The provider rejected the credentials (HTTP 401/403). Not retried."""


class ModelRequestError(ModelError):
    """The provider rejected the request itself (HTTP 400/404/413/422). Not retried."""


class ModelUnavailableError(ModelError):
    """Transient failures persisted through every retry."""


class ModelTimeoutError(ModelUnavailableError):
    """The call's ``timeout_s`` ran out before a reply came (retries and waits included)."""


class TransientError(Exception):
    """Raised by a backend for a failure worth retrying; ``retry_after`` is the server's hint in seconds."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class RetryPolicy:
    """``max_attempts`` calls in all; the wait before retry ``n`` (1-based) is uniform in
    ``[0, min(max_delay_s, base_delay_s * 2**(n-1))]`` (full jitter), but never shorter than a
    ``Retry-After`` hint (capped at ``max_retry_after_s``). ``sleep`` is injectable for tests."""

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_retry_after_s: float = 120.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = self.rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))
        if retry_after is not None:
            return max(backoff, min(retry_after, self.max_retry_after_s))
        return backoff


def with_retries(call: Callable[[], T], policy: RetryPolicy, what: str, deadline: float | None = None) -> T:
    """Run ``call``; retry :class:`TransientError` per ``policy``; other exceptions pass through.
    ``deadline`` (a ``time.monotonic()`` reading): no retry starts, and no wait runs, past it; running out
    of time raises :class:`ModelTimeoutError`."""
    last: TransientError | None = None
    for attempt in range(1, policy.max_attempts + 1):
        try:
            return call()
        except TransientError as error:
            last = error
            if attempt == policy.max_attempts:
                break
            wait = policy.delay(attempt, error.retry_after)
            if deadline is not None and time.monotonic() + wait >= deadline:
                raise ModelTimeoutError(
                    f"{what} ran out of its time after {attempt} attempt(s) (no time left to retry); last error: {error}"
                ) from None
            log.warning("%s: %s; retry %d/%d in %.2f s", what, error, attempt, policy.max_attempts - 1, wait)
            policy.sleep(wait)
    raise ModelUnavailableError(
        f"{what} failed {policy.max_attempts} times; last error: {last}. "
        "Check that the server is up and not overloaded, or allow more attempts (bench --model-retries N; RetryPolicy.max_attempts)."
    )


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date); None if absent."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
        except (TypeError, ValueError):
            return None


class Model(ABC):
    """A chat model. ``spec`` is the string it was loaded from (``openai:gpt-4o``, ...); ``name`` the
    model id sent to the provider. ``chat`` never returns a partial reply: it returns a
    :class:`ModelReply` or raises :class:`ModelError`.

    ``purpose`` (``plan``, ``step``, ``fallback``, ``vlm.ask``, ``vlm.locate``) says why a call is made;
    only the ``replay:`` backend uses it. Other keyword parameters: ``max_tokens``, ``temperature``,
    ``reasoning_effort`` (OpenAI reasoning models), ``thinking_budget`` (Anthropic extended thinking,
    tokens), ``stop``, ``seed``, ``extra_body`` (a dict merged into the request body), ``timeout_s`` (the
    longest the call may take, seconds; the HTTP backends bound each request and their retries by it and
    raise :class:`ModelTimeoutError`, ``hf:`` stops generating at it, ``replay:`` ignores it).
    """

    spec: str = ""
    name: str = ""

    @abstractmethod
    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply: ...

    def close(self) -> None:  # noqa: B027 - an optional hook: a model holding nothing to release keeps this no-op
        """Release clients or weights; the model is unusable afterwards."""

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> dict[str, Any]:
        """What the trajectory header records about this model."""
        return {"spec": self.spec, "name": self.name, "backend": type(self).__name__}


class SDKModel(Model):
    """A model served over HTTP through a provider SDK: builds the request body, sends it with retries,
    and turns the response into a :class:`ModelReply`. Subclasses set ``self._client``, ``self.retry``
    and implement the three steps."""

    _client: Any
    retry: RetryPolicy
    #: Per-provider limits shared by every model of the process (:mod:`spatialclaw.models.throttle`);
    #: each request, each retry included, holds one of its slots. None: no limit.
    throttle: Throttle | None = None

    @abstractmethod
    def request_body(self, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        """The provider's request body for these messages and call parameters."""

    @abstractmethod
    def _create(self, body: dict[str, Any], timeout_s: float | None) -> Any:
        """Send one request (``timeout_s``: its timeout in seconds; None: the client's default); raise
        :class:`TransientError` (retried) or :class:`ModelError`."""

    @abstractmethod
    def _reply(self, response: Any, latency_s: float) -> ModelReply:
        """The provider-neutral reply of a successful response."""

    def chat(
        self, messages: list[Message], *, purpose: str = "step", timeout_s: float | None = None, **params: Any
    ) -> ModelReply:
        body = self.request_body(messages, params)
        start = time.perf_counter()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s

        def attempt() -> Any:
            if self.throttle is None:
                return self._create(body, None if deadline is None else max(deadline - time.monotonic(), 0.001))
            with self.throttle.request():  # the wait for a slot counts against the deadline too
                return self._create(body, None if deadline is None else max(deadline - time.monotonic(), 0.001))

        what = f"{self.spec} ({purpose})"
        try:
            response = with_retries(attempt, self.retry, what, deadline)
        except ModelUnavailableError as error:  # the last attempt itself may have used up the time
            if deadline is not None and not isinstance(error, ModelTimeoutError) and time.monotonic() >= deadline:
                raise ModelTimeoutError(f"{what} did not reply within {timeout_s:g} s: {error}") from None
            raise
        return self._reply(response, time.perf_counter() - start)

    def close(self) -> None:
        self._client.close()
