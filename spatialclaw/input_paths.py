"""Turn what a person types (files, folders, glob patterns, a video) into a :class:`FrameSpec`."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from spatialclaw.task import VIDEO_SUFFIXES, FrameSpec

__all__ = ["IMAGE_SUFFIXES", "expand_paths", "frame_spec"]

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}


def expand_paths(paths: list[str | Path]) -> list[str]:
    """Files in the order given: ``~`` expanded, glob patterns expanded (sorted), and a folder
    contributing its images sorted by name. A path that matches nothing is an error naming it."""
    files: list[str] = []
    for raw in paths:
        text = os.path.expanduser(str(raw))
        matches = sorted(glob.glob(text)) if glob.has_magic(text) else [text]
        if not matches:
            raise FileNotFoundError(f"no file matches {text!r}")
        for match in matches:
            path = Path(match)
            if path.is_dir():
                found = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
                if not found:
                    raise FileNotFoundError(f"folder {path} holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
                files.extend(str(p) for p in found)
            elif path.is_file():
                files.append(str(path))
            else:
                raise FileNotFoundError(f"{path} does not exist")
    return files


def frame_spec(paths: list[str | Path], fps: float | None = None, count: int | None = None) -> FrameSpec:
    """Images (every file a frame, in order) or one video sampled at ``fps`` frames per second of video
    time or ``count`` frames evenly (default: every frame)."""
    if fps is not None and not fps > 0:
        raise ValueError(f"fps must be a positive number of frames per second of video time, got {fps}")
    if count is not None and count < 1:
        raise ValueError(f"count must be at least 1 frame, got {count}")
    files = expand_paths(paths)
    if not files:
        raise ValueError("give image files, a folder of images, a glob pattern or one video")
    videos = [f for f in files if Path(f).suffix.lower() in VIDEO_SUFFIXES]
    if videos:
        if len(files) != 1:
            raise ValueError(f"give one video on its own; got {len(videos)} video(s) among {len(files)} file(s)")
        return FrameSpec.video(videos[0], fps=fps, count=count)
    if fps is not None or count is not None:
        raise ValueError("fps and count sample a video; with images every file is a frame")
    return FrameSpec.images(files)
