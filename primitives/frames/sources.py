"""Where a frame's pixels come from: image files or arrays in memory (video files: ``frames.video``), and
the cache of decoded frames that every source shares.

A source is checked when it is opened (the file exists, its format is readable, a video's timestamps
are indexed and its codec decodes) but pixel data is decoded only when a frame's ``.array`` or ``.image``
is first used. Decoded frames live in one process-wide LRU cache bounded in bytes
(``$SPATIALCLAW_FRAME_CACHE_MB``, default 1024), as read-only (H, W, 3) uint8 RGB arrays.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

__all__ = [
    "VIDEO_SUFFIXES",
    "ArraySource",
    "FrameLoadError",
    "ImageFileSource",
    "check_file",
    "clear_decoded_cache",
    "decode_stats",
    "decoded_cache",
    "file_key",
    "image_suffixes",
    "shown_text",
]


VIDEO_SUFFIXES = frozenset({".mp4", ".mov", ".avi", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg", ".ts", ".flv", ".wmv"})

decode_stats = {"image_files_decoded": 0, "video_frames_decoded": 0, "video_frames_converted": 0, "video_seeks": 0}
"""Counters of real decoding work in this process (read them to check that decoding is lazy)."""


class FrameLoadError(ValueError):
    """A frame source is missing, unreadable, corrupt, unsupported, or selects no frames."""


def image_suffixes() -> frozenset[str]:
    """File extensions (lower case, with the dot) that Pillow can open in this installation."""
    Image.init()
    return frozenset(Image.registered_extensions())


def check_file(path: str | Path, what: str, display_path: str | None = None) -> Path:
    """Resolve ``path`` and make sure it is an existing, non-empty regular file; ``what`` names the expected
    kind. Messages name ``display_path`` (the path as the user gave it) when given, else the resolved path."""
    resolved = Path(path).expanduser().resolve()
    shown = display_path or str(resolved)
    if not resolved.exists():
        raise FrameLoadError(
            f"{what} not found: {shown} (no such file). Check the path; relative paths are resolved "
            f"against the current directory {Path.cwd()}."
        )
    if resolved.is_dir():
        raise FrameLoadError(
            f"{shown} is a directory, not a {what}. Pass the files inside it, e.g. "
            f"sorted(Path({shown!r}).glob('*.jpg')), or a video file."
        )
    if not resolved.is_file():
        raise FrameLoadError(f"{shown} is not a regular file; give a {what} path.")
    if resolved.stat().st_size == 0:
        raise FrameLoadError(
            f"cannot read {what.split()[0]} {shown}: the file is empty (0 bytes), as a copy or download that did "
            f"not finish leaves it; replace it or remove it from the input list."
        )
    return resolved


def shown_text(text: str, opened: str, display_path: str) -> str:
    """``text`` (e.g. a decoder's message) with the path a file was opened at replaced by its display path."""
    return text.replace(opened, display_path) if opened != display_path else text


class _DecodedCache:
    """An LRU of read-only decoded RGB arrays, bounded by their total size in bytes."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._items: OrderedDict[tuple[str | int, ...], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str | int, ...]) -> np.ndarray | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def put(self, key: tuple[str | int, ...], value: np.ndarray) -> None:
        value.setflags(write=False)
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self._bytes += value.nbytes
            while self._bytes > self.budget_bytes and len(self._items) > 1:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= evicted.nbytes


decoded_cache = _DecodedCache(int(float(os.environ.get("SPATIALCLAW_FRAME_CACHE_MB", "1024")) * 2**20))


def clear_decoded_cache() -> None:
    """Drop every cached decoded frame (frees memory; frames are decoded again when next used)."""
    decoded_cache.clear()


def file_key(path: Path) -> tuple[str, int, int]:
    """The decoded cache's key of a file: (path, size in bytes, modification time in ns)."""
    stat = path.stat()
    return (str(path), stat.st_size, stat.st_mtime_ns)


_SWAPPING_ORIENTATIONS = {5, 6, 7, 8}  # EXIF orientations that rotate by 90 degrees


class ImageFileSource:
    """One image file. Opening reads the header and checks the file's integrity without decoding pixels;
    EXIF orientation is applied, so ``width``/``height`` (pixels) are those of the upright image.

    ``path`` is where the file is opened; ``display_path`` (default: the resolved ``path``) is how it is
    named to the user (the source of its frames, error messages): in a sandbox the kernel opens a private
    link to the user's file, and shows the user's own path."""

    def __init__(self, path: str | Path, time: float | None = None, display_path: str | None = None) -> None:
        self._time = None if time is None else float(time)  # seconds in the video it was taken from, if known
        resolved = check_file(path, "image file", display_path)
        shown = display_path or str(resolved)
        suffix = resolved.suffix.lower()
        if suffix in VIDEO_SUFFIXES:
            raise FrameLoadError(
                f"{shown} is a video, not an image: load it with load_video(path, fps=..., count=...)."
            )
        if suffix not in image_suffixes():
            raise FrameLoadError(
                f"unsupported image extension {suffix or '(none)'!r}: {shown}. Convert it to PNG or JPEG; "
                f"readable extensions include .jpg, .jpeg, .png, .bmp, .tif, .tiff, .webp."
            )
        self.path = str(resolved)
        self.display_path = shown
        try:
            with Image.open(resolved) as image:
                image.verify()
            with Image.open(resolved) as image:
                image_format = image.format
                width, height = image.size
                orientation = image.getexif().get(0x0112, 1)
            if image_format == "JPEG" and not _jpeg_complete(resolved):
                raise OSError("the JPEG data ends before its end-of-image marker (the file is truncated)")
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
            raise FrameLoadError(
                f"cannot read image {shown}: {shown_text(str(exc), self.path, shown)}. The file is corrupt, "
                f"truncated or not an image; "
                f"re-export it or remove it from the input list."
            ) from exc
        if orientation in _SWAPPING_ORIENTATIONS:
            width, height = height, width
        self.width, self.height = width, height

    def rgb(self, index: int) -> np.ndarray:
        """The decoded upright image as a read-only (H, W, 3) uint8 RGB array (``index`` is ignored)."""
        key = ("image", *file_key(Path(self.path)))
        cached = decoded_cache.get(key)
        if cached is not None:
            return cached
        try:
            with Image.open(self.path) as image:
                array = np.array(ImageOps.exif_transpose(image).convert("RGB"), dtype=np.uint8)
        except (OSError, SyntaxError, ValueError) as exc:
            raise FrameLoadError(
                f"cannot decode image {self.display_path}: {shown_text(str(exc), self.path, self.display_path)}. "
                f"The file is corrupt or truncated (or changed since it "
                f"was loaded); re-export it or remove it from the input list."
            ) from exc
        decode_stats["image_files_decoded"] += 1
        decoded_cache.put(key, array)
        return array

    def time(self, index: int) -> float | None:
        return self._time


def _jpeg_complete(path: Path) -> bool:
    """Whether a JPEG ends with its end-of-image marker; if trailing bytes follow it, a reduced-size
    decode decides (it reads all the entropy-coded data, so truncation raises)."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 4096))
        tail = handle.read()
    if tail.rstrip(b"\x00\r\n ").endswith(b"\xff\xd9"):
        return True
    with Image.open(path) as image:
        image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))
        image.load()
    return True


class ArraySource:
    """Pixels already in memory (e.g. a rendered or edited image), stored read-only."""

    def __init__(self, array: np.ndarray, path: str | None = None, time: float | None = None) -> None:
        self._array = np.array(array, dtype=np.uint8, copy=True)
        self._array.setflags(write=False)
        self.path = path
        self.display_path = path
        self._time = time
        self.height, self.width = self._array.shape[:2]

    def rgb(self, index: int) -> np.ndarray:
        return self._array

    def time(self, index: int) -> float | None:
        return self._time
