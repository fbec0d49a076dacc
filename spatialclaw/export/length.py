"""Row lengths in a trainer's own tokens, and rows fitted to a token budget by whole turns.

:class:`TokenCounter` loads the processor (or, for a text-only model, the tokenizer) the user names with
``transformers.AutoProcessor`` / ``AutoTokenizer.from_pretrained`` and measures a conversation as the
trainer will see it: its chat template applied, every image expanded into the model's image tokens.
:func:`fit_to_budget` shortens a row that is too long by removing trailing turns *whole*, so that a
trainer's ``max_length`` never has to cut it, and in particular never cuts through an image's tokens
(the cause of ``TypeError: NoneType - NoneType`` inside Idefics3's processor). A row whose first model
output does not fit is dropped.
"""

from __future__ import annotations

import io
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spatialclaw.chat import ImagePart
from spatialclaw.export.conversation import Conversation, Turn

__all__ = ["LengthSummary", "TokenCounter", "fit_to_budget", "row_chars"]


def row_chars(conversation: Conversation) -> int:
    """Characters of text in the row (system prompt included; images not counted)."""
    return sum(len(turn.text) for turn in conversation.turns)


def chat_messages(turns: list[Turn]) -> list[dict[str, Any]]:
    """Turns as chat-template messages: content lists of ``{"type": "text"}`` and ``{"type": "image",
    "image": PIL.Image}`` parts, images in place."""
    from PIL import Image

    return [
        {
            "role": turn.role,
            "content": [
                {"type": "image", "image": Image.open(io.BytesIO(part.png)).convert("RGB")}
                if isinstance(part, ImagePart)
                else {"type": "text", "text": part.text}
                for part in turn.parts
            ],
        }
        for turn in turns
    ]


class TokenCounter:
    """Counts a conversation's tokens with the processor or tokenizer at ``name_or_path`` (a local folder
    or a Hugging Face repo id). Raises ``ValueError`` saying what to give when it cannot be loaded or has
    no chat template."""

    def __init__(self, name_or_path: str) -> None:
        from transformers import AutoProcessor, AutoTokenizer

        from spatialclaw.primitives.perception.models import hub_unavailable

        self.name = name_or_path
        # a hub id without a usable hub is read from the cache only: one quick answer instead of minutes
        # of download retries
        offline = None if Path(name_or_path).is_dir() else hub_unavailable()
        local_only = {"local_files_only": True} if offline else {}
        try:
            self.processor: Any = AutoProcessor.from_pretrained(name_or_path, **local_only)  # type: ignore[no-untyped-call]
        except Exception:
            try:
                self.processor = AutoTokenizer.from_pretrained(name_or_path, **local_only)
            except Exception as error:
                if offline:
                    raise ValueError(
                        f"--tokenizer {name_or_path!r} could not be loaded: not a local folder nor in the Hugging Face "
                        "cache, and "
                        f"{offline}; give a local model folder (`spatialclaw tiny-models DIR` writes a small one)"
                    ) from None
                raise ValueError(
                    f"--tokenizer {name_or_path!r} could not be loaded ({type(error).__name__}: {error}); "
                    "give a local model folder or a Hugging Face repo id with a tokenizer"
                ) from None
        if not getattr(self.processor, "chat_template", None):
            raise ValueError(
                f"--tokenizer {name_or_path!r} has no chat template; give the instruct/chat model's tokenizer"
            )

    def count(self, turns: list[Turn]) -> int:
        """Tokens of ``turns`` rendered by the chat template, image tokens included."""
        output = self.processor.apply_chat_template(chat_messages(turns), tokenize=True, return_dict=True)
        ids = output["input_ids"]
        if ids and isinstance(ids[0], list):
            ids = ids[0]
        return len(ids)


@dataclass
class Fitted:
    """What :func:`fit_to_budget` made of a row: the (possibly shorter) conversation or ``None`` (dropped),
    its token count, and the count before."""

    conversation: Conversation | None
    tokens: int
    original_tokens: int

    @property
    def trimmed(self) -> bool:
        return self.conversation is not None and self.tokens < self.original_tokens


def fit_to_budget(conversation: Conversation, counter: TokenCounter, max_tokens: int | None) -> Fitted:
    """Measure ``conversation``; with ``max_tokens``, keep the longest prefix that fits and ends with a
    model output of weight 1 (trailing turns removed whole), or drop it (``conversation=None``)."""
    total = counter.count(conversation.turns)
    if max_tokens is None or total <= max_tokens:
        return Fitted(conversation, total, total)
    ends = [i + 1 for i, turn in enumerate(conversation.turns) if turn.role == "assistant" and turn.weight > 0]
    best: tuple[int, int] | None = None
    low, high = 0, len(ends) - 1
    while low <= high:  # prefix lengths grow with the cut point: bisect for the last one that fits
        middle = (low + high) // 2
        tokens = counter.count(conversation.turns[: ends[middle]])
        if tokens <= max_tokens:
            best, low = (ends[middle], tokens), middle + 1
        else:
            high = middle - 1
    if best is None:
        return Fitted(None, total, total)
    return Fitted(replace(conversation, turns=conversation.turns[: best[0]]), best[1], total)


@dataclass
class LengthSummary:
    """Per-row lengths of an export: ``chars`` always, ``tokens`` when a tokenizer was named; rows
    ``trimmed`` and ``dropped`` by ``max_tokens``; ``over`` rows longer than ``max_tokens`` (before fitting)."""

    tokenizer: str | None = None
    max_tokens: int | None = None
    chars: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    trimmed: int = 0
    dropped: int = 0
    over: int = 0

    def add(self, chars: int, fitted: Fitted | None) -> None:
        self.chars.append(chars)
        if fitted is None:
            return
        if self.max_tokens is not None and fitted.original_tokens > self.max_tokens:
            self.over += 1
        if fitted.conversation is None:
            self.dropped += 1
        else:
            self.tokens.append(fitted.tokens)
            self.trimmed += fitted.trimmed

    @staticmethod
    def _stats(values: list[int]) -> str:
        return f"min {min(values)}, median {int(statistics.median(values))}, max {max(values)}"

    def summary(self) -> str:
        """One line, e.g. ``row length: chars min 900, median 1200, max 2100; tokens (Qwen/...) min ...``."""
        if not self.chars:
            return "row length: no rows"
        line = f"row length: chars {self._stats(self.chars)}"
        if self.tokenizer is not None:
            line += f"; tokens ({self.tokenizer}) " + (self._stats(self.tokens) if self.tokens else "none kept")
        if self.max_tokens is None and self.tokens:
            line += f"; a trainer's max_length below {max(self.tokens)} would cut rows (pass --max-tokens to fit them)"
        if self.max_tokens is not None:
            line += (
                f"; {self.over} row(s) over {self.max_tokens} tokens: {self.trimmed} trimmed to whole turns, "
                f"{self.dropped} dropped"
            )
        return line
