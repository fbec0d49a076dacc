"""Dev-set question class ``orbit_clip``: six real views in order of a camera circling the Middlebury temple
or dino, with answers from the published calibration.

The gantry photographed both objects lying on their side (the object's up, world +y, points to the image's
+x); each photo is turned 90 degrees counter-clockwise so the object stands upright. That turn is a change
of camera axes and nothing else: the turned camera's x axis is the calibration camera's y axis, its y axis
the calibration's -x, its z axis unchanged (world-to-camera rows ``R[1], -R[0], R[2]``).

Questions per clip (clips are played forwards or in reverse, six consecutive-ring views a fixed step apart):

- which way the camera travels around the object: to the camera's left or right, the sign of the
  camera-centre displacement from the first to the last key frame along the first key frame's x axis
  (every step between consecutive key frames has the same sign);
- the angle in degrees between the first and the last viewing directions (the third rows of the
  world-to-camera rotations); the angle from the first view grows at every key frame.

Conventions (as in :mod:`spatialclaw.benchmarks.devset.build`): camera frames OpenCV (x right, y down, z
forward); angles in degrees, distances in metres.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from spatialclaw.benchmarks.devset.camera import middlebury_cameras
from spatialclaw.benchmarks.devset.data import save, small_frame

__all__ = ["ORBIT_CHOICES", "orbit_clip", "upright_rotation"]

ORBIT_CHOICES = ["to the camera's left", "to the camera's right"]
_TABLES = {"multiview-temple": "templeR_par.txt", "multiview-dino": "dino_par.txt"}
_STEPS = {"multiview-temple": (2, 3), "multiview-dino": (2, 4)}  # ring views between key frames (7.6 deg each)
_INTRO = (
    "The six images are key frames of one video, in order: the camera circles around the object while keeping "
    "it in view."
)


def upright_rotation(R: np.ndarray) -> np.ndarray:
    """The world-to-camera rotation of a calibrated view once its photo is turned 90 degrees
    counter-clockwise: image right becomes up, so the new x axis is the old y and the new y the old -x."""
    return np.stack([R[1], -R[0], R[2]])


def _angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return math.degrees(math.acos(float(np.clip(a @ b, -1.0, 1.0))))


def orbit_clip(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Temple and dino clips, forwards and reversed: travel direction (multiple choice) and total turn."""
    plan = [
        ("multiview-temple", False),
        ("multiview-dino", True),
        ("multiview-temple", True),
        ("multiview-dino", False),
    ]
    records: list[dict[str, Any]] = []
    for number, (folder, reverse) in enumerate(plan):
        cameras = middlebury_cameras(root, folder, _TABLES[folder])
        ring = sorted(cameras)
        low, high = _STEPS[folder]
        step = int(rng.integers(low, high + 1))
        start = int(rng.integers(0, len(ring) - 5 * step))
        views = ring[start : start + 5 * step + 1 : step][:: -1 if reverse else 1]
        rotations = [upright_rotation(cameras[v][0]) for v in views]
        centres = [-cameras[v][0].T @ cameras[v][1] for v in views]
        directions = [R[2] for R in rotations]
        from_first = [_angle_deg(directions[0], d) for d in directions]
        if any(b <= a for a, b in itertools.pairwise(from_first)):
            raise ValueError(f"{folder} views {views}: the viewing direction does not turn steadily away")
        steps = [float(R[0] @ (c1 - c0)) for R, (c0, c1) in zip(rotations, itertools.pairwise(centres), strict=False)]
        sideways = float(rotations[0][0] @ (centres[-1] - centres[0]))
        if not all(math.copysign(1.0, s) == math.copysign(1.0, sideways) for s in steps):
            raise ValueError(f"{folder} views {views}: the camera does not travel one way")
        names = [
            save(
                small_frame(np.ascontiguousarray(np.rot90(np.array(Image.open(root / folder / v).convert("RGB"))))),
                out / f"orbitclip{number}_{k}.png",
            )
            for k, v in enumerate(views)
        ]
        meta: dict[str, Any] = {
            "source": folder,
            "views": views,
            "reversed": reverse,
            "ring_step": step,
            "image_turn": "each photo turned 90 deg counter-clockwise (object upright); camera x = calibration y",
            "sideways_m": round(sideways, 4),
            "angle_from_first_deg": [round(a, 2) for a in from_first],
        }
        label = ORBIT_CHOICES[1] if sideways > 0 else ORBIT_CHOICES[0]
        records.append(
            {
                "task_id": f"orbit_clip-{number}-direction",
                "category": "orbit_clip",
                "images": names,
                "question": f"{_INTRO} Does the camera travel around the object towards its own left or its own right?",
                "choices": ORBIT_CHOICES,
                "answer": chr(ord("A") + ORBIT_CHOICES.index(label)),
                "meta": meta,
            }
        )
        records.append(
            {
                "task_id": f"orbit_clip-{number}-angle",
                "category": "orbit_clip",
                "images": names,
                "question": f"{_INTRO} By how many degrees does the camera's viewing direction turn from the first "
                "to the last key frame?",
                "answer": round(from_first[-1], 2),
                "answer_type": "number",
                "metric": "mra",
                "meta": meta,
            }
        )
    return records
