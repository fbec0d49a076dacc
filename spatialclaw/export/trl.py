"""A Hugging Face ``datasets`` dataset in TRL's conversational vision format, saved with ``save_to_disk``.

Columns: ``messages`` (a list of ``{"role", "content", "weight"}``, content a list of ``{"type": "text",
"text"}`` and ``{"type": "image", "text": None}`` placeholders in place; ``weight`` is 0 or 1 on assistant
turns, as in the openai export, and null elsewhere), ``images`` (the PNGs, one per placeholder, in order),
and metadata ``episode_id``, ``task_id``, ``benchmark``, ``score``, ``correct``, ``steps``.
Open it with ``datasets.load_from_disk(OUT)``.

Loss masks: TRL's ``SFTTrainer`` trains on assistant turns only with ``SFTConfig(assistant_only_loss=True)``
and a chat template with ``{% generation %}`` markers (TRL >= 1.x documents this for conversational
datasets; it has no per-message weight). :func:`step_masked_chat_template` gives such a template that also
leaves assistant turns of ``weight`` 0 (failed steps) outside the markers, so they are context, not targets::

    processor.chat_template = step_masked_chat_template(processor)
    SFTTrainer(model, args=SFTConfig(assistant_only_loss=True, ...), train_dataset=dataset, processing_class=processor)
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spatialclaw.chat import ImagePart
from spatialclaw.export.conversation import Conversation
from spatialclaw.export.runner import ExportStats

__all__ = ["conversation_row", "step_masked_chat_template", "write"]

ROWS_PER_SHARD = 256


def _features() -> Any:
    import datasets

    text = datasets.Value("string")
    return datasets.Features(
        {
            "messages": [{"role": text, "content": [{"type": text, "text": text}], "weight": datasets.Value("int8")}],
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
            "weight": turn.weight if turn.role == "assistant" else None,
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


_GENERATION_BLOCK = re.compile(r"(\{%-?\s*generation\s*-?%\})(.*?)(\{%-?\s*endgeneration\s*-?%\})", re.DOTALL)
_COMMENT = re.compile(r"(\s*)\{#(-?).*?(-?)#\}(\s*)", re.DOTALL)
_MESSAGE_LOOP = re.compile(r"\{%-?\s*for\s+(\w+)\s+in\s+(?:loop_messages|messages)\b")


def step_masked_chat_template(processing_class: Any) -> str:
    """The chat template of ``processing_class`` (a processor or tokenizer) made ready for
    ``assistant_only_loss`` on this export: its own template when it has ``{% generation %}`` markers,
    else TRL's training variant of it (:func:`trl.chat_template_utils.get_training_chat_template`), with
    every generation block applied only to messages whose ``weight`` is not 0. Tokens of a failed step
    then render the same but get mask 0. Raises ``ValueError`` when TRL has no training variant of the
    template (write ``{% generation %}`` markers into it yourself, then call this again)."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    template = processing_class.chat_template
    if isinstance(template, dict):
        template = template["default"]
    if not template:
        raise ValueError("the processor has no chat template; load the instruct/chat model's processor")
    if not has_generation_markers(template):
        template = get_training_chat_template(processing_class) or template
    # comments may quote the markers; drop them, with the whitespace their "-" trims
    template = _COMMENT.sub(lambda m: ("" if m.group(2) else m.group(1)) + ("" if m.group(3) else m.group(4)), template)

    def conditional(match: re.Match[str]) -> str:
        loops = _MESSAGE_LOOP.findall(template[: match.start()])
        if not loops:
            raise ValueError("the chat template's {% generation %} block is not inside a loop over messages")
        var = loops[-1]
        body = match.group(2)
        return (
            f"{{% if ({var}['weight'] if 'weight' in {var} else none) != 0 %}}"
            f"{match.group(1)}{body}{match.group(3)}{{% else %}}{body}{{% endif %}}"
        )

    return _GENERATION_BLOCK.sub(conditional, template)


def write(conversations: Iterable[Conversation], out: Path) -> ExportStats:
    """Save the dataset to the directory ``out`` (replaced if it exists); nothing when there is no row."""
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
    if rows:
        shards.append(datasets.Dataset.from_list(rows, features=features))
    if not shards:
        return stats
    dataset = shards[0] if len(shards) == 1 else datasets.concatenate_datasets(shards)
    if out.exists():
        shutil.rmtree(out)
    dataset.save_to_disk(str(out))
    return stats
