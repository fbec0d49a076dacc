"""SAM 3 on one image: a text (concept) prompt -> every matching instance with box, mask and score, in one model.

``Sam3Model`` is loaded through ``transformers``' ``from_pretrained`` (hub id ``facebook/sam3``, or a local
``save_pretrained`` folder; see ``backends.sam3_id``). Its inputs are prepared here rather than by
``transformers``' ``Sam3Processor``, whose image processor needs torchvision: the image is resized to the
checkpoint's ``preprocessor_config.json`` size (bilinear), scaled to [0, 1] and normalised with its mean/std;
the text goes through the checkpoint's own tokenizer (``AutoTokenizer.from_pretrained``), padded to 32
tokens as ``Sam3Processor`` does. Outputs are read as ``Sam3Processor.post_process_instance_segmentation``
reads them: score = sigmoid(query logit) x sigmoid(presence logit); boxes are (x0, y0, x1, y1) pixels of
the original image (origin top-left); masks are upsampled bilinearly to the original (H, W) and
thresholded at probability ``mask_threshold``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from spatialclaw.primitives.perception.backends import is_sam3, sam3_id, weights_status
from spatialclaw.primitives.perception.instances import Instance
from spatialclaw.primitives.perception.models import LoadedModel, load_model

__all__ = ["SAM3_DEFAULT_THRESHOLD", "Sam3Inputs", "is_sam3", "load_sam3", "sam3_instances"]

SAM3_DEFAULT_THRESHOLD = 0.5
_TEXT_LENGTH = 32  # Sam3Processor pads every phrase to 32 tokens


class Sam3Inputs:
    """SAM 3's input preparation (image resize + normalisation, tokenizer), loaded from a checkpoint folder
    or hub id like a ``transformers`` processor (``from_pretrained``)."""

    def __init__(self, tokenizer: Any, size: tuple[int, int], mean: list[float], std: list[float], scale: float):
        self.tokenizer = tokenizer
        self.size = size  # (height, width) of the model's input
        self.mean = np.asarray(mean, dtype=np.float32).reshape(3, 1, 1)
        self.std = np.asarray(std, dtype=np.float32).reshape(3, 1, 1)
        self.scale = scale

    @classmethod
    def from_pretrained(cls, source: str, local_files_only: bool = False, **kwargs: Any) -> Sam3Inputs:
        """Read ``preprocessor_config.json`` and the tokenizer of ``source`` (SAM 3's defaults where the
        config is silent: 1008 x 1008, mean = std = 0.5, scale 1/255). Raises OSError for missing files."""
        from transformers import AutoTokenizer
        from transformers.utils.hub import cached_file

        path = cached_file(source, "preprocessor_config.json", local_files_only=local_files_only)
        config: dict[str, Any] = {}
        if path is not None:
            with open(path) as handle:
                config = json.load(handle)
        size = config.get("size") or {"height": 1008, "width": 1008}
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_files_only)
        return cls(
            tokenizer,
            (int(size["height"]), int(size["width"])),
            list(config.get("image_mean", [0.5, 0.5, 0.5])),
            list(config.get("image_std", [0.5, 0.5, 0.5])),
            float(config.get("rescale_factor", 1 / 255)),
        )

    def image(self, array: np.ndarray) -> Any:
        """(H, W, 3) uint8 RGB -> (1, 3, h, w) float32 tensor at the model's input size."""
        import torch
        from PIL import Image

        height, width = self.size
        resized = np.asarray(Image.fromarray(array).convert("RGB").resize((width, height), Image.Resampling.BILINEAR))
        chw = resized.astype(np.float32).transpose(2, 0, 1) * self.scale
        return torch.from_numpy((chw - self.mean) / self.std)[None]

    def text(self, phrase: str) -> dict[str, Any]:
        """One noun phrase -> ``input_ids`` and ``attention_mask`` tensors of shape (1, 32)."""
        tokens = self.tokenizer(
            [phrase], padding="max_length", max_length=_TEXT_LENGTH, truncation=True, return_tensors="pt"
        )
        return {"input_ids": tokens["input_ids"], "attention_mask": tokens["attention_mask"]}


def load_sam3(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) SAM 3 (``Sam3Model``) and its inputs (see ``backends.sam3_id``). Raises
    ``MissingWeightsError`` (with the hub id and how to provide it) when the weights are not here, and
    ImportError when the installed ``transformers`` has no SAM 3."""
    model_id = sam3_id(model)
    if weights_status(model_id) is None and not is_sam3(model_id):  # its config is here and names another model
        raise ValueError(f"{model_id!r} is not a SAM 3 checkpoint (its config.json has another model_type)")
    loaded = load_model("sam3", model_id, device=device, model_class="Sam3Model", processor_class=Sam3Inputs)
    return loaded


def sam3_instances(
    loaded: LoadedModel, array: np.ndarray, labels: list[str], threshold: float, mask_threshold: float = 0.5
) -> list[Instance]:
    """Every instance of each label above ``threshold`` (score in [0, 1]), most confident first.

    The image is encoded once; each label is one decoder pass. Each ``Instance`` has SAM 3's box
    ((x0, y0, x1, y1) pixels of ``array``, clipped to the image) and its (H, W) bool mask at ``array``'s
    resolution; ``frame_index`` is left None."""
    import torch

    height, width = array.shape[:2]
    model, inputs = loaded.model, loaded.processor
    scale = torch.tensor([width, height, width, height], dtype=torch.float32)
    found: list[Instance] = []
    with torch.inference_mode():
        vision = model.get_vision_features(pixel_values=inputs.image(array).to(model.device, model.dtype))
        for label in labels:
            tokens = {name: value.to(model.device) for name, value in inputs.text(label).items()}
            outputs = model(vision_embeds=vision, **tokens)
            scores = outputs.pred_logits.float().sigmoid()[0]
            if getattr(outputs, "presence_logits", None) is not None:
                scores = scores * outputs.presence_logits.float().sigmoid()[0]
            keep = (scores > threshold).nonzero().flatten()
            if len(keep) == 0:
                continue
            boxes = (outputs.pred_boxes.float()[0, keep].cpu() * scale).numpy().astype(np.float64)
            boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
            boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
            probabilities = torch.nn.functional.interpolate(
                outputs.pred_masks.float()[:, keep].sigmoid(),
                size=(height, width),
                mode="bilinear",
                align_corners=False,
            )[0]
            masks = (probabilities > mask_threshold).cpu().numpy()
            for box, score, mask in zip(boxes, scores[keep].cpu().tolist(), masks, strict=True):
                found.append(Instance(label, float(score), (box[0], box[1], box[2], box[3]), mask=mask))
    return sorted(found, key=lambda item: -item.score)
