"""A Hugging Face ``datasets`` dataset in TRL's conversational vision format, saved with ``save_to_disk``.

Columns: ``messages`` (a list of ``{"role", "content"}``, content a list of ``{"type": "text", "text"}``
and ``{"type": "image", "text": None}`` placeholders in place), ``images`` (the PNGs, one per placeholder,
in order), and metadata ``episode_id``, ``task_id``, ``benchmark``, ``score``, ``correct``, ``steps``.
Open it with ``datasets.load_from_disk(OUT)``. TRL's format has no per-turn weight, so ``weight`` is not
exported here; filter the episodes instead (``--correct-only``, ``--max-steps``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterable

from spatialclaw.chat import ImagePart
from spatialclaw.export.conversation import Conversation
from spatialclaw.export.runner import ExportStats

__all__ = ["conversation_row", "write"]

ROWS_PER_SHARD = 256


def _features() -> Any:
    import datasets

    text = datasets.Value("string")
    return datasets.Features(
        {
            "messages": [{"role": text, "content": [{"type": text, "text": text}]}],
            "images": [datasets.Image()],
            "episode_id": text,
            "task_id": text,
            "benchmark": text,
            "score": datasets.Value("float64"),
            "correct": datasets.Value("bool"),
            "steps": datasets.Value("int32"),
        }
    )


def conversation_row(conversation: Conversation) -> dict[str, Any]:
    """One dataset row (images as ``{"bytes": png, "path": None}``, as ``datasets.Image`` stores them)."""
    messages = [
        {
            "role": turn.role,
            "content": [
                {"type": "image", "text": None} if isinstance(part, ImagePart) else {"type": "text", "text": part.text}
                for part in turn.parts
            ],
        }
        for turn in conversation.turns
    ]
    return {
        "messages": messages,
        "images": [{"bytes": image.png, "path": None} for image in conversation.images],
        "episode_id": conversation.episode_id,
        "task_id": conversation.task.get("task_id"),
        "benchmark": conversation.task.get("benchmark"),
        "score": conversation.score,
        "correct": conversation.correct,
        "steps": conversation.steps,
    }


def write(conversations: Iterable[Conversation], out: Path) -> ExportStats:
    """Save the dataset to the directory ``out`` (replaced if it exists)."""
    import datasets

    features = _features()
    stats = ExportStats(paths=[out])
    shards: list[Any] = []
    rows: list[dict[str, Any]] = []
    for conversation in conversations:
        rows.append(conversation_row(conversation))
        stats.records += 1
        stats.turns += len(conversation.turns)
        stats.images += len(conversation.images)
        if len(rows) == ROWS_PER_SHARD:
            shards.append(datasets.Dataset.from_list(rows, features=features))
            rows = []
    if rows or not shards:
        shards.append(datasets.Dataset.from_list(rows, features=features))
    dataset = shards[0] if len(shards) == 1 else datasets.concatenate_datasets(shards)
    if out.exists():
        shutil.rmtree(out)
    dataset.save_to_disk(str(out))
    return stats
