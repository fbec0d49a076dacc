"""Following objects through video: ``track(frames, masks= / boxes= / points= / text=)``.

Given an object's mask, box or points in one frame (the start frame), returns where it is in every frame of
``frames`` (forwards and backwards from the start), as a ``Track`` of per-frame ``Instance`` values with
absolute frame indices; given a text, every object of that concept. Backends (the default chosen in
``backends.track_backend``, without loading anything):

- ``method="sam3"``: SAM 3 video (``$SPATIALCLAW_SAM3_MODEL`` or ``facebook/sam3``; ``model=`` a SAM 3 id or
  folder), without torchvision (``sam3_tracking``): a mask, box or points propagated by its video tracker
  (``Sam3TrackerVideoModel``); a text concept detected on every frame and tracked (``Sam3VideoModel``).
  Masks follow deformation and occlusion.
- ``method="sam2"``: SAM 2 video (``facebook/sam2.1-hiera-tiny``; ``model=`` or ``$SPATIALCLAW_TRACK_MODEL``)
  through ``transformers`` (``Sam2VideoModel`` + ``Sam2VideoProcessor``, which needs torchvision); masks and
  boxes.
- ``method="flow"``: classical, no weights. Lucas-Kanade optical flow (OpenCV) on corner features inside
  the mask/box, kept only when they pass a forward-backward check, then a RANSAC similarity transform
  (translation, rotation, uniform scale) moves the mask/box to the next frame. An instance's ``score`` is
  the fraction of features that agree with that motion; below 0.25 the object counts as lost from there
  on. Ego-motion compensation: the background's motion is measured in a band around the object; when the
  dominant motion inside a box is the background's (a panning camera, a box holding much background), the
  box follows the features that move on their own instead. Honest visibility: each frame the start
  frame's object, moved by the track, is correlated with what is there now (its mask, or the central half
  of its box); below 0.3 it counts as occluded or gone (lost), even when features still move coherently.
  Key frames far apart: when the flow from its last position fails, its last step and a re-detection of
  its appearance (template matching at several scales) are tried as coarse guesses that the flow refines,
  so it follows objects moving up to ~40% of their size per frame and approaching or receding. Rigid
  objects; it does not follow deformation, and a mask spanning several depths follows the dominant one.
  For the camera's own motion use ``motion``.
- ``method="auto"`` (default): SAM 3 where its checkpoint serves the prompt kind here, else SAM 2 when its
  weights and torchvision are available, else flow; text without SAM 3 video is segmented in the start
  frame (``segment(text=)``) and those masks are followed. The route taken, and why a preferred backend
  was not, is printed with the result. Points need SAM 3 (SAM 2 and flow take masks or boxes).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.perception.backends import is_sam3, sam3_id, sam3_problem
from spatialclaw.primitives.perception.cache import cache_key, cached
from spatialclaw.primitives.perception.flow_tracking import FLOW_VERSION, track_flow
from spatialclaw.primitives.perception.inputs import (
    as_box,
    as_boxes,
    as_mask,
    as_points,
    frame_array,
    frame_index,
    model_name,
    text_labels,
    unavailable_reason,
)
from spatialclaw.primitives.perception.instances import Instance
from spatialclaw.primitives.perception.models import MissingWeightsError
from spatialclaw.primitives.perception.sam2_tracking import load_sam2_video, sam2_track
from spatialclaw.primitives.perception.sam3_tracking import (
    load_sam3_tracker_video,
    load_sam3_video,
    sam3_concept_track,
    sam3_track,
)
from spatialclaw.primitives.perception.segment import segment
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
    points: Any = None,
    point_labels: Sequence[int] | None = None,
    text: str | Sequence[str] | None = None,
) -> Track | list[Track]:
    """Follow objects from a start frame through ``frames`` (both directions); one ``Track`` per object.

    ``frames``: a sequence of frames (``frames``, ``frames[10:40]``, ``frames[::5]``; or PIL images /
    (H, W, 3) arrays, then numbered 0..T-1), all the same size, at most ``MAX_TRACK_FRAMES``.
    Prompt with ``masks`` ((H, W) bool, (N, H, W), an ``Instance`` with a mask or ``Detections``),
    ``boxes`` ((x0, y0, x1, y1) pixels, (N, 4), an ``Instance`` or ``Detections``), ``points`` ((x, y) or a
    list of (x, y) pixels on ONE object, ``point_labels`` 1 = object / 0 = background, optionally with one
    box; needs SAM 3), or ``text`` (a label or list of labels: every matching object, found on every frame
    with SAM 3 video, else in the start frame by ``segment(text=)``; always a list, empty when none).
    ``start_index``: the absolute frame index the prompt belongs to (default: the instance's
    ``frame_index``, else the first frame). ``label`` names the tracks (default: the instance labels or the
    text, else "object"). Returns a ``Track`` for one object, a list of ``Track`` for several. ``method``:
    "auto", "sam3", "sam2" or "flow" (see the module doc; ``model=`` names its checkpoint). Example:
    ``cup = segment(frames[0], text="cup")[0]; t = track(frames[:30], masks=cup); print(t); t.centroids``.
    """
    given = [name for name, value in (("masks", masks), ("boxes", boxes), ("points", points), ("text", text))
             if value is not None]  # fmt: skip
    if len(given) != 1 and sorted(given) != ["boxes", "points"]:
        raise ValueError(
            "track needs exactly one prompt: masks= (an (H, W) bool mask or an Instance with a mask), "
            "boxes= ((x0, y0, x1, y1) pixels), points= ([(x, y)] pixels on one object, optionally with one box) "
            f"or text= ('cup'); got {', '.join(given) or 'none'}"
        )
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
    arrays, indices = _video(frames)
    if text is not None:
        return _track_text(frames, arrays, indices, text_labels(text), start_index, label, method, model, device)
    height, width = arrays[0].shape[:2]
    kind = "mask" if masks is not None else "points" if points is not None else "box"
    prompts: list[Any]
    if kind == "points":
        items = [boxes] if boxes is not None else []
        box = as_boxes(boxes, width, height) if boxes is not None else None
        if box is not None and len(box) != 1:
            raise ValueError(f"points describe ONE object, so combine them with one box, not {len(box)}")
        prompts, many = [_points_prompt(points, point_labels, box[0] if box else None, width, height)], False
        names = [label or getattr(boxes, "label", None) or "object"]
    else:
        items, many = _prompt_items(masks if masks is not None else boxes, kind)
        names = [label] * len(items) if label is not None else [getattr(item, "label", "object") for item in items]
        if kind == "mask":
            prompts = [as_mask(item, height, width) for item in items]
        else:
            prompts = [as_box(item, width, height) for item in items]
    start = _start_index(start_index, items, indices)
    tracks = _run(arrays, indices, prompts, kind, indices.index(start), method, model, device)
    out = [
        Track(name, [_named(item, name) for item in instances], route, start, frames)
        for name, (instances, route) in zip(names, tracks, strict=True)
    ]
    return out if many else out[0]


_METHODS = ("auto", "sam3", "sam2", "flow")


def _points_prompt(
    points: Any, point_labels: Sequence[int] | None, box: Any, width: int, height: int
) -> tuple[list[list[float]], list[int], tuple[float, float, float, float] | None]:
    """(points (K, 2) pixels as lists, labels (K,), box or None), checked as ``segment`` checks them."""
    coords = as_points(points, width, height)
    flags = [1] * len(coords) if point_labels is None else [int(v) for v in point_labels]
    if len(flags) != len(coords) or not set(flags) <= {0, 1}:
        raise ValueError(f"point_labels must give 1 (object) or 0 (background) for each of the {len(coords)} points")
    if 1 not in flags and box is None:
        raise ValueError("all points are background (0); mark at least one point on the object with 1")
    return coords.tolist(), flags, box


def _track_text(
    frames: Sequence[Any],
    arrays: list[np.ndarray],
    indices: list[int],
    labels: list[str],
    start_index: int | None,
    label: str | None,
    method: str,
    model: Any,
    device: str | None,
) -> list[Track]:
    """Every object of the ``labels`` concepts: SAM 3 video where it can answer (or is asked for), else the
    objects ``segment(text=)`` finds in the start frame, each followed from its mask."""
    start = _start_index(start_index, [], indices)
    note = ""
    name = os.fspath(model) if model is not None else None
    named_sam3 = name is not None and (name.lower() == "sam3" or is_sam3(name))
    if method == "sam3" or (method == "auto" and (name is None or named_sam3)):
        problem = None if method == "sam3" else sam3_problem("video-text", name)
        if problem is None:
            try:
                loaded = load_sam3_video(sam3_id(name), device)
            except (MissingWeightsError, ImportError) as error:
                if method == "sam3":
                    raise
                problem = unavailable_reason(error)
            else:
                key = cache_key(loaded.model_id, loaded.version, "track-text", labels, indices, arrays)
                objects = cached("track", key, lambda: sam3_concept_track(loaded, arrays, indices, labels))
                route = f"SAM 3 video, text concept ({model_name(loaded.model_id)})"
                return [
                    Track(label or text, instances, route, _first_seen(instances), frames)
                    for text, instances in objects
                ]
        note = f" (SAM 3 video unavailable: {problem})"
        model = None if named_sam3 else model  # a SAM 3 that cannot answer text is not asked to follow the masks
    position = indices.index(start)
    found = segment(frames[position], text=labels, device=device)
    kept = [item for item in found if item.mask is not None and item.mask.any()]  # an empty mask cannot be followed
    if not kept:
        return []
    prompts = [item.mask for item in kept]
    tracks = _run(arrays, indices, prompts, "mask", position, method, model, device)
    return [
        Track(label or item.label, [_named(i, label or item.label) for i in instances],
              f"{route}; found in frame {start} by segment(text=) via {found.backend}{note}", start, frames)
        for item, (instances, route) in zip(kept, tracks, strict=True)
    ]  # fmt: skip


def _first_seen(instances: list[Instance]) -> int:
    """The absolute index of the first frame where the object is visible."""
    return next(int(item.frame_index) for item in instances if item.score > 0 and item.frame_index is not None)


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
    """(per-frame instances, route) per prompt, from the first backend of :func:`_candidates` that loads;
    with ``method="auto"`` a backend that cannot load is skipped and the route says why."""
    notes: list[str] = []
    for backend, name in _candidates(method, model, kind, notes):
        if backend == "flow":
            break
        title = "SAM 3" if backend == "sam3" else "SAM 2"
        try:
            loaded = load_sam3_tracker_video(name, device) if backend == "sam3" else load_sam2_video(name, device)
        except (MissingWeightsError, ImportError) as error:
            if method != "auto":
                raise
            notes.append(f"{title} unavailable: {unavailable_reason(error)}")
            continue
        run = sam3_track if backend == "sam3" else sam2_track
        key = cache_key(loaded.model_id, loaded.version, f"track-{backend}", kind, prompts, start, indices, arrays)
        results = cached("track", key, lambda: run(loaded, arrays, indices, prompts, kind, start))  # noqa: B023
        note = f" ({'; '.join(notes)})" if notes else ""
        return [(instances, f"{title} video ({model_name(loaded.model_id)}){note}") for instances in results]
    note = f" ({'; '.join(notes)})" if notes else ""
    if kind == "points":
        raise ValueError(
            f"track(points=...) needs SAM 3 video{note or ' (method=' + repr(method) + ')'}; SAM 2 and optical flow "
            "follow masks and boxes: segment the object first, e.g. m = segment(frames[i], points=[(x, y)])[0]; "
            "track(frames, masks=m)"
        )
    out = []
    for prompt in prompts:
        key = cache_key("optical-flow", FLOW_VERSION, "track", kind, prompt, start, indices, arrays)
        instances = cached("track", key, partial(track_flow, arrays, indices, prompt, start))
        out.append((instances, f"optical flow (Lucas-Kanade + similarity){note}"))
    return out


def _candidates(method: str, model: Any, kind: str, notes: list[str]) -> list[tuple[str, Any]]:
    """The backends to try in order, as (backend, model): ``method`` itself, or for "auto" the explicit
    ``model`` / ``$SPATIALCLAW_TRACK_MODEL`` (SAM 3 or SAM 2 by its config), else SAM 3 where its checkpoint
    serves video here (else ``notes`` gets why not), then SAM 2, then flow. Points skip SAM 2."""
    if method != "auto":
        usable = kind != "points" or method == "sam3"  # SAM 2 and flow follow masks and boxes only
        return [(method, sam3_id(model) if method == "sam3" else model)] if usable else []
    name = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_TRACK_MODEL")
    if name is not None:
        sam3 = name.lower() == "sam3" or is_sam3(name)
        return [("sam3", sam3_id(name)) if sam3 else ("sam2", name), ("flow", None)]
    problem = sam3_problem("video")
    if problem is not None:
        notes.append(f"SAM 3 unavailable: {problem}")
    first = [("sam3", sam3_id())] if problem is None else []
    return first + ([] if kind == "points" else [("sam2", None)]) + [("flow", None)]
