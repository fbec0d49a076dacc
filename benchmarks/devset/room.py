"""Dev-set question classes over rendered rooms seen from 4-6 views 60-120 degrees apart: ``room_perspective``
and ``room_compass``.

Each room (:mod:`spatialclaw.benchmarks.devset.render`: walls and floor textured with crops of the real photos,
a door, a window and 5-7 nameable pieces of furniture) is photographed from 4-6 places, the camera 1.2-1.6 m
high, level (the first room of each class) or tilted down 3-10 degrees, consecutive headings 60-120 degrees
apart and turning the same way; every piece of furniture is seen in at least one view and each view shows at
least two landmarks (furniture, door or window, their centres in view) that the views before it show. The
answers come exactly from the layout:

- ``room_perspective``: standing at X facing Y, is Z front-left, front-right, back-left or back-right (object
  centres on the floor; an item within 20 degrees of a quadrant boundary is not generated), and the net
  turn of the camera about the vertical between two images (degrees, right positive, in (-180, 180]).
- ``room_compass``: image 1's camera faces north (its optical axis on the floor); the eight-way compass
  direction of one object from another, or the way the window faces / the wall the door is in (its outward
  normal); an item within 10 degrees of a sector boundary is not generated (image 1's heading is within 11
  degrees of a multiple of 45 from the walls, so that every wall lies squarely in a sector).

Beside each view's PNG: its depth (uint16 millimetres along the optical axis) and one JSON of the cameras
(intrinsics, camera-to-world poses), named in ``meta``; a question shows only the RGB images.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from PIL import Image

from spatialclaw.benchmarks.devset.data import save
from spatialclaw.benchmarks.devset.render import (
    PHOTOS,
    SURFACES,
    WALLS,
    Opening,
    Room,
    Solid,
    View,
    heading_of,
    look_pose,
    photo_crop,
    project,
    render,
    trace,
)

__all__ = ["COMPASS", "FURNITURE", "QUADRANTS", "make_room", "make_views", "room_compass", "room_perspective"]

QUADRANTS = ["front-left", "front-right", "back-left", "back-right"]
COMPASS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
#: name, shape, (x, y, z) size in metres (a cylinder's diameter twice), colour RGB.
FURNITURE: tuple[tuple[str, Literal["box", "cylinder"], tuple[float, float, float], tuple[int, int, int]], ...] = (
    ("red sofa", "box", (1.9, 0.85, 0.8), (185, 35, 35)),
    ("blue table", "box", (1.2, 0.7, 0.75), (40, 75, 200)),
    ("green plant", "cylinder", (0.5, 0.5, 1.1), (45, 145, 50)),
    ("yellow lamp", "cylinder", (0.26, 0.26, 1.6), (240, 200, 40)),
    ("white cabinet", "box", (0.9, 0.45, 1.3), (238, 238, 232)),
    ("black chair", "box", (0.5, 0.5, 0.9), (28, 28, 30)),
    ("purple stool", "cylinder", (0.6, 0.6, 0.45), (125, 45, 160)),
)
WIDTH, HEIGHT = 224, 168
MIN_PIXELS = 80  # an object counts as seen with at least this many pixels in a view


def _wrap(angle_deg: float) -> float:
    """Angle in (-180, 180] degrees."""
    return -((-angle_deg + 180.0) % 360.0 - 180.0)


def _gap(a: Solid, b: Solid) -> float:
    """Floor clearance in metres between two footprints (their bounding rectangles; < 0: overlapping)."""
    (alo, ahi), (blo, bhi) = a.bounds(), b.bounds()
    return float(max(blo[0] - ahi[0], alo[0] - bhi[0], blo[1] - ahi[1], alo[1] - bhi[1]))


def make_room(root: Path, rng: np.random.Generator) -> Room:
    """A random room 5-7 m x 4-6 m x 2.6 m: textures from five different real photos, a door and a window in
    two different walls, 5-7 pieces of furniture at least 0.45 m apart and clear of the door."""
    size = (float(rng.uniform(5, 7)), float(rng.uniform(4, 6)), 2.6)
    photos = rng.choice(len(PHOTOS), 5, replace=False)
    textures = {"floor": photo_crop(root, PHOTOS[photos[0]], size[0] / size[1], rng, (0.55, 0.4, 0.25))}
    for photo, wall in zip(photos[1:], WALLS, strict=True):
        length = size[1 - WALLS[wall][0]]
        textures[wall] = photo_crop(root, PHOTOS[photo], length / size[2], rng, (0.92, 0.89, 0.82))
    door_wall, window_wall = (list(WALLS)[k] for k in rng.choice(4, 2, replace=False))
    openings = []
    for opening in (
        Opening("door", door_wall, 0.0, 0.9, 0.0, 2.05),
        Opening("window", window_wall, 0.0, 1.4, 0.9, 2.1),
    ):
        room_half = size[1 - WALLS[opening.wall][0]] / 2 - 0.3 - opening.width / 2
        openings.append(replace(opening, along=float(rng.uniform(-room_half, room_half))))
    door = openings[0].centre(size)
    chosen = [int(k) for k in sorted(rng.choice(len(FURNITURE), int(rng.integers(5, 8)), replace=False))]
    solids: list[Solid] = []
    while len(solids) < len(chosen):  # place them all, else start the placement again
        solids = []
        for index in chosen:
            name, kind, base, colour = FURNITURE[index]
            dims = [float(v) for v in np.array(base) * rng.uniform(0.9, 1.1, 3)]
            if kind == "cylinder":
                dims[1] = dims[0]
            elif rng.random() < 0.5:
                dims[0], dims[1] = dims[1], dims[0]
            for _ in range(200):
                x, y = (float(rng.uniform(-0.75, 0.75)) * (size[a] / 2 - 0.2 - dims[a] / 2) for a in (0, 1))
                solid = Solid(name, kind, (x, y, dims[2] / 2), (dims[0], dims[1], dims[2]), colour)
                if np.hypot(x - door[0], y - door[1]) - max(dims[:2]) / 2 >= 1.0 and all(
                    _gap(solid, other) >= 0.45 for other in solids
                ):
                    solids.append(solid)
                    break
            else:
                break
    return Room(size, textures, tuple(openings), tuple(solids))


def landmarks(room: Room, K: np.ndarray, pose: np.ndarray, label: np.ndarray) -> dict[str, tuple[float, float]]:
    """Name -> (x, y) pixel of the centre of each object (door, window) that the view shows: its centre
    projects inside the picture and at least ``MIN_PIXELS`` / 2 of its pixels are in view."""
    names = [s.name for s in room.solids] + [o.name for o in room.openings]
    centres = np.array([s.centre for s in room.solids] + [o.centre(room.size) for o in room.openings])
    pixels, z = project(K, pose, centres)
    h, w = label.shape
    found = {}
    for name, (x, y), depth in zip(names, pixels, z, strict=True):
        col, row = round(float(x)), round(float(y))
        visible = np.count_nonzero(label == room.labels.index(name)) >= MIN_PIXELS / 2
        if depth > 0 and 2 <= col < w - 2 and 2 <= row < h - 2 and visible:
            found[name] = (float(x), float(y))
    return found


def _camera(room: Room, heading: float, pitch: float, rng: np.random.Generator) -> np.ndarray | None:
    """A pose facing ``heading``, backed off toward the walls from near the middle of the furniture, at least
    1.2 m from that point and 0.35 m clear of every piece of furniture; None when none is found."""
    half = np.array(room.size[:2]) / 2
    forward = np.array([math.sin(math.radians(heading)), math.cos(math.radians(heading))])
    middle = np.mean([s.centre[:2] for s in room.solids], axis=0)
    for _ in range(100):
        target = middle + rng.uniform(-0.3, 0.3, 2)
        reach = min(
            (half[a] - math.copysign(1, -forward[a]) * target[a]) / abs(forward[a])
            for a in (0, 1)
            if abs(forward[a]) > 1e-6
        )
        back = float(rng.uniform(0.5, 1.0)) * (reach - 0.35)
        spot = target - back * forward
        if back >= 1.2 and all(_clear(s, spot) for s in room.solids):
            return look_pose(np.array([spot[0], spot[1], rng.uniform(1.2, 1.6)]), heading, pitch)
    return None


def _clear(solid: Solid, spot: np.ndarray) -> bool:
    lo, hi = solid.bounds()
    return bool(np.linalg.norm(np.maximum(np.maximum(lo[:2] - spot, spot - hi[:2]), 0)) > 0.35)


def make_views(
    room: Room, rng: np.random.Generator, level: bool, aligned: bool = False
) -> tuple[float, list[np.ndarray]] | None:
    """(hfov in degrees, 4-6 camera-to-world poses) for ``room``, or None when no arrangement passes the checks
    (every object seen in a view, each view sharing two landmarks with the views before it, no object
    filling a third of a view). ``aligned``: the first heading is within 11 degrees of a multiple of 45, so
    that with image 1 facing north every wall's outward normal is at least 11.5 degrees inside a compass sector."""
    count = int(rng.integers(4, 7))
    hfov = float(rng.integers(60, 76))
    for _ in range(30):
        steps = rng.uniform(60, min(120, 330 / (count - 1)), count - 1) * rng.choice([-1, 1])
        first = 45.0 * rng.integers(0, 8) + rng.uniform(-11, 11) if aligned else rng.uniform(0, 360)
        headings = (first + np.concatenate([[0], np.cumsum(steps)])) % 360
        pitches = np.zeros(count) if level else rng.uniform(-10, -3, count)
        poses = [_camera(room, float(h), float(p), rng) for h, p in zip(headings, pitches, strict=True)]
        if any(p is None for p in poses):
            continue
        traced = [trace(room, p, hfov, WIDTH, HEIGHT) for p in poses if p is not None]
        seen = [
            landmarks(room, K, pose, label)
            for (K, _, label), pose in zip(traced, poses, strict=True)
            if pose is not None
        ]
        counts = np.array(
            [[np.sum(label == k) for k in range(len(SURFACES), len(room.labels))] for _, _, label in traced]
        )
        if (
            counts.max(axis=0).min() >= MIN_PIXELS
            and counts.max() < WIDTH * HEIGHT / 3
            and all(len(set(seen[k]).intersection(set().union(*seen[:k]))) >= 2 for k in range(1, count))
        ):
            return hfov, [p for p in poses if p is not None]
    return None


# writing -------------------------------------------------------------------------------------------
def _shoot(
    root: Path, out: Path, prefix: str, rng: np.random.Generator, level: bool, aligned: bool = False
) -> dict[str, Any]:
    """Make a room with views that pass the checks, write its images, depths and cameras; returns the room's
    meta (layout, cameras, files) with ``images`` (the RGB file names in order)."""
    while True:
        room = make_room(root, rng)
        made = make_views(room, rng, level, aligned)
        if made is not None:
            break
    hfov, poses = made
    views: list[View] = [render(room, pose, hfov, WIDTH, HEIGHT) for pose in poses]
    images, cameras = [], []
    for k, view in enumerate(views, start=1):
        marks = landmarks(room, view.K, view.pose, view.label)
        image = save(view.rgb, out / f"{prefix}_view{k}.png")
        depth = f"{prefix}_view{k}_depth.png"
        Image.fromarray(np.round(view.depth * 1000).astype(np.uint16)).save(out / depth)
        images.append(image)
        cameras.append(
            {
                "image": image,
                "depth": depth,
                "pose_c2w": np.round(view.pose, 6).tolist(),
                "heading_deg": round(heading_of(view.pose), 4),
                "pitch_deg": round(math.degrees(math.asin(float(view.pose[2, 2]))), 4),
                "pixels": {n: int((view.label == i).sum()) for i, n in enumerate(room.labels) if i >= len(SURFACES)},
                "landmark_pixels": {n: [round(x, 2), round(y, 2)] for n, (x, y) in marks.items()},
                "landmark_centre_hidden": [
                    n for n, (x, y) in marks.items() if room.labels[view.label[round(y), round(x)]] != n
                ],
            }
        )
    K = np.round(views[0].K, 6).tolist()
    files = {"cameras": f"{prefix}_cameras.json", "depth": "uint16 millimetres along the optical axis (OpenCV z)"}
    (out / files["cameras"]).write_text(json.dumps({"hfov_deg": hfov, "K": K, "views": cameras}, indent=1))
    openings = [
        {**asdict(o), "centre": o.centre(room.size).tolist(), "outward_heading_deg": o.outward_heading()}
        for o in room.openings
    ]
    return {
        "room_frame": "metres, +Z up, floor z = 0, walls at x = ±width/2 and y = ±depth/2; poses camera-to-world, "
        "OpenCV camera axes; headings degrees clockwise from +Y seen from above; object centre and size (x, y, z)",
        "room_size_m": list(room.size),
        "objects": [asdict(s) for s in room.solids],
        "openings": openings,
        "hfov_deg": hfov,
        "K": K,
        "cameras": cameras,
        "files": files,
        "images": images,
    }


def _intro(meta: dict[str, Any]) -> str:
    return (
        f"The {len(meta['images'])} images show one room, taken in order from different places in it by a camera "
        f"with a horizontal field of view of {meta['hfov_deg']:g} degrees."
    )


def _ground(meta: dict[str, Any], name: str) -> np.ndarray:
    """(x, y) metres of an object's centre on the floor."""
    return np.array(next(o["centre"][:2] for o in meta["objects"] if o["name"] == name))


def _record(task_id: str, meta: dict[str, Any], question: str, answer: Any, how: str, **rest: Any) -> dict[str, Any]:
    """One dev-set item; a multiple-choice one when ``choices`` is given (``answer`` then its option text)."""
    if "choices" in rest:
        answer, rest = chr(ord("A") + rest["choices"].index(answer)), {**rest, "answer_type": "multiple_choice"}
    shared = {k: v for k, v in meta.items() if k != "images"}
    head = {"task_id": task_id, "category": task_id.split("-")[0], "images": meta["images"], "question": question}
    return {**head, "answer": answer, **rest, "meta": {**shared, "answer_from": how}}


# room_perspective ----------------------------------------------------------------------------------
def room_perspective(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Three rooms (the first with level cameras): two 'standing at X facing Y' quadrant questions and one
    net-turn question each."""
    records: list[dict[str, Any]] = []
    for number in range(3):
        meta = _shoot(root, out, f"room_perspective{number}", rng, level=number == 0)
        names = [o["name"] for o in meta["objects"]]
        asked = 0
        for _ in range(2000):
            x, y, z = (names[k] for k in rng.choice(len(names), 3, replace=False))
            facing, to_z = _ground(meta, y) - _ground(meta, x), _ground(meta, z) - _ground(meta, x)
            if np.linalg.norm(facing) < 0.8 or np.linalg.norm(to_z) < 0.6:
                continue
            # clockwise (to the right) from facing to to_z, seen from above
            angle = math.degrees(math.atan2(facing[1] * to_z[0] - facing[0] * to_z[1], facing @ to_z))
            if not 20 <= abs(angle) % 90 <= 70:
                continue
            side = ("front-" if abs(angle) < 90 else "back-") + ("right" if angle > 0 else "left")
            if side != QUADRANTS[len(records) % 4]:
                continue
            records.append(
                _record(
                    f"room_perspective-{number}-{asked}",
                    meta,
                    _intro(meta)
                    + f" Imagine you stand at the {x}, facing the {y}. Is the {z} front-left, front-right, back-left "
                    "or back-right of you?",
                    side,
                    f"object centres on the floor: the {z} is {angle:.1f} deg clockwise (right) of the "
                    f"direction from the {x} to the {y}",
                    choices=QUADRANTS,
                )
            )
            asked += 1
            if asked == 2:
                break
        poses = [np.array(c["pose_c2w"]) for c in meta["cameras"]]
        for a, b in ((0, 3), (0, 1), (1, 3), (0, 2)):
            turn = _wrap(heading_of(poses[b]) - heading_of(poses[a]))
            if 15 <= abs(turn) <= 165:
                break
        records.append(
            _record(
                f"room_perspective-{number}-turn",
                meta,
                _intro(meta)
                + f" By how many degrees did the camera turn about the vertical axis from image {a + 1} to image "
                f"{b + 1}? Give the net turn between -180 and 180: positive to the right, negative to the left.",
                round(turn, 2),
                f"heading of image {b + 1} minus heading of image {a + 1} (optical axes on the floor, clockwise from "
                "above), wrapped to (-180, 180]",
                answer_type="number",
                metric="mra",
            )
        )
    return records


# room_compass --------------------------------------------------------------------------------------
def _sector(bearing: float) -> tuple[str, float]:
    """(eight-way word, degrees from the nearest sector boundary) of a compass bearing in degrees."""
    k = round(bearing / 45.0) % 8
    return COMPASS[k], 22.5 - abs(_wrap(bearing - 45.0 * k))


def room_compass(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Three rooms (the first with level cameras); north is image 1's viewing direction. Two questions on the
    direction of one object from another and one on the window's or door's wall, per room."""
    records: list[dict[str, Any]] = []
    choices = f"({', '.join(COMPASS)})"
    for number in range(3):
        meta = _shoot(root, out, f"room_compass{number}", rng, level=number == 0, aligned=True)
        north = meta["cameras"][0]["heading_deg"]
        intro = _intro(meta) + " In image 1 the camera faces north."
        names = [o["name"] for o in meta["objects"]]
        used, pairs = {r["answer"] for r in records}, set[frozenset[str]]()
        for attempt in range(2000):
            x, z = (names[k] for k in rng.choice(len(names), 2, replace=False))
            offset = _ground(meta, z) - _ground(meta, x)
            bearing = (math.degrees(math.atan2(offset[0], offset[1])) - north) % 360
            word, margin = _sector(bearing)
            letter = chr(ord("A") + COMPASS.index(word))
            if np.linalg.norm(offset) < 0.8 or margin < 10 or {x, z} in pairs or (letter in used and attempt < 1000):
                continue
            records.append(
                _record(
                    f"room_compass-{number}-{len(pairs)}",
                    meta,
                    intro + f" In which compass direction {choices} is the {z} from the {x}?",
                    word,
                    f"object centres on the floor: the {z} is at compass bearing {bearing:.1f} deg from the {x} "
                    f"(north = image 1's heading {north:.2f} deg)",
                    choices=COMPASS,
                )
            )
            used.add(letter)
            pairs.add(frozenset((x, z)))
            if len(pairs) == 2:
                break
        openings = {o["name"]: o for o in meta["openings"]}
        name = "window" if number % 2 == 0 else "door"
        bearing = (openings[name]["outward_heading_deg"] - north) % 360
        word, _ = _sector(bearing)  # at least 11.5 degrees inside its sector (the views are aligned)
        question = (
            f" Which compass direction {choices} does the window face, i.e. which way do you look when you look "
            "out of it?"
            if name == "window"
            else f" The door is in one of the walls. In which compass direction {choices} from the middle of the room "
            "is that wall?"
        )
        records.append(
            _record(
                f"room_compass-{number}-{name}",
                meta,
                intro + question,
                word,
                f"the {name}'s wall ({openings[name]['wall']}) has its outward normal at compass bearing {bearing:.1f} "
                f"deg (north = image 1's heading {north:.2f} deg)",
                choices=COMPASS,
            )
        )
    return records
