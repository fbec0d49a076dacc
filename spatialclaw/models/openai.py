"""``openai:MODEL`` and ``openai-compat:MODEL@URL``: the Chat Completions API through the ``openai`` SDK.

Images travel as PNG data URLs. Reasoning models (``o1``, ``o3``, ``o4``, ``gpt-5`` families) get
``max_completion_tokens`` instead of ``max_tokens``, no ``temperature``, and ``reasoning_effort``.
OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama) get every parameter as given, and
``extra_body`` (e.g. ``{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}}``) is merged
into the request body. A separate reasoning text (``reasoning_content`` or ``reasoning``, as vLLM and
SGLang return it) is kept in :attr:`ModelReply.reasoning`.
"""

from __future__ import annotations

import os
import re
from typing import Any

from spatialclaw.chat import Message, ModelReply, TextPart, Usage
from spatialclaw.models.base import ModelAuthError, RetryPolicy, SDKModel, TransientError
from spatialclaw.models.errors import classify_sdk_error
from spatialclaw.models.pricing import Price, cost_usd

__all__ = ["OpenAIModel", "to_openai_messages"]

REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


def to_openai_messages(messages: list[Message], image_detail: str | None = None) -> list[dict[str, Any]]:
    """Chat Completions ``messages``: text-only messages as strings, others as content-part lists."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role != "user" or not message.images:
            out.append({"role": message.role, "content": message.text_content})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append({"type": "text", "text": part.text})
            else:
                image_url: dict[str, Any] = {"url": part.data_url()}
                if image_detail:
                    image_url["detail"] = image_detail
                parts.append({"type": "image_url", "image_url": image_url})
        out.append({"role": "user", "content": parts})
    return out


class OpenAIModel(SDKModel):
    """A Chat Completions model. ``compatible=True`` for third-party servers (no parameter rewriting)."""

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        compatible: bool = False,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        prices: dict[str, Price] | None = None,
        image_detail: str | None = None,
        **defaults: Any,
    ) -> None:
        import openai

        self.name = name
        self.compatible = compatible
        self.spec = f"openai-compat:{name}@{base_url}" if compatible else f"openai:{name}"
        if api_key is None:
            api_key = os.environ.get("OPENAI_API_KEY")
            if compatible:
                api_key = os.environ.get("OPENAI_COMPAT_API_KEY", api_key or "EMPTY")
        if not api_key:
            raise ModelAuthError(
                f"{self.spec}: no API key. Set OPENAI_API_KEY (or pass api_key=...); "
                "for a local OpenAI-compatible server use openai-compat:MODEL@URL instead."
            )
        self.retry = retry or RetryPolicy()
        self.prices = prices
        self.image_detail = image_detail
        self.defaults = defaults
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)

    @property
    def reasoning_model(self) -> bool:
        return not self.compatible and bool(REASONING_MODEL.match(self.name))

    def request_body(self, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (``extra_body`` kept separate)."""
        params = {**self.defaults, **params}
        body: dict[str, Any] = {"model": self.name, "messages": to_openai_messages(messages, self.image_detail)}
        max_tokens = params.pop("max_tokens", None)
        params.pop("thinking_budget", None)  # an Anthropic parameter, meaningless for Chat Completions
        if self.reasoning_model:
            params.pop("temperature", None)
            if max_tokens is not None:
                body["max_completion_tokens"] = max_tokens
        else:
            if max_tokens is not None:
                body["max_tokens"] = max_tokens
            if not self.compatible:
                params.pop("reasoning_effort", None)
        body.update({k: v for k, v in params.items() if v is not None})
        return body

    def _create(self, body: dict[str, Any], timeout_s: float | None) -> Any:
        try:
            response = self._client.chat.completions.create(**body, **({"timeout": timeout_s} if timeout_s is not None else {}))
        except Exception as error:  # mapped to retry or a clear ModelError
            raise classify_sdk_error(error, self.spec) from error
        if not getattr(response, "choices", None) or getattr(response.choices[0], "message", None) is None:
            raise TransientError(f"malformed response: no choices in {str(response)[:200]}")
        return response

    def _reply(self, response: Any, latency_s: float) -> ModelReply:
        choice = response.choices[0]
        message = choice.message
        extra = getattr(message, "model_extra", None) or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        usage = Usage()
        if response.usage is not None:
            details = response.usage.completion_tokens_details
            prompt_details = response.usage.prompt_tokens_details
            usage = Usage(
                prompt_tokens=response.usage.prompt_tokens or 0,
                completion_tokens=response.usage.completion_tokens or 0,
                reasoning_tokens=(details.reasoning_tokens or 0) if details else 0,
                cached_tokens=(prompt_details.cached_tokens or 0) if prompt_details else 0,
            )
        return ModelReply(
            text=message.content or "",
            reasoning=reasoning,
            usage=usage,
            cost_usd=cost_usd(self.name, usage, self.prices),
            latency_s=latency_s,
            raw=response.model_dump(mode="json", exclude_none=True),
            finish_reason=choice.finish_reason,
        )

