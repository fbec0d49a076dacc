"""Judge how far the vertical-edge evidence behind ``camera_tilt`` pins the pitch down (part of ``geom``).

Three things make a vanishing-point pitch untrustworthy and are checked here: edges along a constant
border (the black wedge a rotated or letterboxed image leaves, whose sides converge like real verticals),
a second, separated pitch that nearly as much off-centre edge length supports, and an unknown focal
length, whose error grows with the tilt. Angles are degrees; pixels are (x, y), y down.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RIVAL_FRACTION", "RIVAL_SEPARATION_DEG", "border_segments", "intrinsics_sigma_deg", "rival_pitch"]

RIVAL_FRACTION = 0.8
"""A second pitch peak with at least this share of the best peak's off-centre edge support is a rival."""
RIVAL_SEPARATION_DEG = 8.0
"""Peaks nearer than this (degrees) are one peak."""
_HFOV_REL_SIGMA = 0.17  # 60 +- 10 deg of field of view: about 17 % in focal length


def border_segments(gray: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """(N,) bool: line segments (N, 4) of x0, y0, x1, y1 pixels that run along a flat border region of
    ``gray`` ((H, W) uint8): a region of one exact grey level (within 2 levels) that touches the image's
    edge, such as the black wedges a rotated photo leaves. Their lines are the border's, not the room's."""
    import cv2

    height, width = gray.shape
    flat = np.zeros((height + 2, width + 2), np.uint8)
    for y, x in ((0, 0), (0, width - 1), (height - 1, 0), (height - 1, width - 1)):
        if flat[y + 1, x + 1] == 0 and int(gray[y, x]) <= 8:  # a dark corner: flood its flat region
            cv2.floodFill(
                gray.copy(), flat, (x, y), 0, loDiff=2, upDiff=2, flags=4 | cv2.FLOODFILL_MASK_ONLY | 255 << 8
            )
    region = flat[1:-1, 1:-1] > 0
    if region.sum() < 0.002 * height * width:
        return np.zeros(len(segments), bool)
    near = cv2.dilate(region.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    t = np.linspace(0.0, 1.0, 9)
    xs = np.clip(np.rint(segments[:, [0]] + t * (segments[:, [2]] - segments[:, [0]])), 0, width - 1).astype(int)
    ys = np.clip(np.rint(segments[:, [1]] + t * (segments[:, [3]] - segments[:, [1]])), 0, height - 1).astype(int)
    return np.asarray(near[ys, xs].mean(axis=1) > 0.5)


def rival_pitch(down_deg: np.ndarray, profile: np.ndarray, best: int) -> float | None:
    """The downward tilt (degrees) of the strongest peak of ``profile`` (edge support per downward tilt
    ``down_deg``) at least ``RIVAL_SEPARATION_DEG`` from the ``best`` index with at least
    ``RIVAL_FRACTION`` of its support, or None when the best peak stands alone."""
    if profile[best] <= 0:
        return None
    inner = (profile[1:-1] >= profile[:-2]) & (profile[1:-1] >= profile[2:])
    peaks = np.flatnonzero(np.r_[profile[0] > profile[1], inner, profile[-1] > profile[-2]])
    far = peaks[np.abs(down_deg[peaks] - down_deg[best]) >= RIVAL_SEPARATION_DEG]
    strong = far[profile[far] >= RIVAL_FRACTION * profile[best]]
    return float(down_deg[strong[np.argmax(profile[strong])]]) if len(strong) else None


def intrinsics_sigma_deg(pitch_deg: float) -> float:
    """Pitch uncertainty (degrees) from a field of view assumed as 60 +- 10 degrees: the vanishing point
    fixes tan(pitch) / focal, so a focal error moves the pitch by sin(pitch) cos(pitch) times its share."""
    t = np.radians(pitch_deg)
    return float(np.degrees(abs(np.sin(t) * np.cos(t)) * _HFOV_REL_SIGMA))
