"""The session daemon's model for the kernel's ``vlm.ask``/``vlm.locate``: a local side-channel server in the
daemon process, each call logged as a ``model_call`` event, usage and cost summed for the ``end`` event, and
every call held to the session's token and cost limits (``vlm_limits`` in ``session.json``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from spatialclaw.agent.limits import LimitClock, Limits

__all__ = ["SessionVLM"]


class SessionVLM:
    """The side channel to the session's ``vlm_model`` (none without one); ``step()`` is the daemon's current step."""

    def __init__(self, info: dict[str, Any], write_lock: threading.Lock, step: Callable[[], int]) -> None:
        self.info = info
        self._write_lock = write_lock
        self._step = step
        self.writer: Any = None
        self.model: Any = None
        self.server: Any = None
        self.config: dict[str, Any] | None = None
        self.usage: Any = None
        self.cost_usd: float | None = None
        limits = self.info.get("vlm_limits") or {}
        self.clock = LimitClock(Limits(tokens=limits.get("tokens"), cost_usd=limits.get("cost_usd")), time.monotonic())

    def start(self, writer: Any) -> None:
        """With ``vlm_model`` set, the kernel's ``vlm.ask``/``vlm.locate`` reach that model through a
        local side-channel server in this process (credentials never enter the kernel).

        The spec may come from a client (an MCP tool call), so an ``openai-compat:`` URL gets a key only
        when the starter named one for it (``vlm_api_key_env``); never one from the environment."""
        self.writer = writer
        spec = self.info.get("vlm_model")
        if not spec:
            return
        from spatialclaw.agent.vlm_server import VLMServer
        from spatialclaw.models import load_model, parse_spec

        options = {}
        if parse_spec(spec)[0] == "openai-compat" or self.info.get("vlm_api_key_env"):
            options["api_key_env"] = self.info.get("vlm_api_key_env")
        self.model = load_model(spec, **options)
        self.server = VLMServer().start()
        self.config = self.server.open_channel(self.call)

    def call(self, messages: list[Any], purpose: str) -> Any:
        """One ``vlm.*`` model call, logged as a ``model_call`` event like the agent's, within the session's
        token and cost limits (``vlm_limits``): its prompt estimate and ``max_tokens`` are held before it is
        made (:meth:`~spatialclaw.agent.limits.LimitClock.reserve_call`), and a call that does not fit is refused
        with :class:`~spatialclaw.agent.limits.LimitReached` (the cell's ``vlm.ask`` raises its message)."""
        from spatialclaw.models import ModelError

        reservation, params = self.clock.reserve_call(self.model, purpose, messages, {})
        logged = {
            "step": self._step(),
            "purpose": purpose,
            "model": self.model.spec,
            "params": params,
            "messages": messages,
        }
        started, reply = time.perf_counter(), None
        try:
            reply = self.model.chat(messages, purpose=purpose, **params)
            with self._write_lock:
                self.usage = reply.usage if self.usage is None else self.usage + reply.usage
                if reply.cost_usd is not None:
                    self.cost_usd = (self.cost_usd or 0.0) + reply.cost_usd
        except ModelError as failure:
            self.writer.model_call(**logged, error=str(failure), latency_s=time.perf_counter() - started)
            raise
        finally:
            self.clock.settle(reservation, reply)
        self.writer.model_call(**logged, reply=reply)
        if self.clock.limits.cost_usd is not None and reply.cost_usd is None:
            raise ValueError(
                f"the session's vlm cost limit of {self.clock.limits.cost_usd:g} USD cannot be counted: "
                f"{self.model.spec} has no known price (see spatialclaw.models.pricing); start the session with a "
                "token limit instead"
            )
        return reply

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.model is not None:
            self.model.close()
            self.model = None
