"""Checking and normalising the inputs of ``detect``, ``segment`` and ``track`` (frames, text, boxes, points,
masks), and the one-line reason shown when a learned backend is unavailable and a fallback is used.

Every check raises ``ValueError`` with a message that names the problem and what to pass instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from spatialclaw.primitives.imaging import as_rgb_array

__all__ = [
    "as_box",
    "as_boxes",
    "as_mask",
    "as_points",
    "frame_array",
    "frame_index",
    "model_name",
    "text_labels",
    "unavailable_reason",
]


def frame_array(frame: Any) -> np.ndarray:
    """(H, W, 3) uint8 RGB pixels of a ``Frame``, PIL image or array; a clear error for anything else."""
    if (
        (isinstance(frame, (Sequence, set)) and not isinstance(frame, (str, bytes)))
        or hasattr(frame, "indices")
        or hasattr(frame, "frame_indices")
    ):
        raise ValueError(
            "expected ONE frame (e.g. frames[0]), got a sequence of frames; call once per frame "
            "or use track(frames, ...) for a video"
        )
    try:
        return as_rgb_array(frame)
    except Exception as error:
        raise ValueError(
            f"cannot read {type(frame).__name__} as an image: {error}; pass a Frame "
            "(frames[i]), a PIL image or an (H, W, 3) uint8 array"
        ) from error


def frame_index(frame: Any, default: int | None = None) -> int | None:
    """The absolute frame index of a ``Frame`` (``.index``), else ``default``."""
    index = getattr(frame, "index", None)
    return int(index) if isinstance(index, (int, np.integer)) else default


def text_labels(text: str | Sequence[str]) -> list[str]:
    """A non-empty list of stripped, non-empty labels from one label or a list of labels."""
    if isinstance(text, str):
        items = [text]
    elif isinstance(text, Sequence) and all(isinstance(item, str) for item in text):
        items = list(text)
    else:
        raise ValueError(
            f"text must be a label or a list of labels (str), got {type(text).__name__}; "
            "e.g. detect(frames[0], 'chair') or detect(frames[0], ['chair', 'table'])"
        )
    labels = [item.strip().rstrip(".").strip() for item in items]
    if not labels or any(not label for label in labels):
        raise ValueError("text is empty; name what to look for, e.g. 'red chair' or ['chair', 'table']")
    return labels


def as_box(box: Any, width: int, height: int) -> tuple[float, float, float, float]:
    """One (x0, y0, x1, y1) pixel box, checked to be ordered and to overlap the (width x height) image."""
    if hasattr(box, "box") and not isinstance(box, np.ndarray):
        box = box.box
    values = np.asarray(box, dtype=np.float64).reshape(-1)
    if values.size != 4 or not np.isfinite(values).all():
        raise ValueError(f"a box is 4 finite numbers (x0, y0, x1, y1) in pixels; got {box!r}")
    x0, y0, x1, y1 = values
    if x1 <= x0 or y1 <= y0:
        raise ValueError(
            f"box {tuple(values)} is empty or reversed; give (x0, y0, x1, y1) with x0 < x1 and y0 < y1 "
            "(pixels, origin top-left)"
        )
    if x1 <= 0 or y1 <= 0 or x0 >= width or y0 >= height:
        raise ValueError(f"box {tuple(values)} lies outside the {width}x{height} image (pixels, origin top-left)")
    return float(x0), float(y0), float(x1), float(y1)


def as_boxes(boxes: Any, width: int, height: int) -> list[tuple[float, float, float, float]]:
    """One box, an (N, 4) array, a list of boxes or ``Detections`` as a list of checked pixel boxes."""
    if hasattr(boxes, "box") and not isinstance(boxes, np.ndarray):
        return [as_box(boxes, width, height)]
    items = list(boxes) if not isinstance(boxes, np.ndarray) else boxes
    if len(items) and not hasattr(items[0], "box") and np.ndim(items[0]) == 0:
        return [as_box(items, width, height)]
    if not len(items):
        raise ValueError("no boxes given; pass (x0, y0, x1, y1) or a list of boxes in pixels")
    return [as_box(item, width, height) for item in items]


def as_points(points: Any, width: int, height: int) -> np.ndarray:
    """(K, 2) float (x, y) pixel points inside the (width x height) image, from one point or a list."""
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] == 0 or not np.isfinite(array).all():
        raise ValueError(f"points must be (x, y) or a list of (x, y) pixel coordinates; got shape {np.shape(points)}")
    outside = (array[:, 0] < 0) | (array[:, 0] >= width) | (array[:, 1] < 0) | (array[:, 1] >= height)
    if outside.any():
        raise ValueError(
            f"points {array[outside].tolist()} lie outside the {width}x{height} image "
            "(x in [0, width), y in [0, height), origin top-left)"
        )
    return array


def as_mask(mask: Any, height: int, width: int) -> np.ndarray:
    """An (H, W) bool mask matching the frame size (an ``Instance`` gives its mask)."""
    if hasattr(mask, "mask") and not isinstance(mask, np.ndarray):
        if mask.mask is None:
            raise ValueError(
                "this instance has no mask (a box-only detection); pass boxes= instead or segment it first"
            )
        mask = mask.mask
    array = np.asarray(mask)
    if array.ndim != 2:
        raise ValueError(f"a mask must be (H, W); got shape {array.shape}")
    if array.shape != (height, width):
        raise ValueError(f"mask shape {array.shape} does not match the frame's (H, W) = ({height}, {width})")
    array = array.astype(bool)
    if not array.any():
        raise ValueError("the mask is empty (no True pixels); nothing to segment or track")
    return array


def unavailable_reason(error: Exception) -> str:
    """A short reason why a learned backend could not load (missing weights or a missing package)."""
    model_id = getattr(error, "model_id", None)
    if model_id is not None:
        return f"no weights for {model_id!r}"
    text = str(error)
    if "torchvision" in text:
        return "its transformers processor needs torchvision, which is not installed"
    return text.split(". ")[0]


def model_name(model_id: str) -> str:
    """The short name printed with results: the last part of a hub id or folder ("grounding-dino-tiny")."""
    return os.path.basename(model_id.rstrip("/")) or model_id
