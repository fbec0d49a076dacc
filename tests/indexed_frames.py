"""Stand-ins for the kernel's frames, for tests that call a perception tool outside a kernel."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class IndexedFrame:
    """The attributes of a kernel ``Frame`` that the tools read: pixels and the absolute frame index."""

    array: np.ndarray
    index: int


def noise_frame(seed: int, height: int, width: int, index: int, high: int = 255) -> IndexedFrame:
    """An RGB frame of uniform random pixels below ``high`` (``default_rng(seed)``) at absolute ``index``."""
    return IndexedFrame(np.random.default_rng(seed).integers(0, high, (height, width, 3), dtype=np.uint8), index)
