"""SAM 2 video tracking for ``track(method="sam2")``: loading ``Sam2VideoModel`` + ``Sam2VideoProcessor``
through ``transformers`` (needs torchvision; ``facebook/sam2.1-hiera-tiny`` unless ``model=`` or
``$SPATIALCLAW_TRACK_MODEL`` says otherwise), and propagating mask or box prompts through a video.
Masks follow deformation and occlusion."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from spatialclaw.primitives.perception.instances import Instance, mask_to_box
from spatialclaw.primitives.perception.models import LoadedModel, load_model

__all__ = ["DEFAULT_TRACK_MODEL", "load_sam2_video", "sam2_track"]

DEFAULT_TRACK_MODEL = "facebook/sam2.1-hiera-tiny"
_TORCHVISION_HINT = (
    "install torchvision built for your torch (`pip install torchvision`; for a CPU-only torch "
    "use the matching +cpu wheel from the PyTorch CPU package index)"
)


def load_sam2_video(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) SAM 2 video: ``model``, ``$SPATIALCLAW_TRACK_MODEL`` or SAM 2.1 Hiera tiny."""
    name = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_TRACK_MODEL") or DEFAULT_TRACK_MODEL
    try:
        return load_model(
            "video-tracking", name, device=device, model_class="Sam2VideoModel", processor_class="Sam2VideoProcessor"
        )
    except ImportError as error:
        raise ImportError(
            f"SAM 2 video cannot run here: {str(error).rstrip('.')}. To fix: {_TORCHVISION_HINT}; or use "
            "method='flow' (no weights needed)"
        ) from error


def sam2_track(
    loaded: LoadedModel, arrays: list[np.ndarray], indices: list[int], prompts: list[Any], kind: str, start: int
) -> list[list[Instance]]:
    """Propagate all prompts together through the video with SAM 2; one list of per-frame instances each."""
    import torch

    height, width = arrays[0].shape[:2]
    processor, model = loaded.processor, loaded.model
    session = processor.init_video_session(video=np.stack(arrays), inference_device=model.device, dtype=model.dtype)
    object_ids = list(range(1, len(prompts) + 1))
    if kind == "mask":
        processor.add_inputs_to_inference_session(
            inference_session=session,
            frame_idx=start,
            obj_ids=object_ids,
            input_masks=[mask.astype(bool) for mask in prompts],
        )
    else:
        processor.add_inputs_to_inference_session(
            inference_session=session, frame_idx=start, obj_ids=object_ids, input_boxes=[[list(box) for box in prompts]]
        )
    per_frame: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    with torch.inference_mode():
        model(inference_session=session, frame_idx=start)
        for reverse in (False, True):
            for output in model.propagate_in_video_iterator(session, start_frame_idx=start, reverse=reverse):
                masks = processor.post_process_masks(
                    [output.pred_masks.float().cpu()], original_sizes=[[height, width]], binarize=True
                )[0]
                scores = (
                    torch.sigmoid(output.object_score_logits.float().cpu()).reshape(-1)
                    if output.object_score_logits is not None
                    else torch.ones(len(prompts))
                )
                per_frame[output.frame_idx] = (masks[:, 0].numpy().astype(bool), scores.numpy())
    results: list[list[Instance]] = [[] for _ in prompts]
    for position, index in enumerate(indices):
        frame_masks, frame_scores = per_frame[position]
        for obj in range(len(prompts)):
            mask = frame_masks[obj]
            box = mask_to_box(mask)
            visible = box is not None
            results[obj].append(
                Instance(
                    "object",
                    float(frame_scores[obj]) if visible else 0.0,
                    box or (0.0, 0.0, 0.0, 0.0),
                    mask=mask,
                    frame_index=index,
                )
            )
    return results
