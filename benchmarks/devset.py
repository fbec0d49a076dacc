"""A model-in-the-loop dev set: real-image spatial questions with exact ground truth, at benchmark size.

Every question is built from the real measured data in ``$SPATIALCLAW_TEST_DATA`` (see its README) and
rendered the way benchmarks present frames: 2 key frames about 224 px wide. The answers are exact
because each image is made from a real photo by a known camera motion or a known planar layout:

- ``camera_turn``: two views of one real photo related by a pure camera rotation (a homography
  ``K R K^-1``) that pans and tilts at once by unrounded angles; the signed pan and the signed tilt in
  degrees (the question states the horizontal field of view).
- ``camera_translate``: two views rendered from a real RGB-D frame (points forward-warped with their
  measured depth, z-buffered, holes filled) by a small move (0.12-0.2 m forward, backward, left or
  right) or a small pan (2.5-4.5 degrees), which look alike at 224 px; multiple choice among turns,
  tilts and moves. A parallax test separates them; an eye mostly cannot.
- ``orbit_angle``: two real views of the Middlebury temple or dino; the angle in degrees between the two
  cameras' viewing directions, from the published calibration.
- ``perspective``: one real RGB-D frame with three coloured markers on floor pixels (the floor plane
  found by RANSAC in the measured depth); "standing at the red marker facing the blue one, is the green
  one front-left, front-right, back-left or back-right", with the answer from the measured 3D points in
  the floor plane, its normal as up (an item within 25 degrees of a quadrant boundary is not generated).
- ``planar``: a perspective photo of an A4 sheet (210 x 297 mm) lying on a real textured surface with
  coloured dots; the distance between two dots in centimetres, or the angle at one dot, exactly from the
  layout.

Conventions: pixels (x, y) from the top-left; camera frames OpenCV (x right, y down, z forward); a
pan to the right turns the optical axis towards +x, a tilt up towards -y; angles in degrees, distances
in metres or the unit the question names. Each item's ``meta`` says how it was made.

The output is the local task format (``benchmarks/local.py``): ``generate(out_dir)`` writes
``tasks.jsonl`` and the PNGs beside it; ``python -m spatialclaw.benchmarks.devset OUT`` does the same.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw

__all__ = ["CLASSES", "generate"]

CLASSES = ("camera_turn", "camera_translate", "orbit_angle", "perspective", "planar")
WIDTH = 224  # key-frame width in pixels, as benchmarks show them (150-250 px)
MOTION_CHOICES = ["turned left", "turned right", "tilted up", "tilted down",
                  "moved forward", "moved backward", "moved left", "moved right"]

# (colour image, depth image, decoder, intrinsics fx, fy, cx, cy) of the real RGB-D frames.
_RGBD = {
    "redwood": ("rgbd-redwood/color/00000.jpg", "rgbd-redwood/depth/00000.png", "mm", (525.0, 525.0, 319.5, 239.5)),
    "tum": ("rgbd-single/TUM_color.png", "rgbd-single/TUM_depth.png", "tum", (525.0, 525.0, 319.5, 239.5)),
    "nyu": ("rgbd-single/NYU_color.ppm", "rgbd-single/NYU_depth.pgm", "nyu", (518.86, 519.47, 325.58, 253.74)),
    "sun": ("rgbd-single/SUN_color.jpg", "rgbd-single/SUN_depth.png", "sun", (520.0, 520.0, 319.5, 239.5)),
}


def data_root() -> Path:
    root = Path(os.environ.get("SPATIALCLAW_TEST_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    if not (root / "rgbd-redwood").is_dir():
        raise FileNotFoundError(f"the real data is not at {root}: set SPATIALCLAW_TEST_DATA to the shared data folder")
    return root


# loading -------------------------------------------------------------------------------------------
def _depth_m(path: Path, kind: str) -> np.ndarray:
    """Depth in metres (0 = invalid) by the dataset's convention (see the data README)."""
    if kind == "nyu":
        raw = path.read_bytes()
        header_end = 0
        fields = 0
        while fields < 4:  # P5, width, height, maxval
            while raw[header_end:header_end + 1].isspace():
                header_end += 1
            while not raw[header_end:header_end + 1].isspace():
                header_end += 1
            fields += 1
        data = np.frombuffer(raw[header_end + 1:], dtype="<u2")[: 640 * 480].reshape(480, 640).astype(np.float64)
        depth = 351.3 / np.maximum(1092.5 - data, 1e-6)
        depth[(data >= 2047) | (depth <= 0) | (depth > 10)] = 0
        return depth
    values = np.array(Image.open(path)).astype(np.uint32)
    if kind == "mm":
        return values / 1000.0
    if kind == "tum":
        return values / 5000.0
    if kind == "sun":
        values = ((values >> 3) | (values << 13)) & 0xFFFF
        depth = values / 1000.0
        depth[depth > 10] = 0
        return depth
    raise ValueError(kind)


def _rgbd(root: Path, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    colour, depth, kind, (fx, fy, cx, cy) = _RGBD[name]
    rgb = np.array(Image.open(root / colour).convert("RGB"))
    K = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]])
    return rgb, _depth_m(root / depth, kind), K


def _save(image: np.ndarray | Image.Image, path: Path) -> str:
    picture = image if isinstance(image, Image.Image) else Image.fromarray(image)
    picture.save(path)
    return path.name


def _small(image: np.ndarray) -> Image.Image:
    h, w = image.shape[:2]
    return Image.fromarray(image).resize((WIDTH, round(h * WIDTH / w)), Image.LANCZOS)


def _rotation(axis: str, degrees: float) -> np.ndarray:
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


# camera_turn ---------------------------------------------------------------------------------------
def _turn_view(rgb: np.ndarray, K: np.ndarray, K_view: np.ndarray, R_cam: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The view of a camera at the source's centre, rotated by ``R_cam`` (its axes in source-camera
    coordinates), with intrinsics ``K_view``: source pixel = K R_cam K_view^-1 view pixel."""
    H = K @ R_cam @ np.linalg.inv(K_view)
    return cv2.warpPerspective(rgb, H, size, flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REFLECT)


def _camera_turn(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """A compound rotation (pan and tilt at once, angles not rounded): the signed pan and tilt in degrees."""
    records = []
    sources = ("redwood", "tum", "nyu", "sun", "tum", "nyu")
    size = (480, 360)
    K_view = np.array([[560.0, 0, 239.5], [0, 560.0, 179.5], [0, 0, 1]])
    hfov = math.degrees(2 * math.atan(size[0] / 2 / K_view[0, 0]))
    for number, source in enumerate(sources):
        rgb, _, K = _rgbd(root, source)
        pan = float(rng.choice([-1, 1]) * rng.uniform(3, 12))
        tilt = float(rng.choice([-1, 1]) * rng.uniform(1.5, 6))
        # A pan right turns the optical axis towards +x (rotation about +y, OpenCV axes); a tilt up
        # turns it towards -y (rotation about +x). Each view is half of the motion from the source.
        def view(fraction: float) -> np.ndarray:
            return _turn_view(rgb, K, K_view, _rotation("y", fraction * pan) @ _rotation("x", fraction * tilt), size)
        names = [_save(_small(view(-0.5)), out / f"turn{number}_a.png"), _save(_small(view(0.5)), out / f"turn{number}_b.png")]
        intro = (f"The two images are consecutive frames from one camera whose horizontal field of view is {hfov:.0f} "
                 "degrees; the camera only rotated between them.")
        meta = {"source": source, "pan_deg": round(pan, 2), "tilt_deg": round(tilt, 2), "hfov_deg": round(hfov, 2)}
        records.append({
            "task_id": f"camera_turn-{number}-pan", "category": "camera_turn", "images": names, "meta": meta,
            "question": intro + " By how many degrees did it pan? Answer positive for a pan to the right, negative to the left.",
            "answer": round(pan, 2), "answer_type": "number", "metric": "mra"})
        records.append({
            "task_id": f"camera_turn-{number}-tilt", "category": "camera_turn", "images": names, "meta": meta,
            "question": intro + " By how many degrees did it tilt? Answer positive for a tilt upwards, negative downwards.",
            "answer": round(tilt, 2), "answer_type": "number", "metric": "mra"})
    return records


# camera_translate ----------------------------------------------------------------------------------
def _render_moved(rgb: np.ndarray, depth: np.ndarray, K: np.ndarray, t: np.ndarray, R: np.ndarray | None = None) -> np.ndarray:
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


def _camera_translate(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Small sideways or forward moves mixed with small pans that look alike at 224 px; every view is
    rendered from the RGB-D frame by the same renderer, so artefacts tell nothing."""
    plan = [("redwood", "moved left"), ("tum", "turned left"), ("nyu", "moved right"), ("sun", "turned right"),
            ("tum", "moved forward"), ("redwood", "turned right"), ("nyu", "moved backward"), ("sun", "moved left")]
    vectors = {"forward": (0, 0, 1), "backward": (0, 0, -1), "left": (-1, 0, 0), "right": (1, 0, 0)}
    records = []
    for number, (source, label) in enumerate(plan):
        rgb, depth, K = _rgbd(root, source)
        verb, way = label.split()
        if verb == "moved":
            amount = float(rng.uniform(0.12, 0.2))
            step, turn = np.array(vectors[way], float) * amount, 0.0
            motion = f"pure translation {amount:.2f} m {way}"
        else:
            amount = float(rng.uniform(2.5, 4.5))
            step, turn = np.zeros(3), amount if way == "right" else -amount
            motion = f"pure rotation {amount:.1f} deg {way}"
        first = _render_moved(rgb, depth, K, -step / 2, _rotation("y", -turn / 2))
        second = _render_moved(rgb, depth, K, step / 2, _rotation("y", turn / 2))
        crop = (slice(30, 450), slice(40, 600))  # drop the borders that moving the camera leaves empty
        names = [_save(_small(first[crop]), out / f"move{number}_a.png"), _save(_small(second[crop]), out / f"move{number}_b.png")]
        records.append({
            "task_id": f"camera_translate-{number}", "category": "camera_translate", "images": names,
            "question": "The two images are consecutive frames from one camera. How did the camera move between the first and the second frame?",
            "choices": MOTION_CHOICES, "answer": chr(ord("A") + MOTION_CHOICES.index(label)),
            "meta": {"source": source, "motion": motion}})
    return records


# orbit_angle ---------------------------------------------------------------------------------------
def _middlebury(root: Path, folder: str, table: str) -> dict[str, np.ndarray]:
    """World-to-camera rotations of the listed views present on disk."""
    rotations = {}
    for line in (root / folder / table).read_text().split("\n")[1:]:
        parts = line.split()
        if len(parts) == 22 and (root / folder / parts[0]).exists():
            rotations[parts[0]] = np.array(parts[10:19], float).reshape(3, 3)
    return rotations


def _orbit_angle(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    records = []
    for folder, table in (("multiview-temple", "templeR_par.txt"), ("multiview-dino", "dino_par.txt")):
        rotations = _middlebury(root, folder, table)
        names = sorted(rotations)
        pairs = [(names[0], names[3]), (names[2], names[8])] if folder.endswith("temple") else [(names[0], names[5]), (names[10], names[13])]
        for a, b in pairs:
            # Angle between the viewing directions: the third rows of the world-to-camera rotations.
            axis_a, axis_b = rotations[a][2], rotations[b][2]
            angle = math.degrees(math.acos(float(np.clip(axis_a @ axis_b, -1, 1))))
            files = [_save(_small(np.array(Image.open(root / folder / n).convert("RGB"))), out / f"orbit_{n}") for n in (a, b)]
            records.append({
                "task_id": f"orbit_angle-{Path(a).stem}-{Path(b).stem}", "category": "orbit_angle", "images": files,
                "question": ("Both photos show the same object from two camera positions. By how many degrees does the "
                             "camera's viewing direction differ between the two photos?"),
                "answer": round(angle, 2), "answer_type": "number", "metric": "mra", "meta": {"source": folder, "views": [a, b]}})
    return records


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


def _floor(depth: np.ndarray, K: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The floor of an RGB-D frame: (its up normal in camera axes, the camera-frame points (H, W, 3),
    the mask of floor pixels within 2 cm of the plane), by RANSAC over the lower half of the image among
    planes within 45 degrees of the camera's up (-y); None when no floor covers 3 % of the image."""
    h, w = depth.shape
    v, u = np.mgrid[0:h, 0:w]
    points = np.dstack([(u - K[0, 2]) * depth / K[0, 0], (v - K[1, 2]) * depth / K[1, 1], depth])
    candidates = points[h // 2:][depth[h // 2:] > 0.3]
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


def _perspective(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Three markers on floor pixels of a real RGB-D frame (the floor found in its depth); the answer from
    their measured 3D positions in the floor plane, with the floor's normal as up."""
    records = []
    for source in ("redwood", "tum", "nyu", "sun", "redwood", "nyu"):
        rgb, depth, K = _rgbd(root, source)
        h, w = depth.shape
        found = _floor(depth, K, rng)
        if found is None:
            continue
        up, points, floor = found
        rows, cols = np.nonzero(floor[:h - 30, 40:w - 40])  # markers fully inside the picture
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
        picture = _mark(_small(rgb), dict(zip(("red", "blue", "green"), picks)), scale)
        name = _save(picture, out / f"perspective{number}.png")
        records.append({
            "task_id": f"perspective-{number}", "category": "perspective", "images": [name],
            "question": ("The three coloured dots mark points on the floor. Imagine you stand at the red dot, facing the "
                         "blue dot. In which direction is the green dot?"),
            "choices": QUADRANTS, "answer": chr(ord("A") + QUADRANTS.index(side)),
            "meta": {"source": source, "pixels": picks, "angle_deg": round(angle, 1),
                     "floor_up_camera": [round(float(x), 4) for x in up]}})
    return records


# planar --------------------------------------------------------------------------------------------
def _look_at(camera: np.ndarray, target: np.ndarray) -> np.ndarray:
    """World-to-camera rotation (rows: the camera's x right, y down, z forward in world axes, +Z up)."""
    forward = (target - camera) / np.linalg.norm(target - camera)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    return np.stack([right, np.cross(forward, right), forward])


def _planar(root: Path, out: Path, rng: np.random.Generator) -> list[dict[str, Any]]:
    """An A4 sheet and three dots on a real texture, photographed obliquely. The plane is z = 0 of a
    +Z-up world in metres; its texture is rastered at 1 px per millimetre (x to +X, y to -Y)."""
    textures = ["rgbd-single/SUN_color.jpg", "rgbd-single/NYU_color.ppm", "rgbd-redwood/color/00002.jpg", "rgbd-single/TUM_color.png"]
    records = []
    plane_w, plane_h = 1600, 1200  # mm
    colours = {"red": (220, 30, 30), "blue": (30, 70, 230), "green": (30, 170, 50)}
    K = np.array([[900.0, 0, 399.5], [0, 900.0, 299.5], [0, 0, 1]])
    for number, texture in enumerate(textures):
        plane = np.array(Image.open(root / texture).convert("RGB").resize((plane_w, plane_h), Image.BICUBIC))
        portrait = number % 2 == 0
        size = np.array([210.0, 297.0]) if portrait else np.array([297.0, 210.0])
        corner = np.array([plane_w / 2, plane_h / 2]) - size / 2 + rng.uniform(-60, 60, 2)  # mm, sheet's top-left
        x0, y0 = corner.astype(int)
        x1, y1 = (corner + size).astype(int)
        plane[y0:y1, x0:x1] = (0.92 * np.array([245, 243, 238]) + 0.08 * plane[y0:y1, x0:x1]).astype(np.uint8)
        dots = {name: corner + np.array([rng.uniform(-110, size[0] + 110), rng.uniform(-70, size[1] + 70)]) for name in colours}
        canvas = Image.fromarray(plane)
        draw = ImageDraw.Draw(canvas)
        for name, (x, y) in dots.items():
            draw.ellipse((x - 9, y - 9, x + 9, y + 9), fill=colours[name])
        plane = np.array(canvas)
        # The camera looks near the middle of the sheet from 0.6 m, 35-48 degrees from the plane's normal;
        # a view that cuts off the sheet or a dot, or sees past the textured plane, is drawn again.
        marks = np.array([corner, corner + [size[0], 0], corner + size, corner + [0, size[1]], *dots.values()], np.float64)
        texture_to_plane = np.diag([1 / 1000, -1 / 1000, 1.0])  # texture px (mm) -> plane metres
        for _ in range(200):
            oblique, heading = math.radians(rng.uniform(35, 48)), math.radians(rng.uniform(-30, 30))
            middle = corner + size / 2 + rng.uniform(-30, 30, 2)
            target = np.array([middle[0] / 1000, -middle[1] / 1000, 0.0])
            camera = target + 0.6 * np.array([math.sin(oblique) * math.sin(heading), -math.sin(oblique) * math.cos(heading), math.cos(oblique)])
            R = _look_at(camera, target)
            H = K @ np.column_stack([R[:, 0], R[:, 1], -R @ camera]) @ texture_to_plane
            seen = cv2.perspectiveTransform(marks[None], H)[0]
            corners = cv2.perspectiveTransform(np.array([[[0, 0], [799, 0], [0, 599], [799, 599]]], np.float64), np.linalg.inv(H))[0]
            if (seen[:, 0].min() > 25 and seen[:, 0].max() < 775 and seen[:, 1].min() > 25 and seen[:, 1].max() < 575
                    and corners.min() >= 0 and (corners[:, 0] < plane_w).all() and (corners[:, 1] < plane_h).all()):
                break
        else:
            raise AssertionError("no oblique view shows the whole sheet and every dot; change the camera ranges")
        photo = cv2.warpPerspective(plane, H, (800, 600), flags=cv2.INTER_AREA)
        small = np.array(_small(photo)).astype(np.float64)
        noisy = np.clip(small + rng.normal(0, 3, small.shape), 0, 255).astype(np.uint8)
        # JPEG artefacts as a photo has them, stored as PNG so that every viewer shows it.
        encoded = io.BytesIO()
        Image.fromarray(noisy).save(encoded, "JPEG", quality=90)
        image_name = _save(Image.open(encoded).convert("RGB"), out / f"planar{number}.png")
        red, blue, green = dots["red"], dots["blue"], dots["green"]
        distance_cm = float(np.linalg.norm(red - blue)) / 10
        u, v = red - green, blue - green
        angle = math.degrees(math.acos(float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))))
        records.append({
            "task_id": f"planar-{number}-distance", "category": "planar", "images": [image_name],
            "question": ("The white sheet is A4 paper (21.0 cm x 29.7 cm) lying flat on the same surface as the coloured dots. "
                         "How far apart are the centres of the red dot and the blue dot, in centimetres?"),
            "answer": round(distance_cm, 2), "answer_type": "number", "metric": "mra", "meta": {"source": texture}})
        records.append({
            "task_id": f"planar-{number}-angle", "category": "planar", "images": [image_name],
            "question": ("The white sheet is A4 paper lying flat on the same surface as the coloured dots. On that surface, "
                         "what is the angle in degrees at the green dot between the directions to the red dot and to the blue dot?"),
            "answer": round(angle, 2), "answer_type": "number", "metric": "mra", "meta": {"source": texture}})
    return records


_BUILDERS = {"camera_turn": _camera_turn, "camera_translate": _camera_translate, "orbit_angle": _orbit_angle,
             "perspective": _perspective, "planar": _planar}


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
    with path.open("w") as stream:
        for record in records:
            record["benchmark"] = "devset"
            stream.write(json.dumps(record) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write the model-in-the-loop dev set (local task format)")
    parser.add_argument("out", help="output folder")
    parser.add_argument("--classes", nargs="+", default=list(CLASSES), choices=CLASSES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = generate(args.out, tuple(args.classes), args.seed)
    print(f"{sum(1 for _ in path.open())} tasks -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
