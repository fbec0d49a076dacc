"""``openai:MODEL`` and ``openai-compat:MODEL@URL``: the Chat Completions API through the ``openai`` SDK.

Images travel as PNG data URLs. Reasoning models (``o1``, ``o3``, ``o4``, ``gpt-5`` families) get
``max_completion_tokens`` instead of ``max_tokens``, no ``temperature``, and ``reasoning_effort``.
OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama) get every parameter as given, and
``extra_body`` (e.g. ``{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}}``) is merged
into the request body. A separate reasoning text (``reasoning_content`` or ``reasoning``, as vLLM and
SGLang return it) is kept in :attr:`ModelReply.reasoning`.

Credentials go only where they belong. ``openai:`` sends ``OPENAI_API_KEY`` (or ``api_key``) to OpenAI
(or the ``OPENAI_BASE_URL`` its user set). ``openai-compat:`` sends a key only when one is named for it
(``api_key``, ``api_key_env=NAME`` or ``$SPATIALCLAW_COMPAT_API_KEY``), and nothing of the ``OPENAI_*``
environment the SDK would otherwise add (key, organisation, project, custom headers): the server of an
arbitrary URL never sees the user's OpenAI credentials.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from spatialclaw.chat import Message, ModelReply, TextPart, ToolCall, ToolSpec, Usage
from spatialclaw.models.base import ModelAuthError, RetryPolicy, SDKModel, TransientError
from spatialclaw.models.errors import classify_sdk_error
from spatialclaw.models.pricing import Price, cost_usd

__all__ = ["OpenAIModel", "to_openai_messages"]

REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")
COMPAT_HEADERS = {"host", "accept", "accept-encoding", "connection", "content-type", "content-length", "user-agent"}
"""The only headers (besides the SDK's ``x-stainless-*`` telemetry) sent to an OpenAI-compatible server."""


def to_openai_messages(messages: list[Message], image_detail: str | None = None) -> list[dict[str, Any]]:
    """Chat Completions ``messages``: text-only messages as strings, others as content-part lists.

    An assistant message's tool calls go as ``tool_calls`` (arguments as a JSON string); a ``tool``
    message as ``{"role": "tool", "tool_call_id", "content": text}``. Tool messages carry only text in
    this API, so the images of a run of tool messages follow it in one user message, each image after a
    line naming the call it came from."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # images of the tool messages just emitted

    def flush() -> None:
        if pending:
            out.append({"role": "user", "content": list(pending)})
            pending.clear()

    def image(part: Any) -> dict[str, Any]:
        image_url: dict[str, Any] = {"url": part.data_url()}
        if image_detail:
            image_url["detail"] = image_detail
        return {"type": "image_url", "image_url": image_url}

    for message in messages:
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text_content})
            if message.images:
                pending.append({"type": "text", "text": f"Images returned by tool call {message.tool_call_id}:"})
                pending.extend(image(p) for p in message.images)
            continue
        flush()
        if message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.text_content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                        }
                        for c in message.tool_calls
                    ],
                }
            )
            continue
        if message.role != "user" or not message.images:
            out.append({"role": message.role, "content": message.text_content})
            continue
        parts: list[dict[str, Any]] = []
        for part in message.content:
            parts.append({"type": "text", "text": part.text} if isinstance(part, TextPart) else image(part))
        out.append({"role": "user", "content": parts})
    flush()
    return out


def openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` (function tools) for ``tools``."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def _tool_calls(message: Any) -> list[ToolCall]:
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        try:
            arguments = json.loads(call.function.arguments or "{}")
            error = None if isinstance(arguments, dict) else "the arguments are not a JSON object"
        except json.JSONDecodeError as failure:
            arguments, error = {}, f"the arguments are not valid JSON ({failure})"
        calls.append(ToolCall(call.id, call.function.name, arguments if error is None else {}, error))
    return calls


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
        self.retry = retry or RetryPolicy()
        self.prices = prices
        self.image_detail = image_detail
        self.defaults = defaults
        if compatible:
            self._client = _compat_client(openai, api_key, base_url, timeout_s)
            return
        if api_key is None:
            api_key = os.environ.get("OPENAI_API_KEY")
        if not api_key:
            raise ModelAuthError(
                f"{self.spec}: no API key. Set OPENAI_API_KEY (or pass api_key=...); "
                "for a local OpenAI-compatible server use openai-compat:MODEL@URL instead."
            )
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)

    @property
    def reasoning_model(self) -> bool:
        return not self.compatible and bool(REASONING_MODEL.match(self.name))

    def request_body(self, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (``extra_body`` kept separate)."""
        params = {**self.defaults, **params}
        body: dict[str, Any] = {"model": self.name, "messages": to_openai_messages(messages, self.image_detail)}
        tools = params.pop("tools", None)
        if tools:
            body["tools"] = openai_tools(tools)
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
            response = self._client.chat.completions.create(
                **body, **({"timeout": timeout_s} if timeout_s is not None else {})
            )
        except Exception as error:  # mapped to retry or a clear ModelError
            mapped = classify_sdk_error(error, self.spec)
            if self.compatible and isinstance(mapped, ModelAuthError):
                mapped = ModelAuthError(
                    f"{mapped} An openai-compat server gets a key only when one is named for it: "
                    "the api_key_env=NAME model option or $SPATIALCLAW_COMPAT_API_KEY (never OPENAI_API_KEY)."
                )
            raise mapped from error
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
            tool_calls=_tool_calls(message),
        )


def _compat_client(openai: Any, api_key: str | None, base_url: str | None, timeout_s: float) -> Any:
    """An SDK client for an OpenAI-compatible server that sends ``Authorization: Bearer api_key`` when a
    key is given, no ``Authorization`` header otherwise, and none of the headers the SDK derives from
    the ``OPENAI_*`` environment (a request hook keeps only :data:`COMPAT_HEADERS`). The key goes to the
    origin of ``base_url`` only: a redirect elsewhere is followed without it."""
    from urllib.parse import urlsplit

    def origin(url: Any) -> tuple[str, str, int | None]:
        parts = urlsplit(str(url))
        return parts.scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(parts.scheme)

    home = origin(base_url)

    def only_named_credentials(request: Any) -> None:
        for name in list(request.headers):
            if name.lower() not in COMPAT_HEADERS and not name.lower().startswith("x-stainless-"):
                del request.headers[name]
        if api_key and origin(request.url) == home:
            request.headers["Authorization"] = f"Bearer {api_key}"

    http_client = openai.DefaultHttpxClient(event_hooks={"request": [only_named_credentials]})
    # the SDK insists on some key; this placeholder is removed by the hook and never leaves the process
    return openai.OpenAI(api_key="no-key", base_url=base_url, timeout=timeout_s, max_retries=0, http_client=http_client)
