"""A model that answers from a fixed list of replies, in-process. Used by ``spatialclaw demo`` when no
model is configured, and by tests; it announces itself as scripted in every trajectory header."""

from __future__ import annotations

from typing import Any

from spatialclaw.chat import Message, ModelReply
from spatialclaw.models.base import Model, ModelError

__all__ = ["ScriptedModel"]


class ScriptedModel(Model):
    """Returns ``replies[0]``, ``replies[1]``, ... for successive calls, whatever the messages say."""

    def __init__(self, replies: list[str], name: str = "scripted") -> None:
        self.replies = list(replies)
        self.name = name
        self.spec = f"scripted:{name}"
        self.calls: list[list[Message]] = []

    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply:
        if len(self.calls) >= len(self.replies):
            raise ModelError(f"the scripted model {self.name!r} has only {len(self.replies)} replies")
        self.calls.append(messages)
        return ModelReply(text=self.replies[len(self.calls) - 1], raw={"scripted": True, "index": len(self.calls) - 1})
