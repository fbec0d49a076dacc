"""LLaMA-Factory multimodal ShareGPT: ``OUT/NAME.json`` plus ``OUT/dataset_info.json`` and ``OUT/images/``.

Each record is ``{"conversations": [{"from": "human"|"gpt", "value": ...}], "system": ..., "images":
["images/<sha256>.png", ...]}``. Images are replaced in the text by ``<image>`` tokens at their place,
so the number of ``<image>`` tokens always equals the number of image paths. LLaMA-Factory requires
strictly alternating human/gpt turns starting with human, so consecutive same-role turns are merged.
Image paths are relative to ``OUT``: train with ``dataset_dir: OUT`` and ``dataset: NAME``. The
``dataset_info.json`` already in ``OUT`` keeps its other entries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from spatialclaw.chat import ImagePart
from spatialclaw.export.conversation import Conversation, merge_consecutive
from spatialclaw.export.runner import ExportStats, SkipEpisode
from spatialclaw.trajectories.safe_files import safe_writer, write_file

__all__ = ["IMAGE_TOKEN", "conversation_record", "dataset_info_entry", "write"]

IMAGE_TOKEN = "<image>"
RESERVED_TOKENS = ("<image>", "<video>", "<audio>")
"""Placeholders LLaMA-Factory's multimodal plugins count; a literal one in text would break the count."""
ROLE_TAGS = {"user": "human", "assistant": "gpt"}


def dataset_info_entry(file_name: str) -> dict[str, Any]:
    """The ``dataset_info.json`` entry describing the data file ``file_name``."""
    return {
        "file_name": file_name,
        "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system", "images": "images"},
        "tags": {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt"},
    }


def conversation_record(conversation: Conversation, image_dir: Path) -> dict[str, Any]:
    """One record; writes each image once to ``image_dir`` (content-addressed). Raises
    :class:`SkipEpisode` when the text holds a literal placeholder token."""
    turns = [t for t in conversation.turns if t.role != "system"]
    if not turns or turns[0].role != "user":
        raise SkipEpisode("no user turn first", f"{conversation.episode.directory}: ShareGPT starts with a human turn")
    for turn in conversation.turns:
        reserved = next((token for token in RESERVED_TOKENS if token in turn.text), None)
        if reserved:
            raise SkipEpisode(
                f"literal {reserved} in text",
                f"{conversation.episode.directory}: a {turn.role} turn contains {reserved}",
            )
    paths: list[str] = []
    messages = []
    for turn in merge_consecutive(turns):
        pieces = []
        for part in turn.parts:
            if isinstance(part, ImagePart):
                target = image_dir / f"{part.sha256}.png"
                if not os.path.lexists(target):
                    image_dir.mkdir(parents=True, exist_ok=True)
                    write_file(target, part.png)
                paths.append(f"{image_dir.name}/{target.name}")
                pieces.append(IMAGE_TOKEN)
            else:
                pieces.append(part.text)
        messages.append({"from": ROLE_TAGS[turn.role], "value": "".join(pieces)})
    return {"conversations": messages, "system": conversation.system or "", "images": paths}


def write(conversations: Iterable[Conversation], out: Path, name: str = "spatialclaw") -> ExportStats:
    """Write ``out/NAME.json`` (a JSON list), the images and the ``dataset_info.json`` entry ``NAME``;
    nothing when no record was made."""
    image_dir = out / "images"
    data_path = out / f"{name}.json"
    stats = ExportStats(paths=[data_path, out / "dataset_info.json", image_dir])
    file: IO[Any] | None = None
    with ExitStack() as stack:  # the file is opened at the first kept conversation, closed on leaving
        for conversation in conversations:
            try:
                record = conversation_record(conversation, image_dir)
            except SkipEpisode as skip:
                stats.skipped[skip.reason] += 1
                continue
            if file is None:
                out.mkdir(parents=True, exist_ok=True)
                file = stack.enter_context(safe_writer(data_path))  # renamed over it at the end, never via a link
            file.write(("[\n" if stats.records == 0 else ",\n") + json.dumps(record, ensure_ascii=False))
            stats.records += 1
            stats.turns += len(record["conversations"])
            stats.images += len(record["images"])
        if file is not None:
            file.write("\n]\n")
    if file is None:
        return stats
    info_path = out / "dataset_info.json"
    info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.exists() else {}
    info[name] = dataset_info_entry(data_path.name)
    write_file(info_path, json.dumps(info, indent=2) + "\n")
    return stats
