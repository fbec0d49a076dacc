"""Host side of the kernel's ``vlm`` side channel.

A cell that calls ``vlm.ask(...)`` or ``vlm.locate(...)`` posts JSON to this server; the server asks the
episode's model and answers. One server serves many episodes: each episode opens a channel
(:meth:`VLMServer.open_channel`) with its own random token, and the token routes a request to that episode's
model. The kernel receives only the server's address and the token (``Kernel(vlm=config)``), never an API
key: credentials stay in the host process.

The server listens on a Unix socket in a private 0700 directory (``config["socket"]``), which no other local
user can reach; a sandboxed kernel reaches it through its own capped forwarder
(:class:`~spatialclaw.kernel.channels.UnixForwarder`). A loopback TCP listener (:attr:`VLMServer.url`) is
opened only when something asks for it: every local user can connect to that one.

Protocol (JSON over HTTP POST, header ``Authorization: Bearer <token>``):

``/ask``     ``{"images": [base64 PNG, ...], "question": str}`` -> ``{"text": str}``
``/locate``  ``{"image": base64 PNG, "description": str}`` -> ``{"text": str, "width": int, "height": int}``
             (the kernel side parses the reply into pixel boxes and points)

Errors come back as ``{"error": str}`` with status 400 (bad request), 401 (wrong token), 408 (the body
did not arrive within :data:`READ_TIMEOUT_S`), 413 (a body over :data:`MAX_BODY_BYTES`) or 502 (the model
call failed), so the cell raises an exception with that message. The token is checked before any of
the body is read: without a valid one, a large body is never read into memory.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from spatialclaw.agent.prompting import render
from spatialclaw.chat import ImagePart, Message, ModelReply, TextPart
from spatialclaw.services.local_http import LocalHTTPServer

__all__ = ["VLMServer", "ask_messages", "locate_messages"]

ModelCall = Callable[[list[Message], str], ModelReply]
"""``(messages, purpose) -> reply``: how the server reaches the model (the agent logs each call)."""
MAX_BODY_BYTES = 64 << 20
"""The largest request body (64 MiB: a few dozen full-resolution PNGs in base64) the channel reads."""
READ_TIMEOUT_S = 30.0
"""Seconds a client may take to send a request (its headers, then its body)."""
_DRAIN_BYTES = 64 << 10
"""A refused request's body up to this size is read and dropped so that the client receives the reply."""
MAX_CONNECTIONS = 256
"""Connections served at once (for all episodes of the server); one more is answered 503."""


def _image(data: str) -> ImagePart:
    from PIL import Image

    try:
        png = base64.b64decode(data, validate=True)
        with Image.open(io.BytesIO(png)) as image:
            width, height = image.size
            if image.format != "PNG":
                raise ValueError(f"expected PNG, got {image.format}")
    except (binascii.Error, OSError, ValueError) as error:
        raise ValueError(f"an image is not a base64 PNG ({error})") from None
    return ImagePart(png=png, width=width, height=height)


def ask_messages(images: list[ImagePart], question: str) -> list[Message]:
    """The request of ``vlm.ask``: the images, then the question."""
    return [Message("user", [*images, TextPart(render("vlm_ask.md", question=question))])]


def locate_messages(image: ImagePart, description: str) -> list[Message]:
    """The request of ``vlm.locate``: the image, then a request for JSON pixel boxes or points."""
    prompt = render("vlm_locate.md", description=description, width=image.width, height=image.height)
    return [Message("user", [image, TextPart(prompt)])]


class VLMServer(LocalHTTPServer):
    """Serve ``ask``/``locate`` on a private Unix socket for any number of episodes; a context manager.

    ``timeout_s`` is how long (seconds) the kernel side waits for an answer.
    """

    def __init__(self, timeout_s: float = 300.0) -> None:
        self.timeout_s = timeout_s
        self._channels: dict[str, ModelCall] = {}
        self._lock = threading.Lock()
        self._loopback: LocalHTTPServer | None = None
        super().__init__("VLM server")

    def open_channel(self, call_model: ModelCall) -> dict[str, Any]:
        """Route requests carrying a new random token to ``call_model``; returns the kernel's ``vlm``
        configuration: ``{"socket", "token", "timeout_s"}`` (no credentials)."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._channels[token] = call_model
        return {"socket": self.socket_path, "token": token, "timeout_s": self.timeout_s}

    def close_channel(self, config: dict[str, Any]) -> None:
        """Stop answering the channel of ``config`` (its token becomes invalid)."""
        with self._lock:
            self._channels.pop(config["token"], None)

    def channel(self, authorization: str) -> ModelCall | None:
        """The model call behind an ``Authorization: Bearer <token>`` header, or None."""
        token = authorization.removeprefix("Bearer ").strip()
        with self._lock:
            return next((call for known, call in self._channels.items() if secrets.compare_digest(known, token)), None)

    def start(self) -> VLMServer:
        self._serve_unix(_handler(self), poll_interval_s=0.1, max_connections=MAX_CONNECTIONS)
        return self

    def __enter__(self) -> VLMServer:
        return self.start()

    def stop(self) -> None:
        with self._lock:
            loopback, self._loopback = self._loopback, None
        if loopback is not None:
            loopback.stop()
        super().stop()

    @property
    def port(self) -> int:
        """The loopback listener's port, opened on first use (reachable by every local user: prefer the socket)."""
        with self._lock:
            if self._loopback is None:
                self.socket_path  # noqa: B018 - raises when this server is not running
                self._loopback = LocalHTTPServer("VLM server (loopback)")
                self._loopback._serve(_handler(self), poll_interval_s=0.1, max_connections=MAX_CONNECTIONS)
            return self._loopback.port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` of the loopback listener (see :attr:`port`)."""
        return f"http://127.0.0.1:{self.port}"

    @staticmethod
    def handle(call_model: ModelCall, route: str, body: dict[str, Any]) -> dict[str, Any]:
        """Answer one request with ``call_model`` (raises ValueError for a bad request)."""
        if not isinstance(body, dict):
            raise ValueError(f"the request body must be a JSON object, got {type(body).__name__}")
        if route == "/ask":
            question = body.get("question")
            if not isinstance(question, str) or not question.strip():
                raise ValueError("ask needs a non-empty 'question' string")
            if not isinstance(body.get("images") or [], list):
                raise ValueError("ask needs 'images' as a list of base64 PNGs")
            images = [_image(i) for i in body.get("images") or []]
            reply = call_model(ask_messages(images, question), "vlm.ask")
            return {"text": reply.text}
        if route == "/locate":
            description = body.get("description")
            if not isinstance(description, str) or not description.strip():
                raise ValueError("locate needs a non-empty 'description' string")
            if not isinstance(body.get("image"), str):
                raise ValueError("locate needs one 'image' (base64 PNG)")
            image = _image(body["image"])
            reply = call_model(locate_messages(image, description), "vlm.locate")
            return {"text": reply.text, "width": image.width, "height": image.height}
        raise LookupError(f"no route {route}; use /ask or /locate")


def _handler(server: VLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = READ_TIMEOUT_S  # the socket's timeout: a stalled client is dropped, not waited for

        def log_message(self, format: str, *args: Any) -> None:  # keep the host's stderr clean
            return

        def do_POST(self) -> None:
            length = self._content_length()
            if length is None:
                return
            # the token first: without it not a byte of the body is read (beyond a small one, dropped)
            call_model = server.channel(self.headers.get("Authorization", ""))
            if call_model is None:
                self._refuse(401, "wrong, missing or expired token for the vlm side channel", length)
                return
            if length > MAX_BODY_BYTES:
                self._refuse(
                    413,
                    f"request body of {length} bytes is over the {MAX_BODY_BYTES >> 20} MiB limit; "
                    "send fewer or smaller images",
                    length,
                )
                return
            try:
                raw = self.rfile.read(length) if length else b""
            except TimeoutError:
                self._refuse(408, f"the request body did not arrive within {READ_TIMEOUT_S:g} s", 0)
                return
            if len(raw) < length:  # the client went away mid-body
                self.close_connection = True
                return
            try:
                body = json.loads(raw or b"{}")
                self._send(200, server.handle(call_model, self.path, body))
            except LookupError as error:
                self._send(404, {"error": str(error)})
            except (ValueError, json.JSONDecodeError) as error:
                self._send(400, {"error": str(error)})
            except Exception as error:  # the model call failed: report it to the cell
                self._send(502, {"error": f"the model call failed: {type(error).__name__}: {error}"})

        def _content_length(self) -> int | None:
            """The declared body size, or None after answering 400/411 for a missing or bad one."""
            value = self.headers.get("Content-Length")
            if value is None and self.headers.get("Transfer-Encoding"):
                self._refuse(411, "send the body with a Content-Length (chunked bodies are not read)", 0)
                return None
            try:
                length = int(value or 0)
            except ValueError:
                length = -1
            if length < 0:
                self._refuse(400, f"bad Content-Length {value!r}", 0)
                return None
            return length

        def _refuse(self, status: int, message: str, length: int) -> None:
            """Answer ``status`` and close the connection, reading at most a small body first."""
            self.close_connection = True
            if 0 < length <= _DRAIN_BYTES:
                try:
                    self.rfile.read(length)
                except (OSError, TimeoutError):
                    pass
            self._send(status, {"error": message})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

    return Handler
