"""Tiny randomly initialised detection/segmentation/tracking models, saved like real checkpoints.

Each builder writes a model (``save_pretrained``) and its processor (image processor config plus, for
text models, a tokenizer built offline from a vocabulary written here) into a folder, so the primitives
load them through the same ``from_pretrained`` path real hub weights take. The weights are random:
tests on these check structure (types, shapes, dtypes, caching, errors), never accuracy.
"""

from __future__ import annotations

from pathlib import Path

WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    ".",
    "a",
    "red",
    "chair",
    "table",
    "cup",
    "the",
    "box",
    "square",
    "person",
    "door",
]


def bert_tokenizer():
    """A WordPiece (BERT) tokenizer over a small whole-word vocabulary."""
    from transformers import BertTokenizer

    return BertTokenizer(vocab={word: i for i, word in enumerate(WORDS)})


def clip_tokenizer(max_length: int):
    """A byte-level BPE (CLIP) tokenizer with single-byte tokens only (no merges)."""
    from transformers import CLIPTokenizer
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    vocab: dict[str, int] = {}
    for symbol in symbols + [symbol + "</w>" for symbol in symbols] + ["<|startoftext|>", "<|endoftext|>"]:
        vocab.setdefault(symbol, len(vocab))
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=max_length)


def build_grounding_dino(folder: Path) -> Path:
    import torch
    from transformers import (
        BertConfig,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    backbone = SwinConfig(
        image_size=64,
        patch_size=4,
        embed_dim=8,
        depths=[1, 1, 1, 1],
        num_heads=[1, 1, 1, 1],
        window_size=2,
        out_indices=[2, 3, 4],
    )
    text = BertConfig(
        vocab_size=len(WORDS),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    config = GroundingDinoConfig(
        backbone_config=backbone,
        text_config=text,
        d_model=32,
        encoder_layers=1,
        decoder_layers=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        num_queries=12,
        max_text_len=32,
        encoder_n_points=1,
        decoder_n_points=1,
    )
    torch.manual_seed(0)
    GroundingDinoForObjectDetection(config).eval().save_pretrained(folder)
    image_processor = GroundingDinoImageProcessor(size={"shortest_edge": 64, "longest_edge": 96})
    GroundingDinoProcessor(image_processor=image_processor, tokenizer=bert_tokenizer()).save_pretrained(folder)
    return folder


def build_owlv2(folder: Path) -> Path:
    import torch
    from transformers import Owlv2Config, Owlv2ForObjectDetection, Owlv2ImageProcessor, Owlv2Processor

    tokenizer = clip_tokenizer(16)
    config = Owlv2Config(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=16,
        ),
        vision_config=dict(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        ),
        projection_dim=16,
    )
    torch.manual_seed(0)
    Owlv2ForObjectDetection(config).eval().save_pretrained(folder)
    Owlv2Processor(
        image_processor=Owlv2ImageProcessor(size={"height": 32, "width": 32}), tokenizer=tokenizer
    ).save_pretrained(folder)
    return folder


def build_sam(folder: Path) -> Path:
    import torch
    from transformers import SamConfig, SamImageProcessor, SamModel, SamProcessor

    hidden = 32
    config = SamConfig(
        vision_config=dict(
            hidden_size=16,
            output_channels=hidden,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=64,
            patch_size=16,
            window_size=2,
            global_attn_indexes=[0],
            num_pos_feats=hidden // 2,
            mlp_dim=32,
        ),
        prompt_encoder_config=dict(hidden_size=hidden, image_size=64, patch_size=16, mask_input_channels=4),
        mask_decoder_config=dict(
            hidden_size=hidden, mlp_dim=32, num_hidden_layers=1, num_attention_heads=2, iou_head_hidden_dim=16
        ),
    )
    torch.manual_seed(0)
    SamModel(config).eval().save_pretrained(folder)
    image_processor = SamImageProcessor(
        size={"longest_edge": 64},
        pad_size={"height": 64, "width": 64},
        mask_size={"longest_edge": 16},
        mask_pad_size={"height": 16, "width": 16},
    )
    SamProcessor(image_processor=image_processor).save_pretrained(folder)
    return folder


def has_torchvision() -> bool:
    """transformers' SAM 2 and SAM 3 processors need torchvision (their image/video processors use it)."""
    import importlib.util

    return importlib.util.find_spec("torchvision") is not None


def _write_processor_config(folder: Path, files: dict[str, dict]) -> None:
    """Without torchvision the SAM 2/3 processor objects cannot be built; write the same JSON files
    ``save_pretrained`` would, so loading the folder reaches the real 'needs torchvision' failure."""
    import json

    for name, content in files.items():
        (folder / name).write_text(json.dumps(content, indent=2))


SAM3_SIZE, SAM3_PATCH = 112, 14


def build_sam3(folder: Path) -> Path:
    """Tiny SAM 3 (text -> instance masks) with a CLIP tokenizer; image 112 px, 8x8 patches, 10 queries."""
    import torch
    from transformers import Sam3Config, Sam3Model

    grid = SAM3_SIZE // SAM3_PATCH
    tokenizer = clip_tokenizer(32)
    config = Sam3Config(
        vision_config=dict(
            backbone_config=dict(
                model_type="sam3_vit_model",
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                image_size=SAM3_SIZE,
                patch_size=SAM3_PATCH,
                window_size=4,
                global_attn_indexes=[1],
                pretrain_image_size=SAM3_SIZE,
            ),
            fpn_hidden_size=32,
            backbone_feature_sizes=[[4 * grid] * 2, [2 * grid] * 2, [grid] * 2],
        ),
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            projection_dim=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=32,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        ),
        geometry_encoder_config=dict(hidden_size=32, num_layers=1, num_attention_heads=2, intermediate_size=64),
        detr_encoder_config=dict(hidden_size=32, num_layers=1, num_attention_heads=2, intermediate_size=64),
        detr_decoder_config=dict(
            hidden_size=32, num_layers=1, num_queries=10, num_attention_heads=2, intermediate_size=64
        ),
        mask_decoder_config=dict(hidden_size=32, num_upsampling_stages=3, num_attention_heads=2),
    )
    torch.manual_seed(0)
    Sam3Model(config).eval().save_pretrained(folder)
    size = {"height": SAM3_SIZE, "width": SAM3_SIZE}
    mask_size = {"height": 4 * grid, "width": 4 * grid}
    if has_torchvision():
        from transformers import Sam3ImageProcessor, Sam3Processor

        Sam3Processor(
            image_processor=Sam3ImageProcessor(size=size, mask_size=mask_size), tokenizer=tokenizer
        ).save_pretrained(folder)
    else:
        tokenizer.save_pretrained(folder)
        _write_processor_config(
            folder,
            {
                "preprocessor_config.json": {
                    "image_processor_type": "Sam3ImageProcessor",
                    "processor_class": "Sam3Processor",
                    "size": size,
                    "mask_size": mask_size,
                },
                "processor_config.json": {"processor_class": "Sam3Processor", "target_size": SAM3_SIZE},
            },
        )
    return folder


SAM2_SIZE = 128


def build_sam2_video(folder: Path) -> Path:
    """Tiny SAM 2 video: a small Hiera backbone at 128 px, one memory-attention layer, 3 memory frames."""
    import torch
    from transformers import Sam2VideoConfig, Sam2VideoModel

    size = SAM2_SIZE
    vision = dict(
        model_type="sam2_vision_model",
        backbone_config=dict(
            model_type="sam2_hiera_det_model",
            hidden_size=12,
            image_size=[size, size],
            blocks_per_stage=[1, 2, 7, 2],
            embed_dim_per_stage=[12, 24, 48, 96],
            num_attention_heads_per_stage=[1, 1, 1, 1],
        ),
        backbone_channel_list=[96, 48, 24, 12],
        backbone_feature_sizes=[[size // 4] * 2, [size // 8] * 2, [size // 16] * 2],
    )
    config = Sam2VideoConfig(
        vision_config=vision,
        image_size=size,
        prompt_encoder_config=dict(image_size=size),
        memory_attention_num_layers=1,
        memory_attention_rope_feat_sizes=[size // 16] * 2,
        num_maskmem=3,
    )
    torch.manual_seed(0)
    Sam2VideoModel(config).eval().save_pretrained(folder)
    shape = {"height": size, "width": size}
    mask_size = {"height": size // 4, "width": size // 4}
    if has_torchvision():
        from transformers import Sam2ImageProcessor, Sam2VideoProcessor, Sam2VideoVideoProcessor

        Sam2VideoProcessor(
            image_processor=Sam2ImageProcessor(size=shape, mask_size=mask_size),
            video_processor=Sam2VideoVideoProcessor(size=shape),
        ).save_pretrained(folder)
    else:
        _write_processor_config(
            folder,
            {
                "preprocessor_config.json": {
                    "image_processor_type": "Sam2ImageProcessor",
                    "processor_class": "Sam2VideoProcessor",
                    "size": shape,
                    "mask_size": mask_size,
                },
                "video_preprocessor_config.json": {
                    "video_processor_type": "Sam2VideoVideoProcessor",
                    "processor_class": "Sam2VideoProcessor",
                    "size": shape,
                },
                "processor_config.json": {"processor_class": "Sam2VideoProcessor", "target_size": size},
            },
        )
    return folder
