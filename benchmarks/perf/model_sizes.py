"""The weight memory of every learned perception backend at full size, counted exactly on the ``meta`` device.

Run: ``.venv/bin/python benchmarks/perf/model_sizes.py`` (no network, no GPU, no weights; a few seconds).

Each backend's model class is built from its full-size configuration on PyTorch's ``meta`` device (shapes
only, no memory, no download) and its parameters are counted exactly; weights take parameters x 4 bytes in
float32 and x 2 bytes in bfloat16 / float16 (GB = 10^9 bytes). Activations depend on the input size and
the device and are not measured (no GPU here). Where a ``transformers`` default configuration differs from
the hub checkpoint, the difference is set here from the checkpoint's published configuration and named in
``config`` (the parameter count then agrees with the hub listing's file size: parameters x bytes per
parameter of the stored dtype).

The SAM 3 rows are one checkpoint (``facebook/sam3``, ``Sam3VideoModel``: detector + tracker sharing one
backbone); each tool loads its own class from it, so a kernel that uses ``detect`` and ``track`` holds the
``Sam3Model`` and the ``Sam3TrackerVideoModel`` rows at once.

Prints a table, then one JSON line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, cast

GB = 1e9


def _dinov2_large_16() -> dict[str, Any]:
    """DINOv2 ViT-L/16 at 384 px: each of Depth Pro's three encoders (the paper; apple/DepthPro-hf)."""
    return {
        "model_type": "dinov2",
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "patch_size": 16,
        "image_size": 384,
    }


def backends() -> list[tuple[str, str, str, str, Callable[[], Any]]]:
    """(backend, hub id, model class, config note, builder of the model on the current default device)."""
    import transformers as hf

    return [
        ("sam3 (checkpoint)", "facebook/sam3", "Sam3VideoModel", "Sam3VideoConfig() default",
         lambda: hf.Sam3VideoModel(hf.Sam3VideoConfig())),
        ("sam3: detect, segment(text=)", "facebook/sam3", "Sam3Model", "Sam3Config() default",
         lambda: hf.Sam3Model(hf.Sam3Config())),
        ("sam3: segment(points=/box=)", "facebook/sam3", "Sam3TrackerModel", "Sam3VideoConfig().tracker_config",
         lambda: hf.Sam3TrackerModel(cast(Any, hf.Sam3VideoConfig()))),  # takes the video config's tracker part
        ("sam3: track", "facebook/sam3", "Sam3TrackerVideoModel", "Sam3TrackerVideoConfig() default",
         lambda: hf.Sam3TrackerVideoModel(hf.Sam3TrackerVideoConfig())),
        ("sam3: track(text=)", "facebook/sam3", "Sam3VideoModel", "Sam3VideoConfig() default",
         lambda: hf.Sam3VideoModel(hf.Sam3VideoConfig())),
        ("grounding-dino-tiny", "IDEA-Research/grounding-dino-tiny", "GroundingDinoForObjectDetection",
         "GroundingDinoConfig() default (Swin-T, BERT-base, 900 queries)",
         lambda: hf.GroundingDinoForObjectDetection(hf.GroundingDinoConfig())),
        ("sam-vit-base", "facebook/sam-vit-base", "SamModel", "SamConfig() default (ViT-B)",
         lambda: hf.SamModel(hf.SamConfig())),
        ("sam2.1-hiera-tiny", "facebook/sam2.1-hiera-tiny", "Sam2VideoModel", "Sam2VideoConfig() default (Hiera-T)",
         lambda: hf.Sam2VideoModel(hf.Sam2VideoConfig())),
        ("depth-anything-v2-small (metric indoor)", "depth-anything/Depth-Anything-V2-Metric-Indoor-Small-hf",
         "DepthAnythingForDepthEstimation",
         "DepthAnythingConfig() default (DINOv2-S) with depth_estimation_type='metric', max_depth=20",
         lambda: hf.DepthAnythingForDepthEstimation(
             hf.DepthAnythingConfig(depth_estimation_type="metric", max_depth=20))),
        ("depth-pro", "apple/DepthPro-hf", "DepthProForDepthEstimation",
         "DepthProConfig() with DINOv2 ViT-L/16 at 384 px for the image, patch and FOV encoders, use_fov_model=True",
         lambda: hf.DepthProForDepthEstimation(hf.DepthProConfig(
             image_model_config=_dinov2_large_16(), patch_model_config=_dinov2_large_16(),
             fov_model_config=_dinov2_large_16(), use_fov_model=True))),
    ]  # fmt: skip


def measure() -> list[dict[str, Any]]:
    """One row per backend: exact parameter (and buffer) counts of the full-size model, built on ``meta``."""
    import torch
    from transformers.utils import logging

    logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    rows = []
    for name, hub_id, cls, config, build in backends():
        start = time.perf_counter()
        with torch.device("meta"):
            model = build()
        parameters = sum(p.numel() for p in model.parameters())
        buffers = sum(b.numel() for b in model.buffers())
        rows.append(
            {
                "backend": name,
                "hub_id": hub_id,
                "class": cls,
                "config": config,
                "parameters": parameters,
                "buffers": buffers,
                "fp32_gb": round(parameters * 4 / GB, 3),
                "bf16_gb": round(parameters * 2 / GB, 3),
                "build_s": round(time.perf_counter() - start, 2),
            }
        )
    return rows


def main() -> None:
    import transformers

    rows = measure()
    print(f"transformers {transformers.__version__}; weights only (activations not measured: no GPU here)")
    print(f"{'backend':42} {'class':32} {'parameters':>14} {'fp32 GB':>8} {'bf16 GB':>8}")
    for row in rows:
        print(
            f"{row['backend']:42} {row['class']:32} {row['parameters']:>14,} {row['fp32_gb']:>8.3f} "
            f"{row['bf16_gb']:>8.3f}"
        )
    print(json.dumps({"transformers": transformers.__version__, "rows": rows}))


if __name__ == "__main__":
    main()
