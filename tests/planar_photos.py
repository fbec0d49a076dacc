"""Exact perspective "photos" of a known rectangle on a real texture, for planar-metrology tests.

A table top is textured with a real photo (Redwood colour frame, shared data); an A4 sheet (0.297 x
0.210 m) with coloured dots at known sheet positions lies on it, plus distractors (a large yellow book,
a strip of light-brown tape) and an occluder over part of one side. A virtual pinhole camera looks at
the table at an oblique angle; the image is rendered exactly through the plane-to-image homography
(supersampled 3x, then area-averaged), blurred, noised and JPEG-compressed like a phone photo.
Every dot's true position is known, so ratios and angles have exact ground truth.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

SHEET = (0.297, 0.210)  # metres, width x height
SHEET_ORIGIN = (0.20, 0.16)  # sheet corner 0 in table metres
SHEET_ROTATION_DEG = 8.0
TABLE = (0.80, 0.60)  # metres
PX_PER_M = 2500  # texture resolution of the table canvas
TAPE = np.array([[0.05, 0.47], [0.60, 0.49], [0.60, 0.515], [0.05, 0.495]])  # light-brown tape, table metres
DOTS = {  # sheet metres (x along the width, y along the height), diameter, RGB
    "red": ((0.060, 0.050), 0.022, (210, 35, 40)),
    "blue": ((0.235, 0.060), 0.022, (35, 70, 200)),
    "green": ((0.150, 0.160), 0.022, (40, 160, 70)),
    "pale_yellow": ((0.245, 0.170), 0.022, (245, 235, 150)),
    "pale_pink": ((0.050, 0.165), 0.022, (250, 195, 210)),
}


@dataclass(frozen=True)
class PlanarPhoto:
    image: np.ndarray  # (H, W, 3) uint8 RGB, after blur/noise/JPEG
    sheet_to_image: np.ndarray  # (3, 3) sheet metres -> image pixels
    table_to_image: np.ndarray  # (3, 3) table metres -> image pixels
    dots: dict[str, tuple[float, float]]  # sheet metres

    def tape_centre_px(self) -> np.ndarray:
        return _apply(self.table_to_image, np.array([TAPE.mean(axis=0)]))[0]

    def sheet_corners_px(self) -> np.ndarray:
        w, h = SHEET
        return _apply(self.sheet_to_image, np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64))


def _apply(H: np.ndarray, points: np.ndarray) -> np.ndarray:
    homogeneous = np.hstack([points, np.ones((len(points), 1))]) @ H.T
    return homogeneous[:, :2] / homogeneous[:, 2:3]


def _sheet_to_table() -> np.ndarray:
    a = np.radians(SHEET_ROTATION_DEG)
    return np.array([[np.cos(a), -np.sin(a), SHEET_ORIGIN[0]], [np.sin(a), np.cos(a), SHEET_ORIGIN[1]], [0, 0, 1.0]])


def table_canvas(texture_path: Path) -> np.ndarray:
    """The table top at PX_PER_M, with sheet, dots, distractors and occluder drawn in (3x supersampled edges)."""
    width, height = int(TABLE[0] * PX_PER_M), int(TABLE[1] * PX_PER_M)
    texture = np.asarray(Image.open(texture_path).convert("RGB").resize((width, height), Image.BICUBIC))
    canvas = (0.55 * texture).astype(np.uint8)  # a darker real texture under the sheet
    table_px = np.array([[PX_PER_M, 0, -0.5], [0, PX_PER_M, -0.5], [0, 0, 1.0]])  # metres -> canvas px
    to_px = table_px @ _sheet_to_table()
    w, h = SHEET
    shift = 8  # sub-pixel drawing (1/256 px)

    def poly(points_m: np.ndarray, colour: tuple[int, int, int], transform: np.ndarray = to_px) -> None:
        pts = np.round(_apply(transform, points_m) * 2**shift).astype(np.int32)
        cv2.fillPoly(canvas, [pts], colour, lineType=cv2.LINE_AA, shift=shift)

    poly(np.array([[0, 0], [w, 0], [w, h], [0, h]]), (236, 236, 230))
    for (x, y), diameter, colour in DOTS.values():
        centre = np.round(_apply(to_px, np.array([[x, y]]))[0] * 2**shift).astype(int)
        cv2.circle(
            canvas,
            tuple(int(v) for v in centre),
            int(round(diameter / 2 * PX_PER_M * 2**shift)),
            colour,
            -1,
            lineType=cv2.LINE_AA,
            shift=shift,
        )
    poly(np.array([[0.56, 0.10], [0.76, 0.12], [0.74, 0.40], [0.55, 0.38]]), (235, 200, 30), table_px)  # yellow book
    poly(TAPE, (196, 160, 110), table_px)  # brown tape
    poly(np.array([[0.36, 0.385], [0.45, 0.39], [0.45, 0.48], [0.36, 0.48]]), (60, 50, 45), table_px)  # occluder
    return canvas


BORDER = (0.30, 0.20)  # outer size of a blue tape border, metres (2 cm wide tape)


def border_canvas(texture_path: Path) -> np.ndarray:
    """The table top with a blue tape border (outer edge BORDER, at the sheet's place) instead of the
    sheet, one side partly covered by a dark occluder."""
    width, height = int(TABLE[0] * PX_PER_M), int(TABLE[1] * PX_PER_M)
    texture = np.asarray(Image.open(texture_path).convert("RGB").resize((width, height), Image.BICUBIC))
    canvas = np.ascontiguousarray(0.8 * texture).astype(np.uint8)
    table_px = np.array([[PX_PER_M, 0, -0.5], [0, PX_PER_M, -0.5], [0, 0, 1.0]])
    to_px = table_px @ _sheet_to_table()
    shift = 8

    def poly(points_m: np.ndarray, colour: tuple[int, int, int], transform: np.ndarray) -> None:
        pts = np.round(_apply(transform, points_m) * 2**shift).astype(np.int32)
        cv2.fillPoly(canvas, [pts], colour, lineType=cv2.LINE_AA, shift=shift)

    w, h, tape = BORDER[0], BORDER[1], 0.02
    outer = np.array([[0, 0], [w, 0], [w, h], [0, h]])
    inner = np.array([[tape, tape], [w - tape, tape], [w - tape, h - tape], [tape, h - tape]])
    poly(outer, (40, 80, 200), to_px)
    region = (np.round(_apply(to_px, inner) * 2**shift)).astype(np.int32)
    mask = np.zeros(canvas.shape[:2], np.uint8)
    cv2.fillPoly(mask, [region], 255, lineType=cv2.LINE_AA, shift=shift)
    alpha = (mask.astype(np.float64) / 255)[..., None]
    canvas = (alpha * (0.8 * texture) + (1 - alpha) * canvas).astype(np.uint8)  # the floor shows inside
    poly(np.array([[0.30, 0.33], [0.40, 0.33], [0.40, 0.45], [0.30, 0.45]]), (50, 45, 40), table_px)
    return canvas


def camera_homography(
    width_px: int, tilt_deg: float = 50.0, yaw_deg: float = 15.0, distance_m: float = 0.6
) -> np.ndarray:
    """(3, 3) table metres -> image pixels for a pinhole camera (60 degree horizontal field of view)
    looking at the sheet's centre from ``distance_m``, tilted ``tilt_deg`` from straight down."""
    height_px = width_px * 3 // 4
    f = (width_px / 2) / np.tan(np.radians(30))
    K = np.array([[f, 0, (width_px - 1) / 2], [0, f, (height_px - 1) / 2], [0, 0, 1]])
    centre = np.append(_apply(_sheet_to_table(), np.array([[SHEET[0] / 2, SHEET[1] / 2]]))[0], 0.0)
    t, y = np.radians(tilt_deg), np.radians(yaw_deg)
    # the canvas is drawn x right, y down: seen unmirrored from the -Z side, so "up" is -Z here
    back = np.array([np.sin(y) * np.sin(t), np.cos(y) * np.sin(t), -np.cos(t)])  # from centre to camera
    position = centre + distance_m * back
    z = (centre - position) / np.linalg.norm(centre - position)
    x = np.cross(z, [0, 0, -1.0])
    x /= np.linalg.norm(x)
    yy = np.cross(z, x)
    R = np.stack([x, yy, z])  # world -> camera rows (x right, y down, z forward)
    tvec = -R @ position
    return K @ np.column_stack([R[:, 0], R[:, 1], tvec])


def render(
    texture_path: Path,
    width_px: int,
    seed: int = 0,
    tilt_deg: float = 50.0,
    yaw_deg: float = 15.0,
    jpeg_quality: int = 85,
    canvas: np.ndarray | None = None,
) -> PlanarPhoto:
    """A blurred, noisy, JPEG-compressed perspective photo ``width_px`` wide (4:3) of the table."""
    canvas = table_canvas(texture_path) if canvas is None else canvas
    H_table = camera_homography(width_px, tilt_deg, yaw_deg)
    ss = 3
    up = np.array([[ss, 0, 0.5 * ss - 0.5], [0, ss, 0.5 * ss - 0.5], [0, 0, 1.0]]) @ H_table
    canvas_to_table = np.array([[1 / PX_PER_M, 0, 0.5 / PX_PER_M], [0, 1 / PX_PER_M, 0.5 / PX_PER_M], [0, 0, 1]])
    height_px = width_px * 3 // 4
    big = cv2.warpPerspective(
        canvas, up @ canvas_to_table, (width_px * ss, height_px * ss), flags=cv2.INTER_LINEAR, borderValue=(70, 60, 50)
    )
    image = cv2.resize(big, (width_px, height_px), interpolation=cv2.INTER_AREA).astype(np.float64)
    rng = np.random.default_rng(seed)
    image = cv2.GaussianBlur(image, (0, 0), 0.6) + rng.normal(0, 2.0, image.shape)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(image, 0, 255).astype(np.uint8)).save(buffer, format="JPEG", quality=jpeg_quality)
    photo = np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"))
    sheet_to_image = H_table @ _sheet_to_table()
    return PlanarPhoto(photo, sheet_to_image / sheet_to_image[2, 2], H_table, {k: v[0] for k, v in DOTS.items()})
