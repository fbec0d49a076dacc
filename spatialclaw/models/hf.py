"""``hf:REPO_OR_PATH``: a vision-language model run in-process with ``transformers``.

Any model that ``AutoModelForImageTextToText`` and ``AutoProcessor`` load and whose processor has a
chat template works (Qwen2.5-VL, Qwen3-VL, SmolVLM, Idefics3, Gemma 3, ...). Weights come from a local
folder or the Hugging Face hub through the shared loader :func:`spatialclaw.primitives.perception.models.load_model`
(a clear :class:`~spatialclaw.primitives.perception.models.MissingWeightsError` when they are missing). Device and
dtype are automatic (CUDA, then MPS, then CPU; ``SPATIALCLAW_DEVICE`` overrides). Decoding is greedy
unless ``temperature > 0``. Processors with a video processor (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, SmolVLM2)
need ``torchvision``; without it loading fails with an error that says so.
"""

from __future__ import annotations

import importlib.util
import io
import threading
import time
from typing import Any

from spatialclaw.chat import Message, ModelReply, TextPart, Usage
from spatialclaw.models.base import Model, ModelError, ModelRequestError

__all__ = ["HFModel", "to_chat_template_messages"]

DEFAULT_MAX_NEW_TOKENS = 1024


def to_chat_template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages in the structure processors' chat templates expect, with images as PIL images."""
    from PIL import Image

    out = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            else:
                parts.append({"type": "image", "image": Image.open(io.BytesIO(part.png)).convert("RGB")})
        out.append({"role": message.role, "content": parts})
    return out


class HFModel(Model):
    """A local ``transformers`` vision-language model. ``model`` is a hub id or a ``save_pretrained`` folder."""

    def __init__(self, model: str, *, device: str | None = None, dtype: Any = None, **defaults: Any) -> None:
        from spatialclaw.primitives.perception.models import load_model

        self.name = model
        self.spec = f"hf:{model}"
        self.defaults = defaults
        try:
            loaded = load_model(
                "image-text-to-text",
                model,
                device=device,
                dtype=dtype,
                model_class="AutoModelForImageTextToText",
                processor_class="AutoProcessor",
            )
        except (RuntimeError, ImportError, AttributeError) as error:
            if "video processor" in str(error).lower() and importlib.util.find_spec("torchvision") is None:
                raise ModelError(
                    f"{self.spec}: this model's processor includes a video processor, which transformers builds "
                    "with torchvision, and torchvision is not installed. Install the torchvision release that "
                    "matches your torch (see https://pytorch.org/get-started/previous-versions/)."
                ) from error
            raise
        self.model, self.processor = loaded.model, loaded.processor
        self.device = loaded.device
        self.version = loaded.version
        if getattr(self.processor, "chat_template", None) is None:
            raise ModelRequestError(
                f"{self.spec}: the processor has no chat template; use an instruction-tuned checkpoint or "
                "save one with processor.chat_template set"
            )
        self._lock = threading.Lock()  # generate() is not re-entrant on one model

    def chat(self, messages: list[Message], *, purpose: str = "step", **params: Any) -> ModelReply:
        import torch

        params = {**self.defaults, **params}
        if params.get("tools"):
            raise ModelRequestError(
                f"{self.spec}: the hf: backend does not do structured tool calls; serve the model "
                "with vLLM or SGLang (openai-compat:) for --interface tool-calls, or use another interface"
            )
        max_new_tokens = int(params.get("max_tokens") or DEFAULT_MAX_NEW_TOKENS)
        temperature = float(params.get("temperature") or 0.0)
        inputs = self.processor.apply_chat_template(
            to_chat_template_messages(messages),
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
        ).to(self.device)
        generation: dict[str, Any] = {"max_new_tokens": max_new_tokens, "do_sample": temperature > 0}
        if temperature > 0:
            generation["temperature"] = temperature
        if params.get("timeout_s"):  # transformers stops generating after max_time seconds
            generation["max_time"] = float(params["timeout_s"])
        start = time.perf_counter()
        with self._lock, torch.inference_mode():
            output = self.model.generate(**inputs, **generation)
        latency = time.perf_counter() - start
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = output[0, prompt_length:]
        text = self.processor.decode(new_tokens, skip_special_tokens=True)
        finish = "length" if len(new_tokens) >= max_new_tokens else "stop"
        if finish == "stop" and "max_time" in generation and latency >= generation["max_time"]:
            finish = "time"  # cut by timeout_s, not ended by the model
        return ModelReply(
            text=text,
            usage=Usage(prompt_tokens=int(prompt_length), completion_tokens=int(len(new_tokens))),
            cost_usd=None,
            latency_s=latency,
            raw={"generated_token_ids": new_tokens.tolist(), "device": self.device, "model_version": self.version},
            finish_reason=finish,
        )

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "device": self.device, "version": self.version}
