"""PNG previews of a task's inputs, written where whoever drives a session can open them.

``session start`` writes ``SESSION_DIR/preview/`` (``0700``, files ``0600`` under the session daemon's umask): one PNG per previewed frame (``input1_frame16.png``)
and one contact sheet of all of them (``contact_sheet.png``, each tile labelled with its input and
absolute frame index), so the inputs can be seen before the first cell is spent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.task import Task
from spatialclaw.trajectories.safe_files import UnsafeTarget, png_bytes, write_file

__all__ = ["write_input_previews"]


def _positions(total: int, count: int) -> list[int]:
    """``count`` positions spread evenly over ``total`` frames, first and last included."""
    if total <= count:
        return list(range(total))
    return sorted({round(i * (total - 1) / max(count - 1, 1)) for i in range(count)})


def write_input_previews(
    task: Task, directory: str | Path, max_frames: int = 16, max_side: int = 512
) -> dict[str, Any]:
    """Write per-frame PNGs (longer side at most ``max_side`` pixels) and a contact sheet of up to
    ``max_frames`` frames, shared among the inputs and spread evenly within each.

    Returns ``{"contact_sheet": path, "frames": [{"input": n, "index": i, "time": s, "path": p}, ...]}``
    (input numbers from 1; ``index`` the absolute frame index, ``time`` seconds or None).
    """
    from spatialclaw.primitives.display.overlay import contact_sheet
    from spatialclaw.primitives.frames.load import load_frames

    folder = Path(directory) / "preview"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.is_symlink() or not folder.is_dir():
        raise UnsafeTarget(f"{folder} is a link or not a folder; refusing to write previews there")
    folder.chmod(0o700)  # this user only, as every other file of the session
    several = len(task.inputs) > 1
    per_input = max(1, max_frames // max(len(task.inputs), 1))
    tiles, labels, written = [], [], []
    for number, spec in enumerate(task.inputs, start=1):
        frames = load_frames(spec.to_dict())
        for position in _positions(len(frames), per_input):
            frame = frames[position]
            image = frame.image.convert("RGB")
            if max(image.size) > max_side:
                image.thumbnail((max_side, max_side))
            path = folder / f"input{number}_frame{frame.index}.png"
            write_file(path, png_bytes(image), inside=directory, permissions=0o600)  # never through a link
            tiles.append(image)
            labels.append(f"input {number} frame {frame.index}" if several else f"frame {frame.index}")
            written.append({"input": number, "index": frame.index, "time": frame.time, "path": str(path)})
    sheet_path = folder / "contact_sheet.png"
    if tiles:
        sheet = contact_sheet(tiles, labels=labels, cell_px=min(256, max_side))
        write_file(sheet_path, png_bytes(sheet), inside=directory, permissions=0o600)
    return {"contact_sheet": str(sheet_path) if tiles else None, "frames": written}
