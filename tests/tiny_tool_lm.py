"""A tiny randomly initialised tool-calling language model (the Qwen2 architecture), built offline.

Its tokenizer is a byte-level BPE trained here, with the Qwen chat special tokens and TRL's copy of the
Qwen2.5 chat template (which TRL recognises: it knows how to parse that model's tool calls). Saved with
``save_pretrained`` so tests load it through ``from_pretrained`` as they would real weights.
:func:`teach` then overfits it on one reply, so that a rollout reliably makes that tool call: the
point is to exercise a trainer's tool loop end to end, not to learn anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tokenizer.chat_template = qwen2_5_chat_template
    eos, pad = tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.convert_tokens_to_ids("<|endoftext|>")
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
