"""Split a colour region that swallowed a marker dot: the more colourful compact cores inside a large irregular region.

Used by ``find_color(..., shape="dot")``: a saturated dot drawn on a background of a similar hue (a blue
dot on blue sky, a green dot on foliage) joins the background in the colour mask; re-thresholding the
region's Lab chroma at its own Otsu level separates the dot (much more colourful) from the background.
Coordinates are pixels of the full image.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["dot_cores"]

_SPLIT_BELOW_COMPACTNESS = 0.6
_SPLIT_ABOVE_AREAS = 16  # regions this many times min_area are searched whatever their shape (a sky)


def dot_cores(
    mask: np.ndarray, chroma: np.ndarray, min_area: int, compactness_of: Callable[[np.ndarray], float]
) -> np.ndarray:
    """A mask of the colourful cores inside the large irregular regions of ``mask`` ((H, W) bool), to be
    searched for dots in addition to ``mask`` itself: for each 8-connected region whose disc overlap
    (``compactness_of(region_mask) -> 0..1``) is below 0.6 or whose area is 16 x ``min_area`` or more,
    the pixels whose chroma ((H, W) Lab chroma) is above the region's Otsu threshold and at least 1.5 x
    its median chroma."""
    import cv2

    from spatialclaw.primitives.display.color_mask import otsu

    cores = np.zeros_like(mask)
    count, components, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    for i in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[i])
        if area < 4 * min_area:
            continue
        local = components[y : y + h, x : x + w] == i
        if area < _SPLIT_ABOVE_AREAS * min_area and compactness_of(local) >= _SPLIT_BELOW_COMPACTNESS:
            continue
        values = chroma[y : y + h, x : x + w][local]
        level = max(otsu(values), 1.5 * float(np.median(values)))
        cores[y : y + h, x : x + w] |= local & (chroma[y : y + h, x : x + w] >= level)
    return cores
