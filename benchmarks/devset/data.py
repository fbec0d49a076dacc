"""The dev set's real data and image helpers: the measured RGB-D frames (depth in metres by each dataset's
convention), key-frame resizing to the benchmark width, PNG saving and camera rotations.

The data lives in ``$SPATIALCLAW_TEST_DATA`` (see its README).

Conventions (as in :mod:`spatialclaw.benchmarks.devset.build`): pixels (x, y) from the top-left; camera frames
OpenCV (x right, y down, z forward); a pan to the right turns the optical axis towards +x, a tilt up
towards -y; angles in degrees, distances in metres or the unit the question names.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
from PIL import Image

__all__ = ["WIDTH", "data_root", "rgbd", "rotation", "save", "small_frame"]

WIDTH = 224  # key-frame width in pixels, as benchmarks show them (150-250 px)


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
            while raw[header_end : header_end + 1].isspace():
                header_end += 1
            while not raw[header_end : header_end + 1].isspace():
                header_end += 1
            fields += 1
        data = np.frombuffer(raw[header_end + 1 :], dtype="<u2")[: 640 * 480].reshape(480, 640).astype(np.float64)
        depth = 351.3 / np.maximum(1092.5 - data, 1e-6)
        depth[(data >= 2047) | (depth <= 0) | (depth > 10)] = 0
        return depth
    values = np.array(Image.open(path)).astype(np.uint32)
    if kind == "mm":
        return values / 1000.0
    if kind == "tum":
        return values / 5000.0
    if kind == "sun":
        unrotated = ((values >> 3) | (values << 13)) & 0xFFFF
        depth = unrotated / 1000.0
        depth[depth > 10] = 0
        return depth
    raise ValueError(kind)


def rgbd(root: Path, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    colour, depth, kind, (fx, fy, cx, cy) = _RGBD[name]
    rgb = np.array(Image.open(root / colour).convert("RGB"))
    K = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]])
    return rgb, _depth_m(root / depth, kind), K


def save(image: np.ndarray | Image.Image, path: Path) -> str:
    picture = image if isinstance(image, Image.Image) else Image.fromarray(image)
    picture.save(path)
    return path.name


def small_frame(image: np.ndarray) -> Image.Image:
    h, w = image.shape[:2]
    return Image.fromarray(image).resize((WIDTH, round(h * WIDTH / w)), Image.Resampling.LANCZOS)


def rotation(axis: str, degrees: float) -> np.ndarray:
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
