"""``show()`` and ``answer()``: how a cell attaches images to its observation and submits its answer.

Both publish ordinary Jupyter ``display_data`` messages, so they work in the agent's kernel and in any
notebook. Images travel as PNG with their label and origin in the message metadata.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any, Literal

from spatialclaw.primitives.answers import AnswerError, normalise_answer
from spatialclaw.primitives.imaging import png_bytes
from spatialclaw.primitives.protocol import ANSWER_MIME, IMAGE_METADATA_KEY

__all__ = ["AnswerError", "Answerer", "publish_png", "show"]


def publish_png(png: bytes, width: int, height: int, label: str | None, origin: str) -> None:
    """Publish PNG bytes as a ``display_data`` message with the image's size, label and origin."""
    from IPython.display import publish_display_data

    text = f"<image{': ' + label if label else ''} {width}x{height}>"
    publish_display_data(  # type: ignore[no-untyped-call]
        data={"image/png": base64.b64encode(png).decode("ascii"), "text/plain": text},
        metadata={
            "image/png": {"width": width, "height": height},
            IMAGE_METADATA_KEY: {"label": label, "origin": origin},
        },
    )


def _flatten(items: Iterable[Any]) -> list[Any]:
    flat: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)) or (
            hasattr(item, "indices") and hasattr(item, "__getitem__") and not hasattr(item, "shape")
        ):
            flat.extend(_flatten(item))
        else:
            flat.append(item)
    return flat


MIN_SIDE_PX = 256
SHEET_CELL_PX = 256  # a contact sheet's cell side when min_side asks for less
"""``show`` upscales images whose longer side is shorter than this (whole-number factor, pixels kept sharp)."""


def _caption(image: Any, caption: str | None) -> str | None:
    if caption is None and hasattr(image, "index") and isinstance(image.index, int):
        return f"frame {image.index}"
    if caption is None and isinstance(getattr(image, "label", None), str):  # a Zoom made with label=
        return str(image.label)
    return caption


def _for_viewing(image: Any, contrast: str | None, min_side: int) -> tuple[Any, list[str]]:
    """A display copy (auto contrast, whole-number upscale) and what was done to it; originals untouched."""
    from spatialclaw.primitives.imaging import as_rgb_array

    array = as_rgb_array(image)
    done: list[str] = []
    if contrast == "auto":
        from spatialclaw.primitives.display.look import auto_contrast

        array = auto_contrast(array)
        done.append("auto contrast")
    height, width = array.shape[:2]
    longer = max(width, height)
    if min_side and 0 < longer < min_side:
        factor = -(-min_side // longer)  # ceil
        array = array.repeat(factor, axis=0).repeat(factor, axis=1)  # nearest neighbour: pixels stay sharp
        done.append(f"{factor}x upscale of {width}x{height}")
    return array, done


def show(
    *images: Any,
    label: str | list[str] | None = None,
    sheet: bool = False,
    contrast: Literal[None, "auto"] = None,
    min_side: int = MIN_SIDE_PX,
) -> None:
    """Attach images to the observation you see after this cell.

    Accepts frames, PIL images, NumPy arrays ((H, W) or (H, W, 3); float arrays such as depth maps are
    min-max normalised to grey), matplotlib figures, or lists of these. ``label`` is one caption for all
    images or one per image (frames are labelled with their absolute index by default).

    ``sheet=True`` tiles all the images into one labelled contact sheet (many frames at a glance, each
    labelled ``frame <absolute index>``; cells of ``max(256, min_side)`` pixels, so ``min_side=768`` keeps
    768 px zooms at full size). ``contrast="auto"`` shows dark or overexposed images with their
    brightness stretched (a viewing copy; the frames' pixels are untouched; the label says so). Images
    whose longer side is under ``min_side`` pixels (default 256) are upscaled by a whole-number factor
    without smoothing, and the label states the factor and the original size; ``min_side=0`` turns this
    off. Large images may be downscaled by the model provider, so crop (``zoom``) to look at details.
    """
    if contrast not in (None, "auto"):
        raise ValueError(
            f"contrast must be None or 'auto' (a stretch chosen from the image's own brightness; there is no "
            f"strength to set), got {contrast!r}; e.g. show(frames[0], contrast='auto')"
        )
    flat = _flatten(images)
    if not flat:
        raise ValueError("show() needs at least one image, e.g. show(frames[0])")
    labels: list[str | None]
    if isinstance(label, (list, tuple)):
        if len(label) != len(flat):
            raise ValueError(
                f"show() got {len(flat)} images but {len(label)} labels; give one label per image or a single label"
            )
        labels = [str(item) for item in label]
    elif sheet:
        labels = [None] * len(flat)
    else:
        labels = (
            [label] * len(flat) if label is None or len(flat) == 1 else [f"{label} [{i}]" for i in range(len(flat))]
        )
    captions = [_caption(image, caption) for image, caption in zip(flat, labels, strict=True)]
    if sheet:
        from spatialclaw.primitives.display.overlay import contact_sheet
        from spatialclaw.primitives.imaging import as_pil

        tiles = [_for_viewing(image, contrast, min_side)[0] for image in flat]
        names = [c if c is not None else f"image {i}" for i, c in enumerate(captions)]
        cell = max(SHEET_CELL_PX, int(min_side or 0))  # a tile is never shrunk below min_side
        grid = contact_sheet([as_pil(t) for t in tiles], labels=names, cell_px=cell)
        title = label if isinstance(label, str) else "contact sheet"
        png, width, height = png_bytes(grid)
        publish_png(
            png, width, height, f"{title}: " + ", ".join(names) + (" (auto contrast)" if contrast else ""), "show"
        )
        _close_figures(flat)
        return
    for image, caption in zip(flat, captions, strict=True):
        if not hasattr(image, "savefig"):
            viewed, done = _for_viewing(image, contrast, min_side)
            if done:
                caption = f"{caption or 'image'} [{'; '.join(done)}]"
            png, width, height = png_bytes(viewed)
        else:
            png, width, height = png_bytes(image)
        publish_png(png, width, height, caption, "show")
    _close_figures(flat)


def _close_figures(images: list[Any]) -> None:
    for image in images:
        if hasattr(image, "savefig"):
            import matplotlib.pyplot as plt

            plt.close(image)


class Answerer:
    """The ``answer`` function of one episode; validates against the question's choices and type
    (:func:`spatialclaw.primitives.answers.normalise_answer`, the same check the host repeats), or, with
    ``keep_text`` (reference scoring), records the value as given."""

    def __init__(
        self,
        choices: list[str] | None = None,
        answer_type: str | None = None,
        labels: list[str] | None = None,
        allowed: list[str] | None = None,
        keep_text: bool = False,
    ) -> None:
        self.keep_text = keep_text  # scored as the benchmark's reference scores it: record the text given
        self.choices = list(choices) if choices else None
        self.answer_type = answer_type or ("multiple_choice" if choices else "text")
        self.labels = list(labels) if labels else None
        self.allowed = list(allowed) if allowed else None
        self.value: Any = None
        self.submitted = False

    def normalise(self, value: Any) -> Any:
        return normalise_answer(value, self.choices, self.answer_type, self.labels, self.allowed, self.keep_text)

    def __call__(self, value: Any) -> None:
        """Submit the final answer and end the episode.

        Multiple choice: the option's letter (``"B"``, ``"(B)"``, ``"B. the chair"``) or its text;
        numbered options (``0. ...``, ``1. ...``): the option's number (``answer(2)``). Numbers: a float
        in the unit the question asks for (metres unless stated). Yes/no: ``"yes"`` or ``"no"``. Other
        questions: a short text (one of the listed values when the question lists them). A value that
        does not fit raises ``AnswerError`` saying what would; the recorded answer is the normalised value
        (``"(b)"`` -> ``"B"``). Exception: when the task says its benchmark is scored as its reference scores
        it (``meta["scoring"] == "reference"``), the value is recorded exactly as given (``"(b)"`` stays
        ``"(b)"``, an option's text is not turned into its letter, nothing is checked against the options)
        and the benchmark's own answer reader scores that text: give it in the form the question asks for.
        """
        from IPython.display import publish_display_data

        normalised = self.normalise(value)
        self.value, self.submitted = normalised, True
        publish_display_data(  # type: ignore[no-untyped-call]
            data={
                ANSWER_MIME: {"value": normalised, "raw": repr(value)[:500]},
                "text/plain": f"answer: {normalised!r}",
            },
        )
