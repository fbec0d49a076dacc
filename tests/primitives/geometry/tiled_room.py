"""A rendered room with exact geometry for the wall and known-height tests: the dev set's ray-caster with tiled
walls (grout lines every 0.3 m, horizontal and vertical), a plank floor and furniture of known sizes, so a
test knows each wall's facing, each object's height and the camera's pitch and height exactly."""

from __future__ import annotations

import numpy as np

from spatialclaw.benchmarks.devset import render as devset_render
from spatialclaw.benchmarks.devset.render import Opening, Room, Solid, View, project

SIZE = (6.0, 5.0, 2.6)  # metres: x, y, height
WALL_NORMAL_HEADING = {"wall x-": 90.0, "wall x+": 270.0, "wall y-": 0.0, "wall y+": 180.0}
"""Heading (degrees clockwise from +Y, seen from above) of each wall's inward normal: the way its face looks."""
SOLIDS = (
    Solid("oven", "box", (1.6, 1.2, 0.38), (0.6, 0.6, 0.76), (200, 200, 195)),
    Solid("desk", "box", (-1.5, 1.4, 0.37), (1.2, 0.6, 0.74), (150, 90, 40)),
    Solid("cabinet", "box", (1.0, -1.5, 0.65), (0.9, 0.45, 1.3), (40, 75, 200)),
)


def _tiles(length_m: float, height_m: float, tint: tuple[float, float, float], px_per_m: int = 100) -> np.ndarray:
    """(h, w, 3) float RGB 0-1: square 0.3 m tiles with dark grout lines, a darker skirting 0.1 m high."""
    h, w = int(height_m * px_per_m), int(length_m * px_per_m)
    y, x = np.mgrid[0:h, 0:w] / px_per_m
    grout = (np.abs((x + 0.15) % 0.3 - 0.15) < 0.012) | (np.abs(y % 0.3 - 0.15) < 0.012)
    out = np.ones((h, w, 3), np.float32) * np.array(tint, np.float32)
    out[grout] *= 0.45
    out[y > height_m - 0.1] *= 0.35
    return out


def _planks(width_m: float, depth_m: float, px_per_m: int = 60) -> np.ndarray:
    """(h, w, 3) float RGB 0-1: floor planks 0.2 m wide along y with dark seams."""
    h, w = int(depth_m * px_per_m), int(width_m * px_per_m)
    x = np.mgrid[0:h, 0:w][1] / px_per_m
    out = np.ones((h, w, 3), np.float32) * np.array([0.62, 0.45, 0.3], np.float32)
    out[np.abs(x % 0.2 - 0.1) < 0.01] *= 0.5
    return out


def tiled_room() -> Room:
    """The room: 6 x 5 x 2.6 m, tiled walls, a door in wall y+, an oven (0.76 m), a desk (0.74 m), a cabinet."""
    W, D, H = SIZE
    tints = {"wall x-": (0.9, 0.85, 0.75), "wall x+": (0.8, 0.88, 0.9), "wall y-": (0.92, 0.9, 0.88)}
    textures = {"floor": _planks(W, D), "wall y+": _tiles(W, H, (0.85, 0.9, 0.8))}
    textures.update({name: _tiles(D if name.startswith("wall x") else W, H, tint) for name, tint in tints.items()})
    door = Opening("door", "wall y+", -1.8, 0.9, 0.0, 2.05)
    window = Opening("window", "wall x+", -1.2, 1.2, 0.9, 2.0)
    return Room(SIZE, textures, (door, window), SOLIDS)


def view(heading_deg: float, pitch_deg: float, position: tuple[float, float, float] = (0.0, -1.0, 1.5)) -> View:
    """The room rendered at 320 x 240 px with a 60 degree field of view from a camera at ``position`` (metres,
    its z the camera's height above the floor), facing ``heading_deg`` and pitched ``pitch_deg`` (> 0 up)."""
    pose = devset_render.look_pose(np.array(position, np.float64), heading_deg, pitch_deg)
    return devset_render.render(tiled_room(), pose, 60.0, 320, 240)


def wall_box(v: View, wall: str) -> tuple[float, float, float, float] | None:
    """(x0, y0, x1, y1) pixels around the wall's visible pixels (its 5th to 95th percentiles), or None when
    under 3000 of them are seen."""
    mask = v.label == tiled_room().labels.index(wall)
    if mask.sum() < 3000:
        return None
    ys, xs = np.nonzero(mask)
    return (
        float(np.percentile(xs, 5)),
        float(np.percentile(ys, 5)),
        float(np.percentile(xs, 95)),
        float(np.percentile(ys, 95)),
    )


def true_facing(v: View, wall: str) -> float:
    """The wall's facing, degrees clockwise from the camera's viewing direction seen from above, in (-180, 180]."""
    heading = devset_render.heading_of(v.pose)
    return float(-((-(WALL_NORMAL_HEADING[wall] - heading) + 180.0) % 360.0 - 180.0))


def front_edge(v: View, name: str) -> tuple[tuple[float, float], tuple[float, float], float]:
    """(top pixel, floor-contact pixel, height m) of the vertical edge of solid ``name`` nearest the camera."""
    solid = next(s for s in SOLIDS if s.name == name)
    (x0, y0, _), (sx, sy, sz) = solid.centre, solid.size
    corners = [(x0 + a * sx / 2, y0 + b * sy / 2) for a in (-1, 1) for b in (-1, 1)]
    eye = v.pose[:3, 3]
    x, y = min(corners, key=lambda c: np.hypot(c[0] - eye[0], c[1] - eye[1]))
    pixels, _ = project(v.K, v.pose, np.array([[x, y, sz], [x, y, 0.0]]))
    return tuple(pixels[0]), tuple(pixels[1]), sz
