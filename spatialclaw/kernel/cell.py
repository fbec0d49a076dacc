"""What one executed cell produced, and how that becomes an observation for a model.

A :class:`CellResult` keeps every output channel apart (stdout, stderr, the error, images, the answer,
the variables that changed) so that nothing is flattened into one string before it has to be.
:meth:`CellResult.to_text` is the one place that renders it as text for a model.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CellError", "CellImage", "CellResult", "VariableInfo", "truncate_middle"]


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and tail of ``text`` within ``limit`` characters, saying how many were cut.

    Two thirds of the budget go to the head and one third to the tail, because the beginning of an
    output usually says what it is and the end says how it finished.
    """
    if limit <= 0 or len(text) <= limit:
        return text
    marker_room = 64
    keep = max(limit - marker_room, 0)
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    tail_text = text[len(text) - tail :] if tail else ""
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{tail_text}"


@dataclass
class CellError:
    """An exception raised by a cell.

    ``line`` is the 1-based line number in the cell where the exception surfaced (``None`` when the
    failure was not inside the cell's own code, e.g. a kernel crash), and ``source`` is that line's text.
    ``traceback`` is compact: frames of the cell and of user-visible code only, without ANSI colours.
    """

    type: str
    message: str
    traceback: str = ""
    line: int | None = None
    source: str | None = None

    def to_text(self) -> str:
        where = (
            f" (cell line {self.line}: {self.source.strip()})"
            if self.line and self.source
            else (f" (cell line {self.line})" if self.line else "")
        )
        head = f"{self.type}: {self.message}{where}"
        return f"{head}\n{self.traceback}".rstrip() if self.traceback else head


@dataclass
class CellImage:
    """One image a cell produced, as PNG bytes.

    ``origin`` says where it came from: ``"show"`` (the ``show()`` primitive), ``"plt.show"``,
    ``"figure"`` (an open matplotlib figure flushed at the end of the cell), ``"display"`` (IPython
    ``display()`` of a PIL image, a frame or a figure) or ``"result"`` (the cell's last expression).
    ``width`` and ``height`` are in pixels.
    """

    png: bytes
    label: str | None = None
    origin: str = "display"
    width: int = 0
    height: int = 0

    @property
    def sha256(self) -> str:
        """Content hash of the PNG bytes, used to store images content-addressed."""
        return hashlib.sha256(self.png).hexdigest()

    def to_dict(self, with_bytes: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "label": self.label,
            "origin": self.origin,
            "width": self.width,
            "height": self.height,
            "sha256": self.sha256,
        }
        if with_bytes:
            data["png_base64"] = base64.b64encode(self.png).decode("ascii")
        return data

    @classmethod
    def from_png(cls, png: bytes, label: str | None = None, origin: str = "display") -> CellImage:
        """An image from PNG bytes, its size read from the PNG header."""
        from spatialclaw.primitives.imaging import png_size

        width, height = png_size(png)
        return cls(png=png, label=label, origin=origin, width=width, height=height)

    @classmethod
    def from_dict(cls, data: dict[str, Any], png: bytes | None = None) -> CellImage:
        if png is None:
            png = base64.b64decode(data["png_base64"])
        return cls(
            png=png,
            label=data.get("label"),
            origin=data.get("origin", "display"),
            width=int(data.get("width", 0)),
            height=int(data.get("height", 0)),
        )


@dataclass
class VariableInfo:
    """Summary of one variable that a cell created or changed.

    ``shape``/``dtype`` are set for arrays and tensors, ``length`` for sized containers, ``nbytes`` is
    the array's buffer size or Python's shallow ``sys.getsizeof``.
    """

    name: str
    type: str
    shape: list[int] | None = None
    dtype: str | None = None
    length: int | None = None
    nbytes: int | None = None

    def describe(self) -> str:
        parts = [self.type]
        if self.shape is not None:
            parts.append("shape=" + "x".join(str(s) for s in self.shape) if self.shape else "shape=()")
        if self.dtype:
            parts.append(f"dtype={self.dtype}")
        if self.length is not None and self.shape is None:
            parts.append(f"len={self.length}")
        return f"{self.name}: " + ", ".join(parts)


@dataclass
class CellResult:
    """Everything one ``Kernel.execute`` call observed.

    ``duration_s`` is wall-clock seconds from sending the cell to the kernel being idle again.
    ``status`` is ``"ok"``, ``"error"``, ``"timeout"`` or ``"crashed"``; after a timeout that needed a
    restart or after a crash, ``restarted`` is true and ``restored``/``lost`` name the variables that
    were brought back from the last successful cell and those that could not be.
    """

    code: str
    status: str = "ok"
    stdout: str = ""
    stderr: str = ""
    error: CellError | None = None
    images: list[CellImage] = field(default_factory=list)
    answer: Any = None
    answered: bool = False
    variables: list[VariableInfo] = field(default_factory=list)
    duration_s: float = 0.0
    execution_count: int | None = None
    result_text: str | None = None
    restarted: bool = False
    restored: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_text(self, limit: int = 8000) -> str:
        """Render the observation for a model.

        Streams and the error are truncated head-and-tail so the whole text stays near ``limit``
        characters; the number of characters cut is stated. Images are listed by label (their pixels
        travel separately). An empty output says so explicitly, so the model never guesses.
        """
        sections: list[str] = []
        budget_streams = max(limit - 1500, limit // 2)
        out = self.stdout
        if self.result_text:
            out = f"{out}{'' if not out or out.endswith(chr(10)) else chr(10)}{self.result_text}"
        # stdout takes the whole stream budget unless there is stderr to show (a printed manual entry
        # should not be cut to leave room for an empty stderr).
        has_stderr = bool(self.stderr.strip())
        if out.strip():
            sections.append(
                truncate_middle(out.rstrip("\n"), budget_streams * 3 // 4 if has_stderr else budget_streams)
            )
        if has_stderr:
            sections.append("[stderr]\n" + truncate_middle(self.stderr.rstrip("\n"), budget_streams // 4))
        if self.error is not None:
            sections.append("[error] " + truncate_middle(self.error.to_text(), 1500))
        if self.images:
            labels = ", ".join(
                f"{i + 1}: {img.label or img.origin} ({img.width}x{img.height})" for i, img in enumerate(self.images)
            )
            sections.append(f"[{len(self.images)} image(s) attached: {labels}]")
        if self.answered:
            sections.append(f"[answer submitted: {self.answer!r}]")
        if self.restarted:
            sections.append(
                "[kernel restarted; restored: "
                + (", ".join(self.restored) or "nothing")
                + "; lost: "
                + (", ".join(self.lost) or "nothing")
                + "]"
            )
        sections.extend(f"[note] {n}" for n in self.notes)
        if not sections:
            return "[the cell ran without error and printed nothing]"
        return "\n".join(sections)

    def to_dict(self, with_image_bytes: bool = True) -> dict[str, Any]:
        data = asdict(self)
        data["images"] = [img.to_dict(with_bytes=with_image_bytes) for img in self.images]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], images: list[CellImage] | None = None) -> CellResult:
        fields = dict(data)
        fields["error"] = CellError(**data["error"]) if data.get("error") else None
        fields["variables"] = [VariableInfo(**v) for v in data.get("variables", [])]
        fields["images"] = images if images is not None else [CellImage.from_dict(i) for i in data.get("images", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in fields.items() if k in known})
