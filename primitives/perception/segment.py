"""Instance masks: ``segment(frame, points=...)``, ``segment(frame, box=...)`` or ``segment(frame, text=...)``.

Backends (through ``transformers``; hub ids are defaults, a local ``save_pretrained`` folder works too):

- points / boxes: the SAM 3 tracker (``Sam3TrackerModel``, ``sam3_prompts``) wherever SAM 3's checkpoint
  serves them here (the full ``facebook/sam3`` does; chosen in ``backends``), else SAM
  (``facebook/sam-vit-base``). Choose with ``model=`` or ``$SPATIALCLAW_SEGMENT_MODEL``: ``"sam3"`` (or a SAM 3
  hub id / folder), or a SAM id / alias ``"sam-vit-base"``, ``"sam-vit-large"``, ``"sam-vit-huge"``.
- text: SAM 3 (``$SPATIALCLAW_SAM3_MODEL`` or ``facebook/sam3``, gated on the hub: accept its licence
  first) wherever its weights are on this machine (chosen in ``backends``; no torchvision needed);
  otherwise text -> ``detect`` boxes (Grounding DINO / OWLv2) -> SAM masks. Choose with ``text_model=`` or
  ``$SPATIALCLAW_SEGMENT_TEXT_MODEL``: ``"sam3"`` (or a SAM 3 hub id / folder) or ``"detect"``. The route
  taken is printed with the result.

Masks are (H, W) bool at the frame's full resolution; boxes (x0, y0, x1, y1) pixels, origin top-left.
Results are cached on disk by model, version, arguments and frame pixels.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.perception import remote
from spatialclaw.primitives.perception.backends import (
    DEFAULT_SAM3_MODEL,
    is_sam3,
    prompt_backend,
    sam3_id,
    sam3_problem,
    text_backend,
)
from spatialclaw.primitives.perception.cache import cache_key, cached
from spatialclaw.primitives.perception.detect import detect
from spatialclaw.primitives.perception.inputs import (
    as_boxes,
    as_points,
    frame_array,
    frame_index,
    model_name,
    text_labels,
    unavailable_reason,
)
from spatialclaw.primitives.perception.instances import Box, Detections, Instance
from spatialclaw.primitives.perception.models import LoadedModel, MissingWeightsError, load_model
from spatialclaw.primitives.perception.sam3 import SAM3_DEFAULT_THRESHOLD, Sam3PixelInputs, load_sam3, sam3_instances
from spatialclaw.primitives.perception.sam3_prompts import load_sam3_tracker, sam3_prompt_masks

__all__ = [
    "DEFAULT_SAM3_MODEL",
    "DEFAULT_SAM_MODEL",
    "prompt_segmenter_id",
    "sam_id",
    "segment",
    "text_segmenter_id",
]

DEFAULT_SAM_MODEL = "facebook/sam-vit-base"
SAM_ALIASES = {f"sam-vit-{size}": f"facebook/sam-vit-{size}" for size in ("base", "large", "huge")}
SAM_ALIASES["sam"] = DEFAULT_SAM_MODEL
_SAM_TYPES = ("sam", "sam_hq")


def sam_id(model: str | os.PathLike[str] | None = None) -> str:
    """The SAM hub id or folder for point/box prompts: ``model``, ``$SPATIALCLAW_SEGMENT_MODEL`` or SAM ViT-B."""
    name = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_SEGMENT_MODEL") or DEFAULT_SAM_MODEL
    return SAM_ALIASES.get(name.lower(), name)


def prompt_segmenter_id(model: str | os.PathLike[str] | None = None) -> str:
    """The model for point/box prompts: ``model`` or ``$SPATIALCLAW_SEGMENT_MODEL`` (``"sam3"``, a SAM 3 hub id /
    folder, or SAM), else SAM 3 where its checkpoint serves point/box prompts here (``backends.prompt_backend``),
    else SAM ViT-B."""
    name = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_SEGMENT_MODEL")
    if name is None:
        chosen = prompt_backend()
        return DEFAULT_SAM_MODEL if chosen == "fallback" else chosen
    return sam3_id(name) if name.lower() == "sam3" else sam_id(name)


def text_segmenter_id(text_model: str | os.PathLike[str] | None = None) -> str:
    """``"detect"`` (detector boxes -> SAM) or a SAM 3 hub id / folder, from ``text_model``,
    ``$SPATIALCLAW_SEGMENT_TEXT_MODEL``, else SAM 3 when it can answer here (``backends.text_backend``),
    else ``"detect"``."""
    name = os.fspath(text_model) if text_model is not None else os.environ.get("SPATIALCLAW_SEGMENT_TEXT_MODEL")
    if name is None:
        chosen = text_backend()
        return "detect" if chosen == "fallback" else chosen
    return "detect" if name.lower() == "detect" else sam3_id(name)


def segment(
    frame: Any,
    text: str | Sequence[str] | None = None,
    points: Any = None,
    box: Any = None,
    point_labels: Sequence[int] | None = None,
    label: str | None = None,
    model: str | os.PathLike[str] | None = None,
    text_model: str | os.PathLike[str] | None = None,
    detector: str | os.PathLike[str] | None = None,
    threshold: float | None = None,
    mask_threshold: float = 0.0,
    device: str | None = None,
) -> Detections:
    """Segment objects in one frame; returns ``Detections`` whose instances all have masks.

    Prompt with exactly one of:
    - ``points``: (x, y) or a list of (x, y) pixels on ONE object (``point_labels``: 1 = on the object,
      0 = background; default all 1). May be combined with one ``box``. Gives one instance.
    - ``box``: (x0, y0, x1, y1) pixels, an (N, 4) list/array, an ``Instance`` or ``Detections``: one
      instance per box (labels carried over from instances).
    - ``text``: a label or list of labels ("chair"); every matching object, one instance each.
    ``label`` names point/box instances (default "object"). ``threshold``: minimum score for text results
    (SAM 3 default 0.5; via detect, the detector's default). For point/box prompts ``score`` is SAM's
    predicted mask IoU. ``mask_threshold``: logit threshold for SAM masks. Masks are (H, W) bool at the
    frame's resolution; each box is the tight box around its mask (pixels, origin top-left);
    ``frame_index`` is the frame's absolute index.
    Examples: ``segment(frames[0], points=[(320, 240)])``, ``segment(frames[0], box=detect(frames[0], "cup")[0])``,
    ``segment(frames[0], text="chair")``.
    """
    array = frame_array(frame)
    if text is not None and (points is not None or box is not None):
        raise ValueError(
            "give either text= or points=/box=, not both; e.g. segment(frame, text='chair') or "
            "segment(frame, points=[(x, y)])"
        )
    if text is None and points is None and box is None:
        raise ValueError("segment needs a prompt: text='chair', points=[(x, y)] or box=(x0, y0, x1, y1) in pixels")
    if text is not None:
        found = _segment_text(
            frame, array, text_labels(text), model, text_model, detector, threshold, mask_threshold, device
        )
    else:
        found = _segment_prompts(frame, array, points, box, point_labels, label, model, mask_threshold, device)
    index = frame_index(frame)
    return Detections([replace(item, frame_index=index) for item in found], frame, backend=found.backend)


def _segment_prompts(
    frame: Any,
    array: np.ndarray,
    points: Any,
    box: Any,
    point_labels: Sequence[int] | None,
    label: str | None,
    model: Any,
    mask_threshold: float,
    device: str | None,
) -> Detections:
    height, width = array.shape[:2]
    boxes = as_boxes(box, width, height) if box is not None else None
    coords = as_points(points, width, height) if points is not None else None
    flags = None
    if coords is not None:
        if boxes is not None and len(boxes) != 1:
            raise ValueError(f"points describe ONE object, so combine them with one box, not {len(boxes)}")
        flags = [1] * len(coords) if point_labels is None else [int(v) for v in point_labels]
        if len(flags) != len(coords) or not set(flags) <= {0, 1}:
            raise ValueError(
                f"point_labels must give 1 (object) or 0 (background) for each of the {len(coords)} points"
            )
        if 1 not in flags and boxes is None:
            raise ValueError("all points are background (0); mark at least one point on the object with 1")
    loaded, note = _prompt_model(model, device)
    count = len(boxes) if boxes is not None else 1
    names = [label] * count if label is not None else _labels_of(box) or ["object"] * count
    instances = _prompt_instances(loaded, array, boxes, coords, flags, names, mask_threshold)
    return Detections(instances, frame, backend=model_name(loaded.model_id) + note)


def _prompt_model(
    model: str | os.PathLike[str] | None, device: str | None
) -> tuple[LoadedModel | remote.RemoteModel, str]:
    """(the model for point/box prompts, a note on a fallback taken): the SAM 3 tracker where it is chosen
    (``prompt_segmenter_id``), else SAM loaded here, or hosted by the perception service named by
    ``$SPATIALCLAW_PERCEPTION`` (which serves SAM for point/box prompts)."""
    service = remote.service()
    explicit = model is not None or os.environ.get("SPATIALCLAW_SEGMENT_MODEL") is not None
    chosen = prompt_segmenter_id(model) if explicit or service is None else sam_id(None)
    note = ""
    if is_sam3(chosen):
        try:
            return load_sam3_tracker(chosen, device), ""
        except (MissingWeightsError, ImportError) as error:
            if explicit:
                raise
            note = f" (SAM 3 unavailable: {unavailable_reason(error)})"
        chosen = sam_id(None)
    if service is not None:
        return service.model("sam", chosen), note
    return load_sam(chosen, device), note


def _prompt_instances(
    loaded: LoadedModel | remote.RemoteModel,
    array: np.ndarray,
    boxes: list[Box] | None,
    coords: np.ndarray | None,
    flags: list[int] | None,
    names: list[str],
    mask_threshold: float,
) -> list[Instance]:
    """SAM instances in prompt order (one per box, or one for the point set); cached."""
    points = None if coords is None else coords.tolist()
    key = cache_key(loaded.model_id, loaded.version, "segment", boxes, points, flags, mask_threshold, array)

    def compute() -> tuple[list[np.ndarray], list[float]]:
        if isinstance(loaded, remote.RemoteModel):
            return cast(
                tuple[list[np.ndarray], list[float]],
                loaded.run(array=array, boxes=boxes, points=points, point_labels=flags, mask_threshold=mask_threshold),
            )
        if isinstance(loaded.processor, Sam3PixelInputs):
            return sam3_prompt_masks(loaded, array, boxes, coords, flags, mask_threshold)
        return sam_masks(loaded, array, boxes, coords, flags, mask_threshold)

    masks, scores = cached("segment", key, compute)
    fallbacks: list[Box]
    if boxes is not None:
        fallbacks = boxes  # an empty mask keeps its prompt box
    else:
        assert coords is not None  # without boxes, the prompt is the point set
        fallbacks = [(coords[:, 0].min(), coords[:, 1].min(), coords[:, 0].max(), coords[:, 1].max())]
    return [
        Instance(name, score, fallback).with_mask(mask)
        for name, mask, score, fallback in zip(names, masks, scores, fallbacks, strict=True)
    ]


def _labels_of(box: Any) -> list[str] | None:
    if hasattr(box, "label") and not isinstance(box, np.ndarray):
        return [box.label]
    if isinstance(box, Detections) or (
        isinstance(box, (list, tuple)) and box and all(hasattr(b, "label") for b in box)
    ):
        return [item.label for item in box]
    return None


def load_sam(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) the SAM model for point/box prompts (see ``sam_id``)."""
    loaded = load_model("mask-generation", sam_id(model), device=device)
    model_type = getattr(loaded.model.config, "model_type", "")
    if model_type not in _SAM_TYPES:
        raise ValueError(
            f"{loaded.model_id!r} is a {model_type!r} model; point/box segmentation needs SAM "
            f"(e.g. {DEFAULT_SAM_MODEL})"
        )
    return loaded


def sam_masks(
    loaded: LoadedModel,
    array: np.ndarray,
    boxes: list[Box] | None,
    points: np.ndarray | None,
    point_labels: list[int] | None,
    mask_threshold: float = 0.0,
) -> tuple[list[np.ndarray], list[float]]:
    """Run SAM once: one (H, W) bool mask and predicted IoU per box, or one for the point set (with an
    optional single box). Points alone ask for three candidate masks and keep the best-scored one."""
    import torch
    from PIL import Image

    kwargs: dict[str, Any] = {}
    if boxes is not None:
        kwargs["input_boxes"] = [[list(b) for b in boxes]]
    if points is not None:
        kwargs["input_points"] = [[points.tolist()]]
        assert point_labels is not None  # one label per point, from segment()
        kwargs["input_labels"] = [[list(point_labels)]]
    inputs = loaded.processor(images=Image.fromarray(array), return_tensors="pt", **kwargs)
    model_inputs = {
        name: value.to(loaded.model.device)
        for name, value in inputs.items()
        if name in ("pixel_values", "input_points", "input_labels", "input_boxes")
    }
    model_inputs["pixel_values"] = model_inputs["pixel_values"].to(loaded.model.dtype)
    for name in ("input_points", "input_boxes"):
        if name in model_inputs:
            model_inputs[name] = model_inputs[name].to(loaded.model.dtype)
    multimask = boxes is None
    with torch.inference_mode():
        outputs = loaded.model(**model_inputs, multimask_output=multimask)
    logits = outputs.pred_masks.float().cpu()  # (1, objects, candidates, h, w)
    iou = outputs.iou_scores.float().cpu()[0]  # (objects, candidates)
    masks = loaded.processor.post_process_masks(
        logits, inputs["original_sizes"], inputs["reshaped_input_sizes"], mask_threshold=mask_threshold
    )[0]  # (objects, candidates, H, W)
    best = iou.argmax(dim=-1)
    chosen = [masks[i, int(best[i])].numpy().astype(bool) for i in range(masks.shape[0])]
    scores = [float(iou[i, int(best[i])].clamp(0, 1)) for i in range(masks.shape[0])]
    return chosen, scores


def _segment_text(
    frame: Any,
    array: np.ndarray,
    labels: list[str],
    model: Any,
    text_model: Any,
    detector: Any,
    threshold: float | None,
    mask_threshold: float,
    device: str | None,
) -> Detections:
    explicit = text_model is not None or os.environ.get("SPATIALCLAW_SEGMENT_TEXT_MODEL") is not None
    service = remote.service()
    # on a perception service the weights are there, not here: try SAM 3 first and fall back on failure
    choice = sam3_id() if service is not None and not explicit else text_segmenter_id(text_model)
    fallback_reason = ""
    if choice == "detect" and not explicit and service is None:
        fallback_reason = f" (SAM 3 unavailable: {sam3_problem()})"
    if choice != "detect":
        try:
            loaded = service.model("sam3", choice) if service is not None else load_sam3(choice, device)
        except (MissingWeightsError, ImportError) as error:
            if explicit:
                raise
            fallback_reason = f" (SAM 3 unavailable: {unavailable_reason(error)})"
        else:
            return _segment_with_sam3(
                frame, array, labels, loaded, SAM3_DEFAULT_THRESHOLD if threshold is None else threshold
            )
    boxes = detect(frame, labels, model=detector, threshold=threshold, device=device)
    loaded, note = _prompt_model(model, device)
    route = f"{boxes.backend} boxes + {model_name(loaded.model_id)}{note} masks{fallback_reason}"
    if not boxes:
        return Detections([], frame, backend=route)
    masked = _prompt_instances(loaded, array, [item.box for item in boxes], None, None, boxes.labels, mask_threshold)
    instances = [
        replace(item, score=source.score) for item, source in zip(masked, boxes, strict=True)
    ]  # detector confidence
    return Detections(instances, frame, backend=route)


def _segment_with_sam3(
    frame: Any, array: np.ndarray, labels: list[str], loaded: LoadedModel | remote.RemoteModel, threshold: float
) -> Detections:
    key = cache_key(loaded.model_id, loaded.version, "segment-text", labels, threshold, array)
    if isinstance(loaded, remote.RemoteModel):
        compute = lambda: loaded.run(array=array, labels=labels, threshold=threshold)  # noqa: E731
    else:
        compute = lambda: [  # noqa: E731
            item.with_mask(item.mask)
            for item in sam3_instances(loaded, array, labels, threshold)
            if item.mask is not None
        ]  # each box: the tight box around its mask
    instances = cached("segment", key, compute)
    return Detections(instances, frame, backend=model_name(loaded.model_id))
