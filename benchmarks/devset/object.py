"""Dev-set question class ``object_motion``: a real photographed toy dinosaur walking through a real room in
clips of 6 key frames 224 px wide, some played backwards or mirrored, so it faces one way and moves the other.

How a clip is made (every number exact from construction):

- The object: the ceramic stegosaurus of ``multiview-dino`` seen from the side (``dino0003.png`` head to
  the right, ``dino0029.png`` head to the left, once the photo is turned upright; checked by eye), cut
  out of its black background with a threshold mask cleaned by morphology, alpha-feathered, brightness
  evened.
- The room: a real RGB-D colour frame (redwood, tum, nyu, sun, 640x480). The dinosaur stands on the floor
  (the floor plane found by RANSAC in the measured depth gives the horizon row); its height in pixels is
  proportional to how far its base lies below the horizon, so a dinosaur that approaches grows and its
  base moves down the image. A soft contact shadow sits under its base.
- The camera: a view rendered from the photo by a pure rotation (the homography K R K_view^-1; no
  parallax, so it is exactly what a camera turning about its centre sees), tilted down 6.5-8 degrees
  towards the floor, 448x336 at focal 640 px, shrunk to key frames of 224x168 (focal 320 px, 38.6 degree
  horizontal field of view). It is static, or it pans (turns about its own vertical axis, no tilt or
  roll between frames) to follow the dinosaur, which stays near the middle while the room slides by.
- The motion is made head first (a walk forwards), sideways and/or towards or away from the camera;
  then some clips are played backwards (key frame order reversed: it now walks tail first, the other
  way, and the other way in depth) or mirrored (every frame flipped left-right: its facing and its
  sideways motion both flip, walking forwards stays forwards).

Questions (multiple choice or yes/no, answers balanced): forwards or backwards; left or right relative to
the room (as seen in the images); towards or away from the camera; does the camera pan. ``meta`` says how
each clip was made, as seen in the final images: the photos, the dinosaur's facing, the per-frame object
box in key-frame pixels (x0, y0, x1, y1), its base in the room photo (half scale, mirrored with the clip),
the camera's pan per frame in degrees relative to the first frame (> 0: turned right), its tilt, focal
length and field of view, reversed, mirrored, and the answers in words.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from spatialclaw.benchmarks.devset.data import rgbd, rotation, save, small_frame

__all__ = ["QUESTIONS", "VIEWS", "dino_cutout", "object_motion"]

#: Side views of the dinosaur and where its head points once the photo is turned upright.
VIEWS = {"dino0003.png": "right", "dino0029.png": "left"}

VIEW = (448, 336)  # the camera's view, rendered at twice the key frames' size (224 x 168)
VIEW_FOCAL = 640.0  # its focal length in pixels at that size (key frames: 320 px, 38.6 degree field of view)
_INTRO = "The six images are key frames of one video clip, in time order. "

#: question kind -> (question text, choices or None for yes/no)
QUESTIONS: dict[str, tuple[str, list[str] | None]] = {
    "walking": (
        "Is the toy dinosaur walking forwards (the way its head points) or backwards (tail first)?",
        ["forwards (head first)", "backwards (tail first)"],
    ),
    "room": (
        "Relative to the room, does the toy dinosaur move left or right (as seen in the images)?",
        ["left", "right"],
    ),
    "depth": (
        "Does the toy dinosaur come towards the camera or move away from it?",
        ["towards the camera", "away from the camera"],
    ),
    "pan": ("Does the camera pan while the toy dinosaur moves?", None),
}


@dataclass(frozen=True)
class _Stage:
    """Where the dinosaur can stand in one photo (photo pixels, 640x480)."""

    photo: str
    horizon_y: float  # the floor's vanishing row, from a RANSAC floor plane in the measured depth (fit once)
    size_per_px: float  # dinosaur height per pixel its base lies below the horizon (one world size)
    walk_y: float  # base row for sideways walks
    far_y: float  # base rows for walks towards / away from the camera
    near_y: float
    centre_x: float  # middle of a sideways walk (the floor is free on both sides of it)
    depth_x: float  # middle of a walk in depth
    sideways: tuple[float, float]  # sideways travel range of a walk in depth
    tilt_deg: float = 8.0  # the view looks down this much from the photo's axis, towards the floor


_STAGES = {
    "redwood": _Stage("rgbd-redwood/color/00000.jpg", 223.0, 0.5, 425.0, 350.0, 446.0, 262.0, 262.0, (60.0, 100.0)),
    "tum": _Stage("rgbd-single/TUM_color.png", -36.0, 0.2, 440.0, 390.0, 446.0, 320.0, 320.0, (60.0, 100.0)),
    "nyu": _Stage("rgbd-single/NYU_color.ppm", 95.0, 0.28, 432.0, 360.0, 446.0, 330.0, 470.0, (60.0, 90.0), 6.5),
    "sun": _Stage("rgbd-single/SUN_color.jpg", 209.0, 0.45, 432.0, 335.0, 446.0, 292.0, 292.0, (16.0, 30.0)),
}


@dataclass(frozen=True)
class _Clip:
    """One clip: made head first with ``depth`` (+1 approaching, -1 receding, 0 sideways only), then played
    ``backwards`` and/or ``mirrored``; ``asks`` the question kinds put to it."""

    stage: str
    view: str
    depth: int
    follow: bool
    backwards: bool
    mirrored: bool
    asks: tuple[str, ...]


# Every variant (as made, backwards, mirrored, both) with each camera; 16 questions, every answer of
# every kind equally often (the test checks the balance).
_PLAN = (
    _Clip("redwood", "dino0003.png", 0, False, False, False, ("walking", "pan")),
    _Clip("tum", "dino0003.png", 0, True, True, False, ("walking", "room", "pan")),
    _Clip("tum", "dino0029.png", 0, True, False, True, ("room",)),
    _Clip("redwood", "dino0003.png", 1, False, True, False, ("walking", "depth")),
    _Clip("sun", "dino0029.png", 1, False, False, False, ("depth", "pan")),
    _Clip("nyu", "dino0003.png", -1, False, False, True, ("room",)),
    _Clip("nyu", "dino0003.png", 0, True, True, True, ("room", "pan")),
    _Clip("redwood", "dino0029.png", -1, True, False, False, ("depth",)),
    _Clip("sun", "dino0003.png", -1, False, True, False, ("depth",)),
    _Clip("nyu", "dino0029.png", 1, False, False, True, ("walking",)),
)


# the object --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def dino_cutout(root: Path, view: str) -> tuple[np.ndarray, np.ndarray]:
    """The dinosaur of ``multiview-dino/<view>`` turned upright and cut out: (RGB float32 (h, w, 3) cropped
    to the object, alpha float32 (h, w) in 0-1, feathered over about 2 px). The black background goes by a
    threshold; opening and closing remove specks and close cracks; the largest component is the object;
    holes under 400 px are filled (the gaps between legs stay open); brightness is evened across views."""
    path = root / "multiview-dino" / view
    if not path.is_file():
        raise FileNotFoundError(f"dinosaur view {path} does not exist (views: {', '.join(VIEWS)})")
    photo = np.asarray(Image.open(path).convert("RGB").rotate(90, expand=True)).astype(np.float32)
    mask = (photo.max(axis=2) > 40).astype(np.uint8)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    mask = cv2.morphologyEx(cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel), cv2.MORPH_CLOSE, kernel)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    mask = (labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))).astype(np.uint8)
    count, holes, hole_stats, _ = cv2.connectedComponentsWithStats(1 - mask)
    for label in range(1, count):
        if hole_stats[label, cv2.CC_STAT_AREA] < 400:
            mask[holes == label] = 1
    ys, xs = np.nonzero(mask)
    box = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
    alpha = cv2.GaussianBlur(cv2.erode(mask.astype(np.float32), np.ones((3, 3), np.uint8)), (0, 0), 1.2)
    rgb = photo * (175.0 / float(np.median(photo.max(axis=2)[mask > 0])))
    return np.clip(rgb[box], 0, 255), np.clip(alpha[box], 0, 1)


def _composite(
    photo: np.ndarray, dino: tuple[np.ndarray, np.ndarray], base: tuple[float, float], height: float
) -> tuple[np.ndarray, np.ndarray]:
    """The photo with the dinosaur standing with its base's bottom centre at ``base`` (photo pixels), ``height``
    pixels tall, over a soft contact shadow: (image uint8 (H, W, 3), the dinosaur's alpha float32 (H, W))."""
    rgb, alpha = dino
    h = max(round(height), 8)
    w = max(round(h * rgb.shape[1] / rgb.shape[0]), 8)
    x0, y0 = round(base[0] - w / 2), round(base[1]) - h
    small_alpha = cv2.resize(alpha, (w, h), interpolation=cv2.INTER_AREA)
    canvas = photo.astype(np.float32)
    ys, xs = np.mgrid[0 : canvas.shape[0], 0 : canvas.shape[1]]
    spread = ((xs - base[0]) / (0.55 * w)) ** 2 + ((ys - (base[1] - 0.03 * h)) / (0.06 * h + 2)) ** 2
    canvas *= 1 - 0.5 * np.exp(-1.5 * spread)[..., None]
    region = canvas[y0 : y0 + h, x0 : x0 + w]
    region[:] = cv2.resize(rgb, (w, h), interpolation=cv2.INTER_AREA) * small_alpha[..., None] + region * (
        1 - small_alpha[..., None]
    )
    layer = np.zeros(canvas.shape[:2], np.float32)
    layer[y0 : y0 + h, x0 : x0 + w] = small_alpha
    return np.clip(canvas + 0.5, 0, 255).astype(np.uint8), layer


# one clip ----------------------------------------------------------------------------------------------
def _view_homography(K: np.ndarray, yaw_deg: float, tilt_deg: float) -> np.ndarray:
    """Photo pixel = H view pixel for the view tilted down by ``tilt_deg`` from the photo's axis, then
    panned right by ``yaw_deg`` about its own y axis (so two views differ by a pure pan), with the view's
    own intrinsics (focal ``VIEW_FOCAL``, centred)."""
    w, h = VIEW
    K_view = np.array([[VIEW_FOCAL, 0, (w - 1) / 2], [0, VIEW_FOCAL, (h - 1) / 2], [0, 0, 1.0]])
    H: np.ndarray = K @ rotation("x", -tilt_deg) @ rotation("y", yaw_deg) @ np.linalg.inv(K_view)
    return H


def _yaw_limit(K: np.ndarray, photo_size: tuple[int, int], tilt_deg: float) -> float:
    """The largest pan (degrees, either way) that keeps the whole view inside the photo."""
    w, h = VIEW
    edge = np.linspace(0, 1, 17)
    xs = np.r_[edge * (w - 1), np.full(17, w - 1.0), edge * (w - 1), np.zeros(17)]
    ys = np.r_[np.zeros(17), edge * (h - 1), np.full(17, h - 1.0), edge * (h - 1)]
    border = np.vstack([xs, ys, np.ones_like(xs)])
    for limit in np.arange(20.0, 0.0, -0.25):
        inside = True
        for yaw in (-limit, limit):
            p = _view_homography(K, float(yaw), tilt_deg) @ border
            x, y = p[0] / p[2], p[1] / p[2]
            inside &= bool(
                x.min() >= 0 and x.max() <= photo_size[0] - 1 and y.min() >= 0 and y.max() <= photo_size[1] - 1
            )
        if inside:
            return float(limit)
    raise ValueError("the view does not fit inside the photo even without a pan")


def _path(clip: _Clip, stage: _Stage, heading: int, rng: np.random.Generator) -> list[tuple[float, float]]:
    """Base bottom-centre per key frame (photo pixels), walked head first at an uneven pace."""
    steps = rng.uniform(0.8, 1.2, 5)
    t = np.r_[0.0, np.cumsum(steps) / steps.sum()]
    if clip.depth == 0:
        travel = rng.uniform(150, 175) if clip.follow else rng.uniform(130, 160)
        y = stage.walk_y + rng.uniform(-6, 6)
        return [(stage.centre_x + heading * travel * (f - 0.5), y) for f in t]
    travel = rng.uniform(*stage.sideways)
    # constant speed in depth: 1 / (the base's distance below the horizon) is proportional to the depth
    near, far = stage.near_y - stage.horizon_y, stage.far_y - stage.horizon_y
    inverse = np.interp(t, [0.0, 1.0], [1 / far, 1 / near] if clip.depth > 0 else [1 / near, 1 / far])
    rows = [stage.horizon_y + 1 / float(v) for v in np.atleast_1d(inverse)]
    return [(stage.depth_x + heading * travel * (float(f) - 0.5), r) for f, r in zip(t, rows, strict=True)]


def _yaws(
    clip: _Clip, path: list[tuple[float, float]], K: np.ndarray, limit: float, rng: np.random.Generator
) -> list[float]:
    """The camera's pan per key frame (degrees, > 0 right of the photo's axis): fixed on the middle of the
    walk, or turned towards the dinosaur (with a small lag) so it stays near the middle of the view."""

    def towards(x: float) -> float:
        return float(np.clip(np.degrees(np.arctan((x - K[0, 2]) / K[0, 0])), -limit, limit))

    if not clip.follow:
        fixed = towards((path[0][0] + path[-1][0]) / 2 + rng.uniform(-10, 10))
        return [fixed] * len(path)
    return [towards(x + rng.uniform(-8, 8)) for x, _ in path]


def _clip(root: Path, clip: _Clip, number: int, out: Path, rng: np.random.Generator) -> dict[str, Any]:
    """Render one clip, write its 6 key frames, and say how it was made (everything as seen in the images)."""
    stage = _STAGES[clip.stage]
    photo, _, K = rgbd(root, clip.stage)
    heading = 1 if VIEWS[clip.view] == "right" else -1
    path = _path(clip, stage, heading, rng)
    yaws = _yaws(clip, path, K, _yaw_limit(K, (photo.shape[1], photo.shape[0]), stage.tilt_deg), rng)
    dino = dino_cutout(root, clip.view)
    frames, boxes = [], []
    for (x, y), yaw in zip(path, yaws, strict=True):
        image, alpha = _composite(photo, dino, (x, y), stage.size_per_px * (y - stage.horizon_y))
        H = _view_homography(K, yaw, stage.tilt_deg)
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        view = cv2.warpPerspective(image, H, VIEW, flags=flags)
        rows, cols = np.nonzero(cv2.warpPerspective(alpha, H, VIEW, flags=flags) > 0.5)
        if cols.min() < 2 or rows.min() < 2 or cols.max() > VIEW[0] - 3 or rows.max() > VIEW[1] - 3:
            raise RuntimeError(f"object_motion clip {number}: the dinosaur leaves the view at yaw {yaw:.1f} deg")
        frames.append(np.asarray(small_frame(view)))
        boxes.append([cols.min() / 2, rows.min() / 2, (cols.max() + 1) / 2, (rows.max() + 1) / 2])
    pans = [yaw - yaws[0] for yaw in yaws]
    room = [[x / 2, y / 2] for x, y in path]  # the base in the photo, at half scale like the key frames
    facing, moves = heading, heading  # as made: head first
    if clip.backwards:
        frames, boxes, room, pans = frames[::-1], boxes[::-1], room[::-1], [p - pans[-1] for p in pans[::-1]]
        moves = -moves
    if clip.mirrored:
        width = frames[0].shape[1]
        frames = [np.ascontiguousarray(f[:, ::-1]) for f in frames]
        boxes = [[width - b[2], b[1], width - b[0], b[3]] for b in boxes]
        room = [[photo.shape[1] / 2 - r[0], r[1]] for r in room]
        pans = [-p for p in pans]
        facing, moves = -facing, -moves
    approaches = clip.depth * (-1 if clip.backwards else 1)
    names = [save(frame, out / f"object{number}_{k}.png") for k, frame in enumerate(frames)]
    side = {1: "right", -1: "left"}
    return {
        "images": names,
        "truth": {
            "walking": "forwards" if facing == moves else "backwards",
            "room": side[moves],
            "depth": {1: "towards the camera", -1: "away from the camera", 0: "none"}[approaches],
            "pan": "yes" if clip.follow else "no",
        },
        "meta": {
            "source_photo": stage.photo,
            "dino_view": f"multiview-dino/{clip.view}",
            "facing": side[facing],
            "camera": "pans to follow the dinosaur" if clip.follow else "static",
            "reversed": clip.backwards,
            "mirrored": clip.mirrored,
            "object_box_px": [[round(float(v), 1) for v in b] for b in boxes],
            "object_base_in_room_px": [[round(float(v), 1) for v in r] for r in room],
            "camera_pan_deg": [round(float(p), 2) for p in pans],
            "camera_tilt_deg": -stage.tilt_deg,
            "focal_px": VIEW_FOCAL / 2,
            "hfov_deg": round(float(np.degrees(2 * np.arctan(VIEW[0] / 2 / VIEW_FOCAL))), 2),
            "horizon_y_px": stage.horizon_y / 2,
        },
    }


def object_motion(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Clips of the dinosaur walking through real rooms, some played backwards or mirrored; 16 questions
    about its walk (forwards or backwards), its motion in the room, towards or away, and the camera."""
    records: list[dict[str, Any]] = []
    for number, clip in enumerate(_PLAN):
        made = _clip(root, clip, number, out, rng)
        truth = made.pop("truth")
        meta = {
            **made["meta"],
            "walking": truth["walking"],
            "moves_in_room": truth["room"],
            "depth_motion": truth["depth"],
        }
        for kind in clip.asks:
            text, choices = QUESTIONS[kind]
            if choices is None:
                answer, answer_type = truth[kind], "yes_no"
            else:
                index = next(i for i, c in enumerate(choices) if c.startswith(truth[kind]))
                answer, answer_type = chr(ord("A") + index), "multiple_choice"
            records.append(
                {
                    "task_id": f"object_motion-{number}-{kind}",
                    "category": "object_motion",
                    "images": made["images"],
                    "question": _INTRO + text,
                    "choices": choices,
                    "answer": answer,
                    "answer_type": answer_type,
                    "meta": meta,
                }
            )
    return records
