"""Tiny randomly initialised detection/segmentation/tracking models, saved like real checkpoints.

Each builder writes a model (``save_pretrained``) and its processor (image processor config plus, for
text models, a tokenizer built offline from a vocabulary written here) into a folder, so the primitives
load them through the same ``from_pretrained`` path real hub weights take. The weights are random:
tests on these check structure (types, shapes, dtypes, caching, errors), never accuracy.
"""

from __future__ import annotations

from pathlib import Path

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "a", "red", "chair", "table", "cup", "the",
         "box", "square", "person", "door"]


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
    from transformers import (BertConfig, GroundingDinoConfig, GroundingDinoForObjectDetection,
                              GroundingDinoImageProcessor, GroundingDinoProcessor, SwinConfig)

    backbone = SwinConfig(image_size=64, patch_size=4, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1],
                          window_size=2, out_indices=[2, 3, 4])
    text = BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=64)
    config = GroundingDinoConfig(backbone_config=backbone, text_config=text, d_model=32, encoder_layers=1,
                                 decoder_layers=2, encoder_ffn_dim=32, decoder_ffn_dim=32, encoder_attention_heads=2,
                                 decoder_attention_heads=2, num_queries=12, max_text_len=32, encoder_n_points=1,
                                 decoder_n_points=1)
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
        text_config=dict(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, max_position_embeddings=16),
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=8),
        projection_dim=16)
    torch.manual_seed(0)
    Owlv2ForObjectDetection(config).eval().save_pretrained(folder)
    Owlv2Processor(image_processor=Owlv2ImageProcessor(size={"height": 32, "width": 32}),
                   tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_sam(folder: Path) -> Path:
    import torch
    from transformers import SamConfig, SamImageProcessor, SamModel, SamProcessor

    hidden = 32
    config = SamConfig(
        vision_config=dict(hidden_size=16, output_channels=hidden, num_hidden_layers=1, num_attention_heads=2,
                           image_size=64, patch_size=16, window_size=2, global_attn_indexes=[0],
                           num_pos_feats=hidden // 2, mlp_dim=32),
        prompt_encoder_config=dict(hidden_size=hidden, image_size=64, patch_size=16, mask_input_channels=4),
        mask_decoder_config=dict(hidden_size=hidden, mlp_dim=32, num_hidden_layers=1, num_attention_heads=2,
                                 iou_head_hidden_dim=16))
    torch.manual_seed(0)
    SamModel(config).eval().save_pretrained(folder)
    image_processor = SamImageProcessor(size={"longest_edge": 64}, pad_size={"height": 64, "width": 64},
                                        mask_size={"longest_edge": 16}, mask_pad_size={"height": 16, "width": 16})
    SamProcessor(image_processor=image_processor).save_pretrained(folder)
    return folder
