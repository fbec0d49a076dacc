"""``show()`` and ``answer()``: how a cell attaches images to its observation and submits its answer.

Both publish ordinary Jupyter ``display_data`` messages, so they work in the agent's kernel and in any
notebook. Images travel as PNG with their label and origin in the message metadata.
"""

from __future__ import annotations

import base64
import math
import re
from typing import Any, Iterable

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


class AnswerError(ValueError):
    """The submitted answer does not fit the question's answer type; the message says what would."""


_LETTER = re.compile(r"^\s*\(?([A-Za-z])\)?[.:)]?\s*$")


class Answerer:
    """The ``answer`` function of one episode; validates against the question's choices and type."""

    def __init__(self, choices: list[str] | None = None, answer_type: str | None = None) -> None:
        self.choices = list(choices) if choices else None
        self.answer_type = answer_type or ("multiple_choice" if choices else "text")
        self.value: Any = None
        self.submitted = False

    def normalise(self, value: Any) -> Any:
        if self.choices:
            return self._choice(value)
        if self.answer_type == "number":
            return self._number(value)
        if self.answer_type == "yes_no":
            text = str(value).strip().lower()
            if text in {"yes", "y", "true"} or value is True:
                return "yes"
            if text in {"no", "n", "false"} or value is False:
                return "no"
            raise AnswerError(f"this question needs 'yes' or 'no'; got {value!r}")
        if hasattr(value, "item") and getattr(value, "size", 1) == 1:
            value = value.item()
        if isinstance(value, (str, int, float, bool)) or value is None:
            return value
        return str(value)

    def _choice(self, value: Any) -> str:
        assert self.choices is not None
        letters = [chr(ord("A") + i) for i in range(len(self.choices))]
        options = "; ".join(f"{l}. {c}" for l, c in zip(letters, self.choices))
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(self.choices):
            raise AnswerError(f"answer with the option's letter, not a position: the options are {options}")
        text = str(value)
        match = _LETTER.match(text)
        if match and match.group(1).upper() in letters:
            return match.group(1).upper()
        for letter, choice in zip(letters, self.choices):
            if text.strip().lower() == str(choice).strip().lower():
                return letter
        raise AnswerError(f"{value!r} is not one of the options. Answer with a letter: {options}")

    @staticmethod
    def _number(value: Any) -> float:
        if hasattr(value, "item") and getattr(value, "size", 1) == 1:
            value = value.item()
        if isinstance(value, bool):
            raise AnswerError("this question needs a number; got a boolean")
        if isinstance(value, (int, float)):
            number = float(value)
        else:
            match = re.search(r"-?\d+(?:\.\d+)?(?:[eE]-?\d+)?", str(value).replace(",", ""))
            if not match:
                raise AnswerError(f"this question needs a number; got {value!r}. Pass a float, e.g. answer(1.25)")
            number = float(match.group())
        if not math.isfinite(number):
            raise AnswerError(f"the answer must be a finite number; got {number}")
        return number

    def __call__(self, value: Any) -> None:
        """Submit the final answer and end the episode.

        Multiple choice: the option's letter (``"B"``) or its exact text. Numbers: a float in the unit
        the question asks for (metres unless stated). Other questions: a short text.
        """
        from IPython.display import publish_display_data

        normalised = self.normalise(value)
        self.value, self.submitted = normalised, True
        publish_display_data(
            data={ANSWER_MIME: {"value": normalised, "raw": repr(value)[:500]}, "text/plain": f"answer: {normalised!r}"},
        )
