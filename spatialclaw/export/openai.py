"""OpenAI chat fine-tuning JSONL: one ``{"messages": [...]}`` object per line and episode.

System and assistant contents are strings; user contents are lists of ``{"type": "text"}`` and
``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`` parts, images inline where
they were. Assistant turns carry ``weight`` (0 or 1, see :mod:`spatialclaw.export.conversation`).
Images are only allowed in user turns by the fine-tuning API, which is where observations put them.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from spatialclaw import jsonl
from spatialclaw.chat import ImagePart
from spatialclaw.export.conversation import Conversation, Turn
from spatialclaw.export.runner import ExportStats
from spatialclaw.trajectories.safe_files import safe_writer

__all__ = ["conversation_record", "write"]


def _message(turn: Turn) -> dict[str, Any]:
    if turn.role == "user":
        content: Any = [
            {"type": "image_url", "image_url": {"url": part.data_url()}}
            if isinstance(part, ImagePart)
            else {"type": "text", "text": part.text}
            for part in turn.parts
        ]
    else:
        if turn.images:
            raise ValueError(f"a {turn.role} turn holds an image, which OpenAI fine-tuning does not accept")
        content = turn.text
    message: dict[str, Any] = {"role": turn.role, "content": content}
    if turn.role == "assistant":
        message["weight"] = turn.weight
    return message


def conversation_record(conversation: Conversation) -> dict[str, Any]:
    """The JSON object for one episode."""
    return {"messages": [_message(turn) for turn in conversation.turns]}


def write(conversations: Iterable[Conversation], out: Path) -> ExportStats:
    """Write one JSON line per conversation to the file ``out`` (parents created; overwritten). Without
    any conversation nothing is written."""
    stats = ExportStats(paths=[out])
    file: IO[Any] | None = None
    with ExitStack() as stack:  # the file is opened at the first conversation, closed on leaving
        for conversation in conversations:
            if file is None:
                out.parent.mkdir(parents=True, exist_ok=True)
                file = stack.enter_context(safe_writer(out))  # renamed over ``out`` at the end, never via a link
            file.write(jsonl.dumps_line(conversation_record(conversation)))  # one physical line per row
            stats.records += 1
            stats.turns += len(conversation.turns)
            stats.images += len(conversation.images)
    return stats
