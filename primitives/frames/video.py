"""Video sources: a video file's first video stream, indexed when opened and decoded lazily with PyAV.

Video frames are numbered by presentation order from 0 (the absolute frame number) and timed in
seconds from the first frame, from each packet's pts and the stream's time base. Decoding runs
forward from the current decoder position when that is cheaper than seeking, and otherwise seeks
to the nearest keyframe at or before the wanted frame, so reading frames in order is one pass.
Decoded frames go to the shared cache of ``frames.sources``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spatialclaw.primitives.frames.sources import (
    VIDEO_SUFFIXES,
    FrameLoadError,
    check_file,
    decode_stats,
    decoded_cache,
    file_key,
    image_suffixes,
    shown_text,
)

__all__ = ["VideoSource"]


@dataclass(frozen=True)
class _VideoIndex:
    pts: np.ndarray  # (N,) int64 presentation timestamps in stream time-base units, ascending
    keyframes: np.ndarray  # ascending frame numbers of keyframes
    time_base: float  # seconds per pts unit
    fps: float  # frames per second of the stream (average rate, or from timestamps)
    width: int  # display width in pixels (after the stream's rotation)
    height: int
    rotation: int  # counter-clockwise degrees to turn coded frames upright (multiple of 90)


class VideoSource:
    """One video file's first video stream, indexed at open time by demuxing (no pixel decoding except
    one frame that checks the codec and reads the display rotation).

    ``path`` is where the file is opened, ``display_path`` (default: the resolved ``path``) how it is named
    to the user (see :class:`~spatialclaw.primitives.frames.sources.ImageFileSource`)."""

    def __init__(self, path: str | Path, display_path: str | None = None) -> None:
        resolved = check_file(path, "video file", display_path)
        shown = display_path or str(resolved)
        suffix = resolved.suffix.lower()
        if suffix not in VIDEO_SUFFIXES:
            if suffix in image_suffixes():
                raise FrameLoadError(f"{shown} is an image, not a video: load it with load_images([path]).")
            raise FrameLoadError(
                f"unsupported video extension {suffix or '(none)'!r}: {shown}. Supported: "
                f"{', '.join(sorted(VIDEO_SUFFIXES))}; convert it with e.g. `ffmpeg -i INPUT out.mp4`."
            )
        self.path = str(resolved)
        self.display_path = shown
        self._index = _probe(resolved, shown)
        self._pts_to_frame = {int(p): i for i, p in enumerate(self._index.pts)}
        self.wanted: set[int] = set()
        self._reset_decoder()

    def _reset_decoder(self) -> None:
        self._lock = threading.Lock()
        self._container: Any = None
        self._frames: Iterator[Any] | None = None
        self._position = -1  # the last frame number the decoder produced
        self._clean_from = 0  # frames before this (after a seek) may reference missing data
        self._seeked = False  # whether the current decoding pass began with a seek
        self._seekable = True  # cleared when a seek proved imprecise

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "display_path": self.display_path, "_index": self._index, "wanted": self.wanted}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._pts_to_frame = {int(p): i for i, p in enumerate(self._index.pts)}
        self._reset_decoder()

    @property
    def frame_count(self) -> int:
        return len(self._index.pts)

    @property
    def fps(self) -> float:
        return self._index.fps

    @property
    def width(self) -> int:
        return self._index.width

    @property
    def height(self) -> int:
        return self._index.height

    @property
    def duration(self) -> float:
        """Seconds from the first frame to the end of the last one."""
        return float(self.times()[-1] + 1.0 / self._index.fps)

    def times(self) -> np.ndarray:
        """(N,) float64 seconds of each frame from the first frame."""
        seconds: np.ndarray = (self._index.pts - self._index.pts[0]).astype(np.float64) * self._index.time_base
        return seconds

    def time(self, index: int) -> float:
        return float((int(self._index.pts[index]) - int(self._index.pts[0])) * self._index.time_base)

    def rgb(self, index: int) -> np.ndarray:
        """Frame ``index`` as a read-only (H, W, 3) uint8 RGB array, upright."""
        key = ("video", *self._file_key, index)
        cached = decoded_cache.get(key)
        if cached is not None:
            return cached
        with self._lock:
            cached = decoded_cache.get(key)
            if cached is not None:
                return cached
            try:
                return self._decode_until(index)
            except FrameLoadError:
                raise
            except Exception as exc:  # PyAV raises FFmpegError subclasses and EOFError
                self._close()
                raise FrameLoadError(
                    f"cannot decode frame {index} of {self.display_path}: "
                    f"{shown_text(str(exc), self.path, self.display_path)}. The video is corrupt or changed since it "
                    f"was loaded; re-encode it (e.g. `ffmpeg -i INPUT -c:v libx264 out.mp4`)."
                ) from exc

    @property
    def _file_key(self) -> tuple[str, int, int]:
        return file_key(Path(self.path))

    def _decode_until(self, target: int) -> np.ndarray:
        keyframes = self._index.keyframes
        keyframe = int(keyframes[max(0, int(np.searchsorted(keyframes, target, side="right")) - 1)])
        if not self._seekable:
            keyframe = 0
        continue_forward = self._frames is not None and self._position < target and self._position + 1 >= keyframe
        if not continue_forward:
            self._start_at(keyframe)
        array = self._decode_forward(target)
        if array is None and self._seeked:
            # The seek landed past the frame (some containers, e.g. MPEG program streams, seek
            # imprecisely): read this video from the start from now on.
            self._seekable = False
            self._start_at(0)
            array = self._decode_forward(target)
        if array is None:
            raise FrameLoadError(
                f"frame {target} of {self.display_path} could not be decoded: the decoder never produced it. The video may "
                f"be corrupt; re-encode it (e.g. `ffmpeg -i INPUT -c:v libx264 out.mp4`)."
            )
        return array

    def _decode_forward(self, target: int) -> np.ndarray | None:
        """Decode on from the current position up to ``target``, converting and caching the selected
        frames met on the way; ``None`` if the decoder passes or never reaches ``target``."""
        file_key = self._file_key
        assert self._frames is not None  # the callers start the decoder (``_start_at``) first
        for frame in self._frames:
            if frame.pts is None or int(frame.pts) not in self._pts_to_frame:
                raise FrameLoadError(
                    f"{self.display_path}: the decoder produced a frame with timestamp {frame.pts}, which is not in the "
                    f"stream's packet index; re-encode the video (e.g. `ffmpeg -i INPUT -c:v libx264 out.mp4`)."
                )
            number = self._pts_to_frame[int(frame.pts)]
            self._position = number
            decode_stats["video_frames_decoded"] += 1
            if number >= self._clean_from and (number == target or number in self.wanted):
                array = self._to_rgb(frame)
                decoded_cache.put(("video", *file_key, number), array)
                if number == target:
                    return array
            if number > target:
                return None
        self._close()
        return None

    def _start_at(self, keyframe: int) -> None:
        """Make the decoder produce frames from ``keyframe`` on: by seeking, or by reading from the start."""
        import av

        if keyframe == 0 and not self._seekable:
            self._close()
        fresh = self._container is None
        if fresh:
            self._container = av.open(self.path)
            self._container.streams.video[0].thread_type = "AUTO"
        stream = self._container.streams.video[0]
        self._seeked = keyframe > 0 or not fresh
        if self._seeked:
            self._container.seek(int(self._index.pts[keyframe]), stream=stream, backward=True, any_frame=False)
            decode_stats["video_seeks"] += 1
        self._frames = self._container.decode(stream)
        self._position = -1
        self._clean_from = keyframe

    def _close(self) -> None:
        if self._container is not None:
            self._container.close()
        self._container, self._frames, self._position = None, None, -1

    def _to_rgb(self, frame: Any) -> np.ndarray:
        array = frame.to_ndarray(format="rgb24")
        turns = (self._index.rotation // 90) % 4
        if turns:
            array = np.rot90(array, k=turns)
        decode_stats["video_frames_converted"] += 1
        return np.ascontiguousarray(array)


def _probe(path: Path, shown: str) -> _VideoIndex:
    """Index a video's first video stream: every packet's timestamp and keyframe flag, the rate, and the
    display rotation (from the first decoded frame). Raises FrameLoadError for unreadable files, naming
    the video ``shown`` (the user's path)."""
    import av

    def fail(problem: str, exc: BaseException | None = None) -> FrameLoadError:
        detail = f": {shown_text(str(exc), str(path), shown)}" if exc is not None else ""
        return FrameLoadError(
            f"cannot read video {shown}: {problem}{detail}. If the file is corrupt or truncated, re-download or "
            f"re-encode it (e.g. `ffmpeg -i INPUT -c:v libx264 out.mp4`)."
        )

    try:
        container = av.open(str(path))
    except Exception as exc:
        raise fail("the file could not be opened as a video", exc) from exc
    with container:
        if not container.streams.video:
            raise fail("it contains no video stream")
        stream = container.streams.video[0]
        declared = int(stream.frames or 0)
        stamps: list[int] = []
        key_stamps: list[int] = []
        rotation: int | None = None
        try:
            for packet in container.demux(stream):
                if packet.size == 0 or packet.is_discard:
                    continue
                stamp = packet.pts if packet.pts is not None else packet.dts
                if stamp is None:
                    raise fail("its packets carry no timestamps")
                stamps.append(int(stamp))
                if packet.is_keyframe:
                    key_stamps.append(int(stamp))
                if rotation is None:
                    for frame in packet.decode():
                        rotation = int(round(frame.rotation / 90.0)) * 90
                        break
            if rotation is None and stamps:
                for frame in stream.decode(None):
                    rotation = int(round(frame.rotation / 90.0)) * 90
                    break
        except FrameLoadError:
            raise
        except Exception as exc:
            raise fail("its data could not be read", exc) from exc
        if not stamps:
            raise fail("it contains no video frames")
        if rotation is None:
            raise fail("none of its frames could be decoded")
        if declared and len(stamps) < declared:
            raise fail(f"its header declares {declared} frames but only {len(stamps)} are present (truncated file)")
        pts = np.array(sorted(set(stamps)), dtype=np.int64)
        keyframes = np.searchsorted(pts, np.array(sorted(set(key_stamps)) or [int(pts[0])], dtype=np.int64))
        if keyframes[0] != 0:
            keyframes = np.concatenate([[0], keyframes])
        if stream.time_base is None:
            raise fail("its video stream has no time base")
        time_base = float(stream.time_base)
        rate = stream.average_rate or stream.guessed_rate
        if rate:
            fps = float(rate)
        elif len(pts) > 1:
            fps = (len(pts) - 1) / ((pts[-1] - pts[0]) * time_base)
        else:
            fps = 1.0
        width, height = stream.codec_context.width, stream.codec_context.height
        if rotation % 180:
            width, height = height, width
        return _VideoIndex(pts, keyframes.astype(np.int64), time_base, fps, width, height, rotation)
