"""What the agent reads from a task's input files: the preview frames that go with the question and the
sha256 hashes that the trajectory records (so it names exactly the data it saw)."""

from __future__ import annotations

import functools
import hashlib
import os
import stat

from spatialclaw.chat import ImagePart
from spatialclaw.task import Task

__all__ = ["checked_inputs", "file_hashes", "preview_frames"]


def checked_inputs(task: Task) -> tuple[dict[str, str], OSError | None]:
    """What every interface does first with a task's inputs, before anything reads them: their hashes for the
    trajectory's ``task`` event (:func:`file_hashes`), or ``({}, error)`` when one is missing or not a regular
    file, for the episode to raise once that event is written (it then ends with status ``error``)."""
    try:
        return file_hashes(task), None
    except OSError as failure:
        return {}, failure


def file_hashes(task: Task) -> dict[str, str]:
    """sha256 of every input file (so a trajectory names exactly the data it saw). An input that is not a
    regular file (``/dev/zero``, a FIFO, a folder) is an ``OSError`` naming it, found before anything opens
    it, so that no host read waits forever or never ends."""
    hashes: dict[str, str] = {}
    for spec in task.inputs:
        for path in spec.paths:
            try:
                info = os.stat(path)
            except OSError as error:
                raise FileNotFoundError(
                    f"input file {path} of task {task.task_id!r} cannot be read ({error})"
                ) from None
            if not stat.S_ISREG(info.st_mode):
                raise OSError(
                    f"input file {path} of task {task.task_id!r} is not a regular file (a device, FIFO or folder); "
                    "inputs must be image or video files"
                )
            hashes[path] = _sha256_file(path, info.st_size, info.st_mtime_ns)
    return hashes


@functools.lru_cache(maxsize=4096)
def _sha256_file(path: str, size: int, mtime_ns: int) -> str:
    """Hash of a file, remembered per (path, size, modification time): benchmarks reuse videos. Opened without
    blocking and checked again, so a file swapped for a FIFO after the check cannot stall the host."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"input file {path} is not a regular file")
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def preview_frames(task: Task, count: int, max_side: int) -> tuple[list[ImagePart], str]:
    """The key frames that go with the question, with lines saying which they are (absolute frame indices, as
    the kernel's ``frames``/``videos`` hold them).

    A task that carries its benchmark's frame policy (``meta["key_frames"]``, ``meta["frame_long_side"]``,
    set when a benchmark is loaded) shows that many frames **per input** (a video's sampled frames, an image
    set's images: all of them when there are fewer), at positions round(i*(n-1)/(k-1)) over the input's frame
    list, resized to that long side; with ``meta["frame_geometry"] == "aspect_fit"`` (the paper's setting) each is
    centre-cropped to the nearest paper aspect and resized, up or down, to its grid at that long side
    (:func:`~spatialclaw.primitives.frames.aspect_fit.aspect_fit`: 640x480 -> 768x576). Otherwise ``count`` frames in all are shared among the inputs, evenly
    spread within each, no larger than ``max_side``."""
    per_input = _policy_int(task, "key_frames")
    max_side = _policy_int(task, "frame_long_side") or max_side
    geometry = task.meta.get("frame_geometry")
    if geometry not in (None, "aspect_fit"):
        raise ValueError(
            f"task {task.task_id!r}: meta['frame_geometry'] must be 'aspect_fit' or absent, got {geometry!r}"
        )
    if (per_input is None and count <= 0) or not task.inputs:
        return [], ""
    from spatialclaw.primitives.frames.aspect_fit import aspect_fit
    from spatialclaw.primitives.frames.load import load_frames

    several = len(task.inputs) > 1
    if per_input is None:
        per_input = max(1, count // len(task.inputs))
    images: list[ImagePart] = []
    lines: list[str] = []
    for number, spec in enumerate(task.inputs):
        name = f"`videos[{number}]`" if several else "`frames`"
        frames = load_frames(spec.to_dict())
        total = len(frames)
        if total == 0:
            lines.append(f"{name} holds no frames.")
            continue
        shown_count = min(per_input, total)
        positions = sorted({round(i * (total - 1) / max(shown_count - 1, 1)) for i in range(shown_count)})
        downscaled = False
        for position in positions:
            frame = frames[position]
            image = frame.image
            if geometry == "aspect_fit":
                fitted = aspect_fit(image, max_side)
                downscaled = downscaled or fitted.size != image.size
                image = fitted
            elif max(image.size) > max_side:
                scale = max_side / max(image.size)
                image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
                downscaled = True
            label = f"input {number + 1} frame {frame.index}" if several else f"frame {frame.index}"
            images.append(ImagePart.from_pil(image, label=label))
        shown = ", ".join(str(frames[p].index) for p in positions)
        resized = ", cropped and resized" if geometry == "aspect_fit" else ", downscaled"
        lines.append(
            f"{name} holds {total} frame(s) (absolute indices {frames[0].index} to {frames[total - 1].index}); "
            f"attached below: frame(s) {shown}{resized if downscaled else ''}."
        )
    return images, "\n".join(lines)


def _policy_int(task: Task, key: str) -> int | None:
    value = task.meta.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
        raise ValueError(f"task {task.task_id!r}: meta[{key!r}] must be a positive number, got {value!r}")
    return int(value)
