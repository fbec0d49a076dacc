"""verl parquet for multi-turn RL: one row per episode's *task*, for online rollouts with the kernel tool.

RL needs the starting prompt and a way to score, not the recorded steps. Columns:

* ``data_source`` (the benchmark), ``ability`` (``"spatial_reasoning"``);
* ``prompt``: the turns before the first model output (system prompt and the task's user turn) as
  ``{"role", "content"}`` with ``<image>`` tokens where the frames were, the form verl's ``RLHFDataset``
  expands with ``image_key="images"``;
* ``images``: the frames as ``{"bytes": png, "path": None}``, one per ``<image>`` token;
* ``reward_model``: ``{"style": "rule", "ground_truth": ...}`` (as text; numbers JSON-encoded);
* ``extra_info``: ``split``, ``index``, ``episode_id``, ``task_id``, ``answer_type``, ``choices``,
  ``reference_score`` and ``reference_steps`` of the recorded episode, and ``need_tools_kwargs`` /
  ``tools_kwargs`` with ``{"spatialclaw_cell": {"create_kwargs": {"task_json": ...}}}``: the task as JSON,
  which :class:`spatialclaw.runner.rl_env.SpatialEnv` ``reset`` takes to start the kernel.

Episodes whose task has no ground truth cannot be rewarded and are skipped (counted in the report).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spatialclaw.chat import ImagePart
from spatialclaw.export.conversation import Conversation
from spatialclaw.export.runner import ExportStats, SkipEpisode
from spatialclaw.trajectories.safe_files import safe_writer

__all__ = ["IMAGE_TOKEN", "TOOL_NAME", "conversation_row", "write"]

IMAGE_TOKEN = "<image>"
RESERVED_TOKENS = ("<image>", "<video>")
"""Placeholders verl's dataset splits prompt text on; a literal one in text would break the count."""
TOOL_NAME = "spatialclaw_cell"


def _schema() -> Any:
    import pyarrow as pa

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    tools = pa.struct([(TOOL_NAME, pa.struct([("create_kwargs", pa.struct([("task_json", pa.string())]))]))])
    extra = pa.struct(
        [
            ("split", pa.string()),
            ("index", pa.int64()),
            ("episode_id", pa.string()),
            ("task_id", pa.string()),
            ("answer_type", pa.string()),
            ("choices", pa.list_(pa.string())),
            ("reference_score", pa.float64()),
            ("reference_steps", pa.int64()),
            ("need_tools_kwargs", pa.bool_()),
            ("tools_kwargs", tools),
        ]
    )
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(message)),
            ("images", pa.list_(image)),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            ("extra_info", extra),
        ]
    )


def _ground_truth_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def conversation_row(conversation: Conversation, index: int, split: str) -> dict[str, Any]:
    """One row; raises :class:`SkipEpisode` when the task has no ground truth or the prompt text holds a
    literal placeholder token."""
    task = conversation.task
    if task.get("ground_truth") is None:
        raise SkipEpisode("no ground truth", f"{conversation.episode.directory}: no reward can be computed")
    prompt, images = [], []
    for turn in conversation.turns:
        if turn.role == "assistant":
            break
        pieces = []
        reserved = next((token for token in RESERVED_TOKENS if token in turn.text), None)
        if reserved:
            raise SkipEpisode(
                f"literal {reserved} in text", f"{conversation.episode.directory}: the prompt contains {reserved}"
            )
        for part in turn.parts:
            if isinstance(part, ImagePart):
                images.append({"bytes": part.png, "path": None})
                pieces.append(IMAGE_TOKEN)
            else:
                pieces.append(part.text)
        prompt.append({"role": turn.role, "content": "".join(pieces)})
    return {
        "data_source": task.get("benchmark") or "spatialclaw",
        "prompt": prompt,
        "images": images,
        "ability": "spatial_reasoning",
        "reward_model": {"style": "rule", "ground_truth": _ground_truth_text(task["ground_truth"])},
        "extra_info": {
            "split": split,
            "index": index,
            "episode_id": conversation.episode_id,
            "task_id": task.get("task_id"),
            "answer_type": task.get("answer_type"),
            "choices": task.get("choices"),
            "reference_score": conversation.score,
            "reference_steps": conversation.steps,
            "need_tools_kwargs": True,
            "tools_kwargs": {TOOL_NAME: {"create_kwargs": {"task_json": json.dumps(task)}}},
        },
    }


def write(conversations: Iterable[Conversation], out: Path, split: str = "train") -> ExportStats:
    """Write the parquet file ``out`` (parents created; overwritten); nothing when no row was made."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stats = ExportStats(paths=[out])
    rows: list[dict[str, Any]] = []
    for conversation in conversations:
        try:
            row = conversation_row(conversation, index=len(rows), split=split)
        except SkipEpisode as skip:
            stats.skipped[skip.reason] += 1
            continue
        rows.append(row)
        stats.records += 1
        stats.turns += len(row["prompt"])
        stats.images += len(row["images"])
    if not rows:
        return stats
    out.parent.mkdir(parents=True, exist_ok=True)
    with safe_writer(out, "wb") as handle:  # renamed over ``out`` at the end, never via a link
        pq.write_table(pa.Table.from_pylist(rows, schema=_schema()), handle)
    return stats
