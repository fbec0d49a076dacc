"""Which system prompt an exported row starts with (``export --system full|core|none|PATH``).

The agent's full tool manual is about 47,000 characters (the compact core one about 11,000): as the first turn of every row it pushes the
frames past any usual training ``max_length``. Exports therefore default to the **compact** manual
(``--system core``, :func:`compact_system_prompt`), unless the episode already ran with a prompt at most that long, which is
then kept exactly as the model saw it. The manual is regenerated from the live namespace for the
episode's own step budget (``header.config.max_steps``), so ``Step N/M`` observations still agree with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from spatialclaw.chat import TextPart
from spatialclaw.export.conversation import Conversation, Turn

__all__ = ["SYSTEM_CHOICES", "compact_system_prompt", "system_rewriter"]

SYSTEM_CHOICES = ("core", "full", "none")
"""Named ``--system`` values; anything else is read as the path of a text file."""


@lru_cache(maxsize=32)
def compact_system_prompt(max_steps: int) -> str:
    """The agent's system prompt with the compact tool manual (``api_detail="core"``: every name, signature
    and one line; the model reads the rest with ``manual(name)`` in a cell)."""
    from spatialclaw.agent.prompting import system_prompt

    return system_prompt(max_steps, api_detail="core")


@lru_cache(maxsize=32)
def _full_system_prompt(max_steps: int) -> str:
    from spatialclaw.agent.prompting import system_prompt

    return system_prompt(max_steps, api_detail="full")


def _max_steps(conversation: Conversation) -> int:
    configured = (conversation.episode.header.get("config") or {}).get("max_steps")
    return int(configured) if configured else max(conversation.steps, 1)


def _with_system(conversation: Conversation, text: str | None) -> Conversation:
    turns = [t for t in conversation.turns if t.role != "system"]
    if text is not None:
        turns = [Turn("system", [TextPart(text)], "system")] + turns
    return replace(conversation, turns=turns)


def system_rewriter(choice: str) -> Callable[[Conversation], Conversation]:
    """A function that gives a conversation the system prompt ``choice`` names:

    * ``core`` (the default): the compact manual, or the recorded prompt when that is no longer (the
      episode already ran compact: its exact prompt is kept);
    * ``full``: the full manual; ``none``: no system turn;
    * any other value: the path of a UTF-8 text file whose content becomes the system prompt.

    Raises ``FileNotFoundError`` naming the path when ``choice`` is neither a name nor a readable file.
    """
    if choice == "none":
        return lambda conversation: _with_system(conversation, None)
    if choice == "full":
        return lambda conversation: _with_system(conversation, _full_system_prompt(_max_steps(conversation)))
    if choice == "core":

        def compact(conversation: Conversation) -> Conversation:
            compact_text = compact_system_prompt(_max_steps(conversation))
            recorded = conversation.system
            if recorded is not None and len(recorded) <= len(compact_text):
                return conversation
            return _with_system(conversation, compact_text)

        return compact
    path = Path(choice)
    if not path.is_file():
        raise FileNotFoundError(
            f"--system {choice!r} is neither one of {', '.join(SYSTEM_CHOICES)} nor a text file; give a name or a file path"
        )
    text = path.read_text(encoding="utf-8")
    return lambda conversation: _with_system(conversation, text)
