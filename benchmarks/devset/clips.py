"""Dev-set question classes about six-key-frame clips of one camera: ``camera_vertical`` and ``frame_number``.

- ``camera_vertical``: six key frames rendered from a real RGB-D frame (points forward-warped with their
  measured depth, missing depth filled from the nearest measured pixel) while the camera tilts up or down
  (a pure rotation about its x axis: the homography K R K^-1) or moves up or down (0.15-0.3 m along its own
  -y axis, with parallax), always with a small unrelated pan mixed in. Multiple choice among the four, and,
  on separate clips, the signed total tilt in degrees between the first and the last key frame (the
  horizontal field of view stated). Every view comes from the same renderer and the same crop, so
  artefacts tell nothing.
- ``frame_number``: a 32-frame clip of a pure rotation of a real photo whose motion changes at one frame
  (a pan that reverses, a tilt that reverses, a pan that becomes a tilt, ...); six of its frames are given
  with their absolute frame numbers (``inputs`` with ``indices``, and the numbers in the question text).
  Questions name frames by number: how the camera turned between frame A and frame B (A, B need not be
  key frames), and how many degrees it panned or tilted between two key frames.

Angles are those of a tripod head: the pan turns about the clip's vertical axis, the tilt raises the
optical axis. The ``frame_number`` questions are chosen so that this is also exactly the azimuth (pan) or
elevation (tilt) of the later key frame's optical axis in the earlier key frame's camera.

Conventions (as in :mod:`spatialclaw.benchmarks.devset.build`): pixels (x, y) from the top-left; camera frames
OpenCV (x right, y down, z forward); a pan to the right turns the optical axis towards +x, a tilt up
towards -y; angles in degrees, distances in metres.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from spatialclaw.benchmarks.devset.camera import render_moved, turn_view
from spatialclaw.benchmarks.devset.data import rgbd, rotation, save, small_frame

__all__ = ["CLIP_FRAMES", "TURN_CHOICES", "VERTICAL_CHOICES", "camera_vertical", "frame_number"]

VERTICAL_CHOICES = ["tilted up", "tilted down", "moved up", "moved down"]
TURN_CHOICES = ["panned left", "panned right", "tilted up", "tilted down"]
CLIP_FRAMES = 32  # frames of a frame_number source clip, numbered 0-31
KEY_FRAMES = 6

# camera_vertical: rows and columns dropped at each side of the 640x480 render, so that what the moved or
# turned camera sees beyond the photo never shows (a 6-degree half tilt moves the top row ~63 px).
_CROP_ROWS, _CROP_COLUMNS = 72, 64


# camera_vertical -----------------------------------------------------------------------------------
def _filled_depth(depth: np.ndarray) -> np.ndarray:
    """The depth map (metres) with every unmeasured pixel set to its nearest measured neighbour's depth."""
    nearest = ndimage.distance_transform_edt(depth <= 0, return_distances=False, return_indices=True)
    return np.asarray(depth[nearest[0], nearest[1]])


def _vertical_pose(k: int, tilt: float, pan: float, lift: float) -> tuple[np.ndarray, np.ndarray]:
    """Key frame ``k``'s camera axes (in source-camera coordinates) and its centre (metres, source axes):
    the motion runs linearly from -1/2 to +1/2 of the totals over the six key frames."""
    fraction = k / (KEY_FRAMES - 1) - 0.5
    axes = rotation("y", fraction * pan) @ rotation("x", fraction * tilt)
    return axes, np.array([0.0, -fraction * lift, 0.0])  # up is -y


def _vertical_clip(
    source: tuple[np.ndarray, np.ndarray, np.ndarray], tilt: float, pan: float, lift: float, out: Path, stem: str
) -> list[str]:
    rgb, depth, K = source
    names = []
    for k in range(KEY_FRAMES):
        axes, centre = _vertical_pose(k, tilt, pan, lift)
        view = render_moved(rgb, depth, K, centre, axes)[_CROP_ROWS:-_CROP_ROWS, _CROP_COLUMNS:-_CROP_COLUMNS]
        names.append(save(small_frame(view), out / f"{stem}_{k}.png"))
    return names


def _hfov_deg(rgb: np.ndarray, K: np.ndarray) -> float:
    """Horizontal field of view (degrees) of the cropped key frames."""
    return math.degrees(2 * math.atan((rgb.shape[1] - 2 * _CROP_COLUMNS) / 2 / K[0, 0]))


def _relative_tilt(tilt: float, pan: float) -> float:
    """Elevation (degrees, + up) of the last key frame's optical axis in the first key frame's camera."""
    first, _ = _vertical_pose(0, tilt, pan, 0.0)
    last, _ = _vertical_pose(KEY_FRAMES - 1, tilt, pan, 0.0)
    axis = first.T @ last @ np.array([0.0, 0.0, 1.0])
    return math.degrees(math.asin(float(-axis[1])))


def camera_vertical(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Tilts and vertical moves with a small pan mixed in: which one (multiple choice), and on other clips
    the signed total tilt in degrees."""
    sources = {name: rgbd(root, name) for name in ("redwood", "tum", "nyu", "sun")}
    sources = {name: (rgb, _filled_depth(depth), K) for name, (rgb, depth, K) in sources.items()}
    plan = [
        ("redwood", "tilted up"),
        ("tum", "moved down"),
        ("nyu", "tilted down"),
        ("sun", "moved up"),
        ("redwood", "moved down"),
        ("tum", "tilted up"),
    ]
    records: list[dict[str, Any]] = []
    for number, (source, label) in enumerate(plan):
        verb, way = label.split()
        sign = 1.0 if way == "up" else -1.0
        pan = float(rng.choice([-1, 1]) * rng.uniform(1.0, 3.0))
        tilt = sign * float(rng.uniform(5.0, 10.0)) if verb == "tilted" else 0.0
        lift = sign * float(rng.uniform(0.15, 0.3)) if verb == "moved" else 0.0
        names = _vertical_clip(sources[source], tilt, pan, lift, out, f"vertical{number}")
        motion = (
            f"pure rotation: tilt {tilt:+.2f} deg (+ up) and pan {pan:+.2f} deg (+ right), first to last key frame"
            if verb == "tilted"
            else f"translation {abs(lift):.3f} m {way} along the camera's own -y axis (+ a pan of {pan:+.2f} deg)"
        )
        records.append(
            {
                "task_id": f"camera_vertical-{number}",
                "category": "camera_vertical",
                "images": names,
                "question": (
                    "The six images are key frames of one camera, in order. Apart from any sideways turn, how did "
                    "the camera move vertically from the first to the last key frame?"
                ),
                "choices": VERTICAL_CHOICES,
                "answer": chr(ord("A") + VERTICAL_CHOICES.index(label)),
                "meta": {
                    "source": source,
                    "motion": motion,
                    "tilt_deg": round(tilt, 2),
                    "pan_deg": round(pan, 2),
                    "lift_m": round(lift, 3),
                    "hfov_deg": round(_hfov_deg(*sources[source][::2]), 2),
                    "how": "rendered from the RGB-D frame by forward warping with measured depth, cropped",
                },
            }
        )
    for number, source in enumerate(("sun", "nyu", "redwood", "tum"), start=len(plan)):
        rgb, _, K = sources[source]
        pan = float(rng.choice([-1, 1]) * rng.uniform(1.0, 3.0))
        tilt = float(rng.choice([-1, 1]) * rng.uniform(6.0, 12.0))
        names = _vertical_clip(sources[source], tilt, pan, 0.0, out, f"vertical{number}")
        hfov = _hfov_deg(rgb, K)
        answer = _relative_tilt(tilt, pan)
        records.append(
            {
                "task_id": f"camera_vertical-{number}-tilt",
                "category": "camera_vertical",
                "images": names,
                "question": (
                    f"The six images are key frames of one camera, in order; its horizontal field of view is "
                    f"{hfov:.0f} degrees and it only rotated. By how many degrees did the camera tilt from the "
                    "first to the last key frame? Answer positive for a tilt upwards, negative downwards."
                ),
                "answer": round(answer, 2),
                "answer_type": "number",
                "metric": "mra",
                "meta": {
                    "source": source,
                    "motion": "pure rotation (homography K R K^-1), rendered like the vertical moves",
                    "tilt_deg": round(tilt, 2),
                    "pan_deg": round(pan, 2),
                    "hfov_deg": round(hfov, 2),
                    "answer_definition": "elevation of the last key frame's optical axis in the first key frame's "
                    "camera, degrees, + up",
                },
            }
        )
    return records


# frame_number --------------------------------------------------------------------------------------
def _motion_table(axes: tuple[str, str], rates: tuple[float, float], change: int) -> dict[str, list[float]]:
    """Pan and tilt (degrees, relative to frame 0) of every frame: ``axes[0]`` turns at ``rates[0]`` degrees
    per frame up to frame ``change``, then ``axes[1]`` at ``rates[1]``."""
    table = {"pan": [0.0] * CLIP_FRAMES, "tilt": [0.0] * CLIP_FRAMES}
    for frame in range(1, CLIP_FRAMES):
        for name in table:
            table[name][frame] = table[name][frame - 1]
        segment = 0 if frame <= change else 1
        table[axes[segment]][frame] += rates[segment]
    return table


def _key_frames(rng: np.random.Generator, change: int) -> list[int]:
    """Six increasing frame numbers, at least 3 apart, two or more on each side of ``change``."""
    while True:
        middle = sorted(int(i) for i in rng.choice(np.arange(4, CLIP_FRAMES - 4), KEY_FRAMES - 2, replace=False))
        keys = [int(rng.integers(0, 3)), *middle, int(rng.integers(CLIP_FRAMES - 3, CLIP_FRAMES))]
        gaps_ok = all(b - a >= 3 for a, b in itertools.pairwise(keys))
        if gaps_ok and sum(k < change for k in keys) >= 2 and sum(k > change for k in keys) >= 2:
            return keys


def _turn_label(axis: str, rate: float) -> str:
    if axis == "pan":
        return "panned right" if rate > 0 else "panned left"
    return "tilted up" if rate > 0 else "tilted down"


def frame_number(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Clips whose motion changes at one frame; questions name frames by their number in the clip."""
    size = (480, 360)
    K_view = np.array([[600.0, 0, 239.5], [0, 600.0, 179.5], [0, 0, 1]])
    hfov = math.degrees(2 * math.atan(size[0] / 2 / K_view[0, 0]))
    plan = [("redwood", ("pan", "pan")), ("tum", ("tilt", "tilt")), ("nyu", ("pan", "tilt")), ("sun", ("tilt", "pan"))]
    records: list[dict[str, Any]] = []
    for number, (source, axes) in enumerate(plan):
        rgb, _, K = rgbd(root, source)
        change = int(rng.integers(12, 20))
        first_rate = float(rng.choice([-1, 1]) * rng.uniform(0.4, 0.8))
        second_sign = -math.copysign(1.0, first_rate) if axes[0] == axes[1] else float(rng.choice([-1, 1]))
        second_rate = second_sign * float(rng.uniform(0.4, 0.8))
        table = _motion_table(axes, (first_rate, second_rate), change)
        keys = _key_frames(rng, change)
        # Centre the excursion on the photo; relative rotations between frames do not depend on it.
        centre = rotation("y", -(max(table["pan"]) + min(table["pan"])) / 2) @ rotation(
            "x", -(max(table["tilt"]) + min(table["tilt"])) / 2
        )
        names = []
        for k in keys:
            axes_k = centre @ rotation("y", table["pan"][k]) @ rotation("x", table["tilt"][k])
            names.append(
                save(small_frame(turn_view(rgb, K, K_view, axes_k, size)), out / f"frames{number}_{k:02d}.png")
            )
        listed = ", ".join(str(k) for k in keys[:-1]) + f" and {keys[-1]}"
        intro = (
            f"The images are key frames of a {CLIP_FRAMES}-frame video (frames numbered 0-{CLIP_FRAMES - 1}; "
            f"the images are frames {listed}, in order)."
        )
        meta: dict[str, Any] = {
            "source": source,
            "motion": f"pure rotation: {axes[0]} {first_rate:+.3f} deg/frame up to frame {change}, then "
            f"{axes[1]} {second_rate:+.3f} deg/frame (pan + right, tilt + up)",
            "change_frame": change,
            "key_frames": keys,
            "hfov_deg": round(hfov, 2),
            "pan_deg": [round(v, 4) for v in table["pan"]],
            "tilt_deg": [round(v, 4) for v in table["tilt"]],
        }
        inputs = [{"kind": "images", "paths": names, "indices": keys}]
        segment = int(rng.integers(0, 2))
        start, end = (0, change) if segment == 0 else (change, CLIP_FRAMES - 1)
        label = _turn_label(axes[segment], (first_rate, second_rate)[segment])
        records.append(
            {
                "task_id": f"frame_number-{number}-direction",
                "category": "frame_number",
                "inputs": inputs,
                "question": f"{intro} Between frame {start} and frame {end}, how did the camera turn?",
                "choices": TURN_CHOICES,
                "answer": chr(ord("A") + TURN_CHOICES.index(label)),
                "meta": {**meta, "asked_frames": [start, end]},
            }
        )
        before = [k for k in keys if k < change]
        after = [k for k in keys if k > change]
        asked = axes[0]
        if axes == ("tilt", "pan"):  # both frames while it tilts: the tilt is then exactly the elevation
            pairs = [(a, b) for a in before for b in before if a < b]
        else:  # across the change: a reversal nets out; a pan followed by a tilt keeps only the pan
            pairs = [(a, b) for a in before for b in after]
        # a net angle of a degree or two would make the relative-accuracy score a lottery
        pairs = [(a, b) for a, b in pairs if abs(table[asked][b] - table[asked][a]) >= 3] or pairs
        a, b = pairs[int(rng.integers(0, len(pairs)))]
        answer = table[asked][b] - table[asked][a]
        sense = "a pan to the right, negative to the left" if asked == "pan" else "a tilt upwards, negative downwards"
        records.append(
            {
                "task_id": f"frame_number-{number}-{asked}",
                "category": "frame_number",
                "inputs": inputs,
                "question": f"{intro} The camera's horizontal field of view is {hfov:.0f} degrees and it only "
                f"rotates. By how many degrees did the camera {asked} between frame {a} and frame {b}? Answer "
                f"positive for {sense}.",
                "answer": round(answer, 2),
                "answer_type": "number",
                "metric": "mra",
                "meta": {**meta, "asked_frames": [a, b], "asked_axis": asked},
            }
        )
    return records
