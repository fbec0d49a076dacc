"""``replay:TRAJECTORY_DIR``: answer with the model outputs recorded in an episode, in order.

Each call purpose (``plan``, ``step``, ``fallback``, ``vlm.ask``, ``vlm.locate``) replays its own
recorded sequence, so side-channel calls made from inside a cell cannot shift the agent's steps. Failed
recorded calls are skipped. Running past the recording raises a :class:`ModelError` that says so.
Replayed calls report zero tokens and no cost (nothing was spent). Tool calls are replayed from the
recorded raw response (OpenAI ``tool_calls`` or Anthropic ``tool_use`` blocks, :func:`tool_calls_from_raw`).
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from spatialclaw.chat import Message, ModelReply, ToolCall
from spatialclaw.models.base import Model, ModelError

__all__ = ["ReplayModel", "tool_calls_from_raw"]


def tool_calls_from_raw(raw: Any) -> list[ToolCall]:
    """The tool calls in a provider's raw response body as recorded in a trajectory: OpenAI Chat
    Completions ``choices[0].message.tool_calls`` or Anthropic ``tool_use`` content blocks."""
    if not isinstance(raw, dict):
        return []
    calls: list[ToolCall] = []
    for choice in (raw.get("choices") or [])[:1]:
        for call in ((choice or {}).get("message") or {}).get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError as failure:
                calls.append(
                    ToolCall(
                        call.get("id", ""),
                        function.get("name", ""),
                        {},
                        f"the arguments are not valid JSON ({failure})",
                    )
                )
                continue
            calls.append(
                ToolCall(call.get("id", ""), function.get("name", ""), arguments if isinstance(arguments, dict) else {})
            )
    content = raw.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            calls.append(ToolCall(block.get("id", ""), block.get("name", ""), dict(block.get("input") or {})))
    return calls


class ReplayModel(Model):
    """Replays the ``model_call`` responses of the episode in ``directory``."""

    def __init__(self, directory: str | Path) -> None:
        from spatialclaw.trajectories.episode_log import load_episode

        self.directory = Path(directory)
        episode = load_episode(self.directory)
        if episode.unreadable:  # a replay of a log with holes would answer the wrong calls
            raise ModelError("; ".join(episode.unreadable) + "; cannot replay it")
        self.spec = f"replay:{self.directory}"
        recorded = episode.header.get("model")
        self.name = str(recorded.get("name", "replay")) if isinstance(recorded, dict) else str(recorded or "replay")
        self._queues: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        for event in episode.of_type("model_call"):
            if event.get("error") or not event.get("response"):
                continue
            self._queues[event.get("purpose", "step")].append(event)
        if not self._queues:
            raise ModelError(f"{self.directory} records no successful model calls; nothing to replay")

    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply:
        queue = self._queues.get(purpose)
        if not queue:
            raise ModelError(
                f"replay of {self.directory}: no recorded '{purpose}' output left; the replayed episode "
                "asked for more model calls than the recording holds (the cells probably behaved differently)"
            )
        event = queue.popleft()
        response = event["response"]
        return ModelReply(
            text=response.get("text", ""),
            reasoning=response.get("reasoning"),
            finish_reason=response.get("finish_reason"),
            raw={"replayed_from": str(self.directory), "seq": event.get("seq")},
            tool_calls=tool_calls_from_raw(response.get("raw")),
        )

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "recorded_model": self.name}
