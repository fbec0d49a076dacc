"""Loading frames: image files, a video (all frames, or chosen by fps, count or absolute indices) or a
frame spec dict, as ``Frames`` with absolute frame indices.

Image ``i`` gets absolute index ``indices[i]`` (default ``i``); a video's frames keep the video's frame
numbers (presentation order, from 0) and their times in seconds from the first frame. Files are checked
when loaded; pixels are decoded lazily, on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spatialclaw.primitives.frames.aspect_fit import AspectFitSource
from spatialclaw.primitives.frames.frame import Frame, Frames, even_positions
from spatialclaw.primitives.frames.sources import FrameLoadError, ImageFileSource
from spatialclaw.primitives.frames.video import VideoSource

__all__ = ["load_frames", "load_images", "load_video"]


def _nearest(times: np.ndarray, targets: np.ndarray) -> list[int]:
    """For each target time, the position of the nearest of the ascending ``times`` (earlier on ties)."""
    after = np.clip(np.searchsorted(times, targets), 0, len(times) - 1)
    before = np.clip(after - 1, 0, len(times) - 1)
    closer_before = np.abs(times[before] - targets) <= np.abs(times[after] - targets)
    return [int(i) for i in np.where(closer_before, before, after)]


def load_images(
    paths: str | Path | Sequence[str | Path],
    indices: Sequence[int] | None = None,
    times: Sequence[float] | None = None,
    display_paths: Sequence[str] | None = None,
    aspect_fit: int | None = None,
) -> Frames:
    """Image files as ``Frames``; image ``i`` gets absolute index ``indices[i]`` (default ``i``) and, for key
    frames taken from a video, time ``times[i]`` (seconds in that video; default ``None``).
    ``display_paths`` (one per path; default the resolved paths) are the names frames and errors show for
    the files: a sandboxed kernel opens private links to the user's files and shows the user's paths.
    ``aspect_fit`` (a long side in pixels): the frames are the paper's copies of the images (centre-cropped to
    the nearest paper aspect and resized, :mod:`~spatialclaw.primitives.frames.aspect_fit`); None: as stored.

    Each file is checked now (exists, readable format, not truncated); pixels are decoded on first use.
    EXIF orientation is applied. Raises ``FrameLoadError`` naming the first bad file.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise FrameLoadError(
            "no image paths given: pass a list of image files, e.g. sorted(Path(folder).glob('*.jpg'))"
        )
    if indices is None:
        indices = list(range(len(paths)))
    indices = [int(i) for i in indices]
    if len(indices) != len(paths):
        raise FrameLoadError(f"got {len(indices)} indices for {len(paths)} images; give one index per image")
    if len(set(indices)) != len(indices):
        duplicates = sorted({i for i in indices if indices.count(i) > 1})
        raise FrameLoadError(f"image indices must be unique; repeated: {duplicates}")
    if times is not None and len(times) != len(paths):
        raise FrameLoadError(f"got {len(times)} times for {len(paths)} images; give one time (seconds) per image")
    stamps = list(times) if times is not None else [None] * len(paths)
    if display_paths is not None and len(display_paths) != len(paths):
        raise FrameLoadError(f"got {len(display_paths)} display paths for {len(paths)} images; give one per image")
    shown = [str(p) for p in display_paths] if display_paths is not None else [None] * len(paths)
    return Frames(
        Frame(_fitted(ImageFileSource(path, time, display), aspect_fit), index)
        for path, index, time, display in zip(paths, indices, stamps, shown, strict=True)
    )


def _fitted(source: Any, aspect_fit: int | None) -> Any:
    if aspect_fit is None:
        return source
    if isinstance(aspect_fit, bool) or not isinstance(aspect_fit, int) or aspect_fit < 1:
        raise FrameLoadError(f"aspect_fit must be a long side in pixels (an int >= 1), got {aspect_fit!r}")
    return AspectFitSource(source, aspect_fit)


def load_video(
    path: str | Path,
    fps: float | None = None,
    count: int | None = None,
    max_frames: int | None = None,
    indices: Sequence[int] | None = None,
    display_path: str | None = None,
    aspect_fit: int | None = None,
) -> Frames:
    """A video's frames as ``Frames``, decoded lazily with PyAV.

    Choose at most one of: ``fps`` (frames per second of video time, counted as ffmpeg's ``fps`` filter counts
    them: ``round(duration * fps)`` frames, at least one, the frame nearest each of 0, 1/fps, 2/fps, ...
    seconds; a 2.4 s video at 1 fps gives 2 frames, a 4.6 s one 5), ``count`` (that many frames spread evenly, first and last included),
    ``indices`` (these absolute frame numbers); with none, every frame. ``max_frames`` then caps the
    selection by thinning it evenly. Frame indices are the video's frame numbers (presentation order,
    from 0) and times are seconds from the first frame. ``display_path`` (default: the resolved path) is
    the name frames and errors show for the file. ``aspect_fit``: as for :func:`load_images`. Raises ``FrameLoadError`` for a missing, corrupt,
    truncated or empty video or when nothing would be selected.
    """
    chosen = [name for name, value in (("fps", fps), ("count", count), ("indices", indices)) if value is not None]
    if len(chosen) > 1:
        raise FrameLoadError(f"give only one of fps, count or indices (got {' and '.join(chosen)})")
    if fps is not None and not fps > 0:
        raise FrameLoadError(f"fps must be positive (frames per second of video time), got {fps}")
    if count is not None and count < 1:
        raise FrameLoadError(f"count must be at least 1 to select any frame, got {count}")
    if max_frames is not None and max_frames < 1:
        raise FrameLoadError(f"max_frames must be at least 1, got {max_frames}")
    if indices is not None and len(indices) == 0:
        raise FrameLoadError("indices is empty: no frame would be selected; give absolute frame numbers")
    video = VideoSource(path, display_path)
    total = video.frame_count
    if indices is not None:
        selected = [int(i) for i in indices]
        outside = [i for i in selected if not 0 <= i < total]
        if outside:
            raise FrameLoadError(
                f"frame numbers {outside[:10]} are outside {video.display_path}, which has frames 0..{total - 1}"
            )
    elif fps is not None:
        wanted = max(1, int(np.floor(video.duration * fps + 0.5)))  # ffmpeg rounds the end half away from 0
        targets = np.arange(wanted, dtype=float) / fps
        selected = sorted(set(_nearest(video.times(), targets)))
    elif count is not None:
        selected = even_positions(total, count)
    else:
        selected = list(range(total))
    if max_frames is not None and len(selected) > max_frames:
        selected = [selected[p] for p in even_positions(len(selected), max_frames)]
    video.wanted.update(selected)
    source = _fitted(video, aspect_fit)
    return Frames(Frame(source, index) for index in selected)


_SPEC_KEYS = {"kind", "paths", "fps", "count", "indices", "times", "max_frames", "display_paths", "aspect_fit"}


def load_frames(spec: dict[str, Any]) -> Frames:
    """Frames from a frame spec dict: ``{"kind": "images" | "video", "paths": [...], "fps", "count",
    "indices", "max_frames", "aspect_fit"}`` (the form ``FrameSpec.to_dict()`` produces; absent keys mean ``None``), and
    optionally ``"display_paths"``: one per path, the names shown for the files (a sandbox stages the
    user's files at private paths and passes the user's paths here)."""
    unknown = set(spec) - _SPEC_KEYS
    if unknown:
        raise FrameLoadError(f"unknown frame spec keys {sorted(unknown)}; expected some of {sorted(_SPEC_KEYS)}")
    kind, paths = spec.get("kind"), spec.get("paths") or []
    if isinstance(paths, (str, Path)):
        paths = [paths]
    display = spec.get("display_paths")
    if display is not None and len(display) != len(paths):
        raise FrameLoadError(f"a frame spec gives {len(display)} display paths for {len(paths)} paths")
    if kind == "images":
        for name in ("fps", "count", "max_frames"):
            if spec.get(name) is not None:
                raise FrameLoadError(f"{name!r} applies to videos only; an image spec takes paths and indices")
        return load_images(
            paths,
            indices=spec.get("indices"),
            times=spec.get("times"),
            display_paths=display,
            aspect_fit=spec.get("aspect_fit"),
        )
    if kind == "video":
        if len(paths) != 1:
            raise FrameLoadError(f"a video spec needs exactly one path, got {len(paths)}: {list(paths)}")
        if spec.get("times") is not None:
            raise FrameLoadError("a video's frame times come from its timestamps; 'times' applies to image files only")
        return load_video(
            paths[0],
            fps=spec.get("fps"),
            count=spec.get("count"),
            max_frames=spec.get("max_frames"),
            indices=spec.get("indices"),
            display_path=display[0] if display else None,
            aspect_fit=spec.get("aspect_fit"),
        )
    raise FrameLoadError(f"frame spec kind must be 'images' or 'video', got {kind!r}")
