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
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.perception.cache import cache_key, cached
from spatialclaw.primitives.perception.flow_tracking import FLOW_VERSION, track_flow
from spatialclaw.primitives.perception.inputs import (
    as_box,
    as_mask,
    frame_array,
    frame_index,
    model_name,
    unavailable_reason,
)
from spatialclaw.primitives.perception.instances import Instance
from spatialclaw.primitives.perception.models import MissingWeightsError
from spatialclaw.primitives.perception.sam2_tracking import load_sam2_video, sam2_track
from spatialclaw.primitives.perception.track_result import Track

__all__ = ["MAX_TRACK_FRAMES", "track"]

MAX_TRACK_FRAMES = 400


def track(
    frames: Sequence[Any],
    masks: Any = None,
    boxes: Any = None,
    start_index: int | None = None,
    label: str | None = None,
    method: str = "auto",
    model: str | os.PathLike[str] | None = None,
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
        raise ValueError(
            "track needs exactly one prompt: masks= (an (H, W) bool mask or an Instance with a mask) "
            "or boxes= ((x0, y0, x1, y1) pixels)"
        )
    if method not in ("auto", "sam2", "flow"):
        raise ValueError(f"method must be 'auto', 'sam2' or 'flow', got {method!r}")
    arrays, indices = _video(frames)
    height, width = arrays[0].shape[:2]
    kind = "mask" if masks is not None else "box"
    items, many = _prompt_items(masks if masks is not None else boxes, kind)
    names = [label] * len(items) if label is not None else [getattr(item, "label", "object") for item in items]
    start = _start_index(start_index, items, indices)
    prompts: list[np.ndarray] | list[tuple[float, float, float, float]]
    if kind == "mask":
        prompts = [as_mask(item, height, width) for item in items]
    else:
        prompts = [as_box(item, width, height) for item in items]
    tracks = _run(arrays, indices, prompts, kind, indices.index(start), method, model, device)
    out = [
        Track(name, [_named(item, name) for item in instances], route, start, frames)
        for name, (instances, route) in zip(names, tracks, strict=True)
    ]
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
        raise ValueError(
            f"{count} frames is too many to track at once (at most {MAX_TRACK_FRAMES}); subsample, "
            f"e.g. frames[::{step}], or track a range such as frames[a:a+{MAX_TRACK_FRAMES}]"
        )
    arrays = [frame_array(frame) for frame in frames]
    # frame_index returns its default (the position, an int) for frames without an absolute index
    indices = cast(list[int], [frame_index(frame, position) for position, frame in enumerate(frames)])
    shapes = {array.shape for array in arrays}
    if len(shapes) != 1:
        raise ValueError(f"all frames must have the same size to track; got {sorted(shapes)}")
    if len(set(indices)) != len(indices):
        raise ValueError("the frames have repeated frame indices; pass each frame once, in time order")
    return arrays, indices


def _start_index(start_index: int | None, items: list[Any], indices: list[int]) -> int:
    if start_index is None:
        known = {index for item in items if (index := getattr(item, "frame_index", None)) is not None}
        if len(known) > 1:
            raise ValueError(f"the prompt instances come from different frames {sorted(known)}; track them separately")
        start_index = known.pop() if known else indices[0]
    if start_index not in indices:
        raise ValueError(
            f"start frame {start_index} is not among the frames given ({indices[0]}..{indices[-1]}, "
            f"{len(indices)} frames); include it or pass start_index="
        )
    return int(start_index)


def _run(
    arrays: list[np.ndarray],
    indices: list[int],
    prompts: list[Any],
    kind: str,
    start: int,
    method: str,
    model: Any,
    device: str | None,
) -> list[tuple[list[Instance], str]]:
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
        instances = cached("track", key, partial(track_flow, arrays, indices, prompt, start))
        out.append((instances, f"optical flow (Lucas-Kanade + similarity){note}"))
    return out
