"""The paper's setting applied to loaded tasks: each spec's frame policy and instruction, and the suite of 20.

:func:`apply_setting` stamps every task of a spec with how its frames are sampled and shown
(``meta["key_frames"]`` per input, ``meta["frame_long_side"]``, ``meta["frame_fps"]``; video inputs are
sampled at the policy's ``fps`` when it sets one), with how answers are scored (``meta["scoring"]``,
``reference`` for the paper's benchmarks), with the paper's frame geometry for the paper's benchmarks (``meta["frame_geometry"] =
"aspect_fit"``: the shown frames centre-cropped to the nearest paper aspect and resized to its grid; the kernel's
frames too, ``FrameSpec.aspect_fit``, unless ``kernel_frames="full"`` keeps them at full resolution, recorded in
``meta["kernel_frames"]``) and with the benchmark's instruction (``meta["instruction"]``, the
file name under ``prompts/benchmarks/``, and ``meta["instruction_sha256"]``), so the episode records both.
:data:`PAPER_FOLDERS` is the paper's repository-to-folder map: ``bench --suite paper --source-root ROOT`` reads
each benchmark from ``ROOT/<Folder>``, the folder ``data download --root ROOT`` writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from importlib import resources
from typing import TYPE_CHECKING, Any

from spatialclaw.benchmarks.names import PAPER_NAMES
from spatialclaw.task import FrameSpec, Task

if TYPE_CHECKING:
    from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy

__all__ = ["KERNEL_FRAMES", "PAPER_FOLDERS", "apply_setting", "frame_policy", "instruction_bytes", "paper_specs"]

#: paper short name -> the folder under the data root (``hf download ... --local-dir ROOT/<Folder>``).
PAPER_FOLDERS = {
    "blink": "BLINK",
    "cvbench": "CVBench",
    "dsibench": "DSI-Bench",
    "erqa": "ERQA",
    "mindcube": "MindCube",
    "mmsi": "MMSI-Bench",
    "mmsivideo": "MMSI-Video-Bench",
    "omni3d": "Omni3D-Bench",
    "omnispatial": "OmniSpatial",
    "osibench": "OSI-Bench",
    "paibench": "PAI-Bench",
    "perceptioncomp": "PerceptionComp",
    "sparbench": "SPAR-Bench",
    "spatialtree": "SpatialTree-Bench",
    "spbench": "SPBench",
    "videomme": "Video-MME",
    "videommev2": "Video-MME-v2",
    "viewspatial": "ViewSpatial-Bench",
    "vsibench_unbiased": "VSI-Bench",
    "vstibench": "vstibench",
}


def paper_specs() -> list[BenchmarkSpec]:
    """The specs with a ``paper_name``, in the paper's order (``blink`` ... ``vstibench``)."""
    from spatialclaw.benchmarks.specs import SPECS

    order = {name: i for i, name in enumerate(PAPER_NAMES)}
    found = [spec for spec in SPECS.values() if spec.paper_name]
    return sorted(found, key=lambda spec: (order.get(spec.paper_name or "", len(order)), spec.name))


def frame_policy(
    spec: BenchmarkSpec, fps: float | None = None, key_frames: int | None = None, long_side: int | None = None
) -> FramePolicy:
    """The spec's :class:`FramePolicy` with the given values (``bench --fps/--key-frames/--long-side``) in place."""
    changes: dict[str, Any] = {
        k: v for k, v in (("fps", fps), ("key_frames", key_frames), ("long_side", long_side)) if v is not None
    }
    if changes.get("key_frames", 1) < 1 or changes.get("long_side", 1) < 1 or changes.get("fps", 1) <= 0:
        raise ValueError(f"--fps must be > 0, --key-frames and --long-side >= 1; got {changes}")
    return dataclasses.replace(spec.frames, **changes)


def instruction_bytes(name: str) -> bytes:
    """The instruction file ``prompts/benchmarks/NAME``; FileNotFoundError naming it when it is missing."""
    entry = resources.files("spatialclaw.prompts").joinpath("benchmarks").joinpath(name)
    try:
        return entry.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"benchmark instruction prompts/benchmarks/{name} is missing") from None


#: How the kernel holds a paper task's frames: the paper's copies (``aspect_fit``) or the files' own pixels.
KERNEL_FRAMES = ("aspect_fit", "full")


def apply_setting(
    spec: BenchmarkSpec,
    tasks: list[Task],
    policy: FramePolicy | None = None,
    kernel_frames: str = "aspect_fit",
    scoring: str | None = None,
) -> list[Task]:
    """``tasks`` (changed in place and returned) with ``policy`` (default: the spec's), the spec's instruction
    and how answers are scored (``meta["scoring"]``: ``scoring``, by default ``reference`` for the paper's
    benchmarks and ``lenient`` for the others). The paper's benchmarks also get the paper's frame geometry,
    the kernel's copies included unless ``kernel_frames="full"``."""
    from spatialclaw.benchmarks.scoring.score import SCORINGS

    if kernel_frames not in KERNEL_FRAMES:
        raise ValueError(f"kernel_frames must be one of {', '.join(KERNEL_FRAMES)}; got {kernel_frames!r}")
    scoring = scoring or ("reference" if spec.paper_name else "lenient")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}; got {scoring!r}")
    policy = policy or spec.frames
    digest = hashlib.sha256(instruction_bytes(spec.instruction)).hexdigest() if spec.instruction else None
    fit = policy.long_side if kernel_frames == "aspect_fit" and spec.paper_name else None
    for task in tasks:
        task.inputs = [dataclasses.replace(_sampled(frames, policy.fps), aspect_fit=fit) for frames in task.inputs]
        task.meta["key_frames"] = policy.key_frames
        task.meta["frame_long_side"] = policy.long_side
        task.meta["frame_fps"] = policy.fps
        task.meta["scoring"] = scoring
        if spec.paper_name:
            task.meta["frame_geometry"] = "aspect_fit"
            task.meta["kernel_frames"] = kernel_frames
        if spec.instruction:
            task.meta["instruction"] = spec.instruction
            task.meta["instruction_sha256"] = digest
    return tasks


def _sampled(frames: FrameSpec, fps: float | None) -> FrameSpec:
    """A video input sampled at the policy's ``fps`` (None: as the adapter left it, by default every native frame);
    inputs the adapter pinned to a frame count or to given indices keep them."""
    if frames.kind != "video" or fps is None or frames.count or frames.indices:
        return frames
    return dataclasses.replace(frames, fps=fps)
