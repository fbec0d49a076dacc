"""SAM 3 on one image: a text (concept) prompt -> every matching instance with box, mask and score, in one model.

``Sam3Model`` is loaded through ``transformers``' ``from_pretrained`` (hub id ``facebook/sam3``, or a local
``save_pretrained`` folder; see ``backends.sam3_id``). Its inputs (and those of the SAM 3 tracker and video
models, ``sam3_prompts`` and ``sam3_tracking``) are prepared here rather than by ``transformers``'
``Sam3Processor``, whose image processor needs torchvision: the image is resized to the
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

from spatialclaw.primitives.perception.backends import is_sam3, sam3_id, sam3_problem, sam3_tasks, weights_status
from spatialclaw.primitives.perception.instances import Instance
from spatialclaw.primitives.perception.models import LoadedModel, load_model

__all__ = [
    "SAM3_DEFAULT_THRESHOLD",
    "Sam3Inputs",
    "Sam3PixelInputs",
    "Sam3TrackerVideoInputs",
    "Sam3VideoInputs",
    "check_sam3",
    "is_sam3",
    "load_sam3",
    "sam3_instances",
]

SAM3_DEFAULT_THRESHOLD = 0.5
_TEXT_LENGTH = 32  # Sam3Processor pads every phrase to 32 tokens


class Sam3Inputs:
    """SAM 3's input preparation (image resize + normalisation, tokenizer), loaded from a checkpoint folder
    or hub id like a ``transformers`` processor (``from_pretrained``). The subclasses read what the other SAM 3
    models need: :class:`Sam3PixelInputs` (no tokenizer: the tracker), :class:`Sam3VideoInputs` (the video
    preprocessor config, falling back to the image one) and :class:`Sam3TrackerVideoInputs` (both)."""

    config_files: tuple[str, ...] = ("preprocessor_config.json",)
    needs_tokenizer = True

    def __init__(
        self, tokenizer: Any, size: tuple[int, int], mean: list[float], std: list[float], scale: float
    ) -> None:
        self.tokenizer = tokenizer
        self.size = size  # (height, width) of the model's input
        self.mean = np.asarray(mean, dtype=np.float32).reshape(3, 1, 1)
        self.std = np.asarray(std, dtype=np.float32).reshape(3, 1, 1)
        self.scale = scale

    @classmethod
    def from_pretrained(cls, source: str, local_files_only: bool = False, **kwargs: Any) -> Sam3Inputs:
        """Read the first of ``config_files`` that ``source`` has and, for text models, its tokenizer (SAM 3's
        defaults where the config is silent: 1008 x 1008, mean = std = 0.5, scale 1/255). Raises OSError when
        the checkpoint has none of the config files or no tokenizer."""
        from transformers.utils.hub import cached_file

        config: dict[str, Any] | None = None
        for name in cls.config_files:
            path = cached_file(
                source, name, local_files_only=local_files_only, _raise_exceptions_for_missing_entries=False
            )
            if path is not None:
                with open(path) as handle:
                    config = json.load(handle)
                break
        if config is None:
            raise OSError(f"{source} has no {' or '.join(cls.config_files)}")
        tokenizer = None
        if cls.needs_tokenizer:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_files_only)
        size = config.get("size") or {"height": 1008, "width": 1008}
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
        if self.tokenizer is None:
            raise ValueError("these SAM 3 inputs were loaded without a tokenizer (a tracker takes no text)")
        tokens = self.tokenizer(
            [phrase], padding="max_length", max_length=_TEXT_LENGTH, truncation=True, return_tensors="pt"
        )
        return {"input_ids": tokens["input_ids"], "attention_mask": tokens["attention_mask"]}

    def points(self, xy: Any, width: int, height: int) -> Any:
        """(..., 2) (x, y) pixels of a (width x height) frame -> float32 tensor in pixels of the model's input
        (as ``Sam3TrackerProcessor`` scales them); boxes go as (..., 2, 2) corner pairs."""
        import torch

        scaled = np.asarray(xy, dtype=np.float32).copy()
        scaled[..., 0] *= self.size[1] / width
        scaled[..., 1] *= self.size[0] / height
        return torch.from_numpy(scaled)


class Sam3PixelInputs(Sam3Inputs):
    """SAM 3 tracker inputs: the image only (no tokenizer)."""

    needs_tokenizer = False


class Sam3VideoInputs(Sam3Inputs):
    """SAM 3 video (concept) inputs: the video preprocessor config where there is one, and the tokenizer."""

    config_files = ("video_preprocessor_config.json", "preprocessor_config.json")


class Sam3TrackerVideoInputs(Sam3Inputs):
    """SAM 3 tracker video inputs: the video preprocessor config where there is one; no tokenizer."""

    config_files = ("video_preprocessor_config.json", "preprocessor_config.json")
    needs_tokenizer = False


def check_sam3(model_id: str, task: str) -> None:
    """Refuse, by its local ``config.json``, a checkpoint that is not SAM 3 or does not serve ``task`` (see
    ``backends.SAM3_TASKS``); a checkpoint whose config is not here passes (loading then says what is
    missing)."""
    if weights_status(model_id) is not None:
        return
    tasks = sam3_tasks(model_id)
    if tasks is None:
        return
    if not tasks:
        raise ValueError(f"{model_id!r} is not a SAM 3 checkpoint (its config.json has another model_type)")
    if task not in tasks:
        raise ValueError(f"{model_id!r} cannot be used here: {sam3_problem(task, model_id)}")


def load_sam3(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) SAM 3 (``Sam3Model``) and its inputs (see ``backends.sam3_id``). Raises
    ``MissingWeightsError`` (with the hub id and how to provide it) when the weights are not here, and
    ImportError when the installed ``transformers`` has no SAM 3."""
    model_id = sam3_id(model)
    check_sam3(model_id, "text")
    return load_model("sam3", model_id, device=device, model_class="Sam3Model", processor_class=Sam3Inputs)


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
