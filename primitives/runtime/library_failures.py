"""The one guard between the primitives and the libraries they call: a library that fails on degenerate input
(OpenCV's assertions, a singular matrix in NumPy, SciPy refusing non-finite residuals) fails that one pair or
frame, which the readout then states as "unknown" with the library's reason in one line, and the rest goes on.

``guarded(compute, fallback)`` runs ``compute()``; when a third-party library raises inside it, it returns
``fallback(reason)`` instead. Every pairwise or per-frame computation that can meet such input goes through it
(the motion of a frame pair, a two-view or PnP pose, a feature link, a tilt, plane or flow fit), so no raw
traceback of a library ever reaches a cell. Our own errors still raise: bad arguments are the caller's to fix,
and a bug in our code is not hidden as "unknown".

What counts as a library failure (``library_of``): an exception whose type a library defines (``cv2.error``,
``numpy.linalg.LinAlgError``, ``scipy.spatial.QhullError``), or one raised inside a library's own Python code
(SciPy's ``ValueError`` for residuals that are not finite). A compiled library that raises Python's own
exception types (pycolmap's ``RuntimeError``) is called inside ``library_block(name)``, which names what it
raises. ``MemoryError`` never counts: the kernel's limits must stay visible.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import NoReturn, TypeVar

__all__ = ["LIBRARIES", "LibraryFailure", "failure_reason", "guarded", "library_block", "library_of", "or_refuse"]

T = TypeVar("T")

LIBRARIES: dict[str, str] = {
    "cv2": "OpenCV",
    "numpy": "NumPy",
    "scipy": "SciPy",
    "pycolmap": "pycolmap",
    "open3d": "Open3D",
    "skimage": "scikit-image",
    "PIL": "Pillow",
}
"""Top-level module -> the name a reason gives the library."""

MAX_REASON_CHARS = 240

_OPENCV_PREFIX = re.compile(r"^OpenCV\([^)]*\)\s+\S+:\d+:\s*error:\s*")  # "OpenCV(5.1.0) /path/file.cpp:123: error: "


class LibraryFailure(Exception):
    """A library failed on this input; ``reason`` says which and why, in one line (for code that must raise)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _root(module: object) -> str:
    return str(module or "").split(".", 1)[0]


def library_of(error: BaseException) -> str | None:
    """The library (its display name) an exception comes from, or None when it is not a library's (our own
    code raised it, or it is a ``MemoryError``)."""
    if isinstance(error, MemoryError) or not isinstance(error, Exception):
        return None
    if isinstance(error, LibraryFailure):
        return "a library"
    root = _root(type(error).__module__)
    if root in LIBRARIES:
        return LIBRARIES[root]
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    if frame is None:
        return None
    root = _root(frame.tb_frame.f_globals.get("__name__"))
    return LIBRARIES.get(root)


def failure_reason(error: BaseException, library: str | None = None) -> str:
    """One line: "<library> failed: <its message>" (OpenCV's source path and line left out)."""
    if isinstance(error, LibraryFailure):
        return error.reason
    library = library or library_of(error) or "a library"
    message = " ".join(str(error).split())
    message = _OPENCV_PREFIX.sub("", message) or type(error).__name__
    if len(message) > MAX_REASON_CHARS:
        message = message[: MAX_REASON_CHARS - 3] + "..."
    return f"{library} failed ({type(error).__name__}: {message})"


def guarded(compute: Callable[[], T], fallback: Callable[[str], T]) -> T:
    """``compute()``, or ``fallback(reason)`` when a third-party library fails inside it (see the module doc);
    any other exception propagates unchanged."""
    try:
        return compute()
    except Exception as error:
        library = library_of(error)
        if library is None:
            raise
        return fallback(failure_reason(error, library))


def or_refuse(compute: Callable[[], T], message: str) -> T:
    """``compute()``, or a ``ValueError`` of ``message`` with ``{reason}`` replaced by the library's reason when
    a library fails inside it: for one-image tools whose documented answer to an image they cannot read is a
    ``ValueError`` that says what to pass instead."""
    return guarded(compute, partial(_refuse, message))


def _refuse(message: str, reason: str) -> NoReturn:
    raise ValueError(message.replace("{reason}", reason))


@contextmanager
def library_block(library: str) -> Iterator[None]:
    """Inside, every exception but ``MemoryError`` is ``library``'s (re-raised as ``LibraryFailure``): for a block
    that only drives one compiled library whose errors carry Python's own types (pybind11's ``RuntimeError``)."""
    try:
        yield
    except LibraryFailure:
        raise
    except Exception as error:
        if isinstance(error, MemoryError):
            raise
        raise LibraryFailure(failure_reason(error, library)) from error
