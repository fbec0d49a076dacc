"""Collects the IOPub messages of one execute request into a :class:`~spatialclaw.kernel.cell.CellResult`.

Messages are Jupyter protocol dicts, read exactly as the protocol defines them. Output streams are kept
within a cap (head and tail) so that a cell printing gigabytes cannot exhaust the host's memory.

An answer message is a claim made by code the model wrote: with ``answer_spec`` (the task's choices and
answer type, the host's own copy) it is checked again with the kernel's normalisation
(:func:`spatialclaw.primitives.answers.validate_claim`); a claim that fails is not recorded and becomes
the cell's error, so the model reads why and the episode goes on.
"""

from __future__ import annotations

import base64
import io
import re
from typing import Any

from spatialclaw.kernel.cell import CellError, CellImage, CellResult, VariableInfo
from spatialclaw.primitives.answers import AnswerError, validate_claim
from spatialclaw.primitives.protocol import ANSWER_MIME, IMAGE_METADATA_KEY, STATE_MIME

__all__ = ["CellCollector", "StreamBuffer", "strip_ansi"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


class StreamBuffer:
    """Text that keeps its first and last ``cap // 2`` characters and counts what was dropped between."""

    def __init__(self, cap: int = 1_000_000) -> None:
        self.half = cap // 2
        self.head = ""
        self.tail = ""
        self.dropped = 0

    def write(self, text: str) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if not text:
            return
        self.tail += text
        if len(self.tail) > self.half:
            excess = len(self.tail) - self.half
            self.dropped += excess
            self.tail = self.tail[excess:]

    def text(self) -> str:
        if not self.dropped:
            return self.head + self.tail
        return f"{self.head}\n... [{self.dropped} characters dropped while streaming] ...\n{self.tail}"


def _to_png(data: dict[str, Any]) -> bytes | None:
    if "image/png" in data:
        return base64.b64decode(data["image/png"])
    if "image/jpeg" in data:
        from PIL import Image

        buffer = io.BytesIO()
        Image.open(io.BytesIO(base64.b64decode(data["image/jpeg"]))).convert("RGB").save(
            buffer, "PNG", compress_level=1
        )
        return buffer.getvalue()
    return None


def record_claim(result: CellResult, claim: Any, answer_spec: dict[str, Any] | None, rejected: list[str]) -> None:
    """Record an answer claim in ``result`` when it passes the host's own check against ``answer_spec``
    (``choices``, ``answer_type``); the first claim that passes wins, a failing one goes to ``rejected``."""
    if result.answered:
        return
    spec = answer_spec or {}
    try:
        value = validate_claim(claim, spec.get("choices"), spec.get("answer_type"))
    except AnswerError as error:
        rejected.append(str(error))
        return
    result.answer = value
    result.answered = True


def report_rejected_answers(result: CellResult, rejected: list[str]) -> None:
    """Tell the model that its answer claims were not accepted (an ``AnswerRejected`` error, or a note
    beside the cell's own error), unless a later claim passed."""
    if not rejected or result.answered:
        return
    message = (
        "the answer was not accepted: " + "; ".join(rejected[:3]) + ". Call answer(value) again with a valid value."
    )
    if result.error is None:
        result.error = CellError("AnswerRejected", message)
    else:
        result.notes.append(message)


class CellCollector:
    """Feed it the IOPub messages of one request (``add``); ``done`` turns true at ``status: idle``."""

    def __init__(self, code: str, stream_cap: int = 1_000_000, answer_spec: dict[str, Any] | None = None) -> None:
        self.result = CellResult(code=code)
        self.answer_spec = answer_spec  # {"choices": [...] | None, "answer_type": ...}; None: a text answer
        self.rejected_answers: list[str] = []
        self.stdout = StreamBuffer(stream_cap)
        self.stderr = StreamBuffer(stream_cap)
        self.state: dict[str, Any] | None = None
        self.raw_error: dict[str, Any] | None = None
        self.done = False

    def add(self, message: dict[str, Any]) -> None:
        kind = message["msg_type"]
        content = message["content"]
        if kind == "stream":
            (self.stdout if content.get("name") == "stdout" else self.stderr).write(content.get("text", ""))
        elif kind in ("display_data", "update_display_data", "execute_result"):
            self._display(content, origin="result" if kind == "execute_result" else "display")
        elif kind == "error":
            self.raw_error = content
        elif kind == "clear_output":
            self.stdout = StreamBuffer(self.stdout.half * 2)
        elif kind == "status" and content.get("execution_state") == "idle":
            self.done = True

    def _display(self, content: dict[str, Any], origin: str) -> None:
        data = content.get("data", {})
        if STATE_MIME in data:
            self.state = data[STATE_MIME]
            return
        if ANSWER_MIME in data:
            record_claim(self.result, data[ANSWER_MIME], self.answer_spec, self.rejected_answers)
            return
        png = _to_png(data)
        if png is not None:
            info = content.get("metadata", {}).get(IMAGE_METADATA_KEY, {})
            self.result.images.append(CellImage.from_png(png, info.get("label"), info.get("origin", origin)))
            return
        text = data.get("text/plain")
        if text is None:
            return
        if origin == "result":
            self.result.result_text = strip_ansi(text)
        else:
            self.stdout.write(strip_ansi(text) + "\n")

    def finish(self, execution_count: int | None, duration_s: float) -> CellResult:
        """Assemble the result: streams (ANSI stripped), the structured error and the variable report."""
        result = self.result
        result.stdout = strip_ansi(self.stdout.text())
        result.stderr = strip_ansi(self.stderr.text())
        result.execution_count = execution_count
        result.duration_s = duration_s
        state = self.state or {}
        result.variables = [VariableInfo(**v) for v in state.get("variables", [])]
        if state.get("error"):
            result.error = CellError(**state["error"])
        elif self.raw_error is not None:
            result.error = CellError(
                type=self.raw_error.get("ename", "Error"),
                message=self.raw_error.get("evalue", ""),
                traceback=strip_ansi("\n".join(self.raw_error.get("traceback", []))),
            )
        report_rejected_answers(result, self.rejected_answers)
        if result.error is not None and result.status == "ok":
            result.status = "error"
        return result
