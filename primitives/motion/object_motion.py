"""Object motion for ``motion(frames, object=...)``: the object's region per frame (a box, mask, ``Instance``
or ``Track``), its motion relative to the background (the camera's homography, corrected by the nearby
background's parallax) as an ``ObjectStep``, and its region carried into the next frame.

Pixels: x right, y down; motion in units of the object's distance from the earlier camera (see
``ObjectStep``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spatialclaw.primitives.motion.angles import direction_words
from spatialclaw.primitives.motion.pair import INLIER_PX, PairGeometry
from spatialclaw.primitives.motion.result import ObjectStep

__all__ = ["moved_region", "object_region", "object_step"]


def object_region(obj: Any, position: int, shape: tuple[int, int]) -> np.ndarray | None:
    """(H, W) bool region of the object in the frame at ``position``: a Track's box/mask there, or the
    given box/mask/Instance (for the first frame; later frames get it moved by the measured motion)."""
    from spatialclaw.primitives.perception.inputs import as_box, as_mask

    height, width = shape
    if hasattr(obj, "instances"):  # a Track
        item = obj.instances[position]
        if item.score <= 0:
            return None
        obj = item
    mask = getattr(obj, "mask", None)
    if mask is not None or (isinstance(obj, np.ndarray) and obj.ndim == 2):
        return as_mask(mask if mask is not None else obj, height, width)
    x0, y0, x1, y1 = as_box(getattr(obj, "box", obj), width, height)
    region = np.zeros(shape, bool)
    region[max(int(round(y0)), 0) : max(int(round(y1)), 0), max(int(round(x0)), 0) : max(int(round(x1)), 0)] = True
    return region


def object_step(
    geometry: PairGeometry,
    points_a: np.ndarray,
    points_b: np.ndarray,
    region: np.ndarray,
    K: np.ndarray,
    frame_a: int,
    frame_b: int,
    heading_deg: float | None,
    shift_px: float,
) -> ObjectStep | None:
    """Object motion from the matches (all of them, original pixels) inside ``region`` against the
    background's prediction there (the camera's homography, corrected by the nearby background's parallax)."""
    if geometry.homography is None or len(points_a) == 0:
        return None
    cols = np.clip(np.round(points_a[:, 0]).astype(int), 0, region.shape[1] - 1)
    rows = np.clip(np.round(points_a[:, 1]).astype(int), 0, region.shape[0] - 1)
    inside = region[rows, cols]
    if inside.sum() < 3:
        return None
    moved = np.column_stack([points_a, np.ones(len(points_a))]) @ geometry.homography.T
    predicted = moved[:, :2] / moved[:, 2:3]
    background = ~inside
    # what the rotation model misses near the object (parallax of a translating camera) is background too
    if background.sum() >= 5:
        centre = points_a[inside].mean(axis=0)
        nearest = np.argsort(np.linalg.norm(points_a[background] - centre, axis=1))[:15]
        predicted = predicted + np.median((points_b - predicted)[background][nearest], axis=0)
    a, observed, expected = points_a[inside], points_b[inside], predicted[inside]
    shift = np.median(observed - expected, axis=0)
    consistent = np.linalg.norm(observed - expected - shift, axis=1) <= max(
        3 * INLIER_PX, 0.1 * np.ptp(a, axis=0).max()
    )
    a, observed, expected = a[consistent], observed[consistent], expected[consistent]
    scale = 1.0
    if len(a) >= 3:
        first, second = np.triu_indices(len(a), 1)
        spread_expected = np.linalg.norm(expected[first] - expected[second], axis=1)
        ok = spread_expected > 3.0
        if ok.sum() >= 3:
            spread_observed = np.linalg.norm(observed[first] - observed[second], axis=1)
            scale = float(np.median(spread_observed[ok] / spread_expected[ok]))
    focal = float(K[0, 0])
    lateral, vertical, depth_change = shift[0] / focal, shift[1] / focal, 1.0 / scale - 1.0
    vector = np.array([lateral, vertical, depth_change])
    moving = bool(np.hypot(*shift) > shift_px or abs(np.log(scale)) > 0.02)
    words = direction_words(vector).replace("forward", "away from the camera").replace("back", "towards the camera")
    step = ObjectStep(
        frame_a,
        frame_b,
        (float(shift[0]), float(shift[1])),
        scale,
        float(lateral),
        float(vertical),
        float(depth_change),
        words if moving else "nowhere",
        moving,
        int(len(a)),
    )
    if heading_deg is not None:
        h = math.radians(float(heading_deg))
        forward = lateral * math.sin(h) + depth_change * math.cos(h)
        right = lateral * math.cos(h) - depth_change * math.sin(h)
        step.heading_deg, step.own_forward, step.own_right = float(heading_deg), float(forward), float(right)
        own = np.array([right, 0.0, forward])
        step.own_direction = direction_words(own).replace("back", "backward") if moving else "not moving"
    return step


def moved_region(region: np.ndarray, geometry: PairGeometry, obj: ObjectStep) -> np.ndarray:
    """The object's region carried into frame b: the background homography plus its own shift and scale."""
    import cv2

    ys, xs = np.nonzero(region)
    centre = np.array([xs.mean(), ys.mean(), 1.0])
    moved = geometry.homography @ centre
    target = moved[:2] / moved[2] + np.array(obj.image_shift_px)
    A = np.array([[obj.scale, 0, target[0] - obj.scale * centre[0]], [0, obj.scale, target[1] - obj.scale * centre[1]]])
    return cv2.warpAffine(region.astype(np.uint8), A, (region.shape[1], region.shape[0]), flags=cv2.INTER_NEAREST) > 0
