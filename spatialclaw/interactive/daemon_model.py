"""The session daemon's model for the kernel's ``vlm.ask``/``vlm.locate``: a local side-channel server in the
daemon process, each call logged as a ``model_call`` event, usage and cost summed for the ``end`` event.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

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
        """One ``vlm.*`` model call, logged as a ``model_call`` event like the agent's."""
        from spatialclaw.models import ModelError

        logged = {
            "step": self._step(),
            "purpose": purpose,
            "model": self.model.spec,
            "params": {},
            "messages": messages,
        }
        started = time.perf_counter()
        try:
            reply = self.model.chat(messages, purpose=purpose)
            with self._write_lock:
                self.usage = reply.usage if self.usage is None else self.usage + reply.usage
                if reply.cost_usd is not None:
                    self.cost_usd = (self.cost_usd or 0.0) + reply.cost_usd
        except ModelError as failure:
            self.writer.model_call(**logged, error=str(failure), latency_s=time.perf_counter() - started)
            raise
        self.writer.model_call(**logged, reply=reply)
        return reply

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.model is not None:
            self.model.close()
            self.model = None
