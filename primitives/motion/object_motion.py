"""Object motion for ``motion(frames, object=...)``: the object's region in EVERY frame (a box or mask per
frame, a ``Track``, what ``track`` returns, or one box / mask / ``Instance`` that is followed by itself with
``track(method="flow")``), and its motion between two frames relative to the background, measured from
the change of its position and size (never from a region carried over from another frame).

Pixels: x right, y down; motion in units of the object's distance from the earlier camera (see
``ObjectStep``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spatialclaw.primitives.motion.angles import direction_words
from spatialclaw.primitives.motion.pair import PairGeometry
from spatialclaw.primitives.motion.result import ObjectStep

__all__ = ["ObjectRegions", "object_regions", "object_step"]

SIZE_MOVE = 0.05  # |log size ratio| above which the object counts as approaching / receding


class ObjectRegions:
    """The object's (H, W) bool region per frame position (None where it is lost), how they were obtained
    (``source``) and its label (``label``: "the runner" for a Track labelled "runner")."""

    def __init__(self, regions: list[np.ndarray | None], source: str, label: str) -> None:
        self.regions, self.source, self.label = regions, source, label


def _region(item: Any, shape: tuple[int, int]) -> np.ndarray | None:
    from spatialclaw.primitives.perception.inputs import as_box, as_mask

    height, width = shape
    if item is None or (getattr(item, "score", 1.0) is not None and getattr(item, "score", 1.0) <= 0):
        return None
    mask = getattr(item, "mask", None)
    if mask is not None or (isinstance(item, np.ndarray) and item.ndim == 2):
        out = as_mask(mask if mask is not None else item, height, width)
        return out if out.any() else None
    x0, y0, x1, y1 = as_box(getattr(item, "box", item), width, height)
    region = np.zeros(shape, bool)
    region[max(int(round(y0)), 0) : max(int(round(y1)), 0), max(int(round(x0)), 0) : max(int(round(x1)), 0)] = True
    return region if region.any() else None


def _is_single(obj: Any) -> bool:
    """One box (4 numbers), one mask ((H, W) array) or one Instance, as opposed to one entry per frame."""
    if hasattr(obj, "box") and not isinstance(obj, np.ndarray):
        return True
    if isinstance(obj, np.ndarray):
        return obj.ndim == 2 or obj.shape == (4,)
    items = list(obj)
    return len(items) == 4 and all(np.ndim(v) == 0 for v in items)


def _label(obj: Any) -> str:
    label = getattr(obj, "label", None)
    return f"the {label}" if isinstance(label, str) and label not in ("", "object") else "the object"


def object_regions(obj: Any, arrays: list[np.ndarray]) -> ObjectRegions:
    """Where the object is in each frame. ``obj``: a ``Track`` (or a one-element list of them, as ``track``
    returns for a list prompt); a list with one box / mask / Instance per frame (None where absent); or one
    box (x0, y0, x1, y1) pixels, (H, W) mask or ``Instance`` in the FIRST frame, which is then followed
    through the frames with ``track(..., method="flow")`` (frames where it is lost get no region)."""
    shape = arrays[0].shape[:2]
    count = len(arrays)
    if isinstance(obj, list | tuple) and obj and all(hasattr(item, "instances") for item in obj):
        if len(obj) != 1:
            raise ValueError(f"object= takes one object; got {len(obj)} Tracks: pass one of them, e.g. tracks[0]")
        obj = obj[0]
    if hasattr(obj, "instances"):  # a Track
        if len(obj.instances) != count:
            raise ValueError(f"the Track has {len(obj.instances)} frames but motion got {count}: track the same frames")
        regions = [_region(item, shape) for item in obj.instances]
        return ObjectRegions(regions, f"its Track ({obj.method})", _label(obj))
    if _is_single(obj):
        from spatialclaw.primitives.perception.track import track

        kind = (
            "masks"
            if isinstance(getattr(obj, "mask", obj), np.ndarray) and np.ndim(getattr(obj, "mask", obj)) == 2
            else "boxes"
        )
        followed = track(arrays, method="flow", **{kind: obj})
        assert not isinstance(followed, list)
        regions = [_region(item, shape) for item in followed.instances]
        regions[0] = _region(obj, shape)
        return ObjectRegions(regions, "the first frame's region followed by track(method='flow')", _label(obj))
    items = list(obj)
    if len(items) != count:
        raise ValueError(
            f"object= got {len(items)} regions for {count} frames: give one box / mask / Instance per frame "
            f"(None where absent), a Track, or one box in the first frame"
        )
    labels = {_label(item) for item in items if item is not None}
    return ObjectRegions(
        [_region(item, shape) for item in items],
        "one region per frame",
        labels.pop() if len(labels) == 1 else "the object",
    )


def _centre_size(region: np.ndarray) -> tuple[np.ndarray, float]:
    ys, xs = np.nonzero(region)
    return np.array([xs.mean(), ys.mean()]), math.sqrt(float(region.sum()))


def _background_scale(
    geometry: PairGeometry, centre_a: np.ndarray, size_a: float, nearest: np.ndarray | None
) -> tuple[float, str]:
    """(scale, what it is): how much the background at the object's place grows from a to b. For a camera
    that turns or zooms, the homography's local scale there (exact); for one that translates, the median
    ratio of the distances between the agreeing background matches nearest to the object (nearer things
    grow more as the camera approaches), or the homography's when fewer than 6 lie near it."""
    assert geometry.homography is not None
    H = geometry.homography
    moved = H @ np.r_[centre_a, 1.0]
    jacobian = (H[:2, :2] * moved[2] - np.outer(moved[:2], H[2, :2])) / moved[2] ** 2
    local = math.sqrt(abs(float(np.linalg.det(jacobian))))
    if geometry.kind != "translation":
        return local, "the camera's turn and zoom there"
    if nearest is None or len(nearest) < 6:
        return local, "the camera's turn (too few background matches near it to measure the background's growth)"
    a, b = geometry.points_a[nearest], geometry.points_b[nearest]
    i, j = np.triu_indices(len(a), 1)
    span_a, span_b = np.linalg.norm(a[i] - a[j], axis=1), np.linalg.norm(b[i] - b[j], axis=1)
    wide = span_a > max(0.1 * size_a, 2.0)
    if wide.sum() < 6:
        return local, "the camera's turn (the background matches near it are too close together to measure its growth)"
    return float(np.median(span_b[wide] / span_a[wide])), "the background around it"


def _object_words(shift: np.ndarray, shift_limit: float, scale: float, components: tuple[float, float, float]) -> str:
    """Every component that is measurable on its own, largest (in units of the distance) first: sideways or
    vertical when that image shift alone is over ``shift_limit``, towards / away when the size change is
    over ``SIZE_MOVE``; the largest ranked one when none is on its own (a diagonal shift)."""
    large = [abs(float(shift[0])) > shift_limit, abs(float(shift[1])) > shift_limit, abs(math.log(scale)) > SIZE_MOVE]
    names = (("right", "left"), ("down", "up"), ("away from the camera", "towards the camera"))
    order = np.argsort(-np.abs(np.asarray(components)))
    words = [names[axis][0 if components[axis] > 0 else 1] for axis in order if large[axis]]
    if words:
        return " and ".join(words)
    ranked = direction_words(np.array(components))
    return ranked.replace("forward", "away from the camera").replace("back", "towards the camera")


def object_step(
    geometry: PairGeometry,
    region_a: np.ndarray,
    region_b: np.ndarray,
    K: np.ndarray,
    frame_a: int,
    frame_b: int,
    heading_deg: float | None,
    shift_px: float,
    tracked: bool = False,
) -> ObjectStep | None:
    """The object's motion between two frames relative to the background: its centre in frame b against
    where the background at its centre in frame a went (the camera's homography, corrected by the
    parallax of the background matches nearest to it), and its size ratio (square root of the region
    areas) beyond the background's own scale change there (``_background_scale``). None when the camera
    motion is unknown. Moving means a shift over max(``shift_px``, 10 % of its size) or a size change
    over ``SIZE_MOVE`` (log ratio); below both, the step claims no motion, only that none was measurable.
    ``tracked``: the regions come from a tracker; a tracked object that moves with the background while the
    background there moves over twice the shift limit is flagged ``lost_track`` (a flow track of a small or
    thin object locks onto the background behind it)."""
    if geometry.homography is None or geometry.kind == "unknown":
        return None
    (centre_a, size_a), (centre_b, size_b) = _centre_size(region_a), _centre_size(region_b)
    moved = geometry.homography @ np.r_[centre_a, 1.0]
    predicted = moved[:2] / moved[2]
    background_a, background_b = geometry.points_a, geometry.points_b  # the object's matches were left out
    nearest = None
    if len(background_a) >= 5:
        carried = np.column_stack([background_a, np.ones(len(background_a))]) @ geometry.homography.T
        residual = background_b - carried[:, :2] / carried[:, 2:3]
        nearest = np.argsort(np.linalg.norm(background_a - centre_a, axis=1))[:15]
        predicted = predicted + np.median(residual[nearest], axis=0)
        agreeing = np.flatnonzero(geometry.inlier_mask)
        nearest = agreeing[np.argsort(np.linalg.norm(background_a[agreeing] - centre_a, axis=1))[:15]]
    background, reference = _background_scale(geometry, centre_a, size_a, nearest)
    shift = centre_b - predicted
    scale = size_b / size_a / background
    focal = float(K[0, 0])
    lateral, vertical, depth_change = shift[0] / focal, shift[1] / focal, 1.0 / scale - 1.0
    shift_limit = max(shift_px, 0.1 * size_a)
    across = bool(np.hypot(*shift) > shift_limit)
    moving = across or abs(math.log(scale)) > SIZE_MOVE
    words = _object_words(shift, shift_limit, scale, (lateral, vertical, depth_change))
    image_move = centre_b - centre_a
    step = ObjectStep(
        frame_a,
        frame_b,
        (float(shift[0]), float(shift[1])),
        float(scale),
        float(lateral),
        float(vertical),
        float(depth_change),
        words if moving else "no measurable motion",
        moving,
        int(region_a.sum()),
        size_px=(size_a, size_b),
        image_move_px=(float(image_move[0]), float(image_move[1])),
        shift_limit_px=float(shift_limit),
        size_limit=math.exp(SIZE_MOVE),
        scale_reference=reference,
        follows=across and float(np.hypot(*image_move)) < 0.5 * float(np.hypot(*shift)),
        camera_translates=geometry.kind == "translation",
    )
    carried = float(np.hypot(*(predicted - centre_a)))  # how far the background at its place moved
    step.lost_track = tracked and not moving and carried > 2 * shift_limit
    if heading_deg is not None:
        h = math.radians(float(heading_deg))
        forward = lateral * math.sin(h) + depth_change * math.cos(h)
        right = lateral * math.cos(h) - depth_change * math.sin(h)
        step.heading_deg, step.own_forward, step.own_right = float(heading_deg), float(forward), float(right)
        own = np.array([right, 0.0, forward])
        step.own_direction = direction_words(own).replace("back", "backward") if moving else "no measurable motion"
    return step
