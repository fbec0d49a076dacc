"""Receiving one IOPub message within bounds: sizes are checked on the raw frames before anything is decoded.

The kernel is written by a model, so every byte on its IOPub channel may be hostile. The host's socket queues
at most :data:`IOPUB_HWM` messages (past that the kernel's side drops them, as ZeroMQ's PUB sockets do), so a
thread that streams output while no cell runs cannot grow the host. A message whose frames add up to more
than :data:`MAX_MESSAGE_BYTES` is never decoded: its signature is checked, its small header read, and it comes
back as an :data:`OVERSIZED` stand-in saying what it was (for a stream, its head and tail are kept).
"""

from __future__ import annotations

import hmac
import json
import re
from typing import Any

import zmq

__all__ = ["IOPUB_HWM", "MAX_MESSAGE_BYTES", "OVERSIZED", "receive_bounded"]

IOPUB_HWM = 2
"""Messages the host's IOPub socket queues before the kernel's side starts dropping them."""
MAX_MESSAGE_BYTES = 48 << 20
"""The largest IOPub message (all frames) the host decodes: a full-resolution image with room to spare."""
OVERSIZED = "spatialclaw_oversized"
"""``msg_type`` of the stand-in for a message over :data:`MAX_MESSAGE_BYTES`."""
EXCERPT_BYTES = 256 << 10
"""Bytes of an oversized stream kept from its start and from its end."""
_HEADER_BYTES = 64 << 10
_DELIM = b"<IDS|MSG>"
_TEXT_START = re.compile(rb'"text"\s*:\s*"')
_NAME = re.compile(rb'"name"\s*:\s*"(stdout|stderr)"')


def receive_bounded(channel: Any, timeout: float) -> dict[str, Any] | None:
    """The next message of ``channel`` (a jupyter-client ``ZMQSocketChannel``) within ``timeout`` seconds, or
    None. Raises ``ValueError`` for a message that does not verify or decode."""
    sock = channel.socket
    if sock is None:
        return None
    if sock.getsockopt(zmq.RCVHWM) != IOPUB_HWM:  # applies to the connected pipe too (libzmq >= 4.2)
        sock.setsockopt(zmq.RCVHWM, IOPUB_HWM)
    if not sock.poll(int(max(timeout, 0.0) * 1000)):
        return None
    frames = sock.recv_multipart(copy=False)
    parts = _after_delimiter(frames)
    size = sum(len(part) for part in parts)
    if size <= MAX_MESSAGE_BYTES:
        message: dict[str, Any] = channel.session.deserialize(parts, content=True, copy=False)
        message["wire_bytes"] = size
        return message
    return _stand_in(channel.session, parts, size)


def _after_delimiter(frames: list[Any]) -> list[Any]:
    """The frames after the identities' delimiter (signature, header, parent, metadata, content, buffers)."""
    for index, frame in enumerate(frames):
        if len(frame) == len(_DELIM) and frame.bytes == _DELIM:
            parts = frames[index + 1 :]
            if len(parts) < 5:
                raise ValueError(f"malformed message: {len(parts)} parts after the delimiter, at least 5 expected")
            return parts
    raise ValueError("malformed message: no delimiter")


def _stand_in(session: Any, parts: list[Any], size: int) -> dict[str, Any]:
    """What an oversized message was, read from its (verified) header without decoding its content."""
    if session.auth is not None:
        digest = session.auth.copy()
        for part in parts[1:5]:
            digest.update(part.buffer)
        if not hmac.compare_digest(digest.hexdigest().encode(), parts[0].bytes[:256]):
            raise ValueError("Invalid Signature on an oversized message")
    header = _small_json(parts[1])
    parent = _small_json(parts[2])
    kind = header.get("msg_type") if isinstance(header.get("msg_type"), str) else "unknown"
    content: dict[str, Any] = {"msg_type": kind, "bytes": size}
    if kind == "stream":
        content.update(_stream_excerpt(parts[4].buffer))
    return {
        "header": header,
        "msg_id": header.get("msg_id"),
        "msg_type": OVERSIZED,
        "parent_header": parent,
        "metadata": {},
        "content": content,
        "buffers": [],
        "wire_bytes": size,
    }


def _small_json(part: Any) -> dict[str, Any]:
    if len(part) > _HEADER_BYTES:
        return {}
    try:
        value = json.loads(part.bytes)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _stream_excerpt(raw: memoryview) -> dict[str, Any]:
    """``name``, ``head`` and ``tail`` of a stream message's JSON content, read from its first and last bytes.

    Best effort: the content is ``{"name": ..., "text": "..."}`` as ipykernel writes it; anything else keeps
    no text. ``omitted`` is the number of bytes of text between head and tail."""
    start_bytes = bytes(raw[:200])
    name, text_at = _NAME.search(start_bytes), _TEXT_START.search(start_bytes)
    excerpt: dict[str, Any] = {"name": name.group(1).decode() if name else "stdout", "head": "", "tail": ""}
    last = bytes(raw[max(len(raw) - 16, 0) :])
    if text_at is None or not last.rstrip().endswith(b'"}'):
        excerpt["omitted"] = len(raw)
        return excerpt
    start, end = text_at.end(), len(raw) - (len(last) - len(last.rstrip())) - 2
    head_end = min(start + EXCERPT_BYTES, end)
    tail_start = max(end - EXCERPT_BYTES, head_end)
    excerpt["head"] = _json_fragment(bytes(raw[start:head_end]), cut_at_end=True)
    excerpt["tail"] = _json_fragment(bytes(raw[tail_start:end]), cut_at_end=False)
    excerpt["omitted"] = tail_start - head_end
    return excerpt


def _json_fragment(raw: bytes, cut_at_end: bool) -> str:
    """The text of a piece of a JSON string cut at one end (an escape or character cut in two is dropped)."""
    text = raw.decode("utf-8", errors="ignore")
    for _ in range(8):
        try:
            value = json.loads(f'"{text}"')
            return value if isinstance(value, str) else ""
        except ValueError:
            text = text[:-1] if cut_at_end else text[1:]
    return ""
