"""The paper's frame geometry: every frame centre-cropped to the nearest of a few aspects, then resized.

The paper's reference resizes each image it shows the model, and each image its kernel holds, to the grid its
reconstruction backend prefers: the aspect ``w:h`` nearest the image's (by ``|w/h - k/m|``) among
:data:`PAPER_ASPECTS`, the image centre-cropped to exactly that aspect, then resized with LANCZOS (up or
down) to ``(k*s, m*s)`` where ``s = long_side // max(k, m)``. With ``long_side=768``: 640x480 -> 768x576,
300x200 -> 768x512, 500x500 -> 768x768, 1000x500 -> 765x425 (cropped to 9:5), 640x427 -> 768x512,
1296x968 -> 768x576, 720x1280 -> 512x768.

:class:`AspectFitSource` applies the rule to another frame source lazily (sizes known without decoding),
so a kernel's ``frames`` can hold the paper's copies of a video's frames without writing them to disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image

from spatialclaw.primitives.frames.sources import decoded_cache, file_key

__all__ = ["PAPER_ASPECTS", "AspectFitSource", "aspect_fit", "aspect_fit_box"]

#: (k, m) for the aspects k:m the paper's frames are cropped to (width:height).
PAPER_ASPECTS: tuple[tuple[int, int], ...] = ((1, 1), (4, 3), (3, 2), (9, 5), (16, 9), (2, 3))


def aspect_fit_box(width: int, height: int, long_side: int) -> tuple[tuple[int, int, int, int], tuple[int, int]]:
    """The centre crop ``(left, top, right, bottom)`` and the output size ``(w, h)`` for a ``width`` x ``height``
    image under the paper's rule at ``long_side`` (see the module docstring)."""
    if width < 1 or height < 1 or long_side < 1:
        raise ValueError(f"aspect fit needs positive sizes; got {width}x{height}, long side {long_side}")
    ratio = width / height
    k, m = min(PAPER_ASPECTS, key=lambda aspect: abs(aspect[0] / aspect[1] - ratio))
    if ratio > k / m:  # too wide: keep the height
        crop_w, crop_h = min(width, max(1, round(height * k / m))), height
    else:
        crop_w, crop_h = width, min(height, max(1, round(width * m / k)))
    left, top = (width - crop_w) // 2, (height - crop_h) // 2
    scale = max(1, long_side // max(k, m))
    return (left, top, left + crop_w, top + crop_h), (k * scale, m * scale)


def aspect_fit(image: Image.Image, long_side: int = 768) -> Image.Image:
    """``image`` centre-cropped to the nearest paper aspect and LANCZOS-resized to its grid at ``long_side``."""
    box, size = aspect_fit_box(image.width, image.height, long_side)
    cropped = image.crop(box) if box != (0, 0, image.width, image.height) else image
    return cropped.resize(size, Image.Resampling.LANCZOS) if cropped.size != size else cropped.copy()


class _Source(Protocol):
    display_path: str | None
    width: int
    height: int

    def rgb(self, index: int) -> np.ndarray: ...

    def time(self, index: int) -> float | None: ...


class AspectFitSource:
    """Another source's frames under :func:`aspect_fit` (decoded and resized on first use, cached)."""

    def __init__(self, inner: Any, long_side: int) -> None:
        self.inner: _Source = inner
        self.long_side = int(long_side)
        self.display_path = inner.display_path
        self._box, (self.width, self.height) = aspect_fit_box(inner.width, inner.height, self.long_side)

    def rgb(self, index: int) -> np.ndarray:
        path = getattr(self.inner, "path", None)
        if path is None:  # pixels in memory: nothing to key a shared cache on
            return self._fit(index)
        key = ("aspect_fit", *file_key(Path(path)), index, self.long_side)
        cached = decoded_cache.get(key)
        if cached is None:
            cached = self._fit(index)
            decoded_cache.put(key, cached)
        return cached

    def _fit(self, index: int) -> np.ndarray:
        image = aspect_fit(Image.fromarray(self.inner.rgb(index), mode="RGB"), self.long_side)
        return np.asarray(image, dtype=np.uint8).copy()

    def time(self, index: int) -> float | None:
        return self.inner.time(index)
