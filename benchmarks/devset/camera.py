"""Dev-set question classes about camera motion: ``camera_turn``, ``camera_translate`` and ``orbit_angle``.

- ``camera_turn``: two views of one real photo related by a pure camera rotation (a homography
  ``K R K^-1``) that pans and tilts at once by unrounded angles; the signed pan and the signed tilt in
  degrees (the question states the horizontal field of view).
- ``camera_translate``: two views rendered from a real RGB-D frame (points forward-warped with their
  measured depth, z-buffered, holes filled) by a small move (0.12-0.2 m forward, backward, left or
  right) or a small pan (2.5-4.5 degrees), which look alike at 224 px; multiple choice among turns,
  tilts and moves. A parallax test separates them; an eye mostly cannot.
- ``orbit_angle``: two real views of the Middlebury temple or dino; the angle in degrees between the two
  cameras' viewing directions, from the published calibration.

Conventions (as in :mod:`spatialclaw.benchmarks.devset.build`): pixels (x, y) from the top-left; camera frames
OpenCV (x right, y down, z forward); a pan to the right turns the optical axis towards +x, a tilt up
towards -y; angles in degrees, distances in metres or the unit the question names.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from spatialclaw.benchmarks.devset.data import rgbd, rotation, save, small_frame

__all__ = [
    "MOTION_CHOICES",
    "camera_translate",
    "camera_turn",
    "middlebury_cameras",
    "orbit_angle",
    "render_moved",
    "turn_view",
]

MOTION_CHOICES = [
    "turned left",
    "turned right",
    "tilted up",
    "tilted down",
    "moved forward",
    "moved backward",
    "moved left",
    "moved right",
]


# camera_turn ---------------------------------------------------------------------------------------
def turn_view(
    rgb: np.ndarray, K: np.ndarray, K_view: np.ndarray, R_cam: np.ndarray, size: tuple[int, int]
) -> np.ndarray:
    """The view of a camera at the source's centre, rotated by ``R_cam`` (its axes in source-camera
    coordinates), with intrinsics ``K_view``: source pixel = K R_cam K_view^-1 view pixel."""
    H = K @ R_cam @ np.linalg.inv(K_view)
    return cv2.warpPerspective(
        rgb, H, size, flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REFLECT
    )


def camera_turn(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """A compound rotation (pan and tilt at once, angles not rounded): the signed pan and tilt in degrees."""
    records = []
    sources = ("redwood", "tum", "nyu", "sun", "tum", "nyu")
    size = (480, 360)
    K_view = np.array([[560.0, 0, 239.5], [0, 560.0, 179.5], [0, 0, 1]])
    hfov = math.degrees(2 * math.atan(size[0] / 2 / K_view[0, 0]))
    for number, source in enumerate(sources):
        rgb, _, K = rgbd(root, source)
        pan = float(rng.choice([-1, 1]) * rng.uniform(3, 12))
        tilt = float(rng.choice([-1, 1]) * rng.uniform(1.5, 6))

        # A pan right turns the optical axis towards +x (rotation about +y, OpenCV axes); a tilt up
        # turns it towards -y (rotation about +x). Each view is half of the motion from the source.
        names = []
        for side, fraction in (("a", -0.5), ("b", 0.5)):
            turn = rotation("y", fraction * pan) @ rotation("x", fraction * tilt)
            names.append(save(small_frame(turn_view(rgb, K, K_view, turn, size)), out / f"turn{number}_{side}.png"))
        intro = (
            f"The two images are consecutive frames from one camera whose horizontal field of view is {hfov:.0f} "
            "degrees; the camera only rotated between them."
        )
        meta = {"source": source, "pan_deg": round(pan, 2), "tilt_deg": round(tilt, 2), "hfov_deg": round(hfov, 2)}
        records.append(
            {
                "task_id": f"camera_turn-{number}-pan",
                "category": "camera_turn",
                "images": names,
                "meta": meta,
                "question": intro
                + " By how many degrees did it pan? Answer positive for a pan to the right, negative to the left.",
                "answer": round(pan, 2),
                "answer_type": "number",
                "metric": "mra",
            }
        )
        records.append(
            {
                "task_id": f"camera_turn-{number}-tilt",
                "category": "camera_turn",
                "images": names,
                "meta": meta,
                "question": intro
                + " By how many degrees did it tilt? Answer positive for a tilt upwards, negative downwards.",
                "answer": round(tilt, 2),
                "answer_type": "number",
                "metric": "mra",
            }
        )
    return records


# camera_translate ----------------------------------------------------------------------------------
def render_moved(
    rgb: np.ndarray, depth: np.ndarray, K: np.ndarray, t: np.ndarray, R: np.ndarray | None = None
) -> np.ndarray:
    """The photo seen from a camera moved by ``t`` (metres, source-camera axes) and turned by ``R`` (its
    axes in source-camera coordinates): every pixel with measured depth is moved to its new projection
    (nearest point wins); holes, and pixels without depth, are inpainted."""
    h, w = depth.shape
    v, u = np.nonzero(depth > 0)
    z = depth[v, u]
    x = (u - K[0, 2]) * z / K[0, 0]
    y = (v - K[1, 2]) * z / K[1, 1]
    X, Y, Z = (np.eye(3) if R is None else R).T @ np.stack([x - t[0], y - t[1], z - t[2]])
    keep = Z > 0.1
    X, Y, Z, colours = X[keep], Y[keep], Z[keep], rgb[v[keep], u[keep]]
    un = np.round(K[0, 0] * X / Z + K[0, 2]).astype(int)
    vn = np.round(K[1, 1] * Y / Z + K[1, 2]).astype(int)
    inside = (un >= 0) & (un < w) & (vn >= 0) & (vn < h)
    un, vn, Z, colours = un[inside], vn[inside], Z[inside], colours[inside]
    order = np.argsort(-Z)  # far first, near overwrite
    image = np.zeros_like(rgb)
    filled = np.zeros((h, w), np.uint8)
    image[vn[order], un[order]] = colours[order]
    filled[vn[order], un[order]] = 1
    # Splat to 2x2 to close the one-pixel cracks of forward warping before inpainting the rest.
    grown = cv2.dilate(image, np.ones((2, 2), np.uint8))
    grown_mask = cv2.dilate(filled, np.ones((2, 2), np.uint8))
    image[filled == 0] = grown[filled == 0]
    holes = (grown_mask == 0).astype(np.uint8)
    return cv2.inpaint(image, holes, 5, cv2.INPAINT_TELEA)


def camera_translate(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Small sideways or forward moves mixed with small pans that look alike at 224 px; every view is
    rendered from the RGB-D frame by the same renderer, so artefacts tell nothing."""
    plan = [
        ("redwood", "moved left"),
        ("tum", "turned left"),
        ("nyu", "moved right"),
        ("sun", "turned right"),
        ("tum", "moved forward"),
        ("redwood", "turned right"),
        ("nyu", "moved backward"),
        ("sun", "moved left"),
    ]
    vectors = {"forward": (0, 0, 1), "backward": (0, 0, -1), "left": (-1, 0, 0), "right": (1, 0, 0)}
    records = []
    for number, (source, label) in enumerate(plan):
        rgb, depth, K = rgbd(root, source)
        verb, way = label.split()
        if verb == "moved":
            amount = float(rng.uniform(0.12, 0.2))
            step, turn = np.array(vectors[way], float) * amount, 0.0
            motion = f"pure translation {amount:.2f} m {way}"
        else:
            amount = float(rng.uniform(2.5, 4.5))
            step, turn = np.zeros(3), amount if way == "right" else -amount
            motion = f"pure rotation {amount:.1f} deg {way}"
        first = render_moved(rgb, depth, K, -step / 2, rotation("y", -turn / 2))
        second = render_moved(rgb, depth, K, step / 2, rotation("y", turn / 2))
        crop = (slice(30, 450), slice(40, 600))  # drop the borders that moving the camera leaves empty
        names = [
            save(small_frame(first[crop]), out / f"move{number}_a.png"),
            save(small_frame(second[crop]), out / f"move{number}_b.png"),
        ]
        records.append(
            {
                "task_id": f"camera_translate-{number}",
                "category": "camera_translate",
                "images": names,
                "question": "The two images are consecutive frames from one camera. How did the camera move between the first and the second frame?",
                "choices": MOTION_CHOICES,
                "answer": chr(ord("A") + MOTION_CHOICES.index(label)),
                "meta": {"source": source, "motion": motion},
            }
        )
    return records


# orbit_angle ---------------------------------------------------------------------------------------
def middlebury_cameras(root: Path, folder: str, table: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """World-to-camera rotation R (3x3) and translation t (metres) of the listed views present on disk
    (projection = K [R t]; the camera centre is -R^T t)."""
    cameras = {}
    for line in (root / folder / table).read_text().split("\n")[1:]:
        parts = line.split()
        if len(parts) == 22 and (root / folder / parts[0]).exists():
            cameras[parts[0]] = (np.array(parts[10:19], float).reshape(3, 3), np.array(parts[19:22], float))
    return cameras


def orbit_angle(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    records = []
    for folder, table in (("multiview-temple", "templeR_par.txt"), ("multiview-dino", "dino_par.txt")):
        rotations = {name: R for name, (R, _) in middlebury_cameras(root, folder, table).items()}
        names = sorted(rotations)
        pairs = (
            [(names[0], names[3]), (names[2], names[8])]
            if folder.endswith("temple")
            else [(names[0], names[5]), (names[10], names[13])]
        )
        for a, b in pairs:
            # Angle between the viewing directions: the third rows of the world-to-camera rotations.
            axis_a, axis_b = rotations[a][2], rotations[b][2]
            angle = math.degrees(math.acos(float(np.clip(axis_a @ axis_b, -1, 1))))
            files = [
                save(small_frame(np.array(Image.open(root / folder / n).convert("RGB"))), out / f"orbit_{n}")
                for n in (a, b)
            ]
            records.append(
                {
                    "task_id": f"orbit_angle-{Path(a).stem}-{Path(b).stem}",
                    "category": "orbit_angle",
                    "images": files,
                    "question": (
                        "Both photos show the same object from two camera positions. By how many degrees does the "
                        "camera's viewing direction differ between the two photos?"
                    ),
                    "answer": round(angle, 2),
                    "answer_type": "number",
                    "metric": "mra",
                    "meta": {"source": folder, "views": [a, b]},
                }
            )
    return records
