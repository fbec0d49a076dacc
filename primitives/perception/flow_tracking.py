"""Classical tracking for ``track(method="flow")``, no weights: Lucas-Kanade optical flow (OpenCV) on corner
features inside the mask/box, kept only when they pass a forward-backward check, then a RANSAC similarity
transform (translation, rotation, uniform scale) moves the mask/box to the next frame.

Coarse to fine, for key frames far apart: each step tries where the object may have gone, in turn: it
stayed (flow from its last position), it kept its last step (constant velocity), and where its appearance
is found again (``flow_redetect``: its look in the last frame where it was followed, matched by normalised
cross-correlation at scales 0.8-1.25 in a window around both). Each guess warps the next frame back so the
flow only refines what the guess left (residual shift and scale), and the guess whose moved start-frame
object looks most like the next frame wins; a guess that looks like it (correlation >= 0.8, half of the
features agreeing) ends the search early. So it follows objects that move up to about 40 % of their own
size per frame and approach or recede (a quarter larger or smaller per frame).

An instance's ``score`` is the fraction of features that agree with that motion (for a frame placed by the
appearance match alone, where the flow could not refine it, that match's correlation, at least 0.7); below
0.25 the object counts as lost from there on. Ego-motion compensation: the background's motion is measured
in a band around the object; when the dominant motion inside a box is the background's (a panning camera,
a box holding much background), the box follows the features that move on their own instead. Honest
visibility: each frame the start frame's object, moved by the track, is correlated with what is there now
(its mask, or the central half of its box); below 0.3 it counts as occluded or gone (lost), even when
features still move coherently or something similar is found nearby. Rigid objects; it does not follow
deformation, and a mask spanning several depths follows the dominant one. Pixels: x right, y down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.perception.flow_redetect import redetect, warp_towards
from spatialclaw.primitives.perception.instances import Instance, mask_to_box

__all__ = ["FLOW_VERSION", "MIN_APPEARANCE", "MIN_FLOW_AGREEMENT", "track_flow"]

FLOW_VERSION = "lk-fb-similarity-ego-redetect-3"
MIN_FLOW_AGREEMENT = 0.25  # fraction of features that must agree on one motion, else the object is lost
MIN_APPEARANCE = 0.3  # correlation with the start frame's object below which it counts as occluded or gone
CONFIDENT_APPEARANCE = 0.8  # with CONFIDENT_AGREEMENT of its features agreeing, a step needs no other guess
CONFIDENT_AGREEMENT = 0.5
MIN_MATCH = 0.7  # template correlation a re-detection needs to stand on its own (without Lucas-Kanade)


def track_flow(
    arrays: list[np.ndarray], indices: list[int], prompt: np.ndarray | tuple[float, float, float, float], start: int
) -> list[Instance]:
    """Propagate one mask ((H, W) bool) or box ((x0, y0, x1, y1) pixels) from position ``start`` to every
    frame in ``arrays`` (forwards, then backwards); returns one ``Instance`` per frame in input order.

    Frame-to-frame similarity transforms are chained into one transform from the start frame, and the
    prompt is moved by that (so sub-pixel motion accumulates instead of being rounded away each frame).
    Once the object cannot be followed (no guess leads to what it looked like, or it left the image) the
    remaining frames in that direction keep its last position with score 0.
    """
    import cv2

    grays = [cv2.cvtColor(array, cv2.COLOR_RGB2GRAY) for array in arrays]
    height, width = grays[0].shape
    is_mask = isinstance(prompt, np.ndarray) and prompt.ndim == 2
    results: list[Instance | None] = [None] * len(arrays)
    first = _placed(prompt, is_mask, np.eye(3), 1.0, indices[start], width, height)
    results[start] = first
    for order in (range(start + 1, len(arrays)), range(start - 1, -1, -1)):
        transform, score, previous, last = np.eye(3), 1.0, start, first
        velocity: np.ndarray | None = None  # the last frame-to-frame step, the guess for the next one
        for position in order:
            if score > 0:
                view = _Views(arrays, grays, start, previous, position)
                found = _follow(view, prompt, is_mask, transform, last, velocity)
                if found is None:
                    score = 0.0
                else:
                    increment, score = found
                    transform, velocity = increment @ transform, increment
            placed = _placed(prompt, is_mask, transform, score, indices[position], width, height)
            if placed.score == 0.0:
                score = 0.0
            results[position] = placed
            previous, last = position, placed
    return cast(list[Instance], results)  # every position was filled above


@dataclass(frozen=True)
class _Views:
    """The frames one step looks at: RGB and grayscale, and positions of the start, previous and current."""

    arrays: list[np.ndarray]
    grays: list[np.ndarray]
    start: int
    previous: int
    current: int


def _follow(
    view: _Views, prompt: Any, is_mask: bool, transform: np.ndarray, last: Instance, velocity: np.ndarray | None
) -> tuple[np.ndarray, float] | None:
    """One step from ``view.previous`` to ``view.current``: (the 3x3 increment, its score), or None when
    the object is lost. Hypotheses for where it went, coarse to fine: it stayed (Lucas-Kanade from its
    last position), it kept its last step (``velocity``), and where its appearance is found again
    (``redetect``: template matching at several scales around both); each guess pre-warps the current
    frame so that Lucas-Kanade refines only what the guess got wrong (residual motion and scale). The
    hypothesis whose moved start-frame object looks most like the current frame wins; below
    ``MIN_APPEARANCE`` the object counts as gone."""
    previous, current = view.grays[view.previous], view.grays[view.current]
    height, width = current.shape
    region = _region(last, width, height)
    candidates: list[tuple[float, float, np.ndarray]] = []  # (appearance, score, increment)

    def judge(increment: np.ndarray, score: float) -> bool:
        """Add a candidate; True when it is good enough to stop looking (it looks like the object)."""
        look = _appearance(view.grays[view.start], current, prompt, is_mask, increment @ transform)
        # one that cannot be judged (it has nearly left the image) is kept, but any that looks right wins
        candidates.append((MIN_APPEARANCE if look is None else look, score, increment))
        return look is not None and look >= CONFIDENT_APPEARANCE and score >= CONFIDENT_AGREEMENT

    def refine(guess: np.ndarray | None) -> bool:
        """Lucas-Kanade from ``guess`` (None: from where the object was); True when confident."""
        step = _step(previous, current if guess is None else warp_towards(current, guess), region)
        if step is None:
            return False
        return judge(step[0] if guess is None else guess @ step[0], step[1])

    if refine(None) or (velocity is not None and _moves(velocity, last.box) and refine(velocity)):
        return candidates[-1][2], candidates[-1][1]
    x0, y0, x1, y1 = last.box
    predicted = _moved_box(last.box, velocity) if velocity is not None else last.box
    margin = 0.5 * max(x1 - x0, y1 - y0) + 4.0
    found = redetect(view.arrays[view.previous], view.arrays[view.current], last.box, predicted, margin, last.mask)
    if found is not None:
        refine(found[0])
        if found[1] >= MIN_MATCH:  # the match itself, in case Lucas-Kanade could not refine it
            judge(found[0], found[1])
    if not candidates:
        return None
    best = candidates[0]
    for candidate in candidates[1:]:  # a later hypothesis must look clearly better to win
        if candidate[0] > best[0] + 0.02:
            best = candidate
    if best[0] < MIN_APPEARANCE:
        return None  # the motion found, whichever, does not lead to what the object looked like
    return best[2], best[1]


def _moves(motion: np.ndarray, box: tuple[float, float, float, float]) -> bool:
    """Whether the 3x3 ``motion`` moves some corner of ``box`` by more than 1 px."""
    moved = np.array(_moved_box(box, motion))
    return bool(np.abs(moved - np.array(box)).max() > 1.0)


def _moved_box(box: tuple[float, float, float, float], motion: np.ndarray) -> tuple[float, float, float, float]:
    """The bounding box of ``box``'s corners moved by the 3x3 ``motion``."""
    x0, y0, x1, y1 = box
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) @ motion[:2, :2].T + motion[:2, 2]
    return (
        float(corners[:, 0].min()),
        float(corners[:, 1].min()),
        float(corners[:, 0].max()),
        float(corners[:, 1].max()),
    )


def _appearance(
    first: np.ndarray, current: np.ndarray, prompt: Any, is_mask: bool, transform: np.ndarray
) -> float | None:
    """Zero-mean normalised cross-correlation between the object in the start frame, moved by ``transform``,
    and the current frame, over its mask (or the central half of its box, where a box holds the object
    rather than its background); 1 = looks the same, ~0 = unrelated (it was occluded or has gone); None
    when too little of it is left inside the image to tell."""
    import cv2

    height, width = first.shape
    if is_mask:
        support = prompt.astype(np.uint8)
    else:
        x0, y0, x1, y1 = prompt
        qx, qy = (x1 - x0) / 4.0, (y1 - y0) / 4.0
        support = np.zeros((height, width), np.uint8)
        support[
            max(int(round(y0 + qy)), 0) : max(int(round(y1 - qy)), 0),
            max(int(round(x0 + qx)), 0) : max(int(round(x1 - qx)), 0),
        ] = 1
    moved = cv2.warpAffine(first.astype(np.float32), transform[:2], (width, height), flags=cv2.INTER_LINEAR)
    inside = cv2.warpAffine(support, transform[:2], (width, height), flags=cv2.INTER_NEAREST) > 0
    if inside.sum() < 16:
        return None  # too little left inside the image to judge; leaving the image is handled by _placed
    a, b = moved[inside], current[inside].astype(np.float32)
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / max(np.sqrt((a * a).sum() * (b * b).sum()), 1e-6))


def _placed(
    prompt: Any, is_mask: bool, transform: np.ndarray, score: float, index: int, width: int, height: int
) -> Instance:
    """The prompt moved by ``transform`` (3x3, start frame -> this frame) as an Instance; score 0 once it
    has left the image."""
    import cv2

    if is_mask:
        moved = cv2.warpAffine(prompt.astype(np.uint8), transform[:2], (width, height), flags=cv2.INTER_NEAREST) > 0
        box = mask_to_box(moved)
        if box is None:
            return Instance("object", 0.0, (0.0, 0.0, 0.0, 0.0), mask=moved, frame_index=index)
        return Instance("object", score, box, mask=moved, frame_index=index)
    box = _moved_box(prompt, transform)
    inside = box[2] > 0 and box[3] > 0 and box[0] < width and box[1] < height
    return Instance("object", score if inside else 0.0, box, frame_index=index)


def _region(item: Instance, width: int, height: int) -> np.ndarray:
    """uint8 (H, W) feature-search mask: the instance's mask, else its box (clipped to the image)."""
    if item.mask is not None:
        return item.mask.astype(np.uint8) * 255
    region = np.zeros((height, width), np.uint8)
    x0, y0, x1, y1 = (int(round(v)) for v in item.box)
    region[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)] = 255
    return region


def _step(previous: np.ndarray, current: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The 3x3 similarity transform taking ``region`` of ``previous`` onto ``current`` (grayscale), and the
    fraction of features that agree with it; None when it cannot be estimated."""
    import cv2

    area = float(np.count_nonzero(region))
    if area == 0:
        return None
    spacing = max(2, int(np.sqrt(area / 400)))
    corners = cv2.goodFeaturesToTrack(
        previous, maxCorners=400, qualityLevel=0.005, minDistance=spacing, mask=region, blockSize=5
    )
    if corners is None or len(corners) < 3:
        return None
    params: dict[str, Any] = dict(
        winSize=(21, 21), maxLevel=4, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 40, 0.01)
    )
    ahead, ok = _lucas_kanade(previous, current, corners, params)
    back, ok_back = _lucas_kanade(current, previous, ahead, params)
    error = np.linalg.norm((back - corners).reshape(-1, 2), axis=1)
    good = (ok.ravel() == 1) & (ok_back.ravel() == 1) & (error < 1.0)
    if good.sum() < 3:
        return None
    source, target = corners.reshape(-1, 2)[good], ahead.reshape(-1, 2)[good]
    matrix, inliers = cv2.estimateAffinePartial2D(
        source, target, method=cv2.RANSAC, ransacReprojThreshold=1.5, maxIters=500, refineIters=20
    )
    agreement = float(inliers.sum()) / len(corners) if matrix is not None else 0.0
    own_motion = _own_motion(previous, current, region, params, source, target, matrix)
    if own_motion is not None:  # the box's dominant motion was the background's: follow the object's own
        matrix, agreement = own_motion
    if agreement < MIN_FLOW_AGREEMENT:
        return None
    return np.vstack([matrix, [0.0, 0.0, 1.0]]), agreement


def _own_motion(
    previous: np.ndarray,
    current: np.ndarray,
    region: np.ndarray,
    params: dict[str, Any],
    source: np.ndarray,
    target: np.ndarray,
    dominant: np.ndarray | None,
) -> tuple[np.ndarray, float] | None:
    """Ego-motion compensation. When the region's dominant motion is the surrounding background's (a box
    prompt holds background, and the camera pans), and the features that do NOT move with the background
    (at least 5 and 30 %) agree on one motion of their own, that motion and its agreement; else None."""
    import cv2

    background = _background_motion(previous, current, region, params)
    if background is None or dominant is None:
        return None
    ys, xs = np.nonzero(region)
    centre = np.array([xs.mean(), ys.mean()])
    if (
        np.linalg.norm(dominant[:, :2] @ centre + dominant[:, 2] - (background[:2, :2] @ centre + background[:2, 2]))
        > 1.0
    ):
        return None  # the region already moves unlike its surroundings: nothing to compensate
    predicted = source @ background[:2, :2].T + background[:2, 2]
    own = np.linalg.norm(target - predicted, axis=1) > 1.5
    if own.sum() < max(5, 0.3 * len(source)):
        return None  # the object moves with the background (it is static in the scene)
    matrix, inliers = cv2.estimateAffinePartial2D(
        source[own], target[own], method=cv2.RANSAC, ransacReprojThreshold=1.5, maxIters=500, refineIters=20
    )
    if matrix is None or inliers.sum() < 0.6 * own.sum():
        return None
    return matrix, float(inliers.sum()) / own.sum()


def _background_motion(
    previous: np.ndarray, current: np.ndarray, region: np.ndarray, params: dict[str, Any]
) -> np.ndarray | None:
    """The 3x3 similarity of the background (features in a band around ``region``, outside it), i.e. the
    camera's motion near the object; None when the band has too few features or no consistent motion."""
    import cv2

    size = int(max(8, np.sqrt(max(int(np.count_nonzero(region)), 1))))
    band = cv2.dilate(region, np.ones((size, size), np.uint8)) & ~region
    corners = cv2.goodFeaturesToTrack(
        previous, maxCorners=200, qualityLevel=0.005, minDistance=4, mask=band, blockSize=5
    )
    if corners is None or len(corners) < 8:
        return None
    ahead, ok = _lucas_kanade(previous, current, corners, params)
    back, ok_back = _lucas_kanade(current, previous, ahead, params)
    good = (ok.ravel() == 1) & (ok_back.ravel() == 1) & (np.linalg.norm((back - corners).reshape(-1, 2), axis=1) < 1.0)
    if good.sum() < 8:
        return None
    matrix, inliers = cv2.estimateAffinePartial2D(
        corners.reshape(-1, 2)[good], ahead.reshape(-1, 2)[good], method=cv2.RANSAC, ransacReprojThreshold=1.5
    )
    if matrix is None or inliers.sum() < 0.5 * good.sum():
        return None
    return np.vstack([matrix, [0.0, 0.0, 1.0]])


def _lucas_kanade(
    previous: np.ndarray, current: np.ndarray, points: np.ndarray, params: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Pyramidal Lucas-Kanade flow of ``points`` (N, 1, 2) from ``previous`` to ``current``: their new
    positions and per-point found flags (1 = tracked)."""
    import cv2

    # nextPts=None lets OpenCV allocate the output; the stubs of some OpenCV versions require an array, so the
    # call goes through an untyped name instead of an ignore that another version would call unused
    flow: Any = cv2.calcOpticalFlowPyrLK
    ahead, found, _ = flow(previous, current, points, None, **params)
    return ahead, found
