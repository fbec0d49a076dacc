"""SAM 3 point/box prompts on one image (``segment(frame, points=..., box=...)``): ``Sam3TrackerModel``.

The SAM 3 tracker is SAM-style promptable segmentation on SAM 3's backbone: clicks (object / background)
and boxes in, one mask per object out, with a predicted IoU. It loads from the full ``facebook/sam3``
checkpoint (``model_type`` "sam3_video") or a ``sam3_tracker`` / ``sam3_tracker_video`` one (see
``backends.SAM3_TASKS``). Inputs are prepared here as ``Sam3TrackerProcessor`` prepares them, without
torchvision: the image is resized to the checkpoint's preprocessor size and normalised
(``sam3.Sam3PixelInputs``); point and box coordinates, (x, y) pixels of the original frame, are scaled to
pixels of the model's input. The low-resolution mask logits are upsampled bilinearly to the frame's
(H, W) and thresholded at ``mask_threshold`` (a logit; 0 = probability 0.5), as its ``post_process_masks``
does. Points alone ask for three candidate masks and keep the one with the best predicted IoU (as
``segment`` does with SAM); a box (with or without points) asks for one.

``transformers`` 5.24 loads ``Sam3TrackerModel`` from a "sam3_video" checkpoint without its mask decoder
and prompt encoder (their keys keep the checkpoint's ``tracker_model.`` prefix and are left randomly
initialised); the loader here maps that prefix away (``key_mapping``), a no-op for other checkpoints.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from spatialclaw.primitives.perception.backends import sam3_id
from spatialclaw.primitives.perception.instances import Box
from spatialclaw.primitives.perception.models import LoadedModel, load_model
from spatialclaw.primitives.perception.sam3 import Sam3PixelInputs, check_sam3

__all__ = ["TRACKER_KEY_MAPPING", "load_sam3_tracker", "sam3_prompt_masks"]


class _SubsetWarning(logging.Filter):
    """Drops ``transformers``' warning that a "sam3_video" config instantiates a "sam3_tracker" model ("... not
    supported and can yield errors"): loading the tracker from the full checkpoint is how SAM 3 is meant to be
    used (its model card does), and the line would land in the cell's output a model reads."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("You are using a model of type `sam3_video` to instantiate")


_SUBSET_WARNING = _SubsetWarning()

# the checkpoint's "tracker_model." prefix, which transformers' own conversion leaves on the tracker's keys
TRACKER_KEY_MAPPING = {r"^tracker_model\.": ""}


def load_sam3_tracker(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) the SAM 3 tracker (``Sam3TrackerModel``) of ``model`` (see ``backends.sam3_id``)
    for point/box prompts. Raises ``MissingWeightsError`` (with the hub id and how to provide it) when the
    weights are not here, ValueError for a checkpoint that has no tracker (e.g. an image-only "sam3" one)."""
    model_id = sam3_id(model)
    check_sam3(model_id, "prompts")
    logging.getLogger("transformers.configuration_utils").addFilter(_SUBSET_WARNING)  # once: a set of filters
    return load_model(
        "sam3-tracker",
        model_id,
        device=device,
        model_class="Sam3TrackerModel",
        processor_class=Sam3PixelInputs,
        model_kwargs={"key_mapping": TRACKER_KEY_MAPPING},
    )


def sam3_prompt_masks(
    loaded: LoadedModel,
    array: np.ndarray,
    boxes: list[Box] | None,
    points: np.ndarray | None,
    point_labels: list[int] | None,
    mask_threshold: float = 0.0,
) -> tuple[list[np.ndarray], list[float]]:
    """Run the SAM 3 tracker once on ``array`` ((H, W, 3) uint8): one (H, W) bool mask and its predicted IoU
    (in [0, 1]) per box, or one for the point set (``points`` (K, 2) (x, y) pixels with ``point_labels`` 1 =
    object, 0 = background; with at most one box). The same contract as ``segment.sam_masks``."""
    import torch

    height, width = array.shape[:2]
    model, inputs = loaded.model, loaded.processor
    kwargs: dict[str, Any] = {}
    if boxes is not None:
        corners = np.asarray(boxes, dtype=np.float32).reshape(1, -1, 2, 2)
        kwargs["input_boxes"] = inputs.points(corners, width, height).reshape(1, -1, 4).to(model.device, model.dtype)
    if points is not None:
        assert point_labels is not None  # one label per point, from segment()
        kwargs["input_points"] = inputs.points(points[None, None], width, height).to(model.device, model.dtype)
        kwargs["input_labels"] = torch.tensor([[list(point_labels)]], dtype=torch.int64, device=model.device)
    pixels = inputs.image(array).to(model.device, model.dtype)
    with torch.inference_mode():
        outputs = model(pixel_values=pixels, multimask_output=boxes is None, **kwargs)
    logits = outputs.pred_masks.float()[0]  # (objects, candidates, h, w)
    iou = outputs.iou_scores.float()[0]  # (objects, candidates)
    upsampled = torch.nn.functional.interpolate(logits, size=(height, width), mode="bilinear", align_corners=False)
    masks = (upsampled > mask_threshold).cpu().numpy()
    best = iou.argmax(dim=-1).cpu().tolist()
    chosen = [masks[i, best[i]].astype(bool) for i in range(masks.shape[0])]
    scores = [float(iou[i, best[i]].clamp(0, 1)) for i in range(masks.shape[0])]
    return chosen, scores
