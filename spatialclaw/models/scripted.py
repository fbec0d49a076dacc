"""A model that answers from a fixed list of replies, in-process. Used by ``spatialclaw demo`` when no
model is configured, and by tests; it announces itself as scripted in every trajectory header."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from spatialclaw.chat import Message, ModelReply
from spatialclaw.models.base import Model, ModelError

__all__ = ["ScriptedModel"]


class ScriptedModel(Model):
    """Returns ``replies[0]``, ``replies[1]``, ... for successive calls, whatever the messages say; a reply is
    a text or a whole :class:`~spatialclaw.chat.ModelReply` (to script tool calls)."""

    def __init__(self, replies: Sequence[str | ModelReply], name: str = "scripted") -> None:
        self.replies = list(replies)
        self.name = name
        self.spec = f"scripted:{name}"
        self.calls: list[list[Message]] = []

    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply:
        if len(self.calls) >= len(self.replies):
            raise ModelError(f"the scripted model {self.name!r} has only {len(self.replies)} replies")
        self.calls.append(messages)
        index = len(self.calls) - 1
        reply = self.replies[index]
        if isinstance(reply, ModelReply):
            return replace(reply, cost_usd=0.0, raw={"scripted": True, "index": index})
        return ModelReply(text=reply, cost_usd=0.0, raw={"scripted": True, "index": index})
