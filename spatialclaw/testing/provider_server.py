"""A real local HTTP server that speaks the OpenAI Chat Completions and Anthropic Messages wire protocols.

It replies from a script instead of a model, so that the production client code (the real ``openai`` and
``anthropic`` SDKs over real HTTP) can be tested without a network::

    with ScriptedProvider(["```python\\nprint(1)\\n```", rate_limited(retry_after=1), "done"]) as server:
        client = openai.OpenAI(base_url=server.url, api_key="test")
        ...
        server.requests      # the JSON bodies received, in order (faults included)

Endpoints: ``POST /v1/chat/completions`` (OpenAI, also what vLLM/SGLang/llama.cpp/Ollama serve) and
``POST /v1/messages`` (Anthropic). Non-streaming only; a request with ``"stream": true`` gets a 400.

A script is a list (one entry per request, in arrival order; running past its end answers 500 with a
message saying so) or a callable ``(request_json, call_index) -> entry``. An entry is:

- a ``str``: the reply text;
- a :class:`Reply`: text plus optional reasoning (OpenAI-compatible ``reasoning_content`` / Anthropic
  ``thinking`` block), finish reason, explicit token usage, and tool calls (``Reply.tool_calls``, sent as
  the OpenAI ``tool_calls`` of the message with finish reason ``tool_calls``, or as Anthropic ``tool_use``
  blocks with stop reason ``tool_use``);
- a :class:`Fault` from :func:`rate_limited`, :func:`server_error`, :func:`delayed`, :func:`malformed`,
  :func:`dropped`, :func:`unauthorized` or :func:`bad_request`.

Token usage in responses is explicit (``Reply.usage``) or estimated deterministically as one token per
four characters of the request body (images count 85 tokens each) and of the reply text.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from spatialclaw.services.local_http import LocalHTTPServer

__all__ = [
    "Fault",
    "Reply",
    "ScriptedProvider",
    "ToolCallReply",
    "bad_request",
    "delayed",
    "dropped",
    "malformed",
    "rate_limited",
    "server_error",
    "tool_call",
    "unauthorized",
]

IMAGE_TOKENS = 85


@dataclass(frozen=True)
class Reply:
    """A scripted successful reply. ``usage`` overrides the estimate: keys ``prompt_tokens`` (all input
    tokens), ``completion_tokens``, ``reasoning_tokens``, ``cached_tokens`` (read from the prompt cache)
    and ``cache_write_tokens`` (written to it; Anthropic only)."""

    text: str
    reasoning: str | None = None
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    tool_calls: tuple[ToolCallReply, ...] = ()


@dataclass(frozen=True)
class ToolCallReply:
    """A scripted tool call: the tool's ``name`` and its ``arguments`` (a JSON object, or a string sent as
    is, to script malformed arguments); ``id`` is generated when empty."""

    name: str
    arguments: Any = field(default_factory=dict)
    id: str = ""


def tool_call(name: str, arguments: Any = None, text: str = "", id: str = "") -> Reply:
    """A reply that calls one tool (``text`` goes beside the call)."""
    return Reply(text=text, tool_calls=(ToolCallReply(name, {} if arguments is None else arguments, id),))


@dataclass(frozen=True)
class Fault:
    """A scripted failure. ``kind``: ``status`` (an HTTP error ``status`` with a provider-shaped error
    body and ``headers``), ``delay`` (sleep ``seconds`` then answer ``then``), ``malformed`` (200 with
    ``body`` that is not a valid response) or ``drop`` (close the connection without a response)."""

    kind: str
    status: int = 500
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    then: Any = None
    body: str = ""


Entry = str | Reply | Fault
Script = Sequence[Entry] | Callable[[dict[str, Any], int], Entry]


def rate_limited(retry_after: float | None = 1, message: str = "rate limit reached (scripted)") -> Fault:
    """HTTP 429; ``retry_after`` seconds go into the ``Retry-After`` header (omitted when None)."""
    headers = {} if retry_after is None else {"Retry-After": _format_seconds(retry_after)}
    return Fault("status", status=429, message=message, headers=headers)


def server_error(status: int = 500, message: str = "internal server error (scripted)") -> Fault:
    """An HTTP 5xx error."""
    return Fault("status", status=status, message=message)


def unauthorized(message: str = "invalid API key (scripted)") -> Fault:
    """HTTP 401."""
    return Fault("status", status=401, message=message)


def bad_request(message: str = "bad request (scripted)") -> Fault:
    """HTTP 400."""
    return Fault("status", status=400, message=message)


def delayed(seconds: float, then: Entry = "") -> Fault:
    """Wait ``seconds`` before answering ``then`` (use with a client timeout shorter than ``seconds``)."""
    return Fault("delay", seconds=seconds, then=then)


def malformed(body: str = '{"id": "x", "choices": [ {"message": ') -> Fault:
    """HTTP 200 with a body that is not a valid response (truncated JSON by default)."""
    return Fault("malformed", status=200, body=body)


def dropped() -> Fault:
    """Close the connection without sending any response."""
    return Fault("drop")


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


class ScriptedProvider(LocalHTTPServer):
    """Serve a script on ``127.0.0.1`` (a free port, or ``port``) in a background thread; a context manager.

    ``url`` is the base URL to give an SDK (``http://127.0.0.1:PORT/v1`` for OpenAI; the Anthropic SDK
    takes ``anthropic_url``, the same host without ``/v1``). ``requests`` holds each request's JSON
    body, ``paths`` its path, ``headers`` its headers and ``arrivals`` its ``time.monotonic()`` arrival, in
    arrival order; ``max_in_flight`` is the most requests it was answering at one time.
    """

    def __init__(self, script: Script, model: str = "scripted-model", port: int = 0) -> None:
        self.script = script
        self.model = model
        self._port = port
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        super().__init__("scripted provider")

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> ScriptedProvider:
        self._serve(_make_handler(self), port=self._port)
        return self

    def __enter__(self) -> ScriptedProvider:
        return self.start()

    @property
    def url(self) -> str:
        """OpenAI-style base URL, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        """Anthropic-style base URL (the SDK appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def calls(self) -> int:
        return len(self.requests)

    # script ----------------------------------------------------------------------------------
    def _next_entry(self, body: dict[str, Any], path: str, headers: dict[str, str]) -> Entry:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            self.arrivals.append(time.monotonic())
        if callable(self.script):
            return self.script(body, index)
        if index >= len(self.script):
            return server_error(
                500, f"the scripted provider has only {len(self.script)} replies; request {index + 1} has none"
            )
        return self.script[index]


def _make_handler(provider: ScriptedProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
            return

        def do_POST(self) -> None:
            with provider._lock:
                provider.in_flight += 1
                provider.max_in_flight = max(provider.max_in_flight, provider.in_flight)
            self._answering = True
            try:
                self._post()
            finally:
                self._answered()

        def _answered(self) -> None:
            """This request is no longer in flight: called before its answer goes out, so a client that
            sends its next request on reading the answer never finds this one still counted."""
            if self._answering:
                self._answering = False
                with provider._lock:
                    provider.in_flight -= 1

        def _post(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send_json(
                    400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}
                )
                return
            path = self.path.split("?")[0]
            if path.endswith("/chat/completions"):
                protocol = "openai"
            elif path.endswith("/messages"):
                protocol = "anthropic"
            else:
                self._send_json(404, {"error": {"message": f"no endpoint {path}", "type": "not_found"}})
                return
            if body.get("stream"):
                self._send_json(
                    400, _error_body(protocol, 400, "the scripted provider does not stream; send stream=false")
                )
                return
            entry = provider._next_entry(body, path, {k.lower(): v for k, v in self.headers.items()})
            self._answer(protocol, body, entry)

        def _answer(self, protocol: str, request: dict[str, Any], entry: Entry) -> None:
            if isinstance(entry, Fault):
                if entry.kind == "delay":
                    time.sleep(entry.seconds)
                    self._answer(protocol, request, entry.then)
                    return
                if entry.kind == "drop":
                    self._answered()
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                if entry.kind == "malformed":
                    self._send_raw(200, entry.body.encode(), {"Content-Type": "application/json"})
                    return
                self._send_json(entry.status, _error_body(protocol, entry.status, entry.message), entry.headers)
                return
            reply = entry if isinstance(entry, Reply) else Reply(text=str(entry))
            build = _openai_response if protocol == "openai" else _anthropic_response
            self._send_json(200, build(request, reply, provider.model))

        def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send_raw(
                status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})}
            )

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self._answered()
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _estimate_usage(request: dict[str, Any], reply: Reply) -> dict[str, int]:
    images = 0
    text_chars = 0

    def walk(value: Any) -> None:
        nonlocal images, text_chars
        if isinstance(value, dict):
            if value.get("type") in ("image_url", "image"):
                images += 1
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            text_chars += len(value)

    walk(request.get("messages", []))
    walk(request.get("system", ""))
    reasoning = len(reply.reasoning or "") // 4
    usage = {
        "prompt_tokens": text_chars // 4 + images * IMAGE_TOKENS,
        "completion_tokens": len(reply.text) // 4 + reasoning + 1,
        "reasoning_tokens": reasoning,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
    }
    usage.update(reply.usage or {})
    return usage


def _openai_response(request: dict[str, Any], reply: Reply, model: str) -> dict[str, Any]:
    usage = _estimate_usage(request, reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    finish = reply.finish_reason
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or "call_" + uuid.uuid4().hex[:12],
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
                },
            }
            for call in reply.tool_calls
        ]
        finish = "tool_calls" if finish == "stop" else finish
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", model),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
            "completion_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]},
            "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"]},
        },
    }


def _anthropic_response(request: dict[str, Any], reply: Reply, model: str) -> dict[str, Any]:
    usage = _estimate_usage(request, reply)
    content: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        content.append(
            {"type": "thinking", "thinking": reply.reasoning, "signature": "scripted-" + uuid.uuid4().hex[:16]}
        )
    if reply.text or not reply.tool_calls:
        content.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        arguments = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
        content.append(
            {
                "type": "tool_use",
                "id": call.id or "toolu_" + uuid.uuid4().hex[:20],
                "name": call.name,
                "input": arguments,
            }
        )
    stop = {"stop": "end_turn", "length": "max_tokens"}.get(reply.finish_reason, reply.finish_reason)
    if reply.tool_calls and stop == "end_turn":
        stop = "tool_use"
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": request.get("model", model),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {  # Anthropic counts cache reads and writes apart from input_tokens
            "input_tokens": max(usage["prompt_tokens"] - usage["cached_tokens"] - usage["cache_write_tokens"], 0),
            "output_tokens": usage["completion_tokens"],
            "cache_read_input_tokens": usage["cached_tokens"],
            "cache_creation_input_tokens": usage["cache_write_tokens"],
        },
    }
