"""``show()`` and ``answer()``: how a cell attaches images to its observation and submits its answer.

Both publish ordinary Jupyter ``display_data`` messages, so they work in the agent's kernel and in any
notebook. Images travel as PNG with their label and origin in the message metadata.
"""

from __future__ import annotations

import base64
from typing import Any, Iterable

from spatialclaw.primitives.answers import AnswerError, normalise_answer
from spatialclaw.primitives.imaging import png_bytes
from spatialclaw.primitives.protocol import ANSWER_MIME, IMAGE_METADATA_KEY

__all__ = ["AnswerError", "Answerer", "publish_png", "show"]


def publish_png(png: bytes, width: int, height: int, label: str | None, origin: str) -> None:
    """Publish PNG bytes as a ``display_data`` message with the image's size, label and origin."""
    from IPython.display import publish_display_data

    text = f"<image{': ' + label if label else ''} {width}x{height}>"
    publish_display_data(
        data={"image/png": base64.b64encode(png).decode("ascii"), "text/plain": text},
        metadata={"image/png": {"width": width, "height": height}, IMAGE_METADATA_KEY: {"label": label, "origin": origin}},
    )


def _flatten(items: Iterable[Any]) -> list[Any]:
    flat: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)) or (hasattr(item, "indices") and hasattr(item, "__getitem__") and not hasattr(item, "shape")):
            flat.extend(_flatten(item))
        else:
            flat.append(item)
    return flat


def show(*images: Any, label: str | list[str] | None = None) -> None:
    """Attach images to the observation you see after this cell.

    Accepts frames, PIL images, NumPy arrays ((H, W) or (H, W, 3); float arrays such as depth maps are
    min-max normalised to grey), matplotlib figures, or lists of these. ``label`` is one caption for all
    images or one per image. Images keep their pixel size; large images may be downscaled by the model
    provider, so crop (``zoom``) to look at details.
    """
    flat = _flatten(images)
    if not flat:
        raise ValueError("show() needs at least one image, e.g. show(frames[0])")
    if isinstance(label, (list, tuple)):
        if len(label) != len(flat):
            raise ValueError(f"show() got {len(flat)} images but {len(label)} labels; give one label per image or a single label")
        labels = [str(l) for l in label]
    else:
        labels = [label] * len(flat) if label is None or len(flat) == 1 else [f"{label} [{i}]" for i in range(len(flat))]
    for image, caption in zip(flat, labels):
        if caption is None and hasattr(image, "index") and isinstance(getattr(image, "index"), int):
            caption = f"frame {image.index}"
        png, width, height = png_bytes(image)
        publish_png(png, width, height, caption, "show")
        if hasattr(image, "savefig"):
            import matplotlib.pyplot as plt

            plt.close(image)


class Answerer:
    """The ``answer`` function of one episode; validates against the question's choices and type
    (:func:`spatialclaw.primitives.answers.normalise_answer`, the same check the host repeats)."""

    def __init__(self, choices: list[str] | None = None, answer_type: str | None = None) -> None:
        self.choices = list(choices) if choices else None
        self.answer_type = answer_type or ("multiple_choice" if choices else "text")
        self.value: Any = None
        self.submitted = False

    def normalise(self, value: Any) -> Any:
        return normalise_answer(value, self.choices, self.answer_type)

    def __call__(self, value: Any) -> None:
        """Submit the final answer and end the episode.

        Multiple choice: the option's letter (``"B"``, ``"(B)"``, ``"B. the chair"``) or its text.
        Numbers: a float in the unit the question asks for (metres unless stated). Yes/no: ``"yes"`` or
        ``"no"``. Other questions: a short text. A value that does not fit raises ``AnswerError`` saying
        what would.
        """
        from IPython.display import publish_display_data

        normalised = self.normalise(value)
        self.value, self.submitted = normalised, True
        publish_display_data(
            data={ANSWER_MIME: {"value": normalised, "raw": repr(value)[:500]}, "text/plain": f"answer: {normalised!r}"},
        )
