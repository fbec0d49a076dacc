"""An exact ray-caster for the dev set's rooms: a box-shaped room, its furniture, RGB and metric depth.

The room frame is metric (metres), right-handed, +Z up: the floor is z = 0, the ceiling z = ``height``, the
walls x = ±width/2 ("wall x-", "wall x+") and y = ±depth/2 ("wall y-", "wall y+"). Walls and floor are
textured with crops of real photos (each surface its own crop; a wall's photo reads left to right and top to
bottom as seen from inside the room), a door and a window are rectangles in walls, and the furniture is
axis-aligned boxes and vertical cylinders of flat colours. Shading is Lambert from one point light under the
ceiling, with hard shadows cast by the furniture, plus an ambient term; the window's glass is unlit (bright).

Cameras follow OpenCV (x right, y down, z forward) with camera-to-world 4x4 poses; a camera's heading is
degrees clockwise seen from above from +Y (0 = +Y, 90 = +X), its pitch degrees above the horizon. Every
output pixel is 2 x 2 supersampled (the same as rendering at twice the size and averaging 2 x 2 blocks);
depth (z along the optical axis, metres) and the label of the surface hit are exact at each pixel centre.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from PIL import Image

__all__ = [
    "PHOTOS",
    "Opening",
    "Room",
    "Solid",
    "View",
    "heading_of",
    "intrinsics",
    "look_pose",
    "photo_crop",
    "project",
    "render",
    "trace",
]

#: The real photos (under ``$SPATIALCLAW_TEST_DATA``) whose crops texture walls and floors.
PHOTOS = (
    "rgbd-redwood/color/00000.jpg",
    "rgbd-redwood/color/00002.jpg",
    "rgbd-redwood/color/00004.jpg",
    "rgbd-single/TUM_color.png",
    "rgbd-single/NYU_color.ppm",
    "rgbd-single/SUN_color.jpg",
)
SURFACES = ("floor", "ceiling", "wall x-", "wall x+", "wall y-", "wall y+", "door", "window")
#: wall name -> (axis of its normal, side): "wall x+" is the plane x = +width/2.
WALLS = {"wall x-": (0, -1), "wall x+": (0, 1), "wall y-": (1, -1), "wall y+": (1, 1)}
CEILING_RGB = (0.93, 0.92, 0.9)
AMBIENT, DIFFUSE = 0.5, 0.6
_EPS = 1e-6


@dataclass(frozen=True)
class Solid:
    """A piece of furniture standing on the floor. kind: "box" (axis-aligned) or "cylinder" (vertical axis).
    centre: (x, y, z) metres, the middle of its bounding box (z = half its height). size: (x, y, z) extents in
    metres; a cylinder's diameter is size[0] (= size[1]). colour: RGB 0-255."""

    name: str
    kind: Literal["box", "cylinder"]
    centre: tuple[float, float, float]
    size: tuple[float, float, float]
    colour: tuple[int, int, int]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) corners of the bounding box, metres."""
        c, s = np.array(self.centre), np.array(self.size) / 2
        return c - s, c + s


@dataclass(frozen=True)
class Opening:
    """A door or window: a rectangle in ``wall`` ("wall y+", ...), ``along`` metres (its centre's x on a
    y-wall, its y on an x-wall), ``width`` metres, from ``bottom`` to ``top`` metres above the floor."""

    name: Literal["door", "window"]
    wall: str
    along: float
    width: float
    bottom: float
    top: float

    def centre(self, size: tuple[float, float, float]) -> np.ndarray:
        """(x, y, z) metres of the rectangle's centre on its wall in a room of ``size``."""
        axis, side = WALLS[self.wall]
        point = np.zeros(3)
        point[axis] = side * size[axis] / 2
        point[1 - axis] = self.along
        point[2] = (self.bottom + self.top) / 2
        return point

    def outward_heading(self) -> float:
        """Heading (degrees clockwise from +Y) of the wall's outward normal: looking out through the opening."""
        axis, side = WALLS[self.wall]
        return (90.0 if axis == 0 else 0.0) + (0.0 if side > 0 else 180.0)


@dataclass(frozen=True)
class Room:
    """size: (width along x, depth along y, height) metres. textures: "floor" and each wall name -> (h, w, 3)
    float RGB 0-1. labels: the surface names a render's label map indexes (``SURFACES`` then the solids)."""

    size: tuple[float, float, float]
    textures: dict[str, np.ndarray] = field(repr=False)
    openings: tuple[Opening, ...]
    solids: tuple[Solid, ...]

    @property
    def labels(self) -> list[str]:
        return [*SURFACES, *(s.name for s in self.solids)]

    @property
    def light(self) -> np.ndarray:
        return np.array([0.0, 0.0, 0.8 * self.size[2]])


@dataclass(frozen=True)
class View:
    """One rendered view. rgb: (h, w, 3) uint8. depth: (h, w) metres along the optical axis. label: (h, w)
    indices into ``Room.labels``. K: (3, 3) intrinsics in pixels; pose: (4, 4) camera-to-world."""

    rgb: np.ndarray
    depth: np.ndarray
    label: np.ndarray
    K: np.ndarray
    pose: np.ndarray


# cameras -------------------------------------------------------------------------------------------
def intrinsics(width: int, height: int, hfov_deg: float) -> np.ndarray:
    """(3, 3) pinhole intrinsics with square pixels and the principal point at the image centre."""
    f = 0.5 * width / math.tan(math.radians(hfov_deg) / 2)
    return np.array([[f, 0.0, (width - 1) / 2], [0.0, f, (height - 1) / 2], [0.0, 0.0, 1.0]])


def look_pose(position: np.ndarray, heading_deg: float, pitch_deg: float = 0.0) -> np.ndarray:
    """(4, 4) camera-to-world pose at ``position`` facing ``heading_deg``, tilted ``pitch_deg`` up (no roll)."""
    h, p = math.radians(heading_deg), math.radians(pitch_deg)
    forward = np.array([math.sin(h) * math.cos(p), math.cos(h) * math.cos(p), math.sin(p)])
    right = np.array([math.cos(h), -math.sin(h), 0.0])
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, np.cross(forward, right), forward], axis=1)
    pose[:3, 3] = position
    return pose


def heading_of(pose: np.ndarray) -> float:
    """Heading (degrees clockwise from +Y, in [0, 360)) of a pose's optical axis projected on the floor."""
    forward = pose[:3, 2]
    return math.degrees(math.atan2(float(forward[0]), float(forward[1]))) % 360.0


def project(K: np.ndarray, pose: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """((N, 2) pixels, (N,) depths in metres along the optical axis) of (N, 3) world points."""
    camera = (np.asarray(points, np.float64) - pose[:3, 3]) @ pose[:3, :3]
    pixels = camera @ K.T
    return pixels[:, :2] / pixels[:, 2:], camera[:, 2]


# textures ------------------------------------------------------------------------------------------
def photo_crop(
    root: Path, photo: str, aspect: float, rng: np.random.Generator, tint: tuple[float, float, float]
) -> np.ndarray:
    """A random crop (width / height = ``aspect``) of a real photo, blended 65/35 with ``tint`` (RGB 0-1) so
    that a wall reads as a wall; (h, w, 3) float RGB 0-1."""
    image = np.asarray(Image.open(root / photo).convert("RGB"), np.float32) / 255.0
    h, w = image.shape[:2]
    cw = min(w, h * aspect) * rng.uniform(0.7, 1.0)
    ch = cw / aspect
    x0, y0 = rng.uniform(0, w - cw), rng.uniform(0, h - ch)
    crop = image[int(y0) : int(y0 + ch), int(x0) : int(x0 + cw)]
    return np.asarray(0.65 * crop + 0.35 * np.array(tint, np.float32), np.float32)


def _sample(texture: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Bilinear lookup of (N,) texture coordinates u, v in [0, 1] (left to right, top to bottom)."""
    h, w = texture.shape[:2]
    x, y = np.clip(u, 0, 1) * (w - 1), np.clip(v, 0, 1) * (h - 1)
    x0, y0 = np.minimum(x.astype(int), w - 2), np.minimum(y.astype(int), h - 2)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    top = texture[y0, x0] * (1 - fx) + texture[y0, x0 + 1] * fx
    bottom = texture[y0 + 1, x0] * (1 - fx) + texture[y0 + 1, x0 + 1] * fx
    out: np.ndarray = top * (1 - fy) + bottom * fy
    return out


# intersections -------------------------------------------------------------------------------------
def _hit_box(o: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N,) ray parameters of the entry into an axis-aligned box (inf: missed) and (N, 3) outward normals."""
    t_near, t_far = np.full(len(d), -np.inf), np.full(len(d), np.inf)
    axis = np.zeros(len(d), int)
    for a in range(3):
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (lo[a] - o[..., a]) / d[:, a], (hi[a] - o[..., a]) / d[:, a]
        near = np.minimum(t1, t2)
        later = near > t_near
        t_near, axis = np.where(later, near, t_near), np.where(later, a, axis)
        t_far = np.minimum(t_far, np.maximum(t1, t2))
    rows = np.arange(len(d))
    normal = np.zeros_like(d)
    normal[rows, axis] = -np.sign(d[rows, axis])
    return np.where((t_near <= t_far) & (t_near > _EPS), t_near, np.inf), normal


def _hit_cylinder(o: np.ndarray, d: np.ndarray, solid: Solid) -> tuple[np.ndarray, np.ndarray]:
    """(N,) ray parameters of the first hit on a vertical cylinder's side or top (inf: missed), (N, 3) normals."""
    radius = solid.size[0] / 2
    (cx, cy, _), (_, _, top) = solid.centre, solid.bounds()[1]
    ox, oy, oz = (o[..., 0] - cx), (o[..., 1] - cy), o[..., 2]
    dx, dy, dz = d[:, 0], d[:, 1], d[:, 2]
    a, b, c = dx * dx + dy * dy, 2 * (ox * dx + oy * dy), ox * ox + oy * oy - radius * radius
    disc = b * b - 4 * a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        side = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
        cap = (top - oz) / dz
    z = oz + side * dz
    side = np.where((disc >= 0) & (a > 0) & (z >= 0) & (z <= top) & (side > _EPS), side, np.inf)
    px, py = ox + cap * dx, oy + cap * dy
    cap = np.where((cap > _EPS) & (px * px + py * py <= radius * radius), cap, np.inf)
    t = np.minimum(side, cap)
    normal = np.zeros_like(d)
    on_side = side < cap
    normal[on_side, 0] = (ox + side * dx)[on_side] / radius
    normal[on_side, 1] = (oy + side * dy)[on_side] / radius
    normal[~on_side, 2] = 1.0
    return t, normal


def _hit_solids(room: Room, o: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nearest furniture hit: (N,) ray parameters (inf: none), (N,) solid indices (-1: none), (N, 3) normals."""
    best, which, normal = np.full(len(d), np.inf), np.full(len(d), -1), np.zeros_like(d)
    for k, solid in enumerate(room.solids):
        t, n = _hit_box(o, d, *solid.bounds()) if solid.kind == "box" else _hit_cylinder(o, d, solid)
        closer = t < best
        best[closer], which[closer], normal[closer] = t[closer], k, n[closer]
    return best, which, normal


def cast(room: Room, origin: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rays from ``origin`` (3,) inside the room along (N, 3) directions: (N,) ray parameters of the first hit,
    (N,) labels (indices into ``room.labels``), (N, 3) unit normals facing the ray."""
    half = np.array(room.size) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t_walls = [(np.sign(d[:, axis]) * half[axis] - origin[axis]) / d[:, axis] for axis in (0, 1)]
        t_floor = np.where(d[:, 2] < 0, -origin[2] / d[:, 2], np.inf)
        t_ceiling = np.where(d[:, 2] > 0, (room.size[2] - origin[2]) / d[:, 2], np.inf)
    candidates = np.stack([t_floor, t_ceiling, *(np.where(np.isfinite(t) & (t > 0), t, np.inf) for t in t_walls)])
    pick = candidates.argmin(axis=0)
    t = candidates[pick, np.arange(len(d))]
    label = np.where(pick == 1, 1, 0)
    normal = np.zeros_like(d)
    normal[pick == 0, 2], normal[pick == 1, 2] = 1.0, -1.0
    for axis in (0, 1):
        hit = pick == 2 + axis
        positive = d[:, axis] > 0
        label = np.where(hit, 2 + 2 * axis + positive, label)  # "wall x-", "wall x+", "wall y-", "wall y+"
        normal[hit, axis] = np.where(positive, -1.0, 1.0)[hit]
    point = origin + t[:, None] * d
    for opening in room.openings:
        axis = WALLS[opening.wall][0]
        inside = (
            (label == SURFACES.index(opening.wall))
            & (np.abs(point[:, 1 - axis] - opening.along) <= opening.width / 2)
            & (point[:, 2] >= opening.bottom)
            & (point[:, 2] <= opening.top)
        )
        label[inside] = SURFACES.index(opening.name)
    t_solid, which, n_solid = _hit_solids(room, np.asarray(origin)[None], d)
    closer = t_solid < t
    t[closer], label[closer], normal[closer] = t_solid[closer], len(SURFACES) + which[closer], n_solid[closer]
    return t, label, normal


# shading -------------------------------------------------------------------------------------------
def _opening_albedo(room: Room, opening: Opening, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) RGB 0-1 of a door or window at its (N, 3) points, and (N,) True where it is unlit glass."""
    axis, _ = WALLS[opening.wall]
    s, z = np.abs(point[:, 1 - axis] - opening.along), point[:, 2]
    edge = np.minimum(np.minimum(opening.width / 2 - s, z - opening.bottom), opening.top - z)
    glass = np.zeros(len(point), bool)
    if opening.name == "door":
        rgb = np.where((edge < 0.06)[:, None], [0.3, 0.17, 0.08], [0.52, 0.33, 0.17])
        knob = (np.hypot(point[:, 1 - axis] - opening.along - 0.36 * opening.width, z - 1.0) < 0.04)[:, None]
        return np.where(knob, [0.85, 0.75, 0.3], rgb), glass
    middle = (opening.bottom + opening.top) / 2
    frame = (edge < 0.07) | (s < 0.025) | (np.abs(z - middle) < 0.025)
    height = np.clip((z - opening.bottom) / (opening.top - opening.bottom), 0, 1)[:, None]
    sky = (1 - height) * np.array([0.78, 0.88, 0.97]) + height * np.array([0.45, 0.68, 0.95])
    return np.where(frame[:, None], [0.96, 0.96, 0.94], sky), ~frame


def _albedo(room: Room, point: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) surface colours (RGB 0-1) at hit points, and (N,) True where the surface is unlit (glass)."""
    W, D, H = room.size
    rgb, unlit = np.zeros_like(point), np.zeros(len(point), bool)
    x, y, z = point.T
    coordinates = {
        "floor": ((x + W / 2) / W, (D / 2 - y) / D),
        "wall y+": ((x + W / 2) / W, (H - z) / H),
        "wall y-": ((W / 2 - x) / W, (H - z) / H),
        "wall x+": ((D / 2 - y) / D, (H - z) / H),
        "wall x-": ((y + D / 2) / D, (H - z) / H),
    }
    for name, (u, v) in coordinates.items():
        mine = label == SURFACES.index(name)
        rgb[mine] = _sample(room.textures[name], u[mine], v[mine])
    rgb[label == 1] = CEILING_RGB
    for opening in room.openings:
        mine = label == SURFACES.index(opening.name)
        rgb[mine], unlit[mine] = _opening_albedo(room, opening, point[mine])
    for k, solid in enumerate(room.solids):
        rgb[label == len(SURFACES) + k] = np.array(solid.colour) / 255.0
    return rgb, unlit


def _shade(room: Room, origin: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(N, 3) linear RGB 0-1 seen along (N, 3) rays from ``origin``."""
    t, label, normal = cast(room, origin, d)
    point = origin + t[:, None] * d
    albedo, unlit = _albedo(room, point, label)
    to_light = room.light - point
    lambert = np.clip(np.sum(normal * to_light, axis=1) / np.linalg.norm(to_light, axis=1), 0, 1)
    blocked, _, _ = _hit_solids(room, point + 1e-4 * normal, to_light)
    lambert[blocked < 1.0] = 0.0
    light = np.where(unlit, 1.0, AMBIENT + DIFFUSE * lambert)
    out: np.ndarray = np.clip(albedo * light[:, None], 0, 1)
    return out


def _rays(K: np.ndarray, pose: np.ndarray, width: int, height: int, dx: float, dy: float) -> np.ndarray:
    """(h * w, 3) world directions through pixel centres shifted by (dx, dy), scaled so that the ray
    parameter is the depth along the optical axis."""
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    camera = np.stack([(xs.ravel() + dx - K[0, 2]) / K[0, 0], (ys.ravel() + dy - K[1, 2]) / K[1, 1]], axis=1)
    out: np.ndarray = np.column_stack([camera, np.ones(len(camera))]) @ pose[:3, :3].T
    return out


def trace(
    room: Room, pose: np.ndarray, hfov_deg: float, width: int = 224, height: int = 168
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K (3, 3), depth (h, w) metres along the optical axis, label (h, w)) at the pixel centres, unshaded."""
    origin = pose[:3, 3]
    if not all(abs(origin[a]) < room.size[a] / 2 for a in (0, 1)) or not 0 < origin[2] < room.size[2]:
        raise ValueError(f"camera at {origin.round(3).tolist()} m is outside the room {room.size}")
    K = intrinsics(width, height, hfov_deg)
    t, label, _ = cast(room, origin, _rays(K, pose, width, height, 0.0, 0.0))
    return K, t.reshape(height, width), label.reshape(height, width).astype(np.int16)


def render(room: Room, pose: np.ndarray, hfov_deg: float, width: int = 224, height: int = 168) -> View:
    """Render ``room`` from a camera-to-world ``pose`` with a horizontal field of view of ``hfov_deg``."""
    K, depth, label = trace(room, pose, hfov_deg, width, height)
    origin = pose[:3, 3]
    shifts = [(dx, dy) for dx in (-0.25, 0.25) for dy in (-0.25, 0.25)]
    colour = np.mean([_shade(room, origin, _rays(K, pose, width, height, dx, dy)) for dx, dy in shifts], axis=0)
    rgb = np.round(colour.reshape(height, width, 3) * 255).astype(np.uint8)
    return View(rgb, depth, label, K, pose.copy())
