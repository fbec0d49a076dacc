"""Open-vocabulary object detection: ``detect(frame, "chair")`` finds boxes for a text description.

Backends (through ``transformers``, weights from the Hugging Face hub or a local folder):

- SAM 3 (alias ``"sam3"`` = ``$SPATIALCLAW_SAM3_MODEL`` or ``facebook/sam3``): the default wherever its
  weights are on this machine (chosen in ``backends``). One text (concept) prompt gives every matching
  instance with box, score AND mask; default threshold 0.5.
- Grounding DINO (default ``IDEA-Research/grounding-dino-tiny``; alias ``"grounding-dino"``,
  ``"grounding-dino-base"``): strong on phrases ("the red mug on the left"); scores are calibrated
  enough that 0.3 is a sensible threshold.
- OWLv2 (alias ``"owlv2"`` = ``google/owlv2-base-patch16-ensemble``, ``"owlv2-large"``): one score per
  label; scores are lower, its default threshold is 0.1.

Without SAM 3 weights the default is Grounding DINO tiny. Choose with ``model=`` (an alias, a hub id or a local folder written by ``save_pretrained``) or the
environment variable ``SPATIALCLAW_DETECT_MODEL``. Results are cached on disk by model, version,
arguments and frame pixels.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.perception import remote
from spatialclaw.primitives.perception.backends import sam3_id, text_backend
from spatialclaw.primitives.perception.cache import cache_key, cached
from spatialclaw.primitives.perception.inputs import frame_array, frame_index, model_name, text_labels
from spatialclaw.primitives.perception.instances import Detections, Instance, box_iou
from spatialclaw.primitives.perception.models import LoadedModel, load_model
from spatialclaw.primitives.perception.sam3 import SAM3_DEFAULT_THRESHOLD, is_sam3, load_sam3, sam3_instances

__all__ = ["DEFAULT_DETECT_MODEL", "DETECT_ALIASES", "detect", "detector_family", "detector_id", "load_detector"]

DEFAULT_DETECT_MODEL = "IDEA-Research/grounding-dino-tiny"
DETECT_ALIASES = {
    "grounding-dino": DEFAULT_DETECT_MODEL,
    "grounding-dino-tiny": DEFAULT_DETECT_MODEL,
    "grounding-dino-base": "IDEA-Research/grounding-dino-base",
    "owlv2": "google/owlv2-base-patch16-ensemble",
    "owlv2-large": "google/owlv2-large-patch14-ensemble",
}
_DEFAULT_THRESHOLD = {"grounding-dino": 0.3, "owlv2": 0.1, "sam3": SAM3_DEFAULT_THRESHOLD}


def detector_id(model: str | os.PathLike[str] | None = None) -> str:
    """The hub id or folder ``detect`` uses: ``model``, else ``$SPATIALCLAW_DETECT_MODEL``, else SAM 3 when it
    can answer here (``backends.text_backend``), else Grounding DINO tiny; aliases ("sam3", "owlv2",
    "grounding-dino", ...) are expanded."""
    name = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_DETECT_MODEL") or ""
    if not name:
        chosen = text_backend()
        return chosen if chosen != "fallback" else DEFAULT_DETECT_MODEL
    return sam3_id(name) if name.lower() == "sam3" else DETECT_ALIASES.get(name.lower(), name)


def load_detector(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) the detector named by ``model`` (see ``detector_id``)."""
    if is_sam3(detector_id(model)):
        return load_sam3(detector_id(model), device)
    loaded = load_model("zero-shot-object-detection", detector_id(model), device=device)
    detector_family(loaded)  # fail early on a model that is not a supported detector
    return loaded


def detect(
    frame: Any,
    text: str | Sequence[str],
    model: str | os.PathLike[str] | None = None,
    threshold: float | None = None,
    text_threshold: float = 0.25,
    nms_iou: float = 0.5,
    max_instances: int = 50,
    device: str | None = None,
) -> Detections:
    """Find objects described by ``text`` in one frame; returns ``Detections`` (most confident first).

    ``frame``: a ``Frame`` (e.g. ``frames[3]``), PIL image or (H, W, 3) uint8 array. ``text``: one label
    ("chair") or a list (["chair", "table"]); each instance's ``label`` is the query label it matched.
    ``threshold``: minimum confidence in [0, 1] (default 0.5 for SAM 3, 0.3 for Grounding DINO, 0.1 for OWLv2);
    ``text_threshold``: Grounding DINO's per-token threshold for naming the phrase (a box whose phrase
    shares no word with any label is dropped). Overlapping boxes of the
    same label with IoU > ``nms_iou`` are merged (the best is kept); at most ``max_instances`` are returned.
    Boxes are (x0, y0, x1, y1) in pixels of the original frame, origin top-left; ``mask`` is the (H, W)
    bool mask with SAM 3, None with the box-only detectors (use ``segment`` for masks); ``frame_index``
    is the frame's absolute index. ``model``: "sam3" (default where its weights are here),
    "grounding-dino" (default otherwise), "owlv2", a hub id or a local folder; ``print(dets)`` and
    ``dets.backend`` name the model that answered.
    Example: ``chairs = detect(frames[0], "chair"); print(chairs); show(chairs)``.
    """
    array = frame_array(frame)
    labels = text_labels(text)
    if not 0.0 <= (threshold if threshold is not None else 0.0) <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    service = remote.service()
    if service is not None:  # $SPATIALCLAW_PERCEPTION: the model runs on a shared service, the cache stays here
        hosted = service.model("detect", detector_id(model))
        model_id, version, family = hosted.model_id, hosted.version, hosted.info["family"]
    else:
        loaded = load_detector(model, device)
        model_id, version, family = loaded.model_id, loaded.version, detector_family(loaded)
    threshold = _DEFAULT_THRESHOLD[family] if threshold is None else float(threshold)
    key = cache_key(
        model_id, version, "detect", family, labels, threshold, text_threshold, nms_iou, max_instances, array
    )

    def compute() -> list[Instance]:
        if service is not None:
            return cast(
                list[Instance],
                hosted.run(
                    array=array,
                    labels=labels,
                    threshold=threshold,
                    text_threshold=text_threshold,
                    nms_iou=nms_iou,
                    max_instances=max_instances,
                ),
            )
        if family == "sam3":
            found = sam3_instances(loaded, array, labels, threshold)
            return _non_max_suppression(found, nms_iou)[:max_instances]
        run = _run_grounding_dino if family == "grounding-dino" else _run_owlv2
        return _non_max_suppression(run(loaded, array, labels, threshold, text_threshold), nms_iou)[:max_instances]

    found = cached("detect", key, compute)
    index = frame_index(frame)
    return Detections([replace(item, frame_index=index) for item in found], frame, backend=model_name(model_id))


def detector_family(loaded: LoadedModel) -> str:
    """ "sam3", "grounding-dino" or "owlv2" for a loaded detector; ``ValueError`` for any other model."""
    model_type = getattr(loaded.model.config, "model_type", "")
    if str(model_type).startswith("sam3"):
        return "sam3"
    if model_type in ("grounding-dino", "grounding_dino", "mm-grounding-dino", "mm_grounding_dino"):
        return "grounding-dino"
    if model_type in ("owlv2", "owlvit"):
        return "owlv2"
    raise ValueError(
        f"{loaded.model_id!r} is a {model_type!r} model; detect supports SAM 3, Grounding DINO and OWLv2 "
        f"(aliases: {sorted(DETECT_ALIASES)})"
    )


def _inputs_to(inputs: Any, model: Any) -> dict[str, Any]:
    import torch

    moved = {}
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor):
            value = value.to(model.device)
            if value.is_floating_point():
                value = value.to(model.dtype)
        moved[name] = value
    return moved


def _pixel_boxes(boxes: Any, width: int, height: int) -> np.ndarray:
    array: np.ndarray = boxes.detach().float().cpu().numpy().reshape(-1, 4).astype(np.float64)
    array[:, [0, 2]] = array[:, [0, 2]].clip(0, width)
    array[:, [1, 3]] = array[:, [1, 3]].clip(0, height)
    return array


def _run_grounding_dino(
    loaded: LoadedModel, array: np.ndarray, labels: list[str], threshold: float, text_threshold: float
) -> list[Instance]:
    import torch
    from PIL import Image

    height, width = array.shape[:2]
    prompt = " ".join(f"{label.lower()}." for label in labels)
    inputs = loaded.processor(images=Image.fromarray(array), text=prompt, return_tensors="pt")
    with torch.inference_mode():
        outputs = loaded.model(**_inputs_to(inputs, loaded.model))
    outputs.logits = outputs.logits.float()
    outputs.pred_boxes = outputs.pred_boxes.float()
    result = loaded.processor.post_process_grounded_object_detection(
        outputs,
        inputs["input_ids"].to(outputs.logits.device),
        threshold=threshold,
        text_threshold=text_threshold,
        target_sizes=[(height, width)],
    )[0]
    boxes = _pixel_boxes(result["boxes"], width, height)
    scores = result["scores"].detach().float().cpu().numpy()
    phrases = result["text_labels"] if "text_labels" in result else result["labels"]
    matched = [
        (_match_label(str(phrase), labels), box, score)
        for box, score, phrase in zip(boxes, scores, phrases, strict=True)
    ]
    return [Instance(label, float(score), tuple(box)) for label, box, score in matched if label is not None]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _match_label(phrase: str, labels: list[str]) -> str | None:
    """The query label a Grounding DINO phrase (decoded tokens above the text threshold) belongs to: the
    one sharing the largest fraction of its words; None when the phrase shares no word with any label
    (a box grounded only on separators, which names nothing that was asked for)."""
    if len(labels) == 1:
        return labels[0]
    words = set(_words(phrase))
    overlap = [len(words & set(_words(label))) / max(len(_words(label)), 1) for label in labels]
    best = int(np.argmax(overlap))
    return labels[best] if overlap[best] > 0 else None


def _run_owlv2(
    loaded: LoadedModel, array: np.ndarray, labels: list[str], threshold: float, text_threshold: float
) -> list[Instance]:
    import torch
    from PIL import Image

    height, width = array.shape[:2]
    inputs = loaded.processor(text=[labels], images=Image.fromarray(array), return_tensors="pt")
    with torch.inference_mode():
        outputs = loaded.model(**_inputs_to(inputs, loaded.model))
    for name in ("logits", "pred_boxes", "objectness_logits"):
        if getattr(outputs, name, None) is not None:
            setattr(outputs, name, getattr(outputs, name).float())
    result = loaded.processor.post_process_grounded_object_detection(
        outputs=outputs, threshold=threshold, target_sizes=[(height, width)], text_labels=[labels]
    )[0]
    boxes = _pixel_boxes(result["boxes"], width, height)
    scores = result["scores"].detach().float().cpu().numpy()
    label_ids = result["labels"].detach().cpu().numpy()
    return [
        Instance(labels[int(label_id)], float(score), tuple(box))
        for box, score, label_id in zip(boxes, scores, label_ids, strict=True)
        if box[2] > box[0] and box[3] > box[1]
    ]


def _non_max_suppression(instances: list[Instance], iou: float) -> list[Instance]:
    """Greedy per-label suppression: keep the best box, drop same-label boxes overlapping it by > ``iou``."""
    kept: list[Instance] = []
    for item in sorted(instances, key=lambda candidate: -candidate.score):
        if all(other.label != item.label or box_iou(other.box, item.box) <= iou for other in kept):
            kept.append(item)
    return kept
