"""SAM 3 video for ``track``: objects followed from a first mask, box or points (``Sam3TrackerVideoModel``), and
every object of a text concept found and followed (``Sam3VideoModel``), both without torchvision.

Both models load through ``transformers``' ``from_pretrained`` from the full ``facebook/sam3`` checkpoint
(``model_type`` "sam3_video"; a "sam3_tracker_video" checkpoint serves the first kind only; see
``backends.SAM3_TASKS``). ``transformers``' ``Sam3TrackerVideoProcessor`` and ``Sam3VideoProcessor`` need
torchvision (their video processor, and ``masks_to_boxes``), so what they do is done here: frames are resized
to the checkpoint's preprocessor size and normalised (``sam3.Sam3TrackerVideoInputs`` / ``Sam3VideoInputs``),
one frame at a time when the model asks for it (:class:`LazyFrames`: 400 frames at 1008 x 1008 in float32
would hold 4.9 GB at once); the inference session is the model's own (``Sam3TrackerVideoInferenceSession`` /
``Sam3VideoInferenceSession``, from the modeling modules); prompts are put into it as the processors put
them: a mask resized to the model's input (bilinear, antialiased) and thresholded at 0.5, a box as its two
corners with labels 2 and 3 ahead of any points, points scaled from frame pixels to model-input pixels;
text tokenized by the checkpoint's tokenizer (padded to 32). Output masks (low-resolution logits) are
upsampled bilinearly to the frame's (H, W) and thresholded at 0; concept tracks hide the objects SAM 3's
heuristics suppress or remove, and a pixel claimed by several objects of one text goes to the one with the
highest tracker score, as ``Sam3VideoProcessor.postprocess_outputs`` does. Without the ``kernels`` package
``Sam3VideoModel`` itself skips its mask NMS and hole filling (``transformers`` logs a warning).

Frame positions are what the models see; the caller maps them to absolute frame indices.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.perception.backends import sam3_id
from spatialclaw.primitives.perception.instances import Instance, mask_to_box
from spatialclaw.primitives.perception.models import LoadedModel, load_model
from spatialclaw.primitives.perception.sam3 import Sam3TrackerVideoInputs, Sam3VideoInputs, check_sam3

__all__ = ["LazyFrames", "load_sam3_tracker_video", "load_sam3_video", "sam3_concept_track", "sam3_track"]


class LazyFrames(Mapping[int, Any]):
    """Frame position -> (3, h, w) tensor at the model's input size and dtype, prepared when the model reads
    it (the inference sessions only index it and take its length)."""

    def __init__(self, arrays: list[np.ndarray], inputs: Any, dtype: Any) -> None:
        self.arrays = arrays
        self.inputs = inputs
        self.dtype = dtype

    def __getitem__(self, position: int) -> Any:
        return self.inputs.image(self.arrays[position])[0].to(self.dtype)

    def __len__(self) -> int:
        return len(self.arrays)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.arrays)))


def load_sam3_tracker_video(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) SAM 3's video tracker (``Sam3TrackerVideoModel``) of ``model`` (see
    ``backends.sam3_id``). Raises ``MissingWeightsError`` when the weights are not here, ValueError for a
    checkpoint without the video tracker."""
    model_id = sam3_id(model)
    check_sam3(model_id, "video")
    return load_model(
        "sam3-video-tracker",
        model_id,
        device=device,
        model_class="Sam3TrackerVideoModel",
        processor_class=Sam3TrackerVideoInputs,
    )


def load_sam3_video(model: str | os.PathLike[str] | None = None, device: str | None = None) -> LoadedModel:
    """Load (once per process) SAM 3 video (``Sam3VideoModel``: detector + tracker, text concepts) of ``model``.
    Raises ``MissingWeightsError`` when the weights are not here, ValueError for a checkpoint without it."""
    model_id = sam3_id(model)
    check_sam3(model_id, "video-text")
    return load_model(
        "sam3-video", model_id, device=device, model_class="Sam3VideoModel", processor_class=Sam3VideoInputs
    )


def sam3_track(
    loaded: LoadedModel, arrays: list[np.ndarray], indices: list[int], prompts: list[Any], kind: str, start: int
) -> list[list[Instance]]:
    """Propagate every prompt together from position ``start`` forwards and backwards with the SAM 3 video
    tracker; one list of per-frame instances (absolute ``indices``) per prompt. ``kind``: "mask" ((H, W) bool
    each), "box" ((x0, y0, x1, y1) pixels each) or "points" (``(points (K, 2) pixels, labels (K,), box or
    None)`` each). Score: the object-presence probability (sigmoid of its logit); 0 where the mask is empty."""
    import torch
    from transformers.models.sam3_tracker_video.modeling_sam3_tracker_video import Sam3TrackerVideoInferenceSession

    model, inputs = loaded.model, loaded.processor
    height, width = arrays[0].shape[:2]
    session = _video_session(Sam3TrackerVideoInferenceSession, loaded, arrays)
    object_ids = list(range(1, len(prompts) + 1))
    for object_id, prompt in zip(object_ids, prompts, strict=True):
        slot = session.obj_id_to_idx(object_id)
        if kind == "mask":
            session.add_mask_inputs(slot, start, _mask_input(prompt, inputs.size))
            continue
        coords, labels, box = (None, [], prompt) if kind == "box" else prompt
        corners = [] if box is None else [[box[0], box[1]], [box[2], box[3]]]
        xy = np.asarray(corners + ([] if coords is None else np.asarray(coords).tolist()), dtype=np.float32)
        flags = ([2, 3] if box is not None else []) + [int(v) for v in labels]
        session.add_point_inputs(
            slot,
            start,
            {
                "point_coords": inputs.points(xy[None, None], width, height),
                "point_labels": torch.tensor([[flags]], dtype=torch.int32),
            },
        )
    session.obj_with_new_inputs = list(object_ids)
    per_frame: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    with torch.inference_mode():
        model(inference_session=session, frame_idx=start)
        for reverse in (False, True):
            for output in model.propagate_in_video_iterator(session, start_frame_idx=start, reverse=reverse):
                masks = _upsample(output.pred_masks[:, 0], height, width)
                scores = torch.sigmoid(output.object_score_logits.float().cpu()).reshape(-1).numpy()
                per_frame[int(output.frame_idx)] = (masks, scores)
    results: list[list[Instance]] = [[] for _ in prompts]
    for position, index in enumerate(indices):
        frame_masks, frame_scores = per_frame[position]
        for obj, result in enumerate(results):
            result.append(_instance("object", frame_masks[obj], float(frame_scores[obj]), index))
    return results


def sam3_concept_track(
    loaded: LoadedModel, arrays: list[np.ndarray], indices: list[int], labels: list[str]
) -> list[tuple[str, list[Instance]]]:
    """Find and follow every object of each text concept in ``labels`` through the frames with SAM 3 video
    (detection on every frame, tracking between them; forwards from the first frame). One ``(label,
    per-frame instances)`` per object, in order of first appearance; where an object is not seen its
    instance has score 0, box (0, 0, 0, 0) and an empty mask. Score: the tracker's score for that frame (the
    detection score in the frame it was found)."""
    import torch
    from transformers.models.sam3_video.modeling_sam3_video import Sam3VideoInferenceSession

    model, inputs = loaded.model, loaded.processor
    height, width = arrays[0].shape[:2]
    session = _video_session(Sam3VideoInferenceSession, loaded, arrays)
    for label in labels:
        prompt = session.add_prompt(label)
        tokens = inputs.text(label)
        session.prompt_input_ids[prompt] = tokens["input_ids"].to(model.device)
        session.prompt_attention_masks[prompt] = tokens["attention_mask"].to(model.device)
    seen: dict[int, dict[int, tuple[np.ndarray, float]]] = {}  # object id -> position -> (mask, score)
    with torch.inference_mode():
        for output in model.propagate_in_video_iterator(session, start_frame_idx=0):
            hidden = set(output.suppressed_obj_ids or ())
            shown = [obj for obj in sorted(output.obj_id_to_mask) if obj not in hidden]
            if not shown:
                continue
            masks = _upsample(torch.cat([output.obj_id_to_mask[obj] for obj in shown]), height, width)
            scores = [float(output.obj_id_to_tracker_score.get(obj, output.obj_id_to_score[obj])) for obj in shown]
            groups = [session.obj_id_to_prompt_id[obj] for obj in shown]
            for obj, mask, score in zip(shown, _without_overlaps(masks, scores, groups), scores, strict=True):
                if mask.any():
                    seen.setdefault(obj, {})[int(output.frame_idx)] = (mask, score)
    removed = set(session.hotstart_removed_obj_ids)
    order = sorted((obj for obj in seen if obj not in removed), key=lambda obj: (min(seen[obj]), obj))
    out = []
    for obj in order:
        label = session.prompts[session.obj_id_to_prompt_id[obj]]
        instances = []
        for position, index in enumerate(indices):
            mask_here: np.ndarray | None = None
            score_here = 0.0
            if position in seen[obj]:
                mask_here, score_here = seen[obj][position]
            instances.append(_instance(label, mask_here, score_here, index, (height, width)))
        out.append((label, instances))
    return out


def _mask_input(mask: np.ndarray, size: tuple[int, int]) -> Any:
    """An (H, W) bool mask as the (1, 1, h, w) 0/1 float mask prompt at the model's input size."""
    import torch

    tensor = torch.from_numpy(np.asarray(mask, dtype=np.float32))[None, None]
    if tuple(tensor.shape[-2:]) != size:
        tensor = torch.nn.functional.interpolate(
            tensor, size=size, mode="bilinear", align_corners=False, antialias=True
        )
    return (tensor >= 0.5).float()


def _upsample(logits: Any, height: int, width: int) -> np.ndarray:
    """(N, h, w) mask logits -> (N, H, W) bool masks at the frame's resolution (logit > 0)."""
    import torch

    upsampled = torch.nn.functional.interpolate(
        logits.float()[:, None], size=(height, width), mode="bilinear", align_corners=False
    )[:, 0]
    return (upsampled > 0).cpu().numpy()


def _without_overlaps(masks: np.ndarray, scores: list[float], groups: list[int]) -> list[np.ndarray]:
    """Each pixel claimed by several objects of the same group (text) stays with the highest-scored one."""
    kept = [mask.copy() for mask in masks]
    for group in set(groups):
        members = [i for i, g in enumerate(groups) if g == group]
        if len(members) < 2:
            continue
        stacked = np.where(masks[members], np.asarray([scores[i] for i in members])[:, None, None], -np.inf)
        winner = np.argmax(stacked, axis=0)
        for rank, i in enumerate(members):
            kept[i] &= winner == rank
    return kept


_EMPTY: dict[tuple[int, int], np.ndarray] = {}


def _instance(
    label: str, mask: np.ndarray | None, score: float, index: int, shape: tuple[int, int] | None = None
) -> Instance:
    """A per-frame instance: the tight box around a non-empty mask and a score > 0; else lost (score 0,
    box (0, 0, 0, 0), an empty mask shared by every lost frame of that size)."""
    box = None if mask is None else mask_to_box(mask)
    if mask is None or box is None:
        size = shape if shape is not None else mask.shape if mask is not None else (0, 0)
        empty = _EMPTY.setdefault(size, np.zeros(size, dtype=bool))
        return Instance(label, 0.0, (0.0, 0.0, 0.0, 0.0), mask=empty, frame_index=index)
    return Instance(label, max(score, 1e-6), box, mask=mask, frame_index=index)


def _video_session(session_class: Any, loaded: LoadedModel, arrays: list[np.ndarray]) -> Any:
    """A transformers video inference session over ``arrays`` (frames (H, W, 3) uint8), state on the model's
    device, frames kept on the CPU and prepared lazily, one at a time, as the model reads them."""
    model = loaded.model
    height, width = arrays[0].shape[:2]
    session = session_class(
        video_height=height, video_width=width, inference_device=model.device,
        inference_state_device=model.device, video_storage_device="cpu", dtype=model.dtype,
    )  # fmt: skip
    session.processed_frames = cast(Any, LazyFrames(arrays, loaded.processor, model.dtype))  # index and len only
    return session
