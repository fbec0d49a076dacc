"""Tiny randomly initialised models, built offline, for trying the training recipe and for tests.

:func:`build_tiny_vlm` writes a vision-language model (the Idefics3 / SmolVLM architecture) and
:func:`build_tiny_tool_lm` a tool-calling language model (the Qwen2 architecture). Their tokenizers are
byte-level BPEs trained here, with the special tokens each processor expects; the chat templates are
written here or taken from TRL (which knows how to parse Qwen2.5 tool calls). Everything is saved with
``save_pretrained``, so it loads through the same ``from_pretrained`` path as real weights. Their outputs
are random text: they exercise code paths (token counting, a trainer's first steps, a tool loop), they
learn nothing. :func:`write_recipe_models` writes the pair docs/trajectories.md's training recipe uses
(``spatialclaw tiny-models DIR``); :func:`teach` overfits the tool model on one reply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["build_tiny_tool_lm", "build_tiny_vlm", "teach", "write_recipe_models"]

TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | capitalize }}:"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def _token_id(tokenizer: Any, token: str) -> int:
    """The id of one token (``convert_tokens_to_ids`` is typed for lists too)."""
    value = tokenizer.convert_tokens_to_ids(token)
    if not isinstance(value, int):
        raise ValueError(f"{token!r} is not a single token of this tokenizer")
    return value


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
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tokenizer, eos_token="<end_of_utterance>", pad_token="<|endoftext|>", bos_token="<|endoftext|>"
    )
    image_processor = Idefics3ImageProcessorPil(
        do_image_splitting=False, size={"longest_edge": 28}, max_image_size={"longest_edge": 28}
    )
    processor = Idefics3Processor(
        image_processor=image_processor, tokenizer=fast, image_seq_len=1, chat_template=chat_template
    )
    eos, pad, image = (_token_id(fast, t) for t in ("<end_of_utterance>", "<|endoftext|>", "<image>"))
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


SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
]
CORPUS = [
    '<tool_call>\n{"name": "run_cell", "arguments": {"code": "answer(\'A\')"}}\n</tool_call>',
    "You are a helpful assistant. Which frame is red? A. the first B. the second print(frames[0]) answer('B')",
    '# Tools\n\nYou may call one or more functions to assist with the user query. {"type": "function"}',
]


def build_tiny_tool_lm(directory: Path, seed: int = 0, corpus: list[str] | None = None, vocab_size: int = 600) -> Path:
    """Build and save the model and tokenizer; ``corpus`` adds texts the BPE is trained on (with a larger
    ``vocab_size``, so that long prompts such as the tool manual take realistic token counts)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    torch.manual_seed(seed)
    backend = Tokenizer(models.BPE(unk_token=None))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    backend.train_from_iterator(CORPUS + (corpus or []), trainer)
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tokenizer.chat_template = qwen2_5_chat_template
    eos, pad = _token_id(tokenizer, "<|im_end|>"), _token_id(tokenizer, "<|endoftext|>")
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32768,
        eos_token_id=eos,
        pad_token_id=pad,
        tie_word_embeddings=True,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = pad
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def teach(directory: Path, prompt_ids: list[int], reply: str, steps: int = 150) -> None:
    """Overfit the model in ``directory`` to answer ``prompt_ids`` (token ids) with ``reply`` and save it."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model: Any = AutoModelForCausalLM.from_pretrained(directory)
    reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt_ids + reply_ids])
    labels = ids.clone()
    labels[0, : len(prompt_ids)] = -100
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=ids, labels=labels).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if loss.item() < 1e-2:  # sampled at a low temperature, the reply is then reproduced token for token
            break
    model.save_pretrained(directory)


def write_recipe_models(directory: Path, seed: int = 0) -> tuple[Path, Path]:
    """Write ``directory/vlm`` (SmolVLM's chat template, for ``MODEL``) and ``directory/policy`` (Qwen2.5's
    chat template, for ``RL_MODEL``), their tokenizers trained on the agent's tool manual so that token
    counts of exported rows are realistic (about 3 characters a token). Needs ``trl`` for the templates.
    Returns the two folders."""
    from trl.chat_template_utils import smolvlm_chat_template

    from spatialclaw.agent.prompting import system_prompt

    manual = [system_prompt(8, api_detail="core"), system_prompt(30, api_detail="core")]
    vlm = build_tiny_vlm(
        directory / "vlm", seed=seed, corpus=manual, vocab_size=3000, chat_template=smolvlm_chat_template
    )
    policy = build_tiny_tool_lm(directory / "policy", seed=seed, corpus=manual, vocab_size=3000)
    return vlm, policy
