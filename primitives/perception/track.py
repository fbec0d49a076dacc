"""Following objects through video: ``track(frames, masks=...)`` or ``track(frames, boxes=...)``.

Given an object's mask or box in one frame (the start frame), returns where it is in every frame of
``frames`` (forwards and backwards from the start), as a ``Track`` of per-frame ``Instance`` values with
absolute frame indices. Backends:

- ``method="sam2"``: SAM 2 video (``facebook/sam2.1-hiera-tiny``; ``model=`` or ``$SPATIALCLAW_TRACK_MODEL``)
  through ``transformers`` (``Sam2VideoModel`` + ``Sam2VideoProcessor``, which needs torchvision). Masks
  follow deformation and occlusion.
- ``method="flow"``: classical, no weights. Lucas-Kanade optical flow (OpenCV) on corner features inside
  the mask/box, kept only when they pass a forward-backward check, then a RANSAC similarity transform
  (translation, rotation, uniform scale) moves the mask/box to the next frame. An instance's ``score`` is
  the fraction of features that agree with that motion; below 0.25 the object counts as lost from there
  on. Ego-motion compensation: the background's motion is measured in a band around the object; when the
  dominant motion inside a box is the background's (a panning camera, a box holding much background), the
  box follows the features that move on their own instead. Honest visibility: each frame the start
  frame's object, moved by the track, is correlated with what is there now (its mask, or the central half
  of its box); below 0.3 it counts as occluded or gone (lost), even when features still move coherently.
  Good for rigid objects and camera motion up to ~8 px per frame; it does not follow deformation, and a
  mask spanning several depths follows the dominant one. For the camera's own motion use ``motion``.
- ``method="auto"`` (default): SAM 2 when its weights and torchvision are available, else flow; the
  route taken is printed with the result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Sequence

import numpy as np

from spatialclaw.primitives.perception.cache import cache_key, cached
from spatialclaw.primitives.perception.instances import Instance, draw_instances, mask_to_box
from spatialclaw.primitives.perception.models import LoadedModel, MissingWeightsError, load_model
from spatialclaw.primitives.perception.inputs import (as_box, as_mask, frame_array, frame_index, model_name,
                                                      unavailable_reason)

__all__ = ["Track", "track", "track_flow", "DEFAULT_TRACK_MODEL", "MAX_TRACK_FRAMES"]

DEFAULT_TRACK_MODEL = "facebook/sam2.1-hiera-tiny"
MAX_TRACK_FRAMES = 400
FLOW_VERSION = "lk-fb-similarity-ego-2"
MIN_FLOW_AGREEMENT = 0.25  # fraction of features that must agree on one motion, else the object is lost
MIN_APPEARANCE = 0.3  # correlation with the start frame's object below which it counts as occluded or gone
_TORCHVISION_HINT = ("install torchvision built for your torch (`pip install torchvision`; for a CPU-only torch "
                     "use the matching +cpu wheel from the PyTorch CPU package index)")


@dataclass(eq=False)
class Track:
    """One object followed through frames: ``instances[i]`` is where it is in the i-th input frame.

    Arrays (T = number of frames, in input order): ``frame_indices`` (T,) absolute frame numbers;
    ``boxes`` (T, 4) (x0, y0, x1, y1) pixels; ``centroids`` (T, 2) (x, y) pixels (mask centroid, else box
    centre); ``masks`` (T, H, W) bool or None for box tracks; ``visible`` (T,) bool (False where the
    object was lost or left the image: its box there is the last known one and its score 0).
    ``track.at(frame_index)`` gives the ``Instance`` at an absolute frame index. ``method`` names the
    backend; ``start_index`` is the frame the prompt was given in.
    """

    label: str
    instances: list[Instance]
    method: str
    start_index: int
    frames: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        """The number of frames (T)."""
        return len(self.instances)

    def __iter__(self) -> Iterator[Instance]:
        return iter(self.instances)

    def __getitem__(self, position: int) -> Instance:
        """The ``Instance`` in the ``position``-th input frame (a position, not a frame index: see ``at``)."""
        return self.instances[position]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["frames"] = None
        return state

    @property
    def frame_indices(self) -> np.ndarray:
        """(T,) int absolute frame indices."""
        return np.array([item.frame_index for item in self.instances], dtype=np.int64)

    @property
    def boxes(self) -> np.ndarray:
        """(T, 4) float (x0, y0, x1, y1) pixels per frame."""
        return np.array([item.box for item in self.instances], dtype=np.float64).reshape(-1, 4)

    @property
    def centroids(self) -> np.ndarray:
        """(T, 2) float (x, y) pixels per frame (pixel-centre convention)."""
        return np.array([item.centroid for item in self.instances], dtype=np.float64).reshape(-1, 2)

    @property
    def masks(self) -> np.ndarray | None:
        """(T, H, W) bool masks, or None for a box track."""
        if any(item.mask is None for item in self.instances):
            return None
        return np.stack([item.mask for item in self.instances])

    @property
    def visible(self) -> np.ndarray:
        """(T,) bool: False where the object was lost or left the image."""
        return np.array([item.score > 0 for item in self.instances], dtype=bool)

    def at(self, index: int) -> Instance:
        """The instance at absolute frame ``index``."""
        for item in self.instances:
            if item.frame_index == index:
                return item
        raise KeyError(f"frame {index} is not in this track; it covers frames {self.frame_indices.tolist()}")

    @property
    def image(self) -> Any:
        """The start frame with the object's centroid path drawn over it (a PIL image), for ``show``."""
        if self.frames is None:
            raise ValueError("this track has no frames attached; draw it with draw_instances(frame, [track.at(i)])")
        from PIL import ImageDraw

        position = int(np.flatnonzero(self.frame_indices == self.start_index)[0])
        image = draw_instances(self.frames[position], [self.instances[position]])
        pen = ImageDraw.Draw(image)
        path = [tuple(c) for c, seen in zip(self.centroids.tolist(), self.visible) if seen]
        if len(path) > 1:
            pen.line(path, fill=(255, 255, 0), width=max(1, round(max(image.size) / 320)))
        return image

    @property
    def array(self) -> np.ndarray:
        """``image`` as an (H, W, 3) uint8 array (what ``show`` draws)."""
        return np.asarray(self.image)

    def __repr__(self) -> str:
        lines = [f"Track({self.label!r}, {len(self)} frames {self.frame_indices.min()}..{self.frame_indices.max()}, "
                 f"start frame {self.start_index}, via {self.method}; boxes (x0, y0, x1, y1) and centres in pixels):"]
        rows = list(range(len(self)))
        if len(rows) > 12:
            rows = sorted(set(np.linspace(0, len(self) - 1, 12).round().astype(int).tolist()))
        for i in rows:
            item = self.instances[i]
            x0, y0, x1, y1 = item.box
            cx, cy = item.centroid
            state = f"score {item.score:.2f}" if item.score > 0 else "LOST"
            lines.append(f"  frame {item.frame_index}: box ({x0:.0f}, {y0:.0f}, {x1:.0f}, {y1:.0f}) "
                         f"centre ({cx:.1f}, {cy:.1f}) {state}")
        if len(rows) < len(self):
            lines.append(f"  ({len(self) - len(rows)} more frames: use track.boxes / track.centroids / track.at(i))")
        return "\n".join(lines)


def track(
    frames: Sequence[Any],
    masks: Any = None,
    boxes: Any = None,
    start_index: int | None = None,
    label: str | None = None,
    method: str = "auto",
    model: str | os.PathLike | None = None,
    device: str | None = None,
) -> Track | list[Track]:
    """Follow objects from a start frame through ``frames`` (both directions); one ``Track`` per object.

    ``frames``: a sequence of frames (``frames``, ``frames[10:40]``, ``frames[::5]``; or PIL images /
    (H, W, 3) arrays, then numbered 0..T-1), all the same size, at most ``MAX_TRACK_FRAMES``.
    Prompt with ``masks`` ((H, W) bool, (N, H, W), an ``Instance`` with a mask or ``Detections``) or
    ``boxes`` ((x0, y0, x1, y1) pixels, (N, 4), an ``Instance`` or ``Detections``). ``start_index``: the
    absolute frame index the prompt belongs to (default: the instance's ``frame_index``, else the first
    frame). ``label`` names the tracks (default: the instance labels, else "object").
    Returns a ``Track`` for one object, a list of ``Track`` for several. ``method``: "auto", "sam2" or
    "flow" (see the module doc). Example: ``cup = segment(frames[0], text="cup")[0];
    t = track(frames[:30], masks=cup); print(t); t.centroids``.
    """
    if (masks is None) == (boxes is None):
        raise ValueError("track needs exactly one prompt: masks= (an (H, W) bool mask or an Instance with a mask) "
                         "or boxes= ((x0, y0, x1, y1) pixels)")
    if method not in ("auto", "sam2", "flow"):
        raise ValueError(f"method must be 'auto', 'sam2' or 'flow', got {method!r}")
    arrays, indices = _video(frames)
    height, width = arrays[0].shape[:2]
    kind = "mask" if masks is not None else "box"
    items, many = _prompt_items(masks if masks is not None else boxes, kind)
    names = [label] * len(items) if label is not None else [getattr(item, "label", "object") for item in items]
    start = _start_index(start_index, items, indices)
    if kind == "mask":
        prompts = [as_mask(item, height, width) for item in items]
    else:
        prompts = [as_box(item, width, height) for item in items]
    tracks = _run(arrays, indices, prompts, kind, indices.index(start), method, model, device)
    out = [Track(name, [_named(item, name) for item in instances], route, start, frames)
           for name, (instances, route) in zip(names, tracks)]
    return out if many else out[0]


def _named(item: Instance, name: str) -> Instance:
    return replace(item, label=name)


def _prompt_items(prompt: Any, kind: str) -> tuple[list[Any], bool]:
    """(one entry per object, whether several were given): Instances, (H, W) masks or 4-number boxes."""
    if hasattr(prompt, "box") and not isinstance(prompt, np.ndarray):
        return [prompt], False  # one Instance
    if isinstance(prompt, np.ndarray):
        single = prompt.ndim == (2 if kind == "mask" else 1)
        return ([prompt] if single else list(prompt)), not single
    items = list(prompt)
    if not items:
        raise ValueError(f"no {kind}s given to track")
    single = kind == "box" and all(np.ndim(item) == 0 for item in items)
    return ([prompt] if single else items), not single


def _video(frames: Sequence[Any]) -> tuple[list[np.ndarray], list[int]]:
    if isinstance(frames, np.ndarray) and frames.ndim == 3:
        raise ValueError("track needs a sequence of frames, got a single image; pass frames or frames[a:b]")
    try:
        count = len(frames)
    except TypeError as error:
        raise ValueError("track needs a sequence of frames (e.g. frames, frames[10:40] or frames[::5])") from error
    if count < 2:
        raise ValueError(f"track needs at least 2 frames, got {count}")
    if count > MAX_TRACK_FRAMES:
        step = -(-count // MAX_TRACK_FRAMES)
        raise ValueError(f"{count} frames is too many to track at once (at most {MAX_TRACK_FRAMES}); subsample, "
                         f"e.g. frames[::{step}], or track a range such as frames[a:a+{MAX_TRACK_FRAMES}]")
    arrays = [frame_array(frame) for frame in frames]
    indices = [frame_index(frame, position) for position, frame in enumerate(frames)]
    shapes = {array.shape for array in arrays}
    if len(shapes) != 1:
        raise ValueError(f"all frames must have the same size to track; got {sorted(shapes)}")
    if len(set(indices)) != len(indices):
        raise ValueError("the frames have repeated frame indices; pass each frame once, in time order")
    return arrays, indices


def _start_index(start_index: int | None, items: list[Any], indices: list[int]) -> int:
    if start_index is None:
        known = {getattr(item, "frame_index", None) for item in items} - {None}
        if len(known) > 1:
            raise ValueError(f"the prompt instances come from different frames {sorted(known)}; track them separately")
        start_index = known.pop() if known else indices[0]
    if start_index not in indices:
        raise ValueError(f"start frame {start_index} is not among the frames given ({indices[0]}..{indices[-1]}, "
                         f"{len(indices)} frames); include it or pass start_index=")
    return int(start_index)


def _run(arrays: list[np.ndarray], indices: list[int], prompts: list[Any], kind: str, start: int, method: str,
         model: Any, device: str | None) -> list[tuple[list[Instance], str]]:
    note = ""
    if method in ("auto", "sam2"):
        try:
            loaded = load_sam2_video(model, device)
        except (MissingWeightsError, ImportError) as error:
            if method == "sam2":
                raise
            note = f" (SAM 2 unavailable: {unavailable_reason(error)})"
        else:
            key = cache_key(loaded.model_id, loaded.version, "track", kind, prompts, start, indices, arrays)
            results = cached("track", key, lambda: sam2_track(loaded, arrays, indices, prompts, kind, start))
            return [(instances, f"SAM 2 video ({model_name(loaded.model_id)})") for instances in results]
    out = []
    for prompt in prompts:
        key = cache_key("optical-flow", FLOW_VERSION, "track", kind, prompt, start, indices, arrays)
        instances = cached("track", key, lambda: track_flow(arrays, indices, prompt, start))
        out.append((instances, f"optical flow (Lucas-Kanade + similarity){note}"))
    return out


# ---------------------------------------------------------------- classical optical-flow tracker

def track_flow(arrays: list[np.ndarray], indices: list[int], prompt: np.ndarray | tuple, start: int) -> list[Instance]:
    """Propagate one mask ((H, W) bool) or box ((x0, y0, x1, y1) pixels) from position ``start`` to every
    frame in ``arrays`` (forwards, then backwards); returns one ``Instance`` per frame in input order.

    Frame-to-frame similarity transforms are chained into one transform from the start frame, and the
    prompt is moved by that (so sub-pixel motion accumulates instead of being rounded away each frame).
    Once the object cannot be followed (too few consistent features, or it left the image) the remaining
    frames in that direction keep its last position with score 0.
    """
    import cv2

    grays = [cv2.cvtColor(array, cv2.COLOR_RGB2GRAY) for array in arrays]
    height, width = grays[0].shape
    is_mask = isinstance(prompt, np.ndarray) and prompt.ndim == 2
    results: list[Instance | None] = [None] * len(arrays)
    results[start] = _placed(prompt, is_mask, np.eye(3), 1.0, indices[start], width, height)
    for order in (range(start + 1, len(arrays)), range(start - 1, -1, -1)):
        transform, score, previous = np.eye(3), 1.0, start
        for position in order:
            if score > 0:
                region = _region(results[previous], width, height)
                step = _step(grays[previous], grays[position], region)
                if step is None:
                    score = 0.0
                else:
                    increment, score = step
                    transform = increment @ transform
                    if _appearance(grays[start], grays[position], prompt, is_mask, transform) < MIN_APPEARANCE:
                        score = 0.0  # the features moved coherently, but what is there no longer looks like it
            placed = _placed(prompt, is_mask, transform, score, indices[position], width, height)
            if placed.score == 0.0:
                score = 0.0
            results[position] = placed
            previous = position
    return results  # type: ignore[return-value]


def _appearance(first: np.ndarray, current: np.ndarray, prompt: Any, is_mask: bool, transform: np.ndarray) -> float:
    """Zero-mean normalised cross-correlation between the object in the start frame, moved by ``transform``,
    and the current frame, over its mask (or the central half of its box, where a box holds the object
    rather than its background); 1 = looks the same, ~0 = unrelated (it was occluded or has gone)."""
    import cv2

    height, width = first.shape
    if is_mask:
        support = prompt.astype(np.uint8)
    else:
        x0, y0, x1, y1 = prompt
        qx, qy = (x1 - x0) / 4.0, (y1 - y0) / 4.0
        support = np.zeros((height, width), np.uint8)
        support[max(int(round(y0 + qy)), 0):max(int(round(y1 - qy)), 0),
                max(int(round(x0 + qx)), 0):max(int(round(x1 - qx)), 0)] = 1
    moved = cv2.warpAffine(first.astype(np.float32), transform[:2], (width, height), flags=cv2.INTER_LINEAR)
    inside = cv2.warpAffine(support, transform[:2], (width, height), flags=cv2.INTER_NEAREST) > 0
    if inside.sum() < 16:
        return 1.0  # too little left inside the image to judge; leaving the image is handled by _placed
    a, b = moved[inside], current[inside].astype(np.float32)
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / max(np.sqrt((a * a).sum() * (b * b).sum()), 1e-6))


def _placed(prompt: Any, is_mask: bool, transform: np.ndarray, score: float, index: int, width: int,
            height: int) -> Instance:
    """The prompt moved by ``transform`` (3x3, start frame -> this frame) as an Instance; score 0 once it
    has left the image."""
    import cv2

    if is_mask:
        moved = cv2.warpAffine(prompt.astype(np.uint8), transform[:2], (width, height), flags=cv2.INTER_NEAREST) > 0
        box = mask_to_box(moved)
        if box is None:
            return Instance("object", 0.0, (0.0, 0.0, 0.0, 0.0), mask=moved, frame_index=index)
        return Instance("object", score, box, mask=moved, frame_index=index)
    x0, y0, x1, y1 = prompt
    corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)
    moved_xy = corners @ transform[:2, :2].T + transform[:2, 2]
    box = (float(moved_xy[:, 0].min()), float(moved_xy[:, 1].min()), float(moved_xy[:, 0].max()),
           float(moved_xy[:, 1].max()))
    inside = box[2] > 0 and box[3] > 0 and box[0] < width and box[1] < height
    return Instance("object", score if inside else 0.0, box, frame_index=index)


def _region(item: Instance, width: int, height: int) -> np.ndarray:
    """uint8 (H, W) feature-search mask: the instance's mask, else its box (clipped to the image)."""
    if item.mask is not None:
        return item.mask.astype(np.uint8) * 255
    region = np.zeros((height, width), np.uint8)
    x0, y0, x1, y1 = (int(round(v)) for v in item.box)
    region[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)] = 255
    return region


def _step(previous: np.ndarray, current: np.ndarray, region: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The 3x3 similarity transform taking ``region`` of ``previous`` onto ``current`` (grayscale), and the
    fraction of features that agree with it; None when it cannot be estimated."""
    import cv2

    area = float(np.count_nonzero(region))
    if area == 0:
        return None
    spacing = max(2, int(np.sqrt(area / 400)))
    corners = cv2.goodFeaturesToTrack(previous, maxCorners=400, qualityLevel=0.005, minDistance=spacing,
                                      mask=region, blockSize=5)
    if corners is None or len(corners) < 3:
        return None
    params = dict(winSize=(21, 21), maxLevel=4,
                  criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 40, 0.01))
    ahead, ok, _ = cv2.calcOpticalFlowPyrLK(previous, current, corners, None, **params)
    back, ok_back, _ = cv2.calcOpticalFlowPyrLK(current, previous, ahead, None, **params)
    error = np.linalg.norm((back - corners).reshape(-1, 2), axis=1)
    good = (ok.ravel() == 1) & (ok_back.ravel() == 1) & (error < 1.0)
    if good.sum() < 3:
        return None
    source, target = corners.reshape(-1, 2)[good], ahead.reshape(-1, 2)[good]
    matrix, inliers = cv2.estimateAffinePartial2D(source, target, method=cv2.RANSAC, ransacReprojThreshold=1.5,
                                                  maxIters=500, refineIters=20)
    agreement = float(inliers.sum()) / len(corners) if matrix is not None else 0.0
    own_motion = _own_motion(previous, current, region, params, source, target, matrix)
    if own_motion is not None:  # the box's dominant motion was the background's: follow the object's own
        matrix, agreement = own_motion
    if agreement < MIN_FLOW_AGREEMENT:
        return None
    return np.vstack([matrix, [0.0, 0.0, 1.0]]), agreement


def _own_motion(previous: np.ndarray, current: np.ndarray, region: np.ndarray, params: dict, source: np.ndarray,
                target: np.ndarray, dominant: np.ndarray | None) -> tuple[np.ndarray, float] | None:
    """Ego-motion compensation. When the region's dominant motion is the surrounding background's (a box
    prompt holds background, and the camera pans), and the features that do NOT move with the background
    (at least 5 and 30 %) agree on one motion of their own, that motion and its agreement; else None."""
    import cv2

    background = _background_motion(previous, current, region, params)
    if background is None or dominant is None:
        return None
    ys, xs = np.nonzero(region)
    centre = np.array([xs.mean(), ys.mean()])
    if np.linalg.norm(dominant[:, :2] @ centre + dominant[:, 2] - (background[:2, :2] @ centre + background[:2, 2])) > 1.0:
        return None  # the region already moves unlike its surroundings: nothing to compensate
    predicted = source @ background[:2, :2].T + background[:2, 2]
    own = np.linalg.norm(target - predicted, axis=1) > 1.5
    if own.sum() < max(5, 0.3 * len(source)):
        return None  # the object moves with the background (it is static in the scene)
    matrix, inliers = cv2.estimateAffinePartial2D(source[own], target[own], method=cv2.RANSAC,
                                                  ransacReprojThreshold=1.5, maxIters=500, refineIters=20)
    if matrix is None or inliers.sum() < 0.6 * own.sum():
        return None
    return matrix, float(inliers.sum()) / own.sum()


def _background_motion(previous: np.ndarray, current: np.ndarray, region: np.ndarray, params: dict) -> np.ndarray | None:
    """The 3x3 similarity of the background (features in a band around ``region``, outside it), i.e. the
    camera's motion near the object; None when the band has too few features or no consistent motion."""
    import cv2

    size = int(max(8, np.sqrt(max(np.count_nonzero(region), 1))))
    band = cv2.dilate(region, np.ones((size, size), np.uint8)) & ~region
    corners = cv2.goodFeaturesToTrack(previous, maxCorners=200, qualityLevel=0.005, minDistance=4, mask=band, blockSize=5)
    if corners is None or len(corners) < 8:
        return None
    ahead, ok, _ = cv2.calcOpticalFlowPyrLK(previous, current, corners, None, **params)
    back, ok_back, _ = cv2.calcOpticalFlowPyrLK(current, previous, ahead, None, **params)
    good = (ok.ravel() == 1) & (ok_back.ravel() == 1) & (np.linalg.norm((back - corners).reshape(-1, 2), axis=1) < 1.0)
    if good.sum() < 8:
        return None
    matrix, inliers = cv2.estimateAffinePartial2D(corners.reshape(-1, 2)[good], ahead.reshape(-1, 2)[good],
                                                  method=cv2.RANSAC, ransacReprojThreshold=1.5)
    if matrix is None or inliers.sum() < 0.5 * good.sum():
        return None
    return np.vstack([matrix, [0.0, 0.0, 1.0]])


# ---------------------------------------------------------------- SAM 2 video

def load_sam2_video(model: str | os.PathLike | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) SAM 2 video: ``model``, ``$SPATIALCLAW_TRACK_MODEL`` or SAM 2.1 Hiera tiny."""
    name = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_TRACK_MODEL") or DEFAULT_TRACK_MODEL
    try:
        return load_model("video-tracking", name, device=device, model_class="Sam2VideoModel",
                          processor_class="Sam2VideoProcessor")
    except ImportError as error:
        raise ImportError(f"SAM 2 video cannot run here: {str(error).rstrip('.')}. To fix: {_TORCHVISION_HINT}; or use "
                          "method='flow' (no weights needed)") from error


def sam2_track(loaded: LoadedModel, arrays: list[np.ndarray], indices: list[int], prompts: list[Any], kind: str,
               start: int) -> list[list[Instance]]:
    """Propagate all prompts together through the video with SAM 2; one list of per-frame instances each."""
    import torch

    height, width = arrays[0].shape[:2]
    processor, model = loaded.processor, loaded.model
    session = processor.init_video_session(video=np.stack(arrays), inference_device=model.device, dtype=model.dtype)
    object_ids = list(range(1, len(prompts) + 1))
    if kind == "mask":
        processor.add_inputs_to_inference_session(inference_session=session, frame_idx=start, obj_ids=object_ids,
                                                  input_masks=[mask.astype(bool) for mask in prompts])
    else:
        processor.add_inputs_to_inference_session(inference_session=session, frame_idx=start, obj_ids=object_ids,
                                                  input_boxes=[[list(box) for box in prompts]])
    per_frame: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    with torch.inference_mode():
        model(inference_session=session, frame_idx=start)
        for reverse in (False, True):
            for output in model.propagate_in_video_iterator(session, start_frame_idx=start, reverse=reverse):
                masks = processor.post_process_masks([output.pred_masks.float().cpu()],
                                                     original_sizes=[[height, width]], binarize=True)[0]
                scores = torch.sigmoid(output.object_score_logits.float().cpu()).reshape(-1) \
                    if output.object_score_logits is not None else torch.ones(len(prompts))
                per_frame[output.frame_idx] = (masks[:, 0].numpy().astype(bool), scores.numpy())
    results: list[list[Instance]] = [[] for _ in prompts]
    for position, index in enumerate(indices):
        masks, scores = per_frame[position]
        for obj in range(len(prompts)):
            mask = masks[obj]
            box = mask_to_box(mask)
            visible = box is not None
            results[obj].append(Instance("object", float(scores[obj]) if visible else 0.0,
                                         box or (0.0, 0.0, 0.0, 0.0), mask=mask, frame_index=index))
    return results
