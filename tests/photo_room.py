"""A camera turning in place inside a cube room papered with real photos, for sweeps no single photo covers
(a full 360 degree turn): each view is rendered exactly by casting its pixels' rays onto the cube's faces.

World frame: level OpenCV axes (x right, y down along gravity, z forward at heading 0), the camera at the
centre. A view at heading h (> 0 turned right, clockwise seen from above) and pitch p (> 0 up) has orientation
Ry(h) Rx(p) (``virtual_camera.rotation_ypr``). Walls: the Redwood room ahead, the TUM, NYU and SUN RGB-D photos
to the right, behind and to the left (``SPATIALCLAW_TEST_DATA``); scikit-image's coffee photo on the floor and
its astronaut on the ceiling.
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from tests.virtual_camera import rotation_ypr, shrink

FACE_PX = 640


def _faces(root: Path) -> dict[tuple[int, int], np.ndarray]:
    """(axis, sign) -> the square photo on that face."""
    import skimage.data

    single = root / "rgbd-single"
    photos = {
        (2, 1): root / "rgbd-redwood" / "color" / "00000.jpg",
        (0, 1): single / "TUM_color.png",
        (2, -1): single / "NYU_color.ppm",
        (0, -1): single / "SUN_color.jpg",
    }
    faces = {key: np.asarray(Image.open(path).convert("RGB")) for key, path in photos.items()}
    faces[(1, 1)] = skimage.data.coffee()
    faces[(1, -1)] = skimage.data.astronaut()
    return {key: cv2.resize(image, (FACE_PX, FACE_PX), interpolation=cv2.INTER_AREA) for key, image in faces.items()}


def _bilinear(photo: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(N, 3) uint8 colours of ``photo`` at (N,) pixel positions, bilinearly interpolated, edges clamped."""
    x = np.clip(x, 0, photo.shape[1] - 1.001)
    y = np.clip(y, 0, photo.shape[0] - 1.001)
    x0, y0 = x.astype(int), y.astype(int)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    top = photo[y0, x0] * (1 - fx) + photo[y0, x0 + 1] * fx
    bottom = photo[y0 + 1, x0] * (1 - fx) + photo[y0 + 1, x0 + 1] * fx
    return np.asarray(np.round(top * (1 - fy) + bottom * fy), dtype=np.uint8)


def _render(
    faces: dict[tuple[int, int], np.ndarray], R: np.ndarray, K: np.ndarray, size: tuple[int, int]
) -> np.ndarray:
    width, height = size
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    rays = np.stack([(xs - K[0, 2]) / K[0, 0], (ys - K[1, 2]) / K[1, 1], np.ones_like(xs)], axis=-1) @ R.T
    axis = np.argmax(np.abs(rays), axis=-1)
    image = np.zeros((height, width, 3), np.uint8)
    for (face_axis, sign), photo in faces.items():
        hit = (axis == face_axis) & (np.sign(np.take_along_axis(rays, axis[..., None], -1)[..., 0]) == sign)
        if not hit.any():
            continue
        d = rays[hit] / np.abs(rays[hit][:, face_axis : face_axis + 1])  # onto the face at distance 1
        # the face's own (right, down) axes as seen from the centre looking at it
        right = {(2, 1): (0, 1), (0, 1): (2, -1), (2, -1): (0, -1), (0, -1): (2, 1), (1, 1): (0, 1), (1, -1): (0, 1)}
        down = {(1, 1): (2, -1), (1, -1): (2, 1)}.get((face_axis, sign), (1, 1))
        u = d[:, right[(face_axis, sign)][0]] * right[(face_axis, sign)][1]
        v = d[:, down[0]] * down[1]
        image[hit] = _bilinear(photo, (u + 1) / 2 * (FACE_PX - 1), (v + 1) / 2 * (FACE_PX - 1))
    return image


def turning_in_room(
    root: Path, headings_deg: list[float], pitch_deg: float = 0.0, width: int = 200, hfov_deg: float = 90.0
) -> tuple[list[np.ndarray], float]:
    """Views (rendered at 640x480, then shrunk to ``width``) of a camera at the room's centre at each heading
    (degrees, > 0 right) with one pitch (degrees, > 0 up), and the horizontal field of view (degrees)."""
    faces = _faces(root)
    full_w, full_h = 640, 480
    focal = 0.5 * full_w / math.tan(math.radians(hfov_deg) / 2)
    K = np.array([[focal, 0, (full_w - 1) / 2], [0, focal, (full_h - 1) / 2], [0, 0, 1.0]])
    views = [_render(faces, rotation_ypr(h, pitch_deg), K, (full_w, full_h)) for h in headings_deg]
    return [shrink(view, width) for view in views], hfov_deg
