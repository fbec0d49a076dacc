"""Inputs of ``reconstruct``: the frames as RGB arrays with their absolute indices (at most ``MAX_FRAMES``),
intrinsics per frame (pixels), and depth maps in metres (given by the user, or from a learned metric depth
model)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics
from spatialclaw.primitives.perception.depth import DepthResult, _load_rgb, edge_confidence

__all__ = ["MAX_FRAMES", "frames_as_arrays", "given_depths", "intrinsics_per_frame", "model_depths"]

MAX_FRAMES = 64


def frames_as_arrays(frames: Any) -> tuple[list[np.ndarray], list[int], list[Any]]:
    if isinstance(frames, np.ndarray) and frames.ndim == 4:
        frames = list(frames)  # (N, H, W, 3) stack
    elif isinstance(frames, (str, Path)) or hasattr(frames, "shape") or hasattr(frames, "mode"):
        frames = [frames]  # one image
    items = list(frames)
    if not items:
        raise ValueError("reconstruct needs at least one frame; got an empty sequence")
    if len(items) > MAX_FRAMES:
        raise ValueError(
            f"reconstruct takes at most {MAX_FRAMES} frames, got {len(items)}; subsample first, e.g. "
            f"reconstruct(frames.sample(count=32)) or reconstruct(frames[::{int(np.ceil(len(items) / 32))}])"
        )
    arrays = [_load_rgb(item) for item in items]
    indices = []
    for position, item in enumerate(items):
        index = getattr(item, "index", None)
        indices.append(int(index) if isinstance(index, (int, np.integer)) else position)
    return arrays, indices, items


def intrinsics_per_frame(intrinsics: Any, count: int) -> list[np.ndarray] | None:
    if intrinsics is None:
        return None
    array = np.asarray(intrinsics, dtype=np.float64)
    if array.shape == (3, 3):
        return [as_intrinsics(array, name="intrinsics")] * count
    if array.shape == (count, 3, 3):
        return [as_intrinsics(K, name=f"intrinsics[{i}]") for i, K in enumerate(array)]
    raise ValueError(
        f"intrinsics must be one (3, 3) matrix in pixels or one per frame ({count}, 3, 3); got shape {array.shape}"
    )


def given_depths(
    depth: Any, arrays: list[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray | None], list[np.ndarray]]:
    """Depth maps (metres), their intrinsics when they carry them, and confidences, from user input."""
    items = (
        list(depth) if isinstance(depth, (list, tuple)) or (isinstance(depth, np.ndarray) and depth.ndim == 3) else None
    )
    if items is None or len(items) != len(arrays):
        raise ValueError(
            f"depth must be None, 'auto', or one depth map per frame ({len(arrays)} of them: DepthResult "
            f"or (H, W) arrays in metres)"
        )
    maps, intrinsics, confidences = [], [], []
    for i, (item, rgb) in enumerate(zip(items, arrays, strict=True)):
        if isinstance(item, DepthResult):
            values, K, confidence = (
                item.depth,
                (item.intrinsics if item.intrinsics_source != "default-fov" else None),
                item.confidence,
            )
        else:
            values, K, confidence = np.asarray(item), None, None
            if values.dtype.kind in "ui":
                raise ValueError(
                    f"depth[{i}] is an integer array ({values.dtype}); pass metres as floats, e.g. "
                    f"millimetre PNGs / 1000.0 (TUM: / 5000.0)"
                )
        if values.shape != rgb.shape[:2]:
            raise ValueError(
                f"depth[{i}] has shape {values.shape} but frame {i} is {rgb.shape[:2]} (H, W); resize the "
                f"depth map to the frame (nearest neighbour) first"
            )
        values = np.where(np.isfinite(values) & (values > 0), values, np.nan).astype(np.float32)
        maps.append(values)
        intrinsics.append(K)
        confidences.append(confidence if confidence is not None else edge_confidence(values))
    return maps, intrinsics, confidences


def model_depths(
    arrays: list[np.ndarray], depth_model: str | os.PathLike[str] | None, notes: list[str]
) -> list[DepthResult] | None:
    """Depth of every frame from the learned model, or None (with a note) when its weights are missing."""
    from spatialclaw.primitives.perception import models
    from spatialclaw.primitives.perception.depth import _model_id
    from spatialclaw.primitives.perception.depth import depth as estimate_depth

    try:
        results = [estimate_depth(rgb, model=depth_model) for rgb in arrays]
    except models.MissingWeightsError:
        notes.append(
            f"no metric depth model available ({_model_id(depth_model)}: weights missing), so the scale is "
            f"arbitrary; pass depth maps or make the weights available for metres"
        )
        return None
    return results
