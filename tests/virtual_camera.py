"""Exact virtual camera motion over real photos, for testing motion estimation against known truth.

- Turning and zooming cameras: a real image warped by the homography K_b diag(z, z, 1) R K^-1 (exact for a
  camera that only rotates or zooms, whatever the scene's depth).
- Translating cameras: a real RGB-D frame's pixels lifted with its measured depth, moved into the new
  camera and forward-warped with a z-buffer (holes inpainted), so near things move more than far ones.

Rotations use the conventions of ``primitives/motion/angles.py``: yaw positive = turning right (about the camera's
+y, down, axis), pitch positive = looking up, roll positive = clockwise as the camera sees it. All images
are rendered at full size and then reduced to ``width`` pixels (benchmark resolution).
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
from PIL import Image


def rotation_ypr(yaw_deg: float, pitch_deg: float = 0.0, roll_deg: float = 0.0) -> np.ndarray:
    """Orientation (camera b in camera a's frame) R = Ry(yaw) Rx(pitch) Rz(roll), OpenCV axes."""
    a, b, c = (math.radians(v) for v in (yaw_deg, pitch_deg, roll_deg))
    Ry = np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    Rx = np.array([[1, 0, 0], [0, math.cos(b), -math.sin(b)], [0, math.sin(b), math.cos(b)]])
    Rz = np.array([[math.cos(c), -math.sin(c), 0], [math.sin(c), math.cos(c), 0], [0, 0, 1]])
    return Ry @ Rx @ Rz


def intrinsics(width: int, height: int, hfov_deg: float) -> np.ndarray:
    focal = 0.5 * width / math.tan(math.radians(hfov_deg) / 2)
    return np.array([[focal, 0, (width - 1) / 2], [0, focal, (height - 1) / 2], [0, 0, 1.0]])


def shrink(rgb: np.ndarray, width: int) -> np.ndarray:
    height = round(rgb.shape[0] * width / rgb.shape[1])
    return cv2.resize(rgb, (width, height), interpolation=cv2.INTER_AREA)


def scaled_K(K: np.ndarray, factor: float) -> np.ndarray:
    """Intrinsics of the same camera after resizing the image by ``factor`` (pixel-centre convention)."""
    S = np.array([[factor, 0, 0.5 * factor - 0.5], [0, factor, 0.5 * factor - 0.5], [0, 0, 1]])
    return S @ K


def turning_sequence(
    rgb: np.ndarray, K: np.ndarray, orientations: list[np.ndarray], zooms: list[float] | None = None, width: int = 200
) -> list[np.ndarray]:
    """Frames of a camera at a fixed point with orientation ``orientations[i]`` (in frame 0's camera frame)
    and focal ``zooms[i]`` x the original: each is ``rgb`` warped by K diag(z, z, 1) R_i^T K^-1, then shrunk.
    Zooming in crops the view, so start from an image wider than the benchmark frame."""
    zooms = zooms or [1.0] * len(orientations)
    height_full, width_full = rgb.shape[:2]
    frames = []
    for R, zoom in zip(orientations, zooms, strict=True):
        H = K @ np.diag([zoom, zoom, 1.0]) @ R.T @ np.linalg.inv(K)
        warped = cv2.warpPerspective(
            rgb, H, (width_full, height_full), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT
        )
        frames.append(shrink(warped, width))
    return frames


def translating_sequence(
    rgb: np.ndarray,
    depth: np.ndarray,
    K: np.ndarray,
    centres: list[np.ndarray],
    orientations: list[np.ndarray] | None = None,
    width: int = 200,
) -> list[np.ndarray]:
    """Frames of a camera at ``centres[i]`` (metres, in frame 0's camera frame) with ``orientations[i]``,
    rendered from one RGB-D frame (depth in metres, NaN/0 = none) by z-buffered forward warping."""
    height_full, width_full = depth.shape
    ys, xs = np.mgrid[0:height_full, 0:width_full]
    z = depth.astype(np.float64)
    valid = np.isfinite(z) & (z > 0)
    points = np.stack([(xs - K[0, 2]) * z / K[0, 0], (ys - K[1, 2]) * z / K[1, 1], z], axis=-1)[valid]
    colours = rgb[valid]
    orientations = orientations or [np.eye(3)] * len(centres)
    frames = []
    for centre, R in zip(centres, orientations, strict=True):
        camera = (points - np.asarray(centre, float)) @ R  # R^T (X - c) as rows
        ahead = camera[:, 2] > 0.05
        cam, col = camera[ahead], colours[ahead]
        u = np.round(K[0, 0] * cam[:, 0] / cam[:, 2] + K[0, 2]).astype(int)
        v = np.round(K[1, 1] * cam[:, 1] / cam[:, 2] + K[1, 2]).astype(int)
        inside = (u >= 0) & (u < width_full) & (v >= 0) & (v < height_full)
        u, v, zz, col = u[inside], v[inside], cam[inside, 2], col[inside]
        order = np.argsort(-zz)  # far first, near last: near points overwrite
        image = np.zeros_like(rgb)
        filled = np.zeros((height_full, width_full), np.uint8)
        image[v[order], u[order]] = col[order]
        filled[v[order], u[order]] = 1
        image = cv2.inpaint(image, (1 - filled).astype(np.uint8), 3, cv2.INPAINT_TELEA)
        frames.append(shrink(image, width))
    return frames


def redwood_frame(root: Path, index: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rgb, depth metres with NaN for none, K) of one Redwood RGB-D frame (640x480)."""
    folder = root / "rgbd-redwood"
    rgb = np.asarray(Image.open(folder / "color" / f"{index:05d}.jpg").convert("RGB"))
    depth = np.asarray(Image.open(folder / "depth" / f"{index:05d}.png")).astype(np.float64) / 1000.0
    depth[depth <= 0] = np.nan
    K = np.array([[525.0, 0, 319.5], [0, 525.0, 239.5], [0, 0, 1.0]])
    return rgb, depth, K
