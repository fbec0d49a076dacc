"""Camera tilt (pitch and roll) of one photo: the pose of a tilted camera, the image row of its horizon,
and the tilt estimated from the image's near-vertical edges (part of ``geom``).

World frame of a tilted camera (the design world of a single camera): metres, right-handed, +Z up,
origin at the camera's centre, +Y = the camera's viewing direction projected onto the ground, +X = its
right. Pitch and roll (degrees), the same signs as ``motion``: pitch > 0 = the camera tilts UP by that
angle from level (a camera looking down at the floor has a NEGATIVE pitch, e.g. -25); roll > 0 = the
camera rolls clockwise as it sees it, so that its right side is lower (the horizon rises towards the
right of the image). ``camera_tilt`` estimates them from the vanishing point of the near-vertical
edges (door frames, wall corners, furniture legs; +- 5 degrees).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics
from spatialclaw.primitives.geometry.horizon import HorizonTilt, horizon_tilt
from spatialclaw.primitives.geometry.tilt_evidence import (
    RIVAL_SEPARATION_DEG,
    border_segments,
    intrinsics_sigma_deg,
    rival_pitch,
)
from spatialclaw.primitives.runtime.library_failures import or_refuse

__all__ = ["DEFAULT_HFOV_DEG", "TILT_SIGMA_DEG", "CameraTilt", "camera_tilt", "horizon_row", "tilted_camera_pose"]

DEFAULT_HFOV_DEG = 60.0
TILT_SIGMA_DEG = 5.0
"""Uncertainty of a pitch estimated by ``camera_tilt``, degrees (errors of -5.3..+1.2 degrees measured on
four real RGB-D room photos at 224 px, truth from their depth's floor plane)."""
_MIN_EDGE_PX = 12.0
_MAX_EDGE_TILT_DEG = 25.0
_EDGE_TOLERANCE_RAD = 0.015
_MIN_HORIZON_FOV_DEG = 40.0  # narrower views put the vanishing points far out: the horizon misled there

_LEVEL = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # camera x, y, z -> world X, -Z, Y


def rot_x(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def tilted_camera_pose(pitch_deg: float = 0.0, roll_deg: float = 0.0) -> np.ndarray:
    """(4, 4) camera-to-world pose of a camera at the world origin facing +Y, pitched ``pitch_deg``
    (degrees, > 0 tilts UP, < 0 looks down) and then rolled ``roll_deg`` about its viewing axis
    (clockwise, right side lower, for > 0)."""
    pose = np.eye(4)
    pose[:3, :3] = _LEVEL @ rot_x(float(pitch_deg)) @ rot_z(float(roll_deg))
    return pose


def horizon_row(K: Any, pitch_deg: float) -> float:
    """Image row (pixels, y down) of the horizon at the principal point's column for a camera pitched
    ``pitch_deg`` (> 0 up, < 0 down) with no roll: floor points lie below it (larger y)."""
    K = as_intrinsics(K)
    return float(K[1, 2] + K[1, 1] * np.tan(np.radians(pitch_deg)))


@dataclass(frozen=True)
class CameraTilt:
    """A camera's tilt estimated from one image.

    Attributes:
        pitch_deg: pitch, degrees (> 0 tilts UP, < 0 looks down, as in ``motion``). roll_deg: roll, degrees
            (clockwise, right side lower, for > 0). pitch_sigma_deg: its uncertainty, degrees. edges: image
            lines that agree. source: what it was read from ("vertical edges", "horizon through N vanishing
            points", "vertical and horizontal vanishing points", "floor-wall boundary and 1 vanishing
            point"). caveat: why the sigma is wider than usual ("" when it is not), e.g. a rival pitch the
            edges also support or a horizon that disagrees. note: anything else to know ("" when nothing).
        rival_pitch_deg: the other pitch the caveat names (degrees, same signs), or None; rival_support: its
            evidence as a share of the chosen pitch's (0..1; 1 when the two are as well supported).
            ``floor_point`` mixes the two pitches instead of one wide spread.
        camera_height_m / camera_height_sigma_m: with ``known=``, the camera's height above the floor that
            goes with the pitch (metres) and its sigma; camera_height_how: "assumed" (1.5 +- 0.25 m),
            "given", "solved" (from two or more objects) or "solved from the object at this pitch" (the
            edges' pitch averaged in); None / "" without ``known=``. ``floor_point(tilt=)`` uses a given or
            solved height.
    """

    pitch_deg: float
    roll_deg: float
    pitch_sigma_deg: float
    edges: int
    source: str = "vertical edges"
    caveat: str = ""
    note: str = ""
    rival_pitch_deg: float | None = None
    rival_support: float = 1.0
    camera_height_m: float | None = None
    camera_height_sigma_m: float | None = None
    camera_height_how: str = ""

    @property
    def text(self) -> str:
        way = "up" if self.pitch_deg > 0 else "down"
        return (
            f"camera pitch {self.pitch_deg:+.1f} ± {self.pitch_sigma_deg:g} deg (looks {way} "
            f"{abs(self.pitch_deg):.1f} deg), roll {self.roll_deg:+.0f} deg ("
            + (
                f"from {self.edges} {self.source}"
                if self.source == "vertical edges"
                else f"from {self.source}"
                if "known height" in self.source
                else f"from the {self.source}, {self.edges} edges"
            )
            + ")"
            + (
                f"; camera {self.camera_height_m:.2f} ± {self.camera_height_sigma_m:.2f} m above the floor "
                f"({self.camera_height_how})"
                if self.camera_height_m is not None
                else ""
            )
            + (f"; AMBIGUOUS: {self.caveat}" if self.caveat else "")
            + (f"; {self.note}" if self.note else "")
        )

    def __repr__(self) -> str:
        return self.text


def line_segments(frame: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gray (H, W) uint8, segments (N, 4) x0 y0 x1 y1 pixels, lengths (N,) pixels) of an image's straight
    edges (OpenCV's line segment detector), without those along a flat border (a rotated photo's wedges)."""
    import cv2

    from spatialclaw.primitives.imaging import as_rgb_array

    gray = cv2.cvtColor(as_rgb_array(frame), cv2.COLOR_RGB2GRAY)
    found = cv2.createLineSegmentDetector().detect(gray)[0]
    segments = np.zeros((0, 4)) if found is None else found.reshape(-1, 4).astype(np.float64)
    segments = segments[~border_segments(gray, segments)]
    return gray, segments, np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1])


def _from_vertical_edges(
    segments: np.ndarray, length: np.ndarray, K: np.ndarray, width: int, given_K: bool
) -> tuple[CameraTilt | None, str, np.ndarray]:
    """The tilt whose vertical vanishing direction the most near-vertical edge length passes through, or
    None and why when too few such edges agree (see ``camera_tilt``); and the (N,) mask of the edges that
    agree with it."""
    dx, dy = segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1]
    long_enough = length >= _MIN_EDGE_PX * width / 224.0
    steep = np.degrees(np.arctan2(np.abs(dx), np.abs(dy))) < _MAX_EDGE_TILT_DEG
    ends = [
        np.linalg.solve(K, np.stack([segments[:, i], segments[:, i + 1], np.ones(len(segments))])).T for i in (0, 2)
    ]
    lines = np.cross(ends[0], ends[1])
    lines /= np.maximum(np.linalg.norm(lines, axis=1, keepdims=True), 1e-12)
    down = np.arange(-30.0, 75.01, 0.5)  # downward tilt on the grid; the result's pitch is its negative
    rolls = np.arange(-10.0, 10.01, 1.0)
    t, r = np.radians(down)[:, None], np.radians(rolls)[None, :]
    up = np.stack([-np.sin(r) * np.cos(t), -np.cos(r) * np.cos(t), -np.sin(t) + 0 * r], axis=-1)  # camera frame
    vertical = long_enough & steep
    v_lines, v_length = lines[vertical], length[vertical]
    residual = np.abs(np.einsum("nk,prk->prn", v_lines, up))
    support = (v_length * np.clip(1.0 - (residual / _EDGE_TOLERANCE_RAD) ** 2, 0.0, None)).sum(axis=-1)
    i, j = np.unravel_index(int(np.argmax(support)), support.shape) if len(v_lines) else (0, 0)
    agreeing = residual[i, j] < _EDGE_TOLERANCE_RAD if len(v_lines) else np.zeros(0, bool)
    off_centre = np.abs((segments[vertical, 0] + segments[vertical, 2]) / 2.0 - K[0, 2]) > 0.15 * width
    used = np.zeros(len(segments), bool)
    used[np.flatnonzero(vertical)[agreeing]] = True
    if not (agreeing.sum() >= 6 and (agreeing & off_centre).sum() >= 3 and i not in (0, len(down) - 1)):
        return (
            None,
            (
                f"too few near-vertical edges ({int(agreeing.sum())} near-vertical agree, "
                f"{int((agreeing & off_centre).sum())} away from the centre)"
            ),
            used,
        )
    pitch = -float(down[i])
    sigma = TILT_SIGMA_DEG if given_K else float(np.hypot(TILT_SIGMA_DEG, intrinsics_sigma_deg(pitch)))
    # edges near the centre column fit every pitch: judge rivals by the off-centre edges alone
    side = (v_length * off_centre * np.clip(1.0 - (residual / _EDGE_TOLERANCE_RAD) ** 2, 0.0, None)).sum(-1)
    rival = rival_pitch(down, side.max(axis=1), int(np.argmax(side.max(axis=1))))
    caveat, rival_deg, support = "", None, 1.0
    if rival is not None and abs(-rival - pitch) >= RIVAL_SEPARATION_DEG:
        sigma = max(sigma, abs(-rival - pitch) / 2.0 + TILT_SIGMA_DEG)
        caveat, rival_deg = f"the edges also fit pitch {-rival:+.1f} deg", -rival
        support = float(side.max(axis=1)[int(np.argmin(np.abs(down - rival)))] / side.max())
    tilt = CameraTilt(pitch, float(rolls[j]), round(sigma, 1), int(agreeing.sum()), caveat=caveat)
    return replace(tilt, rival_pitch_deg=rival_deg, rival_support=round(support, 2)), "", used


def camera_tilt(
    frame: Any,
    *,
    known: Any = None,
    K: Any = None,
    hfov_deg: float | None = None,
    pixel_sigma_px: float = 2.0,
    camera_height_m: float | None = None,
) -> CameraTilt:
    """Camera pitch and roll from the image's edges or a known height (``known=``).

    The edges give the best evidence the image shows (``.source``):

    1. "vertical edges": world-vertical edges (door frames, wall corners, furniture legs) converge to a
       vanishing point below the image when the camera looks down, above it when it looks up; the tilt
       whose vertical vanishing direction the most edge length passes through (within about 3 px at
       224 px wide) wins. Needs 6 agreeing edges, 3 of them away from the centre column.
    2. "horizon through N vanishing points" (when vertical edges are too few): families of parallel
       horizontal edges (floor boards, tiles, table and shelf edges, the floor-wall line) meet at
       vanishing points on the horizon; the line through two or more of them is the horizon, so pitch =
       atan((cy - y_horizon) / f) and roll its slope.
    3. "floor-wall boundary and 1 vanishing point": one family of horizontal edges and a long edge
       across the image orthogonal to it (a room's floor-wall line), assuming square corners.
    4. "N object(s) of known height" (with ``known=``): an upright object standing on the floor (a 0.76 m
       oven, a 0.74 m desk) whose top and floor contact rows must agree with its real height: for a camera
       height of 1.5 +- 0.25 m (or ``camera_height_m``) that fixes the pitch; two or more objects at
       different distances fix the camera height too (``.camera_height_m``). Use it when the edges give two
       pitches (``.caveat``) or none. The equation has a second root (a camera looking steeply down at the
       object right below it): the edges, when the image has them, decide, else a weak prior for photos
       does and ``.caveat`` names the other. The sigma draws the pixels (``pixel_sigma_px`` each end), the
       field of view (60 +- 10 without ``K``) and the camera height together; a readout whose sigma is 10
       or more says the known size cannot pin the pitch (object tiny in the image, or near where the two
       roots meet).

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        K: (3, 3) intrinsics, pixels; else ``hfov_deg`` (horizontal field of view, degrees, default 60).
        known: ``(box, height_m)`` or a list of them: box (x0, y0, x1, y1) pixels of an object standing
            upright on the floor (its centre column's top and bottom rows are read: the box must run from
            the object's top to its floor contact; for a box-shaped object below the camera the top edge
            seen is its BACK edge, so pass ((x_top, y_top), (x_bottom, y_bottom)) of one front vertical edge
            instead), or anything with ``.box``; height_m its real height, metres.
        camera_height_m: with ``known=``, the camera's height above the floor when you know it, metres.
        pixel_sigma_px: with ``known=``, the uncertainty of each top / bottom pixel, pixels.

    Edges along a flat dark border (the wedges of a rotated or padded image) are ignored. The sigma is
    honest: it widens to cover another pitch the edges nearly as well support (``.caveat`` names it),
    when the vertical edges and a strong horizon disagree, and, without ``K``, with the tilt (the field
    of view is a guess).

    Returns:
        A ``CameraTilt``: ``.pitch_deg`` (> 0 tilts UP, < 0 looks down), ``.roll_deg`` (> 0 clockwise),
        ``.pitch_sigma_deg`` (degrees; the truth lies within 2 sigma), ``.edges``, ``.source``, ``.caveat``.

    Raises:
        ValueError: neither vertical edges nor a horizon nor a floor-wall boundary tells the tilt; pass
            ``pitch_deg`` to ``floor_point`` yourself (a judgement: 0 = level, -30 = looking well down).
    """
    if known is not None:
        return _with_known_heights(frame, K, hfov_deg, known, camera_height_m, pixel_sigma_px)
    gray, segments, length = or_refuse(
        partial(line_segments, frame),
        "camera_tilt could not read the image's edges ({reason}); pass pitch_deg= (degrees, < 0 looks down)",
    )
    height, width = gray.shape
    K = as_intrinsics(K) if K is not None else None
    given_K = K is not None
    if K is None:
        fov = DEFAULT_HFOV_DEG if hfov_deg is None else float(hfov_deg)
        f = (width / 2.0) / np.tan(np.radians(fov) / 2.0)
        K = np.array([[f, 0.0, (width - 1) / 2.0], [0.0, f, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
    long_enough = length >= _MIN_EDGE_PX * width / 224.0
    segments, length = segments[long_enough], length[long_enough]
    vertical, why_vertical, used = _from_vertical_edges(segments, length, K, width, given_K)
    fov = float(np.degrees(2.0 * np.arctan(width / 2.0 / K[0, 0])))
    horizon, why_horizon = None, f"a view this narrow (fov {fov:.0f} deg) leaves its vanishing points ill-conditioned"
    if fov >= _MIN_HORIZON_FOV_DEG:
        horizon, why_horizon = horizon_tilt(segments, length, K, width)
    if vertical is not None:
        return (
            with_horizon_check(vertical, length[used & horizon.members].sum() / length[used].sum(), horizon, given_K)
            if horizon
            else vertical
        )
    if horizon is not None:
        return from_horizon(horizon, given_K)
    raise ValueError(
        f"{why_vertical} and {why_horizon} to tell the camera's tilt; pass pitch_deg= (degrees, < 0 looks down)"
    )


def _with_known_heights(
    frame: Any, K: Any, hfov_deg: float | None, known: Any, camera_height_m: float | None, pixel_sigma_px: float
) -> CameraTilt:
    """``camera_tilt(frame, known=...)``: the known heights' pitch, its root chosen by the image's edges."""
    from spatialclaw.primitives.geometry.known_height import as_known_heights, tilt_from_known_heights
    from spatialclaw.primitives.imaging import as_rgb_array

    objects = as_known_heights(known)
    if camera_height_m is not None and not (np.isfinite(camera_height_m) and camera_height_m > 0):
        raise ValueError(
            f"camera_height_m must be the camera's height above the floor, metres (> 0), got {camera_height_m}"
        )
    if not (np.isfinite(pixel_sigma_px) and pixel_sigma_px > 0):
        raise ValueError(f"pixel_sigma_px must be > 0 pixels, got {pixel_sigma_px}")
    height, width = as_rgb_array(frame).shape[:2]
    for o in objects:
        if not all(
            -0.5 * width <= x <= 1.5 * width and -0.5 * height <= y <= 1.5 * height for x, y in (o.top, o.bottom)
        ):
            raise ValueError(f"known: the pixels {o.top}, {o.bottom} lie far outside the {width}x{height} image")
    fixed = as_intrinsics(K) if K is not None else None
    if fixed is None and hfov_deg is not None:
        f = (width / 2.0) / np.tan(np.radians(float(hfov_deg)) / 2.0)
        fixed = np.array([[f, 0.0, (width - 1) / 2.0], [0.0, f, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
    try:
        edges: CameraTilt | None = camera_tilt(frame, K=K, hfov_deg=hfov_deg)
    except ValueError:  # no edges: the known heights alone, the readout says so
        edges = None
    return CameraTilt(
        **tilt_from_known_heights(
            objects,
            edges,
            fixed,
            width,
            height,
            camera_height_m=None if camera_height_m is None else float(camera_height_m),
            pixel_sigma_px=float(pixel_sigma_px),
        ),
    )


def with_horizon_check(vertical: CameraTilt, on_horizon: float, horizon: HorizonTilt, given_K: bool) -> CameraTilt:
    """The vertical-edge tilt checked against an unrivalled horizon: the horizon's tilt when at least half
    the edges read as vertical (``on_horizon``, a share of their length) belong to its horizontal families
    (floor or table lines receding to the horizon, not verticals); else the vertical-edge tilt, its sigma
    widened to cover a horizon that disagrees beyond 1.5 combined sigmas (the horizon's taken no wider than
    the edges'), which ``.caveat`` then names."""
    if horizon.rival_deg is not None:
        return vertical
    if on_horizon >= 0.5:
        misread = f"{vertical.edges} near-vertical edges run to the horizon (floor or table lines, not verticals)"
        return replace(from_horizon(horizon, given_K), note=misread)
    gap = abs(horizon.pitch_deg - vertical.pitch_deg)
    # a horizon less sure than the edges still counts as sure as them: a steep one's wide sigma is a floor
    if gap <= 1.5 * float(np.hypot(vertical.pitch_sigma_deg, min(horizon.pitch_sigma_deg, vertical.pitch_sigma_deg))):
        return vertical
    caveat = f"the {horizon.source} says pitch {horizon.pitch_deg:+.1f} deg"
    sigma = max(vertical.pitch_sigma_deg, gap / 2.0 + TILT_SIGMA_DEG)
    return replace(
        vertical,
        pitch_sigma_deg=round(sigma, 1),
        caveat="; ".join(c for c in (vertical.caveat, caveat) if c),
        rival_pitch_deg=vertical.rival_pitch_deg if vertical.rival_pitch_deg is not None else horizon.pitch_deg,
    )


def from_horizon(horizon: HorizonTilt, given_K: bool) -> CameraTilt:
    """A ``CameraTilt`` from the horizon fallback; without ``K`` its sigma grows with the tilt (the field of
    view is a guess)."""
    sigma = (
        horizon.pitch_sigma_deg
        if given_K
        else float(np.hypot(horizon.pitch_sigma_deg, intrinsics_sigma_deg(horizon.pitch_deg)))
    )
    caveat = "" if horizon.rival_deg is None else f"the edges also fit pitch {horizon.rival_deg:+.1f} deg"
    return CameraTilt(
        round(horizon.pitch_deg, 1),
        round(horizon.roll_deg, 1),
        round(sigma, 1),
        horizon.segments,
        horizon.source,
        caveat,
        rival_pitch_deg=horizon.rival_deg,
    )
