"""The agent's memory and how it becomes the messages of one request.

The memory is a list of plain records (:class:`TaskRecord`, :class:`PlanRecord`, :class:`StepRecord`);
:func:`build_messages` rebuilds the conversation from it for every request, deterministically, so that
training data exported from a trajectory matches what the model saw at inference. Two rules keep
requests small:

- *error condensation*: a failed step older than the latest one is shown as its code up to the failing
  line plus the error line (the lines after it never ran, the traceback is no longer useful);
- *image budget*: at most ``max_images`` images (and optionally ``max_image_bytes`` of PNG) per request;
  the oldest beyond it are replaced by a text placeholder naming the image, so the model knows
  something was there.

An observation's images larger than ``max_side`` are decoded and shrunk on the host; together they may hold at
most :data:`MAX_SHRUNK_PIXELS` pixels (read from each PNG's header first), so a cell showing sixteen 7000x7000
images cannot hold the host's CPU for tens of seconds: the images past it become a text placeholder naming the
limit.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from spatialclaw.agent.prompting import render
from spatialclaw.chat import ImagePart, Message, Part, TextPart
from spatialclaw.kernel.cell import CellResult

__all__ = [
    "PlanRecord",
    "StepRecord",
    "TaskRecord",
    "apply_image_budget",
    "build_messages",
    "condensed_code",
    "fit_image",
    "observation_parts",
]

MAX_SHRUNK_PIXELS = 32_000_000
"""The most pixels the host decodes to shrink one observation's images (sixteen 1920x1080 frames; about a
second of host CPU). Images within ``max_side`` are passed on as they are and do not count."""


@dataclass
class TaskRecord:
    """The first user turn: the task text and the preview images of the frames."""

    text: str
    images: list[ImagePart] = field(default_factory=list)


@dataclass
class PlanRecord:
    """The answer of the optional planning call."""

    text: str


@dataclass
class StepRecord:
    """One step: the model's reply (reasoning sections removed) and what came back.

    ``result`` is None for a format error (no code found); ``observation`` is the rendered text and
    ``images`` the images shown to the model (after resizing).
    """

    step: int
    reply: str
    code: str | None
    result: CellResult | None
    observation: str
    images: list[ImagePart] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.error is not None and self.result.status == "error"


def fit_image(png: bytes, width: int, height: int, max_side: int, label: str | None = None) -> ImagePart:
    """An :class:`ImagePart` no larger than ``max_side`` pixels on its longer side (aspect kept)."""
    if max(width, height) <= max_side or max_side <= 0:
        return ImagePart(png=png, width=width, height=height, label=label)
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        scale = max_side / max(image.size)
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        return ImagePart.from_pil(image.convert("RGB").resize(size, Image.Resampling.LANCZOS), label=label)


def observation_parts(
    step: int, max_steps: int, result: CellResult, chars: int, max_side: int, notes: list[str]
) -> tuple[str, list[ImagePart]]:
    """The observation text and images of one executed cell."""
    output = result.to_text(chars)
    images, omitted = _shrunk_images(result, max_side)
    if notes or omitted:
        output += "\n" + "\n".join(f"[note] {n}" for n in [*notes, *omitted])
    text = render("observation.md", step=step, max_steps=max_steps, output=output).rstrip("\n")
    return text, images


def _shrunk_images(result: CellResult, max_side: int) -> tuple[list[ImagePart], list[str]]:
    """The cell's images fitted to ``max_side``, and a note for each one left out because shrinking it would
    decode more than :data:`MAX_SHRUNK_PIXELS` pixels for this observation (sizes read from the PNG headers)."""
    from spatialclaw.primitives.imaging import png_size

    images: list[ImagePart] = []
    omitted: list[str] = []
    left = MAX_SHRUNK_PIXELS
    for image in result.images:
        width, height = png_size(image.png)
        label = image.label or image.origin
        if max_side > 0 and max(width, height) > max_side:
            if width * height > left:
                omitted.append(
                    f"image {label!r} ({width}x{height}) not shown: this step's images to shrink are over "
                    f"{MAX_SHRUNK_PIXELS:,} pixels in all; show fewer or smaller images (crop or resize them first)"
                )
                continue
            left -= width * height
        images.append(fit_image(image.png, width, height, max_side, label))
    return images, omitted


def condensed_code(code: str, line: int) -> str:
    """``code`` up to and including ``line`` (1-based), with a comment saying the rest never ran."""
    lines = code.splitlines()
    kept = "\n".join(lines[:line])
    if line < len(lines):
        kept += f"\n# ... {len(lines) - line} more line(s) not run: the cell failed at line {line}"
    return kept


def _condensed(record: StepRecord) -> tuple[str, str]:
    assert record.result is not None and record.result.error is not None and record.code is not None
    error = record.result.error
    line = error.line or len(record.code.splitlines())
    reply = f"```python\n{condensed_code(record.code, line)}\n```"
    where = f" (cell line {error.line})" if error.line else ""
    observation = f"Step {record.step}: [error] {error.type}: {error.message.splitlines()[0] if error.message else ''}{where} [condensed]"
    return reply, observation


def build_messages(
    system: str,
    memory: list[TaskRecord | PlanRecord | StepRecord],
    *,
    max_images: int,
    max_image_bytes: int | None = None,
    condense_errors: bool = True,
    final_note: str | None = None,
) -> list[Message]:
    """The request for the next call: system, task, plan, steps, then ``final_note`` appended to the
    last user turn (the last-step warning or the fallback question), within the image budget."""
    messages = [Message.text("system", system)]
    steps = [r for r in memory if isinstance(r, StepRecord)]
    latest = steps[-1].step if steps else None
    for record in memory:
        if isinstance(record, TaskRecord):
            messages.append(Message("user", [TextPart(record.text), *record.images]))
        elif isinstance(record, PlanRecord):
            messages.append(Message.text("assistant", record.text))
            messages.append(Message.text("user", render("plan_followup.md").strip()))
        else:
            if condense_errors and record.failed and record.step != latest:
                reply, observation = _condensed(record)
                messages.append(Message.text("assistant", reply))
                messages.append(Message.text("user", observation))
            else:
                messages.append(Message.text("assistant", record.reply or "(empty reply)"))
                messages.append(Message("user", [TextPart(record.observation), *record.images]))
    if final_note:
        last = messages[-1]
        messages[-1] = Message("user", [*last.content, TextPart("\n" + final_note.strip())])
    return apply_image_budget(messages, max_images, max_image_bytes)


def apply_image_budget(messages: list[Message], max_images: int, max_bytes: int | None = None) -> list[Message]:
    """Keep the newest images while there are at most ``max_images`` of them and their PNG bytes total
    at most ``max_bytes``; replace every older one by a text placeholder (once an image is dropped, all
    older ones are too, so the rule is simple to state and to reproduce). Returns new messages (the
    inputs are not modified)."""
    images = [p for m in messages for p in m.content if isinstance(p, ImagePart)]
    kept, used = 0, 0
    for image in reversed(images):
        if kept == max_images or (max_bytes is not None and used + len(image.png) > max_bytes):
            break
        kept, used = kept + 1, used + len(image.png)
    drop = len(images) - kept
    if drop == 0:
        return messages
    limit = f"{max_images} images" + (f" / {max_bytes / 1e6:g} MB" if max_bytes is not None else "")
    out: list[Message] = []
    for message in messages:
        parts: list[Part] = []
        for part in message.content:
            if isinstance(part, ImagePart) and drop > 0:
                drop -= 1
                name = part.label or "image"
                parts.append(
                    TextPart(f"[image omitted (request limit of {limit}): {name}, {part.width}x{part.height}]")
                )
            else:
                parts.append(part)
        out.append(Message(message.role, parts))
    return out
