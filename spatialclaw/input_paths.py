"""Turn what a person types (files, folders, glob patterns, videos, frame indices) into frame specs.

Relative paths are resolved once, against the caller's working directory, when the spec is made.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
from pathlib import Path
from typing import Any

from spatialclaw.task import VIDEO_SUFFIXES, FrameSpec

__all__ = [
    "IMAGE_SUFFIXES",
    "add_input_options",
    "check_inputs",
    "expand_paths",
    "frame_spec",
    "read_sidecar",
    "specs_from_groups",
]

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


# several inputs on a command line -------------------------------------------------------------------
class _InputAction(argparse.Action):
    """Appends one input group to ``namespace.inputs`` in command-line order (``--frames``/``--video``),
    or attaches source frame indices to the group before it (``--indices``/``--sidecar``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        groups = list(getattr(namespace, "inputs", None) or [])
        if self.dest in ("indices", "times", "sidecar"):
            # a mistake is kept as a group of its own and reported by specs_from_groups, in one line
            key = "indices" if self.dest == "sidecar" else self.dest
            if not groups or "error" in groups[-1]:
                groups.append(
                    {"error": f"{option_string} describes the input before it: put it after --frames or --video"}
                )
            elif groups[-1].get(key) is not None:
                groups.append(
                    {
                        "error": f"the input {groups[-1]['paths'][0]} already has {key}; give {option_string} once per input"
                    }
                )
            elif self.dest == "sidecar":
                groups[-1]["indices"] = values  # the file is read by specs_from_groups
            else:
                groups[-1][self.dest] = list(values)
        else:
            groups.append(
                {"kind": self.dest, "paths": list(values) if isinstance(values, list) else [values], "indices": None}
            )
        namespace.inputs = groups


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """``--frames``/``--video`` (each repeatable, in order: the first input is ``frames``, all of them
    ``videos``), ``--indices``/``--sidecar`` for the input before them, and the video sampling options."""
    parser.add_argument(
        "--frames",
        nargs="+",
        action=_InputAction,
        dest="images",
        metavar="IMAGE",
        help="an image set: files, folders of images or glob patterns, in order (repeat for several sets)",
    )
    parser.add_argument(
        "--video", action=_InputAction, dest="video", metavar="PATH", help="a video file (repeat for several videos)"
    )
    parser.add_argument(
        "--indices",
        nargs="+",
        type=int,
        action=_InputAction,
        dest="indices",
        metavar="N",
        help="source frame numbers of the input before this option: one per image (key frames of a video), "
        "or for a video the frames to load",
    )
    parser.add_argument(
        "--times",
        nargs="+",
        type=float,
        action=_InputAction,
        dest="times",
        metavar="SECONDS",
        help="times in the source video (seconds) of the key-frame images before this option, one per image",
    )
    parser.add_argument(
        "--sidecar",
        action=_InputAction,
        dest="sidecar",
        metavar="JSON",
        help="a JSON file with the source frames of the input before it: [16, 32] or "
        '{"indices": [16, 32], "times": [0.53, 1.07]}',
    )
    parser.add_argument(
        "--fps",
        type=float,
        default=None,
        help="video: sample this many frames per second of video time (every video without --indices)",
    )
    parser.add_argument(
        "--count", type=int, default=None, help="video: sample this many frames evenly (every video without --indices)"
    )
    parser.set_defaults(inputs=None)


def read_sidecar(path: str | Path) -> tuple[list[int], list[float] | None]:
    """Source frame indices (and times, seconds) from a sidecar JSON file: a list of ints, or an object
    with ``"indices"`` (or ``"frame_indices"``) and optionally ``"times"``."""
    file = Path(os.path.expanduser(str(path)))
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"sidecar file {file} does not exist") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"sidecar file {file} is not JSON ({error})") from None
    times = None
    if isinstance(data, dict):
        times = data.get("times")
        data = data.get("indices", data.get("frame_indices"))
    if not isinstance(data, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in data):
        raise ValueError(
            f'sidecar file {file} must hold a list of frame numbers or {{"indices": [...], "times": [...]}}'
        )
    if times is not None and (not isinstance(times, list) or not all(isinstance(t, (int, float)) for t in times)):
        raise ValueError(f"sidecar file {file}: 'times' must be a list of seconds")
    return data, times


def specs_from_groups(
    groups: list[dict[str, Any]] | None, fps: float | None = None, count: int | None = None
) -> list[FrameSpec]:
    """The :class:`FrameSpec` of each input group (see :func:`add_input_options`); bad combinations are
    rejected before anything starts, with one line saying what to change."""
    if not groups:
        raise ValueError("give the inputs: --frames IMAGE... and/or --video PATH")
    for group in groups:
        if "error" in group:
            raise ValueError(group["error"])
        if isinstance(group.get("indices"), (str, Path)):  # --sidecar FILE, read now so a bad file is one clear line
            sidecar_indices, sidecar_times = read_sidecar(group["indices"])
            group["indices"] = sidecar_indices
            if sidecar_times is not None:
                if group.get("times") is not None:
                    raise ValueError(
                        f"the input {group['paths'][0]} has times from --times and from its sidecar; give one"
                    )
                group["times"] = sidecar_times
    if fps is not None and count is not None:
        raise ValueError("--fps and --count both choose how a video is sampled; give one of them")
    videos = [g for g in groups if g["kind"] == "video"]
    if (fps is not None or count is not None) and not videos:
        raise ValueError("--fps and --count sample a --video; with --frames every image is a frame")
    specs = []
    for group in groups:
        indices = group.get("indices")
        if group["kind"] == "video":  # --fps/--count sample every video that has no --indices of its own
            spec = frame_spec(group["paths"], fps=None if indices else fps, count=None if indices else count)
            if spec.kind != "video":
                raise ValueError(f"{group['paths'][0]} is not a video file by its extension; use --frames for images")
            if group.get("times") is not None:
                raise ValueError(
                    f"{group['paths'][0]}: a video's frame times come from its timestamps; --times is for key-frame images"
                )
        else:
            spec = frame_spec(group["paths"])
            if spec.kind == "video":
                raise ValueError(f"{group['paths'][0]} is a video; give it with --video (and --fps or --count)")
            if indices is not None and len(indices) != len(spec.paths):
                raise ValueError(
                    f"--indices gives {len(indices)} frame numbers for {len(spec.paths)} image(s) "
                    f"({spec.paths[0]} ...); give one per image"
                )
            times = group.get("times")
            if times is not None:
                if len(times) != len(spec.paths):
                    raise ValueError(
                        f"--times gives {len(times)} times for {len(spec.paths)} image(s) ({spec.paths[0]} ...); "
                        "give one per image, in seconds"
                    )
                spec.times = [float(t) for t in times]
        if indices is not None:
            if len(set(indices)) != len(indices) or any(i < 0 for i in indices):
                raise ValueError(f"source frame indices must be distinct and non-negative; got {indices}")
            spec.indices = list(indices)
        specs.append(spec)
    return specs


def check_inputs(specs: list[FrameSpec]) -> None:
    """Open every input on the host as the kernel will (each image's header and integrity, a video's packet
    index and first frame, the frame numbers asked for) and decode every image, so that a missing, empty,
    corrupt (in its header or inside its data) or truncated file is one ``ValueError`` naming the user's path
    before a kernel starts (and before anything is written). A video's other frames are not decoded."""
    from PIL import Image

    from spatialclaw.primitives.frames.load import load_frames

    for spec in specs:
        load_frames(spec.to_dict())  # FrameLoadError is a ValueError naming the file as given
        for path in spec.paths if spec.kind == "images" else []:
            try:
                with Image.open(path) as image:
                    image.load()
            except (OSError, SyntaxError, ValueError) as error:
                raise ValueError(
                    f"cannot decode image {path}: {error}. The file is corrupt inside its data; re-export it or "
                    "remove it from the input list"
                ) from None
