"""Re-detection for the optical-flow tracker (``flow_tracking``): where an object went when it moved too far
between two frames for Lucas-Kanade to follow from where it was.

The object's appearance in the last frame where it was followed (the template, updated every frame it is
followed) is searched for in the next frame by normalised cross-correlation (OpenCV ``matchTemplate``, RGB)
at several scales (approach or recede), in a window around where it is expected (its last position, and
that position moved by its last step). The best match, refined to sub-pixel position and scale, is a
guess of the frame-to-frame similarity transform; ``flow_tracking`` refines it with Lucas-Kanade and keeps
it only when the moved object still looks like the start frame's. Pixels: x right, y down; boxes
(x0, y0, x1, y1) on pixel edges.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCALES", "redetect", "warp_towards"]

#: Scale steps searched between two frames: the object may shrink or grow by up to 25 % per frame.
SCALES = (0.8, 0.85, 0.9, 0.95, 1.0, 1.05, 1.11, 1.18, 1.25)
_MIN_TEMPLATE = 6  # pixels: a template side below this matches anything
_MATCH_SIDE = 40  # pixels: a larger box is matched at the resolution where its longer side is this long


def redetect(
    previous: np.ndarray,
    current: np.ndarray,
    box: tuple[float, float, float, float],
    predicted: tuple[float, float, float, float],
    margin: float,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, float] | None:
    """Find the object of ``box`` in ``previous`` ((H, W, 3) uint8) again in ``current``.

    The search covers ``box`` and ``predicted`` (where it is expected in ``current``) widened by ``margin``
    pixels each side. Only the object's pixels are compared: ``mask`` ((H, W) bool, the object in
    ``previous``) where given, else the ellipse filling the middle 80 % of the box (a box holds background
    in its corners, which would pull the match towards where the background went). Boxes over 40 px are
    matched at reduced resolution (the caller refines). Returns (the 3x3 similarity taking ``previous``
    pixel coordinates to ``current`` ones: uniform scale about the box centre and a translation; the best
    match's normalised cross-correlation, -1..1), or None when the box is too small or outside the image.
    """
    import cv2

    height, width = previous.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    if x1 - x0 < _MIN_TEMPLATE or y1 - y0 < _MIN_TEMPLATE:
        return None
    factor = min(1.0, _MATCH_SIDE / max(x1 - x0, y1 - y0))  # matched at a lower resolution, refined later
    template = _shrunk(previous[y0:y1, x0:x1], factor)
    weights = _weights(mask[y0:y1, x0:x1] if mask is not None else None, x1 - x0, y1 - y0)
    weights = cv2.resize(weights, (template.shape[1], template.shape[0]), interpolation=cv2.INTER_NEAREST)
    sx0 = int(max(min(box[0], predicted[0]) - margin, 0))
    sy0 = int(max(min(box[1], predicted[1]) - margin, 0))
    sx1 = int(min(max(box[2], predicted[2]) + margin, width))
    sy1 = int(min(max(box[3], predicted[3]) + margin, height))
    if sx1 <= sx0 or sy1 <= sy0:
        return None
    window = _shrunk(current[sy0:sy1, sx0:sx1], factor)
    results: list[tuple[float, float, float, float]] = []  # (correlation, scale, x, y of the match's centre)
    for scale in SCALES:
        w, h = round(template.shape[1] * scale), round(template.shape[0] * scale)
        if w < _MIN_TEMPLATE or h < _MIN_TEMPLATE or w > window.shape[1] or h > window.shape[0]:
            results.append((-1.0, scale, 0.0, 0.0))
            continue
        shrink = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        resized = cv2.resize(template, (w, h), interpolation=shrink)
        support = np.repeat(cv2.resize(weights, (w, h), interpolation=cv2.INTER_NEAREST)[..., None], 3, axis=2)
        scores = cv2.matchTemplate(window, resized, cv2.TM_CCOEFF_NORMED, mask=support)
        scores = np.nan_to_num(scores, nan=-1.0, posinf=-1.0, neginf=-1.0)  # a flat window has no correlation
        _, best, _, (bx, by) = cv2.minMaxLoc(scores)
        dx, dy = _vertex(scores, bx, by)
        results.append((float(best), scale, sx0 + (bx + dx + w / 2.0) / factor, sy0 + (by + dy + h / 2.0) / factor))
    best_at = int(np.argmax([r[0] for r in results]))
    correlation, _, mx, my = results[best_at]
    if correlation <= -1.0:
        return None
    scale = _refined_scale(results, best_at)
    centre, target = np.array([(x0 + x1) / 2.0, (y0 + y1) / 2.0]), np.array([mx, my])
    similarity = np.array(
        [
            [scale, 0.0, target[0] - scale * centre[0]],
            [0.0, scale, target[1] - scale * centre[1]],
            [0.0, 0.0, 1.0],
        ]
    )
    return similarity, correlation


def _shrunk(image: np.ndarray, factor: float) -> np.ndarray:
    """``image`` as float32, resized by ``factor`` (at most 1) with area averaging."""
    import cv2

    pixels = image.astype(np.float32)
    if factor >= 1.0:
        return pixels
    size = (max(round(image.shape[1] * factor), 1), max(round(image.shape[0] * factor), 1))
    return cv2.resize(pixels, size, interpolation=cv2.INTER_AREA)


def _weights(mask: np.ndarray | None, width: int, height: int) -> np.ndarray:
    """The template's (height, width) float32 0/1 support: the object's mask, else the box's middle ellipse."""
    import cv2

    if mask is not None and mask.sum() >= _MIN_TEMPLATE**2:
        return mask.astype(np.float32)
    ellipse = np.zeros((height, width), np.float32)
    centre, axes = (width // 2, height // 2), (max(int(0.4 * width), 1), max(int(0.4 * height), 1))
    cv2.ellipse(ellipse, centre, axes, 0, 0, 360, 1.0, -1)
    return ellipse


def warp_towards(image: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """``image`` (the later frame) resampled so that what ``guess`` (3x3, earlier -> later pixels) moves
    lands back where it was: ``out(x) = image(guess @ x)``; the border is replicated."""
    import cv2

    height, width = image.shape[:2]
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    return cv2.warpAffine(image, guess[:2], (width, height), flags=flags, borderMode=cv2.BORDER_REPLICATE)


def _vertex(scores: np.ndarray, x: int, y: int) -> tuple[float, float]:
    """Sub-pixel offset of the correlation peak at (x, y) by a parabola through it and its neighbours."""

    def offset(left: float, middle: float, right: float) -> float:
        denominator = left - 2.0 * middle + right
        return float(np.clip(0.5 * (left - right) / denominator, -0.5, 0.5)) if denominator < 0 else 0.0

    dx = offset(scores[y, x - 1], scores[y, x], scores[y, x + 1]) if 0 < x < scores.shape[1] - 1 else 0.0
    dy = offset(scores[y - 1, x], scores[y, x], scores[y + 1, x]) if 0 < y < scores.shape[0] - 1 else 0.0
    return dx, dy


def _refined_scale(results: list[tuple[float, float, float, float]], best_at: int) -> float:
    """The best scale, refined by a parabola over log-scale through its neighbours' correlations."""
    scale = results[best_at][1]
    if not 0 < best_at < len(results) - 1 or min(results[best_at - 1][0], results[best_at + 1][0]) <= -1.0:
        return scale
    left, middle, right = (results[best_at + k][0] for k in (-1, 0, 1))
    denominator = left - 2.0 * middle + right
    if denominator >= 0:
        return scale
    step = 0.5 * (left - right) / denominator
    logs = np.log([results[best_at + k][1] for k in (-1, 0, 1)])
    spacing = (logs[2] - logs[0]) / 2.0
    return float(np.exp(logs[1] + np.clip(step, -0.5, 0.5) * spacing))
