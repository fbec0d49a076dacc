"""Detected or segmented object instances: what ``detect``, ``segment`` and ``track`` return.

Conventions: pixel coordinates are (x, y) with the origin at the top-left corner of the image, x to the
right and y down. A box is ``(x0, y0, x1, y1)`` in pixels of the original frame (x0 < x1, y0 < y1), measured
on pixel edges: a box around pixel columns 10..19 has x0 = 10, x1 = 20. Points such as ``centroid`` use
pixel centres (the OpenCV convention that backprojection with cx = (W - 1) / 2 expects): that region's
centroid has x = 14.5. A mask is an (H, W) bool array at the frame's full resolution (True = the object). ``frame_index`` is the
absolute index of the source frame (the video frame number), never a position in a list.

``Detections`` is a read-only sequence of ``Instance`` that prints as a table (one line per instance),
filters by score and label, and draws itself: ``show(dets)`` attaches the frame with the boxes, labels
and masks drawn over it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, overload

import numpy as np
from PIL import Image, ImageDraw

from spatialclaw.primitives.imaging import as_pil

__all__ = ["Detections", "Instance", "box_iou", "draw_instances", "mask_to_box"]

Box = tuple[float, float, float, float]

_PALETTE = [
    (230, 25, 75),
    (60, 180, 75),
    (0, 130, 200),
    (245, 130, 48),
    (145, 30, 180),
    (70, 240, 240),
    (240, 50, 230),
    (210, 245, 60),
    (250, 190, 212),
    (0, 128, 128),
    (170, 110, 40),
    (128, 0, 0),
]


@dataclass(frozen=True, eq=False)
class Instance:
    """One object in one frame.

    ``label``: the text the object was found with ("chair"); ``score``: confidence in [0, 1] (for SAM masks
    the predicted mask IoU); ``box``: (x0, y0, x1, y1) in pixels, origin top-left; ``mask``: (H, W) bool at
    the frame's resolution, or None for box-only detections; ``frame_index``: absolute source frame index
    (None when the input had no index).
    """

    label: str
    score: float
    box: Box
    mask: np.ndarray | None = field(default=None, repr=False)
    frame_index: int | None = None

    def __post_init__(self) -> None:
        x0, y0, x1, y1 = (float(v) for v in self.box)
        object.__setattr__(self, "box", (x0, y0, x1, y1))
        object.__setattr__(self, "score", float(self.score))
        if self.mask is not None:
            mask = np.asarray(self.mask)
            if mask.ndim != 2:
                raise ValueError(f"an instance mask must be (H, W); got shape {mask.shape}")
            object.__setattr__(self, "mask", mask.astype(bool, copy=False))

    @property
    def centroid(self) -> tuple[float, float]:
        """(x, y) in pixels (pixel-centre convention): the mean of the mask's pixels, or the centre of the box
        when there is no mask."""
        if self.mask is not None and self.mask.any():
            ys, xs = np.nonzero(self.mask)
            return float(xs.mean()), float(ys.mean())
        x, y = self.box_center
        return x - 0.5, y - 0.5

    @property
    def box_center(self) -> tuple[float, float]:
        """(x, y) midpoint of the box's edges, ((x0 + x1) / 2, (y0 + y1) / 2), in pixels."""
        x0, y0, x1, y1 = self.box
        return (x0 + x1) / 2.0, (y0 + y1) / 2.0

    @property
    def width(self) -> float:
        """Box width in pixels."""
        return self.box[2] - self.box[0]

    @property
    def height(self) -> float:
        """Box height in pixels."""
        return self.box[3] - self.box[1]

    @property
    def area(self) -> float:
        """Area in square pixels: the mask's pixel count, or the box area when there is no mask."""
        if self.mask is not None:
            return float(np.count_nonzero(self.mask))
        return max(self.width, 0.0) * max(self.height, 0.0)

    def iou(self, other: Instance) -> float:
        """Intersection over union with ``other``: of the masks when both have one, else of the boxes."""
        if self.mask is not None and other.mask is not None and self.mask.shape == other.mask.shape:
            union = np.count_nonzero(self.mask | other.mask)
            return float(np.count_nonzero(self.mask & other.mask)) / union if union else 0.0
        return box_iou(self.box, other.box)

    def with_mask(self, mask: np.ndarray, score: float | None = None) -> Instance:
        """A copy with ``mask`` ((H, W) bool) and the box recomputed from it (kept when the mask is empty)."""
        box = mask_to_box(mask)
        return replace(
            self, mask=mask, box=box if box is not None else self.box, score=self.score if score is None else score
        )

    def describe(self) -> str:
        """One line: label, score, box, centre and area, all in pixels."""
        x0, y0, x1, y1 = self.box
        cx, cy = self.centroid
        where = f" frame {self.frame_index}" if self.frame_index is not None else ""
        area = f"mask {int(self.area)} px" if self.mask is not None else f"box area {int(self.area)} px"
        return (
            f"{self.label!r} score {self.score:.2f}{where} box ({x0:.0f}, {y0:.0f}, {x1:.0f}, {y1:.0f}) "
            f"centre ({cx:.1f}, {cy:.1f}) {area}"
        )

    def __repr__(self) -> str:
        return f"Instance({self.describe()})"


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes in pixels."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def mask_to_box(mask: np.ndarray) -> Box | None:
    """The tight (x0, y0, x1, y1) pixel box around a mask's True pixels (x1, y1 exclusive), or None if empty."""
    mask = np.asarray(mask, dtype=bool)
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    return float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1)


class Detections(Sequence[Instance]):
    """The instances found in one frame, most confident first.

    Index, slice and iterate like a list (a slice is again ``Detections``). Arrays: ``boxes`` (N, 4)
    pixels, ``scores`` (N,), ``masks`` (N, H, W) bool or None, ``labels`` list of str. ``show(dets)`` draws
    them over their frame; ``dets.filter(min_score=0.5, label="chair")`` keeps a subset.
    """

    def __init__(self, instances: Iterable[Instance], frame: Any = None, backend: str = "") -> None:
        self._items = sorted(instances, key=lambda item: -item.score)
        self._frame = frame
        self.backend = backend

    @overload
    def __getitem__(self, index: int) -> Instance: ...
    @overload
    def __getitem__(self, index: slice) -> Detections: ...

    def __getitem__(self, index: int | slice) -> Instance | Detections:
        """``dets[i]`` is one ``Instance``; ``dets[a:b]`` is again ``Detections``."""
        if isinstance(index, slice):
            return Detections(self._items[index], self._frame, self.backend)
        if not -len(self._items) <= index < len(self._items):
            raise IndexError(
                f"instance {index} does not exist: there are {len(self._items)} (0..{len(self._items) - 1})"
            )
        return self._items[index]

    def __len__(self) -> int:
        """The number of instances."""
        return len(self._items)

    def __iter__(self) -> Iterator[Instance]:
        return iter(self._items)

    def __add__(self, other: Iterable[Instance]) -> Detections:
        return Detections([*self._items, *other], self._frame, self.backend)

    def __getstate__(self) -> dict[str, Any]:
        return {"items": self._items, "backend": self.backend}  # the frame is re-attached by the caller

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._items, self.backend, self._frame = state["items"], state["backend"], None

    def attach(self, frame: Any) -> Detections:
        """The same instances drawn over ``frame`` by ``.image`` / ``show``."""
        return Detections(self._items, frame, self.backend)

    @property
    def labels(self) -> list[str]:
        """The label of each instance, in order."""
        return [item.label for item in self._items]

    @property
    def scores(self) -> np.ndarray:
        """(N,) float confidences."""
        return np.array([item.score for item in self._items], dtype=np.float64)

    @property
    def boxes(self) -> np.ndarray:
        """(N, 4) float (x0, y0, x1, y1) in pixels, origin top-left."""
        return np.array([item.box for item in self._items], dtype=np.float64).reshape(-1, 4)

    @property
    def masks(self) -> np.ndarray | None:
        """(N, H, W) bool, or None when any instance has no mask."""
        if not self._items or any(item.mask is None for item in self._items):
            return None
        return np.stack([item.mask for item in self._items if item.mask is not None])

    def filter(self, min_score: float | None = None, label: str | Sequence[str] | None = None) -> Detections:
        """Instances with ``score >= min_score`` and (when given) one of the labels (case-insensitive)."""
        wanted = (
            None if label is None else {label.lower()} if isinstance(label, str) else {name.lower() for name in label}
        )
        kept = [
            item
            for item in self._items
            if (min_score is None or item.score >= min_score) and (wanted is None or item.label.lower() in wanted)
        ]
        return Detections(kept, self._frame, self.backend)

    def best(self, label: str | None = None) -> Instance:
        """The most confident instance (of ``label`` when given); raises if there is none."""
        pool = self.filter(label=label) if label is not None else self
        if not pool:
            found = sorted(set(self.labels))
            raise LookupError(
                f"no instance labelled {label!r}; found labels: {found or 'none'} "
                "(try another wording or a lower threshold)"
            )
        return pool[0]

    @property
    def image(self) -> Image.Image:
        """The frame with the instances drawn over it (boxes, labels, tinted masks), as a PIL image."""
        if self._frame is None:
            raise ValueError(
                "these detections have no frame attached; use draw_instances(frame, dets) or dets.attach(frame)"
            )
        return draw_instances(self._frame, self._items)

    @property
    def array(self) -> np.ndarray:
        """``image`` as an (H, W, 3) uint8 array (what ``show`` draws)."""
        return np.asarray(self.image)

    def __repr__(self) -> str:
        if not self._items:
            return f"Detections(0 instances{self._suffix()}; try other wording or a lower threshold)"
        lines = [
            f"Detections({len(self._items)} instances{self._suffix()}; boxes (x0, y0, x1, y1) in pixels, origin top-left):"
        ]
        lines += [f"  [{i}] {item.describe()}" for i, item in enumerate(self._items)]
        return "\n".join(lines)

    def _suffix(self) -> str:
        frame_indices = {item.frame_index for item in self._items} - {None}
        where = f" in frame {frame_indices.pop()}" if len(frame_indices) == 1 else ""
        via = f" via {self.backend}" if self.backend else ""
        return where + via


def draw_instances(frame: Any, instances: Iterable[Instance], alpha: float = 0.45) -> Image.Image:
    """Return a copy of ``frame`` (any image type) with each instance's mask tinted, box outlined and
    ``[i] label score`` written at the box's top-left corner; colours cycle per instance."""
    base = as_pil(frame).convert("RGB")
    canvas = np.asarray(base, dtype=np.float32).copy()
    items = list(instances)
    for i, item in enumerate(items):
        if item.mask is not None and item.mask.shape == canvas.shape[:2]:
            tint = np.array(_PALETTE[i % len(_PALETTE)], dtype=np.float32)
            canvas[item.mask] = (1 - alpha) * canvas[item.mask] + alpha * tint
    image = Image.fromarray(np.clip(canvas, 0, 255).astype(np.uint8))
    pen = ImageDraw.Draw(image)
    width = max(1, round(max(image.size) / 320))
    for i, item in enumerate(items):
        colour = _PALETTE[i % len(_PALETTE)]
        x0, y0, x1, y1 = item.box
        pen.rectangle([x0, y0, x1, y1], outline=colour, width=width)
        text = f"[{i}] {item.label} {item.score:.2f}"
        left, top, right, bottom = pen.textbbox((0, 0), text)
        ty = y0 - (bottom - top) - 4 if y0 - (bottom - top) - 4 >= 0 else y0 + 1
        pen.rectangle([x0, ty, x0 + (right - left) + 4, ty + (bottom - top) + 4], fill=colour)
        pen.text((x0 + 2, ty + 2 - top), text, fill=(255, 255, 255))
    return image
