"""A real photo as a camera turned further down and rolled would have seen it: the rotation's homography
applied to the photo, and the largest 4:3 box of valid pixels in the result (for the tilt tests' views)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from spatialclaw.primitives.geometry.tilt import rot_x, rot_z


@dataclass
class TurnedView:
    """``warped``: the photo seen by the turned camera; ``valid``: its pixels that came from the photo (eroded
    by 5 px); ``R``: old camera frame -> new camera frame; ``x0``, ``y0``: where the warped image's (0, 0)
    lies in the turned camera's pixels."""

    warped: np.ndarray
    valid: np.ndarray
    R: np.ndarray
    x0: float
    y0: float


def turned_view(rgb: np.ndarray, K: np.ndarray, down_deg: float, roll_deg: float) -> TurnedView:
    """``rgb`` (intrinsics ``K``) as the camera turned ``down_deg`` further down and rolled ``roll_deg``
    sees it."""
    R = rot_z(-roll_deg) @ rot_x(down_deg)  # old camera frame -> new camera frame
    H = K @ R @ np.linalg.inv(K)
    h, w = rgb.shape[:2]
    corners = H @ np.array([[0, w - 1, 0, w - 1], [0, 0, h - 1, h - 1], [1.0, 1.0, 1.0, 1.0]])
    corners = corners[:2] / corners[2]
    x0, y0 = np.floor(corners.min(axis=1))
    shift = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]])
    size = (int(np.ceil(corners[0].max() - x0)) + 1, int(np.ceil(corners[1].max() - y0)) + 1)
    warped = cv2.warpPerspective(rgb, shift @ H, size, flags=cv2.INTER_LINEAR)
    valid = cv2.warpPerspective(np.ones((h, w), np.uint8), shift @ H, size, flags=cv2.INTER_NEAREST)
    return TurnedView(warped, cv2.erode(valid, np.ones((5, 5), np.uint8)) > 0, R, x0, y0)


def largest_valid_box(valid: np.ndarray) -> tuple[int, int, int, int]:
    """The largest 4:3 box ``(a, b, c, d)`` (columns a..b, rows c..d, inclusive) of valid pixels around
    their centroid, by bisection on its half width."""
    ys, xs = np.nonzero(valid)
    cx, cy = xs.mean(), ys.mean()

    def box(half: float) -> tuple[int, int, int, int]:
        return int(cx - half), int(cx + half), int(cy - 0.75 * half), int(cy + 0.75 * half)

    size = (valid.shape[1], valid.shape[0])
    lo, hi = 1.0, float(max(size))
    for _ in range(30):
        a, b, c, d = box((lo + hi) / 2.0)
        ok = a >= 0 and c >= 0 and b < size[0] and d < size[1] and valid[c : d + 1, a : b + 1].all()
        lo, hi = ((lo + hi) / 2.0, hi) if ok else (lo, (lo + hi) / 2.0)
    return box(lo)
