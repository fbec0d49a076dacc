"""Reading a kernel process's channels: IOPub messages, shell replies, and silent host-side code.

Every function takes the :class:`~spatialclaw.kernel.process.KernelProcess` whose client it reads. A message
that does not decode or verify raises :class:`ProtocolBroken` (a cell broke the kernel's side of the protocol).

IOPub is read within bounds (:mod:`spatialclaw.kernel.iopub`): the host queues at most :data:`IOPUB_HWM`
messages (the kernel's side drops the rest), and a message over :data:`MAX_MESSAGE_BYTES` is never decoded:
it arrives as an ``oversized`` stand-in (a stream's head and tail kept) that the collector reports.
"""

from __future__ import annotations

import queue
import time
from typing import Any, cast

from spatialclaw.kernel.collector import strip_ansi
from spatialclaw.kernel.errors import KernelDied
from spatialclaw.kernel.iopub import IOPUB_HWM, MAX_MESSAGE_BYTES, receive_bounded
from spatialclaw.kernel.process import KernelProcess

__all__ = [
    "IOPUB_HWM",
    "MAX_MESSAGE_BYTES",
    "ProtocolBroken",
    "await_reply",
    "drain_iopub",
    "next_iopub",
    "run_internal",
]


class ProtocolBroken(Exception):
    """A message from the kernel did not decode: the cell broke the kernel's side of the protocol."""


def parent_id(message: dict[str, Any]) -> Any:
    """The ``msg_id`` of the request a message answers (None when its parent header is malformed)."""
    parent = message.get("parent_header")
    return parent.get("msg_id") if isinstance(parent, dict) else None


def next_iopub(process: KernelProcess, timeout: float) -> dict[str, Any] | None:
    client = process.client
    if client is None:
        return None
    try:
        return receive_bounded(client.iopub_channel, timeout)
    except Exception as error:  # a message that does not decode or verify
        raise ProtocolBroken(f"{type(error).__name__}: {error}") from None


def await_reply(process: KernelProcess, msg_id: str, timeout: float = 10.0) -> int | None:
    client = process.client
    deadline = time.monotonic() + timeout
    while client is not None and time.monotonic() < deadline:
        try:
            reply = client.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            break
        except Exception as error:  # a reply that does not decode or verify
            raise ProtocolBroken(f"{type(error).__name__}: {error}") from None
        if parent_id(reply) == msg_id:
            content = reply.get("content")
            count = content.get("execution_count") if isinstance(content, dict) else None
            return count if isinstance(count, int) and not isinstance(count, bool) else None
    return None


def run_internal(
    process: KernelProcess, code: str, user_expressions: dict[str, str] | None = None, timeout: float = 120.0
) -> dict[str, Any]:
    """Run host-side code silently (no history, no state report); raise if it fails."""
    client = process.client
    if client is None:
        raise KernelDied("the kernel is not running")
    msg_id = client.execute(
        code, silent=True, store_history=False, user_expressions=user_expressions or {}, allow_stdin=False
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            reply = client.get_shell_msg(timeout=0.25)
        except queue.Empty:
            if not process.is_alive():
                raise KernelDied(f"the kernel died during start-up code ({process.exit_description()})") from None
            if time.monotonic() > deadline:
                raise KernelDied(f"the kernel did not finish its start-up code within {timeout:g} s") from None
            continue
        if parent_id(reply) == msg_id:
            break
    drain_iopub(process, msg_id)
    content = reply["content"]
    if content.get("status") != "ok":
        raise RuntimeError(f"{content.get('ename', 'Error')}: {strip_ansi(content.get('evalue', ''))}")
    return cast(dict[str, Any], content.get("user_expressions", {}))


def drain_iopub(process: KernelProcess, msg_id: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = next_iopub(process, 0.25)
        if message is None:
            if not process.is_alive():
                return
            continue
        content = message.get("content")
        if (
            parent_id(message) == msg_id
            and message.get("msg_type") == "status"
            and isinstance(content, dict)
            and content.get("execution_state") == "idle"
        ):
            return
