"""A model-in-the-loop dev set: real-image spatial questions with exact ground truth, at benchmark size.

Every question is built from the real measured data in ``$SPATIALCLAW_TEST_DATA`` (see its README) and
rendered the way benchmarks present frames: 1, 2 or 6 key frames about 224 px wide. The answers are exact
because each image is made from a real photo by a known camera motion or a known planar layout:

- ``camera_turn``, ``camera_translate``, ``orbit_angle``: camera motion between two views (how each is
  made: :mod:`spatialclaw.benchmarks.devset.camera`).
- ``perspective``: one real RGB-D frame with three coloured markers on floor pixels (the floor plane
  found by RANSAC in the measured depth); "standing at the red marker facing the blue one, is the green
  one front-left, front-right, back-left or back-right", with the answer from the measured 3D points in
  the floor plane, its normal as up (an item within 25 degrees of a quadrant boundary is not generated).
- ``planar``: a perspective photo of an A4 sheet (210 x 297 mm) lying on a real textured surface with
  coloured dots; the distance between two dots in centimetres, or the angle at one dot, exactly from the
  layout.
- ``camera_vertical``, ``orbit_clip``, ``frame_number``: six-key-frame clips; the camera tilts or moves up
  or down, travels around the Middlebury temple or dino (forwards or reversed), or turns one way and then
  another in a 32-frame clip whose key frames carry their frame numbers (how:
  :mod:`spatialclaw.benchmarks.devset.clips`, :mod:`spatialclaw.benchmarks.devset.orbit`).
- ``object_motion``: the real ceramic dinosaur composited into real rooms, walking sideways or towards/away,
  seen by a static or following camera, some clips played backwards or mirrored
  (:mod:`spatialclaw.benchmarks.devset.object`).
- ``room_perspective``, ``room_compass``: ray-cast rooms (walls textured with the real photos) seen in 4-6
  views 60-120 degrees apart; perspective, net-turn and compass questions from the exact layout
  (:mod:`spatialclaw.benchmarks.devset.room`).

Conventions: pixels (x, y) from the top-left; camera frames OpenCV (x right, y down, z forward); a
pan to the right turns the optical axis towards +x, a tilt up towards -y; angles in degrees, distances
in metres or the unit the question names. Each item's ``meta`` says how it was made.

The output is the local task format (``benchmarks/data/local.py``): ``generate(out_dir)`` writes
``tasks.jsonl`` and the PNGs beside it; ``python -m spatialclaw.benchmarks.devset OUT`` does the same.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from spatialclaw import jsonl
from spatialclaw.benchmarks.devset.camera import camera_translate, camera_turn, orbit_angle
from spatialclaw.benchmarks.devset.clips import camera_vertical, frame_number
from spatialclaw.benchmarks.devset.data import data_root
from spatialclaw.benchmarks.devset.layout import perspective, planar
from spatialclaw.benchmarks.devset.object import object_motion
from spatialclaw.benchmarks.devset.orbit import orbit_clip
from spatialclaw.benchmarks.devset.room import room_compass, room_perspective

__all__ = ["CLASSES", "generate"]

CLASSES = (
    "camera_turn",
    "camera_translate",
    "orbit_angle",
    "perspective",
    "planar",
    "camera_vertical",
    "orbit_clip",
    "frame_number",
    "object_motion",
    "room_perspective",
    "room_compass",
)

_BUILDERS = {
    "camera_turn": camera_turn,
    "camera_translate": camera_translate,
    "orbit_angle": orbit_angle,
    "perspective": perspective,
    "planar": planar,
    "camera_vertical": camera_vertical,
    "orbit_clip": orbit_clip,
    "frame_number": frame_number,
    "object_motion": object_motion,
    "room_perspective": room_perspective,
    "room_compass": room_compass,
}


def generate(out_dir: str | Path, classes: tuple[str, ...] = CLASSES, seed: int = 0) -> Path:
    """Write the dev set (``tasks.jsonl`` in the local format and its images) to ``out_dir``; returns the
    JSONL path. Deterministic for a seed."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    root = data_root()
    records: list[dict[str, Any]] = []
    for name in classes:
        if name not in _BUILDERS:
            raise ValueError(f"unknown class {name!r}; known: {', '.join(CLASSES)}")
        records += _BUILDERS[name](root, out, np.random.default_rng([seed, CLASSES.index(name)]))
    path = out / "tasks.jsonl"
    # How each answer was made stays on the host (``meta.truth`` never reaches a kernel; see Task.kernel_meta).
    jsonl.write_atomic(
        path, ({**record, "benchmark": "devset", "meta": {"truth": record["meta"]}} for record in records)
    )
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spatialclaw.benchmarks.devset",
        description="write the model-in-the-loop dev set (local task format)",
    )
    parser.add_argument("out", help="output folder")
    parser.add_argument("--classes", nargs="+", default=list(CLASSES), choices=CLASSES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = generate(args.out, tuple(args.classes), args.seed)
    print(f"{sum(1 for _ in path.open())} tasks -> {path}")
    return 0
