"""Collects the IOPub messages of one execute request into a :class:`~spatialclaw.kernel.cell.CellResult`.

Messages are Jupyter protocol dicts, read exactly as the protocol defines them, and every one may be forged:
a field of the wrong type, a malformed or oversized image (:mod:`spatialclaw.kernel.display`) or a message over
the per-message limit (:mod:`spatialclaw.kernel.iopub`) becomes a note in the result, never an exception.
Output streams are kept within a cap (head and tail) while they stream, and a cell's images within
:data:`MAX_CELL_IMAGES` and :data:`MAX_CELL_IMAGE_BYTES`, so a cell printing gigabytes cannot exhaust the host.

An answer message is a claim made by code the model wrote: with ``answer_spec`` (the task's choices and
answer type, the host's own copy) it is checked again with the kernel's normalisation
(:func:`spatialclaw.primitives.answers.validate_claim`); a claim that fails is not recorded and becomes
the cell's error, so the model reads why and the episode goes on.
"""

from __future__ import annotations

import re
from typing import Any

from spatialclaw.kernel.cell import CellError, CellImage, CellResult, VariableInfo
from spatialclaw.kernel.display import DisplayRejected, clean_state, image_png
from spatialclaw.kernel.iopub import MAX_MESSAGE_BYTES, OVERSIZED
from spatialclaw.primitives.answers import AnswerError, keeps_text, validate_claim
from spatialclaw.primitives.protocol import ANSWER_MIME, IMAGE_METADATA_KEY, STATE_MIME

__all__ = ["MAX_CELL_IMAGES", "MAX_CELL_IMAGE_BYTES", "CellCollector", "StreamBuffer", "strip_ansi"]

MAX_CELL_IMAGES = 64
"""Images one cell keeps; later ones are dropped with a note."""
MAX_CELL_IMAGE_BYTES = 128 << 20
"""PNG bytes one cell keeps over all its images; later ones are dropped with a note."""
_MAX_NOTES = 8

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


class StreamBuffer:
    """Text that keeps its first and last ``cap // 2`` characters and counts what was dropped between.

    The middle of a long write is never copied; :meth:`gap` records output that never arrived as text (an
    oversized message), so the note between head and tail stays where the output was cut."""

    def __init__(self, cap: int = 1_000_000) -> None:
        self.half = cap // 2
        self.head = ""
        self.tail = ""
        self.dropped = 0
        self.dropped_bytes = 0
        self.sealed = False  # the head takes no more text once part of the output is missing

    def write(self, text: str) -> None:
        start = 0
        room = 0 if self.sealed else self.half - len(self.head)
        if room > 0:
            taken = text[:room]
            self.head += taken
            start = len(taken)
        rest = len(text) - start
        if rest <= 0:
            return
        if rest >= self.half:
            self.dropped += len(self.tail) + rest - self.half
            self.tail = text[len(text) - self.half :]
            return
        self.tail += text[start:]
        if len(self.tail) > self.half:
            excess = len(self.tail) - self.half
            self.dropped += excess
            self.tail = self.tail[excess:]

    def gap(self, nbytes: int) -> None:
        """``nbytes`` of output that were dropped before they became text."""
        self.sealed = True
        self.dropped += len(self.tail)
        self.tail = ""
        self.dropped_bytes += nbytes

    def text(self) -> str:
        if not self.dropped and not self.dropped_bytes:
            return self.head + self.tail
        what = " and ".join(
            part
            for part in (
                f"{self.dropped} characters" if self.dropped else "",
                f"{self.dropped_bytes} bytes" if self.dropped_bytes else "",
            )
            if part
        )
        return f"{self.head}\n... [{what} dropped while streaming] ...\n{self.tail}"


def record_claim(result: CellResult, claim: Any, answer_spec: dict[str, Any] | None, rejected: list[str]) -> None:
    """Record an answer claim in ``result`` when it passes the host's own check against ``answer_spec``
    (``choices``, ``answer_type``, ``option_labels``, ``allowed_answers``; ``scoring: "reference"`` records the
    text given to ``answer()``); the first claim that passes wins, a failing one goes to ``rejected``."""
    if result.answered:
        return
    spec = answer_spec or {}
    try:
        value = validate_claim(
            claim,
            spec.get("choices"),
            spec.get("answer_type"),
            spec.get("option_labels"),
            spec.get("allowed_answers"),
            keeps_text(spec),
        )
    except AnswerError as error:
        rejected.append(str(error)[:500])
        return
    except Exception as error:  # a forged claim of a shape the check does not expect
        rejected.append(f"the answer message is malformed ({type(error).__name__})")
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
        self.stream_cap = stream_cap
        self.stdout = StreamBuffer(stream_cap)
        self.stderr = StreamBuffer(stream_cap)
        self.state: dict[str, Any] | None = None
        self.raw_error: dict[str, Any] | None = None
        self.done = False
        self.image_bytes = 0
        self.problems: list[str] = []  # what was dropped, in words (the first few become notes)
        self.problem_count = 0
        self.stale_messages = 0  # output of earlier cells that arrived during this one, dropped
        self.stale_bytes = 0

    def add(self, message: dict[str, Any]) -> None:
        """Take one message of this request; a malformed one becomes a note, never an exception."""
        kind = message.get("msg_type") if isinstance(message, dict) else None
        try:
            content = message["content"]
            if not isinstance(content, dict):
                raise DisplayRejected(f"its content is a {type(content).__name__}, not an object")
            self._add(str(kind), content)
        except Exception as error:  # a forged message: say what was dropped and go on
            self.problem(f"a {kind!s:.40} message from the kernel was dropped: {error}")

    def add_stale(self, message: dict[str, Any]) -> None:
        """Count a message of an earlier request (output after its cell ended), which is dropped."""
        if message.get("msg_type") not in ("status", "execute_input"):
            self.stale_messages += 1
            self.stale_bytes += int(message.get("wire_bytes") or 0)

    def problem(self, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < _MAX_NOTES:
            self.problems.append(text[:600])

    def _add(self, kind: str, content: dict[str, Any]) -> None:
        if kind == "stream":
            text = content.get("text", "")
            if not isinstance(text, str):
                raise DisplayRejected(f"its text is a {type(text).__name__}, not a string")
            (self.stdout if content.get("name") == "stdout" else self.stderr).write(text)
        elif kind in ("display_data", "update_display_data", "execute_result"):
            self._display(content, origin="result" if kind == "execute_result" else "display")
        elif kind == "error":
            self.raw_error = content
        elif kind == "clear_output":
            self.stdout = StreamBuffer(self.stream_cap)
        elif kind == "status" and content.get("execution_state") == "idle":
            self.done = True
        elif kind == OVERSIZED:
            self._oversized(content)

    def _oversized(self, content: dict[str, Any]) -> None:
        size, what = int(content.get("bytes") or 0), content.get("msg_type")
        if what == "stream":
            buffer = self.stdout if content.get("name") == "stdout" else self.stderr
            buffer.write(str(content.get("head", "")))
            buffer.gap(int(content.get("omitted") or 0))
            buffer.write(str(content.get("tail", "")))
        self.problem(
            f"a {what!s:.40} message of {size / 2**20:.0f} MiB was over the {MAX_MESSAGE_BYTES >> 20} MiB limit per "
            "message and was dropped" + (" (its first and last 256 KiB are kept)" if what == "stream" else "")
        )

    def _display(self, content: dict[str, Any], origin: str) -> None:
        data = content.get("data", {})
        if not isinstance(data, dict):
            raise DisplayRejected(f"its data is a {type(data).__name__}, not a MIME bundle")
        if STATE_MIME in data:
            self.state = clean_state(data[STATE_MIME], self.result.notes)
            return
        if ANSWER_MIME in data:
            record_claim(self.result, data[ANSWER_MIME], self.answer_spec, self.rejected_answers)
            return
        if "image/png" in data or "image/jpeg" in data:
            self._image(content, data, origin)
            return
        text = data.get("text/plain")
        if text is None:
            return
        if not isinstance(text, str):
            raise DisplayRejected(f"its text/plain is a {type(text).__name__}, not a string")
        if origin == "result":
            self.result.result_text = strip_ansi(text[: self.stream_cap])
        else:
            self.stdout.write(strip_ansi(text[: self.stream_cap]) + "\n")

    def _image(self, content: dict[str, Any], data: dict[str, Any], origin: str) -> None:
        if len(self.result.images) >= MAX_CELL_IMAGES:
            raise DisplayRejected(f"the cell already showed {MAX_CELL_IMAGES} images, the most one cell keeps")
        png = image_png(data)
        if png is None:
            return
        if self.image_bytes + len(png) > MAX_CELL_IMAGE_BYTES:
            raise DisplayRejected(f"the cell's images are over {MAX_CELL_IMAGE_BYTES >> 20} MiB in all")
        metadata = content.get("metadata")
        info = metadata.get(IMAGE_METADATA_KEY) if isinstance(metadata, dict) else None
        info = info if isinstance(info, dict) else {}
        label, where = info.get("label"), info.get("origin", origin)
        label = label[:200] if isinstance(label, str) else None
        where = where[:40] if isinstance(where, str) else origin
        self.image_bytes += len(png)
        self.result.images.append(CellImage.from_png(png, label, where))

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
            result.error = _raw_error(self.raw_error)
        report_rejected_answers(result, self.rejected_answers)
        result.notes.extend(self.problems)
        if self.problem_count > len(self.problems):
            result.notes.append(f"{self.problem_count - len(self.problems)} more message(s) were dropped likewise")
        if self.stale_messages:
            result.notes.append(
                f"{self.stale_messages} output message(s) ({self.stale_bytes / 2**20:.1f} MiB) arrived after the cell "
                "that made them had ended (a thread still running?) and were dropped; more may have been dropped "
                "while no cell ran"
            )
        if result.error is not None and result.status == "ok":
            result.status = "error"
        return result


def _raw_error(content: dict[str, Any]) -> CellError:
    """An ``error`` message's exception, each field checked (a forged one may hold anything)."""
    name, value, frames = content.get("ename"), content.get("evalue"), content.get("traceback")
    lines = [line for line in frames if isinstance(line, str)] if isinstance(frames, list) else []
    return CellError(
        type=name[:200] if isinstance(name, str) else "Error",
        message=value[:20000] if isinstance(value, str) else "",
        traceback=strip_ansi("\n".join(lines)[:100000]),
    )
