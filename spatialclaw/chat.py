"""The provider-neutral message model that every backend maps to its own wire format.

A conversation is a list of :class:`Message`; a message's content is a list of parts, either
:class:`TextPart` or :class:`ImagePart` (PNG bytes). Structured tool calls: a model may reply with
:class:`ToolCall` s (``ModelReply.tool_calls``, offered as :class:`ToolSpec` s in the call's ``tools``
parameter); the conversation carries them as an assistant message's ``tool_calls`` and answers each with
a ``tool`` message naming its ``tool_call_id`` (text and images, which each backend maps to its wire format). Trajectories store messages with images replaced
by their content hash (see :mod:`spatialclaw.trajectories.episode_log`).
"""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["ImagePart", "Message", "ModelReply", "Part", "TextPart", "ToolCall", "ToolSpec", "Usage"]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call: ``name``, ``description`` and ``parameters`` (a JSON schema object)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for: the provider's call ``id``, the tool ``name`` and its JSON ``arguments``;
    ``error`` says why the arguments could not be read (then ``arguments`` is empty)."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            **({"error": self.error} if self.error else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(data["id"], data["name"], dict(data.get("arguments") or {}), data.get("error"))


@dataclass(frozen=True)
class TextPart:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class ImagePart:
    """An image as PNG bytes; ``width``/``height`` in pixels; ``label`` is shown to no model, it is for logs."""

    png: bytes
    width: int = 0
    height: int = 0
    label: str | None = None
    type: Literal["image"] = "image"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.png).hexdigest()

    def data_url(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")

    def base64(self) -> str:
        return base64.b64encode(self.png).decode("ascii")

    @classmethod
    def from_pil(cls, image: Any, label: str | None = None) -> ImagePart:
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="PNG", compress_level=1)
        return cls(png=buffer.getvalue(), width=image.width, height=image.height, label=label)


Part = TextPart | ImagePart


@dataclass
class Message:
    """``tool_calls``: the calls of an assistant message; ``tool_call_id``: the call a ``tool`` message answers."""

    role: Role
    content: list[Part] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None

    @classmethod
    def text(cls, role: Role, text: str) -> Message:
        return cls(role=role, content=[TextPart(text)])

    @property
    def text_content(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.content if isinstance(p, ImagePart)]

    def to_dict(self) -> dict[str, Any]:
        """JSON form with images as ``{"type": "image", "sha256": ..., "width", "height", "label"}``."""
        parts: list[dict[str, Any]] = []
        for p in self.content:
            if isinstance(p, TextPart):
                parts.append({"type": "text", "text": p.text})
            else:
                parts.append(
                    {"type": "image", "sha256": p.sha256, "width": p.width, "height": p.height, "label": p.label}
                )
        data: dict[str, Any] = {"role": self.role, "content": parts}
        if self.tool_calls:
            data["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], load_image: Any = None) -> Message:
        """Inverse of :meth:`to_dict`; ``load_image(sha256) -> bytes`` supplies image bytes."""
        parts: list[Part] = []
        for p in data["content"]:
            if p["type"] == "text":
                parts.append(TextPart(p["text"]))
            else:
                png = load_image(p["sha256"]) if load_image else b""
                parts.append(
                    ImagePart(png=png, width=p.get("width", 0), height=p.get("height", 0), label=p.get("label"))
                )
        return cls(
            role=data["role"],
            content=parts,
            tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls") or []],
            tool_call_id=data.get("tool_call_id"),
        )


@dataclass
class Usage:
    """Token counts of one model call; ``reasoning_tokens`` are part of ``completion_tokens`` where the provider says so."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass
class ModelReply:
    """What a backend returns: the text, any separate reasoning/thinking text, usage, cost in US dollars,
    latency in seconds, and the provider's raw response body (JSON-compatible) for the trajectory."""

    text: str
    reasoning: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    latency_s: float = 0.0
    raw: Any = None
    finish_reason: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
