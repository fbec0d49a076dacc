"""Dev-set question classes about layouts in a scene: ``perspective`` (markers on a real floor) and ``planar``
(dots beside an A4 sheet).

- ``perspective``: one real RGB-D frame with three coloured markers on floor pixels (the floor plane
  found by RANSAC in the measured depth); "standing at the red marker facing the blue one, is the green
  one front-left, front-right, back-left or back-right", with the answer from the measured 3D points in
  the floor plane, its normal as up (an item within 25 degrees of a quadrant boundary is not generated).
- ``planar``: a perspective photo of an A4 sheet (210 x 297 mm) lying on a real textured surface with
  coloured dots; the distance between two dots in centimetres, or the angle at one dot, exactly from the
  layout.

Conventions (as in :mod:`spatialclaw.benchmarks.devset.build`): pixels (x, y) from the top-left; camera frames
OpenCV (x right, y down, z forward); a pan to the right turns the optical axis towards +x, a tilt up
towards -y; angles in degrees, distances in metres or the unit the question names.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw

from spatialclaw.benchmarks.devset.data import WIDTH, rgbd, save, small_frame

__all__ = ["MARKERS", "QUADRANTS", "perspective", "planar"]


# perspective ---------------------------------------------------------------------------------------
QUADRANTS = ["front-left", "front-right", "back-left", "back-right"]
MARKERS = {"red": (230, 30, 30), "blue": (40, 90, 255), "green": (30, 200, 60)}


def _mark(image: Image.Image, points: dict[str, tuple[float, float]], scale: float) -> Image.Image:
    marked = image.copy()
    draw = ImageDraw.Draw(marked)
    radius = 5
    for colour, (u, v) in points.items():
        x, y = u * scale, v * scale
        draw.ellipse((x - radius - 1, y - radius - 1, x + radius + 1, y + radius + 1), fill=(255, 255, 255))
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=MARKERS[colour])
    return marked


def _floor(
    depth: np.ndarray, K: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The floor of an RGB-D frame: (its up normal in camera axes, the camera-frame points (H, W, 3),
    the mask of floor pixels within 2 cm of the plane), by RANSAC over the lower half of the image among
    planes within 45 degrees of the camera's up (-y); None when no floor covers 3 % of the image."""
    h, w = depth.shape
    v, u = np.mgrid[0:h, 0:w]
    points = np.dstack([(u - K[0, 2]) * depth / K[0, 0], (v - K[1, 2]) * depth / K[1, 1], depth])
    candidates = points[h // 2 :][depth[h // 2 :] > 0.3]
    best, best_count = None, 0
    for _ in range(300):
        p0, p1, p2 = candidates[rng.choice(len(candidates), 3, replace=False)]
        normal = np.cross(p1 - p0, p2 - p0)
        if np.linalg.norm(normal) < 1e-9:
            continue
        normal /= np.linalg.norm(normal)
        if normal[1] > 0:
            normal = -normal  # up is -y in OpenCV camera axes
        if -normal[1] < math.cos(math.radians(45)):
            continue
        count = int((np.abs((candidates - p0) @ normal) < 0.02).sum())
        if count > best_count:
            best, best_count = (normal, float(p0 @ normal)), count
    if best is None:
        return None
    normal, offset = best
    mask = (depth > 0.3) & (np.abs(points @ normal - offset) < 0.02)
    return (normal, points, mask) if mask.mean() > 0.03 else None


def perspective(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Three markers on floor pixels of a real RGB-D frame (the floor found in its depth); the answer from
    their measured 3D positions in the floor plane, with the floor's normal as up."""
    records: list[dict[str, Any]] = []
    for source in ("redwood", "tum", "nyu", "sun", "redwood", "nyu"):
        rgb, depth, K = rgbd(root, source)
        h, w = depth.shape
        found = _floor(depth, K, rng)
        if found is None:
            continue
        up, points, floor = found
        rows, cols = np.nonzero(floor[: h - 30, 40 : w - 40])  # markers fully inside the picture
        cols = cols + 40
        for _ in range(2000):
            picks = [(int(cols[k]), int(rows[k])) for k in rng.choice(len(rows), 3, replace=False)]
            a, b, c = (points[v, u] - (points[v, u] @ up) * up for u, v in picks)  # on the floor plane
            facing, to_c = b - a, c - a
            if np.linalg.norm(facing) < 0.8 or np.linalg.norm(to_c) < 0.6:
                continue
            # Seen from above (up = the floor's normal): facing x to_c along up puts c on the left.
            cross = float(np.cross(facing, to_c) @ up)
            angle = math.degrees(math.atan2(abs(cross), float(facing @ to_c)))
            if not (25 <= angle <= 65 or 115 <= angle <= 155):
                continue
            side = ("front-" if angle < 90 else "back-") + ("left" if cross > 0 else "right")
            if side == QUADRANTS[len(records) % 4]:  # every quadrant in turn, so no answer dominates
                break
        else:
            continue
        number = len(records)
        scale = WIDTH / w
        picture = _mark(small_frame(rgb), dict(zip(("red", "blue", "green"), picks, strict=True)), scale)
        name = save(picture, out / f"perspective{number}.png")
        records.append(
            {
                "task_id": f"perspective-{number}",
                "category": "perspective",
                "images": [name],
                "question": (
                    "The three coloured dots mark points on the floor. Imagine you stand at the red dot, facing the "
                    "blue dot. In which direction is the green dot?"
                ),
                "choices": QUADRANTS,
                "answer": chr(ord("A") + QUADRANTS.index(side)),
                "meta": {
                    "source": source,
                    "pixels": picks,
                    "angle_deg": round(angle, 1),
                    "floor_up_camera": [round(float(x), 4) for x in up],
                },
            }
        )
    return records


# planar --------------------------------------------------------------------------------------------
def _look_at(camera: np.ndarray, target: np.ndarray) -> np.ndarray:
    """World-to-camera rotation (rows: the camera's x right, y down, z forward in world axes, +Z up)."""
    forward = (target - camera) / np.linalg.norm(target - camera)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    return np.stack([right, np.cross(forward, right), forward])


def planar(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """An A4 sheet and three dots on a real texture, photographed obliquely. The plane is z = 0 of a
    +Z-up world in metres; its texture is rastered at 1 px per millimetre (x to +X, y to -Y)."""
    textures = [
        "rgbd-single/SUN_color.jpg",
        "rgbd-single/NYU_color.ppm",
        "rgbd-redwood/color/00002.jpg",
        "rgbd-single/TUM_color.png",
    ]
    records = []
    plane_w, plane_h = 1600, 1200  # mm
    colours = {"red": (220, 30, 30), "blue": (30, 70, 230), "green": (30, 170, 50)}
    K = np.array([[900.0, 0, 399.5], [0, 900.0, 299.5], [0, 0, 1]])
    for number, texture in enumerate(textures):
        plane = np.array(Image.open(root / texture).convert("RGB").resize((plane_w, plane_h), Image.Resampling.BICUBIC))
        portrait = number % 2 == 0
        size = np.array([210.0, 297.0]) if portrait else np.array([297.0, 210.0])
        corner = np.array([plane_w / 2, plane_h / 2]) - size / 2 + rng.uniform(-60, 60, 2)  # mm, sheet's top-left
        x0, y0 = corner.astype(int)
        x1, y1 = (corner + size).astype(int)
        plane[y0:y1, x0:x1] = (0.92 * np.array([245, 243, 238]) + 0.08 * plane[y0:y1, x0:x1]).astype(np.uint8)
        dots = {
            name: corner + np.array([rng.uniform(-110, size[0] + 110), rng.uniform(-70, size[1] + 70)])
            for name in colours
        }
        canvas = Image.fromarray(plane)
        draw = ImageDraw.Draw(canvas)
        for name, (x, y) in dots.items():
            draw.ellipse((x - 9, y - 9, x + 9, y + 9), fill=colours[name])
        plane = np.array(canvas)
        # The camera looks near the middle of the sheet from 0.6 m, 35-48 degrees from the plane's normal;
        # a view that cuts off the sheet or a dot, or sees past the textured plane, is drawn again.
        marks = np.array(
            [corner, corner + [size[0], 0], corner + size, corner + [0, size[1]], *dots.values()], np.float64
        )
        texture_to_plane = np.diag([1 / 1000, -1 / 1000, 1.0])  # texture px (mm) -> plane metres
        for _ in range(200):
            oblique, heading = math.radians(rng.uniform(35, 48)), math.radians(rng.uniform(-30, 30))
            middle = corner + size / 2 + rng.uniform(-30, 30, 2)
            target = np.array([middle[0] / 1000, -middle[1] / 1000, 0.0])
            camera = target + 0.6 * np.array(
                [math.sin(oblique) * math.sin(heading), -math.sin(oblique) * math.cos(heading), math.cos(oblique)]
            )
            R = _look_at(camera, target)
            H = K @ np.column_stack([R[:, 0], R[:, 1], -R @ camera]) @ texture_to_plane
            seen = cv2.perspectiveTransform(marks[None], H)[0]
            corners = cv2.perspectiveTransform(
                np.array([[[0, 0], [799, 0], [0, 599], [799, 599]]], np.float64), np.linalg.inv(H)
            )[0]
            if (
                seen[:, 0].min() > 25
                and seen[:, 0].max() < 775
                and seen[:, 1].min() > 25
                and seen[:, 1].max() < 575
                and corners.min() >= 0
                and (corners[:, 0] < plane_w).all()
                and (corners[:, 1] < plane_h).all()
            ):
                break
        else:
            raise AssertionError("no oblique view shows the whole sheet and every dot; change the camera ranges")
        photo = cv2.warpPerspective(plane, H, (800, 600), flags=cv2.INTER_AREA)
        small = np.array(small_frame(photo)).astype(np.float64)
        noisy = np.clip(small + rng.normal(0, 3, small.shape), 0, 255).astype(np.uint8)
        # JPEG artefacts as a photo has them, stored as PNG so that every viewer shows it.
        encoded = io.BytesIO()
        Image.fromarray(noisy).save(encoded, "JPEG", quality=90)
        image_name = save(Image.open(encoded).convert("RGB"), out / f"planar{number}.png")
        red, blue, green = dots["red"], dots["blue"], dots["green"]
        distance_cm = float(np.linalg.norm(red - blue)) / 10
        u, v = red - green, blue - green
        angle = math.degrees(math.acos(float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))))
        records.append(
            {
                "task_id": f"planar-{number}-distance",
                "category": "planar",
                "images": [image_name],
                "question": (
                    "The white sheet is A4 paper (21.0 cm x 29.7 cm) lying flat on the same surface as the coloured dots. "
                    "How far apart are the centres of the red dot and the blue dot, in centimetres?"
                ),
                "answer": round(distance_cm, 2),
                "answer_type": "number",
                "metric": "mra",
                "meta": {"source": texture},
            }
        )
        records.append(
            {
                "task_id": f"planar-{number}-angle",
                "category": "planar",
                "images": [image_name],
                "question": (
                    "The white sheet is A4 paper lying flat on the same surface as the coloured dots. On that surface, "
                    "what is the angle in degrees at the green dot between the directions to the red dot and to the blue dot?"
                ),
                "answer": round(angle, 2),
                "answer_type": "number",
                "metric": "mra",
                "meta": {"source": texture},
            }
        )
    return records
