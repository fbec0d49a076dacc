"""Frames: the images a question is about, from image files or a video, with their absolute indices.

``Frame`` is a PIL-compatible image that knows where it came from: ``.index`` is the absolute frame
number in its source (the video's frame number, or the number given to an image), never a position in a
list; ``.time`` is seconds from the first video frame (``None`` for image files). Pixel data is decoded
lazily, the first time ``.array`` or ``.image`` is used. ``Frames`` is an immutable sequence of ``Frame``:
``frames[i]`` is the i-th frame held, slices stay ``Frames`` and keep absolute indices, and
``frames.at(index)`` looks a frame up by its absolute index.

Pixels are (x, y) with the origin at the top-left; arrays are (H, W, 3) uint8 RGB. Loading frames from
files: ``frames.load`` (``load_images``, ``load_video``, ``load_frames``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
from PIL import Image

from spatialclaw.primitives.frames.aspect_fit import AspectFitSource
from spatialclaw.primitives.frames.sources import ArraySource, ImageFileSource
from spatialclaw.primitives.frames.video import VideoSource
from spatialclaw.primitives.imaging import as_rgb_array, png_bytes

__all__ = ["Frame", "FrameNotFound", "Frames"]


class FrameNotFound(KeyError):
    """No frame (or more than one) has the absolute index asked for."""

    def __str__(self) -> str:
        return str(self.args[0])


class Frame:
    """One image with its absolute frame ``index``, its ``time`` in seconds (or ``None``) and its ``source``.

    ``.image`` is a fresh PIL RGB image and ``.array`` a fresh (H, W, 3) uint8 RGB array each time
    (changing them never changes the frame). ``.width``/``.height`` are pixels and are known without
    decoding. Any PIL ``Image`` attribute works directly: ``frame.crop((x0, y0, x1, y1))``,
    ``frame.resize((w, h))``, ``frame.save(path)`` (they return PIL images, not Frames).
    """

    def __init__(self, source: ImageFileSource | ArraySource | VideoSource | AspectFitSource, index: int) -> None:
        self._source = source
        self._index = int(index)

    @classmethod
    def from_image(cls, image: Any, index: int = 0, time: float | None = None, source: str | None = None) -> Frame:
        """A Frame holding ``image`` (PIL image, array, Frame) in memory, with the given index and time."""
        return cls(ArraySource(as_rgb_array(image), path=source, time=time), index)

    @property
    def index(self) -> int:
        """The absolute frame number in the source (video frame number, or the image's given index)."""
        return self._index

    @property
    def time(self) -> float | None:
        """Seconds from the first frame of the video; for image files the time given with them (key
        frames of a video), else ``None``."""
        return self._source.time(self._index)

    @property
    def source(self) -> str | None:
        """The absolute path of the image or video file this frame comes from, as the user gave it
        (``None`` if in memory). In a sandbox that path itself is not visible: use ``.image``/``.array``."""
        return self._source.display_path

    @property
    def width(self) -> int:
        """Width in pixels."""
        return self._source.width

    @property
    def height(self) -> int:
        """Height in pixels."""
        return self._source.height

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels, as PIL reports it."""
        return (self.width, self.height)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(height, width, 3), the shape of ``.array``."""
        return (self.height, self.width, 3)

    @property
    def mode(self) -> str:
        return "RGB"

    @property
    def array(self) -> np.ndarray:
        """The pixels as a new (H, W, 3) uint8 RGB array (decoded on first use, then cached)."""
        return self._source.rgb(self._index).copy()

    @property
    def image(self) -> Image.Image:
        """The pixels as a new PIL RGB image."""
        return Image.fromarray(self._source.rgb(self._index), mode="RGB")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self.array
        return array if dtype is None else array.astype(dtype)

    def _repr_png_(self) -> bytes:
        return png_bytes(self._source.rgb(self._index))[0]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return getattr(self.image, name)
        except AttributeError:
            raise AttributeError(
                f"'Frame' object has no attribute {name!r} (nor does its PIL image). A Frame has .image, .array, "
                f".index, .time, .source, .width, .height, .size, .shape and every PIL Image method."
            ) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {n for n in dir(Image.Image) if not n.startswith("_")})

    def __repr__(self) -> str:
        parts = [f"index={self._index}"]
        time = self.time
        if time is not None:
            parts.append(f"time={time:.2f}s")
        parts.append(f"{self.width}x{self.height}")
        if self.source is not None:
            parts.append(f"source={Path(self.source).name!r}")
        return f"Frame({', '.join(parts)})"


class Frames(Sequence[Frame]):
    """An immutable sequence of ``Frame``. Positional: ``frames[0]``, ``frames[-1]``, ``frames[2:5]``,
    ``frames[[0, 3]]``, ``frames[boolean_mask]``; slices are ``Frames`` that keep each frame's absolute ``.index``.
    Look up by absolute index with ``frames.at(index)``, by time with ``frames.at_time(seconds)``."""

    def __init__(self, frames: Iterable[Frame] = ()) -> None:
        self._frames = tuple(frames)
        for item in self._frames:
            if not isinstance(item, Frame):
                raise TypeError(
                    f"Frames holds Frame objects, got {type(item).__name__}; wrap images with Frame.from_image"
                )

    def __len__(self) -> int:
        return len(self._frames)

    @overload
    def __getitem__(self, key: int) -> Frame: ...

    @overload
    def __getitem__(self, key: slice | Sequence[int]) -> Frames: ...

    def __getitem__(self, key: Any) -> Frame | Frames:
        if isinstance(key, slice):
            return Frames(self._frames[key])
        if isinstance(key, (int, np.integer)):
            try:
                return self._frames[int(key)]
            except IndexError:
                raise IndexError(
                    f"position {int(key)} is out of range for {len(self)} frames (positions 0..{len(self) - 1}); "
                    f"to look up an absolute frame index use frames.at(index)"
                ) from None
        if isinstance(key, (Sequence, np.ndarray)) and not isinstance(key, str):
            positions = np.asarray(key)
            if positions.dtype == bool:
                if positions.shape != (len(self),):
                    raise IndexError(
                        f"a boolean mask must have one entry per frame ({len(self)}), got shape {positions.shape}"
                    )
                positions = np.flatnonzero(positions)
            return Frames(self[int(position)] for position in positions)
        raise TypeError(f"Frames indices must be integers, slices or lists of positions, not {type(key).__name__}")

    @property
    def indices(self) -> list[int]:
        """The absolute frame index of each frame, in order."""
        return [frame.index for frame in self._frames]

    @property
    def times(self) -> list[float | None]:
        """Each frame's time in seconds from the first video frame (``None`` for image files)."""
        return [frame.time for frame in self._frames]

    @property
    def sources(self) -> list[str]:
        """The distinct source file paths, in order of first appearance."""
        return list(dict.fromkeys(frame.source for frame in self._frames if frame.source is not None))

    @property
    def source(self) -> str | None:
        """The one file all frames come from (a video), or ``None`` when they come from several files."""
        sources = self.sources
        return sources[0] if len(sources) == 1 else None

    @property
    def fps(self) -> float | None:
        """Frames per second of the source video (not of this selection); ``None`` for images."""
        video = self._video()
        return video.fps if video is not None else None

    @property
    def duration(self) -> float | None:
        """Duration of the source video in seconds; ``None`` for images."""
        video = self._video()
        return video.duration if video is not None else None

    @property
    def total_frames(self) -> int | None:
        """Number of frames in the source video (all of them, not only those selected); ``None`` for images."""
        video = self._video()
        return video.frame_count if video is not None else None

    def _video(self) -> VideoSource | None:
        sources = {id(frame._source): frame._source for frame in self._frames}
        if len(sources) == 1:
            (source,) = sources.values()
            source = getattr(source, "inner", source)  # the paper's copies of a video's frames (aspect_fit)
            if isinstance(source, VideoSource):
                return source
        return None

    def at(self, index: int) -> Frame:
        """The frame whose absolute frame index is ``index`` (not its position in this sequence)."""
        matches = [frame for frame in self._frames if frame.index == index]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise FrameNotFound(
                f"frame index {index} occurs {len(matches)} times (from {', '.join(str(m.source) for m in matches)}); "
                f"pick by position with frames[i]"
            )
        available = self.indices
        nearest = sorted(available, key=lambda value: (abs(value - index), value))[:2]
        raise FrameNotFound(
            f"no frame with absolute index {index}; these {len(available)} frames have indices "
            f"{_summarise(available)}"
            + (f" (nearest: {', '.join(map(str, sorted(nearest)))})" if nearest else "")
            + ". Use frames[i] for the i-th frame held."
        )

    def at_time(self, seconds: float) -> Frame:
        """The frame whose time is nearest to ``seconds`` (seconds from the first video frame)."""
        timed = [(time, frame) for frame in self._frames if (time := frame.time) is not None]
        if not timed:
            raise ValueError(
                "these frames have no timestamps (they are image files); use frames.at(index) or frames[i]"
            )
        return min(timed, key=lambda pair: abs(pair[0] - seconds))[1]

    def sample(self, count: int) -> Frames:
        """``count`` frames spread evenly from the first to the last (all of them if there are fewer)."""
        if count < 1:
            raise ValueError(f"count must be at least 1, got {count}")
        return self[even_positions(len(self), count)]

    def every(self, step: int) -> Frames:
        """Every ``step``-th frame held, starting with the first (``frames[::step]``)."""
        if step < 1:
            raise ValueError(f"step must be at least 1, got {step}")
        return self[::step]

    def __repr__(self) -> str:
        if not self._frames:
            return "Frames(0 frames)"
        parts = [f"{len(self)} frame{'s' if len(self) != 1 else ''}", f"indices {_summarise(self.indices, 12)}"]
        times = [t for t in self.times if t is not None]
        if times:
            parts.append(f"times {min(times):.2f}..{max(times):.2f} s")
        video = self._video()
        if video is not None:
            parts.append(f"video {video.fps:.2f} fps, {video.frame_count} frames, {video.duration:.2f} s")
        first = self._frames[0]
        parts.append(f"{first.width}x{first.height}")
        sources = self.sources
        if len(sources) == 1:
            parts.append(f"source={sources[0]!r}")
        elif sources:
            folders = {str(Path(source).parent) for source in sources}
            parts.append(f"{len(sources)} files in {folders.pop()!r}" if len(folders) == 1 else f"{len(sources)} files")
        return f"Frames({', '.join(parts)})"


def _summarise(values: list[int], limit: int = 40) -> str:
    """All values when there are at most ``limit``; else a regular progression or the head and tail."""
    if len(values) <= limit:
        return "[" + ", ".join(map(str, values)) + "]"
    steps = set(np.diff(values).tolist())
    if len(steps) == 1:
        step = steps.pop()
        return f"[{values[0]}, {values[1]}, {values[2]}, ..., {values[-1]}] (every {step})"
    head, tail = values[: limit // 2], values[-(limit // 2) :]
    return (
        "["
        + ", ".join(map(str, head))
        + f", ... {len(values) - len(head) - len(tail)} more ..., "
        + ", ".join(map(str, tail))
        + "]"
    )


def even_positions(total: int, count: int) -> list[int]:
    """``count`` positions in ``range(total)`` spread evenly, first and last included, without repeats."""
    if count >= total:
        return list(range(total))
    if count == 1:
        return [0]
    return sorted({int(round(p)) for p in np.linspace(0, total - 1, count)})
