"""Plane-to-plane homographies from four point correspondences (part of ``geom``).

Points are (x, y) pairs (image pixels or plane coordinates); a homography is a (3, 3) matrix acting on
homogeneous points, normalised so that its last entry is 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["homography_from_points"]


def homography_from_points(src: Any, dst: Any) -> np.ndarray:
    """(3, 3) homography mapping four (4, 2) points ``src`` exactly onto ``dst`` (float64 DLT)."""
    src, dst = np.asarray(src, dtype=np.float64), np.asarray(dst, dtype=np.float64)
    rows, rhs = [], []
    for (x, y), (u, v) in zip(src, dst, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs.extend([u, v])
    h = np.linalg.solve(np.array(rows), np.array(rhs))
    return np.append(h, 1.0).reshape(3, 3)
