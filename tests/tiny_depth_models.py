"""Tiny randomly initialised depth models, saved with ``save_pretrained`` so tests and benchmarks load them
through the same ``from_pretrained`` path as real checkpoints. Weights are random: only shapes, dtypes,
caching and error paths can be checked with them, never accuracy."""

from __future__ import annotations

from pathlib import Path


def save_tiny_depth_anything(folder: Path, max_depth: int = 20) -> Path:
    """A metric Depth Anything V2 (DINOv2 backbone, hidden size 16, 4 layers) with its DPT image processor."""
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation, Dinov2Config, DPTImageProcessorPil

    backbone = Dinov2Config(
        hidden_size=16,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=32,
        image_size=56,
        patch_size=14,
        out_indices=[1, 2, 3, 4],
        reshape_hidden_states=False,
    )
    config = DepthAnythingConfig(
        backbone_config=backbone,
        reassemble_hidden_size=16,
        neck_hidden_sizes=[8, 8, 16, 16],
        fusion_hidden_size=8,
        head_hidden_size=8,
        depth_estimation_type="metric",
        max_depth=max_depth,
        patch_size=14,
    )
    processor = DPTImageProcessorPil(
        size={"height": 56, "width": 56},
        keep_aspect_ratio=True,
        ensure_multiple_of=14,
        do_pad=False,
        image_mean=[0.485, 0.456, 0.406],
        image_std=[0.229, 0.224, 0.225],
    )
    DepthAnythingForDepthEstimation(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return Path(folder)


def save_tiny_depth_pro(folder: Path, fov_deg: float = 50.0) -> Path:
    """A Depth Pro with a field-of-view head (DINOv2 encoders of hidden size 16) and its processor config.
    The field-of-view head's last layer is set to answer ``fov_deg`` degrees for every image."""
    import json

    import torch
    from transformers import DepthProConfig, DepthProForDepthEstimation

    encoder = {
        "model_type": "dinov2",
        "num_hidden_layers": 2,
        "hidden_size": 16,
        "num_attention_heads": 2,
        "patch_size": 4,
        "image_size": 8,
    }
    config = DepthProConfig(
        patch_size=8,
        fusion_hidden_size=16,
        intermediate_hook_ids=[1, 0],
        intermediate_feature_dims=[8, 8],
        scaled_images_ratios=[0.5, 1.0],
        scaled_images_overlap_ratios=[0.0, 0.2],
        scaled_images_feature_dims=[12, 12],
        use_fov_model=True,
        num_fov_head_layers=1,
        image_model_config=encoder,
        patch_model_config=encoder,
        fov_model_config=encoder,
    )
    model = DepthProForDepthEstimation(config)
    with torch.no_grad():
        last = model.fov_model.head.layers[-1]
        last.weight.zero_()
        last.bias.fill_(fov_deg)
    model.save_pretrained(folder)
    # written as DepthProImageProcessor.save_pretrained would (that class needs torchvision to be built)
    processor = {
        "image_processor_type": "DepthProImageProcessor",
        "do_resize": True,
        "size": {"height": 16, "width": 16},
        "resample": 2,
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
    }
    (Path(folder) / "preprocessor_config.json").write_text(json.dumps(processor, indent=2))
    return Path(folder)
