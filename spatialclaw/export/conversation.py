"""An episode as a neutral list of turns, built once and shared by every exporter.

The mapping (the same for every format):

* The conversation is the **exact request of the last main-loop model call** (system prompt, the task's
  user turn with the frames, then every earlier output and observation as the agent sent them) followed
  by that call's output as the final assistant turn. Side calls (``vlm.ask``/``vlm.locate``, made from
  inside a cell) are not part of it.
* Model outputs are ``assistant`` turns; observations (cell output text and images, format-error
  messages) are ``user`` turns: the agent sends them as user messages and the model writes code as
  text, not as function calls, so there is no tool call for a ``tool`` turn to answer.
* The final output is shown as the agent keeps outputs in its history: without ``<think>``-style
  reasoning sections (:func:`spatialclaw.agent.extraction.strip_reasoning`); a provider's separate reasoning
  text is kept on the turn as ``reasoning``.
* Each assistant turn carries its ``step`` and a training ``weight``: 0 for a step that failed (its
  output had no runnable code, or its cell raised/timed out/crashed) when ``mask_failed`` is set, else 1
  (plan and fallback outputs are never masked).
  The observation that follows a failed step stays in the conversation, so the model still learns
  from the recovery.
* Images stay where they were in the request (in order), as PNG bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from spatialclaw.agent.extraction import strip_reasoning
from spatialclaw.chat import ImagePart, Message, Part, TextPart
from spatialclaw.trajectories.episode_log import Episode
from spatialclaw.trajectories.episodes import (
    episode_is_correct,
    episode_label,
    episode_steps,
    main_model_calls,
    step_count,
)

__all__ = ["Conversation", "Turn", "TurnKind", "episode_conversation", "merge_consecutive"]

EMPTY_REPLY = "(empty reply)"
"""What the agent's history shows for an output that was only reasoning (see :mod:`spatialclaw.agent.context`)."""

TurnKind = Literal["system", "prompt", "observation", "format_error", "output"]


@dataclass
class Turn:
    """One message of the conversation.

    ``kind`` says what it is: the ``system`` prompt, the task ``prompt`` (user turns before the first
    output), an ``observation`` of a cell, a ``format_error`` message, or a model ``output``.
    ``step`` and ``weight`` (0 or 1) are set on outputs; ``reasoning`` is the provider's separate
    thinking text for that output, if any (exporters that have no place for it leave it out).
    """

    role: Literal["system", "user", "assistant"]
    parts: list[Part]
    kind: TurnKind
    step: int | None = None
    weight: int = 1
    reasoning: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.parts if isinstance(p, ImagePart)]


@dataclass
class Conversation:
    """The turns of one episode plus what filters and exporters need to know about it."""

    episode: Episode
    turns: list[Turn]
    task: dict[str, Any] = field(default_factory=dict)
    score: float | None = None
    correct: bool | None = None
    steps: int = 0

    @property
    def episode_id(self) -> str:
        """The episode's directory name (see :func:`spatialclaw.trajectories.episodes.episode_label`)."""
        return episode_label(self.episode.directory)

    @property
    def images(self) -> list[ImagePart]:
        """Every image in turn order."""
        return [image for turn in self.turns for image in turn.images]

    @property
    def system(self) -> str | None:
        """The system prompt text, when the conversation starts with one."""
        return self.turns[0].text if self.turns and self.turns[0].role == "system" else None


def episode_conversation(episode: Episode, mask_failed: bool = True) -> Conversation:
    """Build the conversation of ``episode`` (see the module docstring for the mapping).

    Raises ``ValueError`` naming the episode when it has no main-loop model call with a response
    (e.g. it was killed before the first output), since there is nothing to train on.
    """
    calls = [c for c in main_model_calls(episode) if (c.get("response") or {}).get("text") is not None]
    if not calls:
        raise ValueError(
            f"{episode.directory}: no model call with a response was recorded, so there is no conversation to export"
        )
    last = calls[-1]
    final_text = strip_reasoning(last["response"]["text"]) or EMPTY_REPLY
    messages = episode.messages(last) + [Message.text("assistant", final_text)]
    steps = episode_steps(episode)
    failed_steps = {s.index for s in steps if s.failed}
    format_error_steps = {s.index for s in steps if s.format_error is not None}

    # Assistant turns in the history are the earlier calls' outputs, in order; match them from the end,
    # because an agent that trims old history keeps the most recent turns.
    assistant_positions = [i for i, m in enumerate(messages) if m.role == "assistant"]
    call_of_position: dict[int, dict[str, Any]] = {}
    # Not strict: trimmed history can hold fewer assistant turns than there were calls.
    for position, call in zip(reversed(assistant_positions), reversed(calls), strict=False):
        call_of_position[position] = call

    turns: list[Turn] = []
    previous_step: int | None = None
    for position, message in enumerate(messages):
        if message.role == "system":
            turns.append(Turn("system", list(message.content), "system"))
        elif message.role == "assistant":
            call = call_of_position.get(position, {})
            step = call.get("step")
            response = call.get("response") or {}
            failed = call.get("purpose", "step") == "step" and step in failed_steps
            weight = 0 if mask_failed and failed else 1
            turns.append(
                Turn(
                    "assistant",
                    list(message.content),
                    "output",
                    step=step,
                    weight=weight,
                    reasoning=response.get("reasoning") or None,
                )
            )
            previous_step = step
        else:
            if not any(t.role == "assistant" for t in turns):
                kind: TurnKind = "prompt"
            elif previous_step in format_error_steps:
                kind = "format_error"
            else:
                kind = "observation"
            turns.append(Turn("user", list(message.content), kind))
    return Conversation(
        episode=episode,
        turns=turns,
        task=episode.task,
        score=episode.score,
        correct=episode_is_correct(episode),
        steps=step_count(episode),
    )


def merge_consecutive(turns: list[Turn]) -> list[Turn]:
    """Join runs of same-role turns into one (parts concatenated with a blank line between texts).

    For formats that require strictly alternating user/assistant turns. A merged assistant turn keeps
    the smallest weight of its members and the last step.
    """
    merged: list[Turn] = []
    for turn in turns:
        if merged and merged[-1].role == turn.role:
            head = merged[-1]
            separator: list[Part] = [TextPart("\n\n")] if head.text and turn.text else []
            merged[-1] = Turn(
                head.role,
                head.parts + separator + turn.parts,
                head.kind,
                step=turn.step if turn.step is not None else head.step,
                weight=min(head.weight, turn.weight),
                reasoning="\n\n".join(r for r in (head.reasoning, turn.reasoning) if r) or None,
            )
        else:
            merged.append(turn)
    return merged
