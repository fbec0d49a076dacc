"""A tiny randomly initialised vision-language model (the Idefics3 / SmolVLM architecture), built offline.

The tokenizer is a byte-level BPE trained here on one sentence, with the special tokens the Idefics3
processor expects; the chat template is written here too. Saved with ``save_pretrained`` so that tests load
it through the same ``from_pretrained`` path as real weights. Its output is random text.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | capitalize }}:"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def build_tiny_vlm(
    directory: Path,
    seed: int = 0,
    corpus: list[str] | None = None,
    vocab_size: int = 400,
    chat_template: str = TEMPLATE,
) -> Path:
    """Build and save the model, processor and tokenizer; ``corpus`` (texts the BPE is trained on, with
    a larger ``vocab_size``) makes token counts of such texts realistic, ``chat_template`` replaces the
    simple one written here (e.g. with a model family's own template that TRL knows)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        PreTrainedTokenizerFast,
    )

    torch.manual_seed(seed)
    specials = ["<|endoftext|>", "<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>"]
    specials += [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(
        corpus or ["print(frames[0]) answer('B') the chair is left of the table ```python show()```"], trainer
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<end_of_utterance>", pad_token="<|endoftext|>", bos_token="<|endoftext|>"
    )
    image_processor = Idefics3ImageProcessorPil(
        do_image_splitting=False, size={"longest_edge": 28}, max_image_size={"longest_edge": 28}
    )
    processor = Idefics3Processor(
        image_processor=image_processor, tokenizer=fast, image_seq_len=1, chat_template=chat_template
    )
    eos, pad, image = (fast.convert_tokens_to_ids(t) for t in ("<end_of_utterance>", "<|endoftext|>", "<image>"))
    config = Idefics3Config(
        text_config=dict(
            model_type="llama",
            vocab_size=len(fast),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=4096,
            eos_token_id=eos,
            pad_token_id=pad,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=28,
            patch_size=14,
        ),
        scale_factor=2,
        image_token_id=image,
    )
    model = Idefics3ForConditionalGeneration(config)
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory
