"""A colour search limited to a box of the frame (``find_color(..., box=...)``): the box checked against the
frame's size, and how much of it shows the colour, with the range the colour threshold leaves.

Boxes are (x0, y0, x1, y1) pixels of the full frame, origin top-left: columns x0..x1-1 and rows y0..y1-1 (as
``Blob.box``); fractional edges are rounded outwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["BoxShare", "box_share", "frame_box"]


def frame_box(box: Any, width: int, height: int) -> tuple[tuple[int, int, int, int], bool]:
    """((x0, y0, x1, y1) integer pixels inside the frame, whether it was clipped) of ``box`` (or of anything
    with ``.box``: a blob, a detection) in a ``width`` x ``height`` frame.

    Raises:
        ValueError: the box is not four finite numbers, is empty (x1 <= x0 or y1 <= y0), or lies wholly
            outside the frame; the message names the frame's size.
    """
    raw = getattr(box, "box", box)
    try:
        values = np.asarray(raw, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        values = np.empty(0)
    if values.shape != (4,) or not np.isfinite(values).all():
        raise ValueError(f"box must be (x0, y0, x1, y1) pixels of the {width}x{height} frame, got {box!r}")
    x0, y0, x1, y1 = (float(v) for v in values)
    if not (x1 > x0 and y1 > y0):
        raise ValueError(
            f"box {tuple(values.round(1).tolist())} is empty: it needs x1 > x0 and y1 > y0 (pixels, "
            f"x0..x1 columns and y0..y1 rows of the {width}x{height} frame)"
        )
    a, b = max(0, int(np.floor(x0))), max(0, int(np.floor(y0)))
    c, d = min(width, int(np.ceil(x1))), min(height, int(np.ceil(y1)))
    if c <= a or d <= b:
        raise ValueError(
            f"box {tuple(values.round(1).tolist())} lies outside the frame, which is {width}x{height} pixels "
            f"(x 0..{width}, y 0..{height})"
        )
    return (a, b, c, d), (a, b, c, d) != (int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1)))


@dataclass(frozen=True)
class BoxShare:
    """How much of a box shows the colour.

    Attributes:
        box: (x0, y0, x1, y1) pixels searched (full-frame, clipped to it). clipped: whether the box asked
            for reached outside the frame. pixels: the box's pixel count. count: pixels of the colour in it.
        share: count / pixels (0..1). share_low / share_high: the share with a 33% stricter / 25% looser
            colour threshold (chroma floor; for white, grey and black the mask shrunk / grown by one pixel):
            the range to quote, since where a pale colour ends is a threshold's choice.
    """

    box: tuple[int, int, int, int]
    clipped: bool
    pixels: int
    count: int
    share: float
    share_low: float
    share_high: float

    @property
    def text(self) -> str:
        """E.g. "in box (40, 30, 120, 90) (4800 px): 612 px green, 12.8% of the box (10.1-15.0% as the threshold varies)" """
        clip = ", clipped to the frame" if self.clipped else ""
        return (
            f"in box {self.box} ({self.pixels} px{clip}): {self.count} px of the colour, {100 * self.share:.1f}% of "
            f"the box ({100 * self.share_low:.1f}-{100 * self.share_high:.1f}% as the threshold varies)"
        )

    def __repr__(self) -> str:
        return self.text


def box_share(
    mask: np.ndarray, stricter: np.ndarray, looser: np.ndarray, box: tuple[int, int, int, int], clipped: bool
) -> BoxShare:
    """The ``BoxShare`` of a colour ``mask`` over the box's crop, with the ``stricter`` and ``looser`` masks
    (same crop) bounding its range."""
    pixels = int(mask.size)
    count = int(mask.sum())
    low, high = float(stricter.sum()) / pixels, float(looser.sum()) / pixels
    share = count / pixels
    return BoxShare(box, clipped, pixels, count, share, min(low, share), max(high, share))
