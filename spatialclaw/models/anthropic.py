"""``anthropic:MODEL``: the Messages API through the ``anthropic`` SDK.

System messages become the ``system`` field, images travel as base64 PNG blocks, consecutive messages
of one role are merged (the API requires alternation). Prompt caching is on unless
``prompt_caching=False``: the system prompt and the conversation so far are marked as cache
breakpoints, so each step re-reads the previous steps from the cache (billed at the cached-input price;
cache writes at 1.25 times the input price). ``thinking_budget=N`` turns on extended thinking
with a budget of N tokens; the thinking text goes to :attr:`ModelReply.reasoning` and the complete
content blocks (thinking with signatures included) stay in ``raw`` for the trajectory. Anthropic reports
no separate reasoning-token count, so ``Usage.reasoning_tokens`` stays 0 (thinking is billed inside
``completion_tokens``).
"""

from __future__ import annotations

import os
from typing import Any

from spatialclaw.chat import Message, ModelReply, TextPart, ToolCall, ToolSpec, Usage
from spatialclaw.models.base import ModelAuthError, RetryPolicy, SDKModel, TransientError
from spatialclaw.models.errors import classify_sdk_error
from spatialclaw.models.pricing import Price, cost_usd, price_for

__all__ = ["AnthropicModel", "to_anthropic_messages"]

DEFAULT_MAX_TOKENS = 8192
CACHE = {"cache_control": {"type": "ephemeral"}}
CACHE_WRITE_PREMIUM = 0.25
"""Anthropic bills tokens written to the prompt cache at 1.25 times the input price."""


def to_anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """``(system, messages)`` for the Messages API. An assistant message's tool calls become ``tool_use``
    blocks; a ``tool`` message becomes a ``tool_result`` block (its text and images) in a user turn."""
    system = "\n\n".join(m.text_content for m in messages if m.role == "system")
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        blocks: list[dict[str, Any]] = []
        for part in message.content:
            if isinstance(part, TextPart):
                if part.text:
                    blocks.append({"type": "text", "text": part.text})
            else:
                blocks.append(
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": part.base64()}}
                )
        role = message.role
        if role == "tool":
            blocks = [
                {
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id,
                    "content": blocks or [{"type": "text", "text": "(empty)"}],
                }
            ]
            role = "user"
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls
        )
        if not blocks:
            blocks.append({"type": "text", "text": "(empty)"})
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return system, out


def anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Messages API ``tools`` for ``tools``."""
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


class AnthropicModel(SDKModel):
    """A Claude model over the Messages API."""

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        prices: dict[str, Price] | None = None,
        **defaults: Any,
    ) -> None:
        import anthropic

        self.name = name
        self.spec = f"anthropic:{name}"
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise ModelAuthError(f"{self.spec}: no API key. Set ANTHROPIC_API_KEY (or pass api_key=...).")
        self.retry = retry or RetryPolicy()
        self.prices = prices
        self.defaults = defaults
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)

    def request_body(self, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        params = {**self.defaults, **params}
        system, wire = to_anthropic_messages(messages)
        body: dict[str, Any] = {
            "model": self.name,
            "messages": wire,
            "max_tokens": params.pop("max_tokens", None) or DEFAULT_MAX_TOKENS,
        }
        tools = params.pop("tools", None)
        if tools:
            body["tools"] = anthropic_tools(tools)
        cache = params.pop("prompt_caching", True)
        if system:
            body["system"] = [{"type": "text", "text": system, **(CACHE if cache else {})}] if cache else system
        if cache and wire:
            last = wire[-1]["content"][-1]
            wire[-1]["content"][-1] = {**last, **CACHE}
        params.pop("reasoning_effort", None)  # an OpenAI parameter
        budget = params.pop("thinking_budget", None)
        if budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": int(budget)}
            body["max_tokens"] = max(body["max_tokens"], int(budget) + 1024)
            params.pop("temperature", None)  # extended thinking requires the default temperature
        stop = params.pop("stop", None)
        if stop:
            body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        params.pop("seed", None)  # not supported by the Messages API
        body.update({k: v for k, v in params.items() if v is not None})
        return self._unnamed_to_extra_body(body)

    def _unnamed_to_extra_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """Options the installed SDK's ``messages.create`` does not name (e.g. ``temperature`` in SDKs that
        dropped it, or a provider-specific option) travel in ``extra_body``, so the SDK does not refuse them."""
        import inspect

        try:
            named = inspect.signature(self._client.messages.create).parameters
        except (AttributeError, TypeError, ValueError):  # no client or no signature: send as they are
            return body
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in named.values()):
            return body
        extra = {k: v for k, v in body.items() if k not in named}
        if not extra:
            return body
        kept = {k: v for k, v in body.items() if k in named}
        return {**kept, "extra_body": {**(body.get("extra_body") or {}), **extra}}

    def _create(self, body: dict[str, Any], timeout_s: float | None) -> Any:
        try:
            response = self._client.messages.create(**body, **({"timeout": timeout_s} if timeout_s is not None else {}))
        except Exception as error:  # mapped to retry or a clear ModelError
            raise classify_sdk_error(error, self.spec) from error
        if not isinstance(getattr(response, "content", None), list):
            raise TransientError(f"malformed response: no content blocks in {str(response)[:200]}")
        return response

    def _reply(self, response: Any, latency_s: float) -> ModelReply:
        text = "".join(b.text for b in response.content if getattr(b, "type", None) == "text")
        thinking = [b.thinking for b in response.content if getattr(b, "type", None) == "thinking"]
        u = response.usage
        cache_read = getattr(u, "cache_read_input_tokens", None) or 0
        cache_write = getattr(u, "cache_creation_input_tokens", None) or 0
        usage = Usage(
            prompt_tokens=(u.input_tokens or 0) + cache_read + cache_write,
            completion_tokens=u.output_tokens or 0,
            cached_tokens=cache_read,
        )
        cost = cost_usd(self.name, usage, self.prices)
        price = price_for(self.name, self.prices)
        if cost is not None and price is not None:
            cost += cache_write * price.input * CACHE_WRITE_PREMIUM / 1_000_000
        return ModelReply(
            text=text,
            reasoning="\n\n".join(thinking) if thinking else None,
            usage=usage,
            cost_usd=cost,
            latency_s=latency_s,
            raw=response.model_dump(mode="json", exclude_none=True),
            finish_reason=response.stop_reason,
            tool_calls=[
                ToolCall(b.id, b.name, dict(b.input or {}))
                for b in response.content
                if getattr(b, "type", None) == "tool_use"
            ],
        )
