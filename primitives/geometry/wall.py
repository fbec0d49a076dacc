"""Which way a wall runs and faces relative to the camera, from one image (part of ``geom``).

Angles are degrees on the ground, in the camera's own level frame seen from above: 0 = the viewing
direction (the optical axis projected onto the floor), clockwise positive (90 = the camera's right,
+-180 = back towards the camera). A wall's ``facing_deg`` is the direction its visible face looks (its
normal, pointing out of the wall into the room the camera is in); ``run_deg`` is the angle between the
wall's horizontal lines and the viewing direction (0 = the wall runs straight ahead, like a corridor's
side wall; 90 = it stands square across the view). Pixels are (x, y), y down; depth is metres along the
camera's z axis (OpenCV camera: x right, y down, z forward).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics, backproject
from spatialclaw.primitives.geometry.tilt import DEFAULT_HFOV_DEG, camera_tilt, line_segments, tilted_camera_pose
from spatialclaw.primitives.geometry.vanishing import plane_normals, refine_direction, segment_error_px
from spatialclaw.primitives.imaging import as_rgb_array

__all__ = ["WallDirection", "wall_direction"]

_SAMPLES = 500
_HFOV_SIGMA_DEG = 10.0
_LEVEL_SIGMA_DEG = 10.0  # the tilt assumed when neither given nor seen: level +- this
_ROLL_SIGMA_DEG = 3.0
_MAX_SLANT_DEG = 20.0  # a vanishing direction or a plane normal further than this from horizontal is not a wall's
_MEASURED_DEPTH_SIGMA_DEG = 2.0  # allowance for a measured depth map's bias (a stated allowance, not fitted)
_MODEL_DEPTH_SIGMA_DEG = 8.0  # allowance for a learned depth model's shape error (a stated allowance)
_MIN_DEPTH_POINTS = 50
_PLANE_HYPOTHESES = 300
_RIVAL_SHARE = 0.6  # a second horizontal direction with this share of the best's support is named
_RIVAL_SEPARATION_DEG = 10.0
_EDGE_TOLERANCE_PX = 1.0  # endpoint distance from the line to a vanishing point, pixels at 224 px wide
_MIN_EDGES = 4
_MIN_EDGE_SIGMA_DEG = 2.0  # a few edges understate their own scatter: a vanishing direction is known to 2 deg at best
_FEW_EDGES_DEG = 10.0  # and to 10 / sqrt(edges) deg: 6 edges (a corner of a wall behind a desk) missed by 4.8 deg


@dataclass(frozen=True)
class WallDirection:
    """Which way a wall runs and faces, in the camera's level frame seen from above (see the module).

    Attributes:
        facing_deg: direction the wall's visible face looks, degrees clockwise from the viewing direction
            (90 = faces right, +-180 = faces the camera squarely). run_deg: angle between the wall's horizontal
            lines and the viewing direction, 0..90 degrees. sigma_deg: uncertainty of both, degrees.
        words: the facing in words ("right-and-towards the camera"). source: "depth plane fit (N points)" or
            "N horizontal edges meeting at a vanishing point". assumed: what was assumed (an upright wall,
            the tilt and field of view used). caveat: why the reading may mislead ("" if nothing); rival_deg:
            another facing the box's edges also support (a second family of horizontal lines), or None.
    """

    facing_deg: float
    run_deg: float
    sigma_deg: float
    words: str
    source: str
    assumed: str
    caveat: str = ""
    rival_deg: float | None = None

    @property
    def text(self) -> str:
        """E.g. "the wall runs 35 ± 4 deg from the viewing direction; it faces right-and-towards the camera
        (facing +125 deg clockwise from the viewing direction; +-180 = straight at the camera) ..." """
        out = (
            f"the wall runs {self.run_deg:.0f} ± {self.sigma_deg:.0f} deg from the viewing direction (90 = square "
            f"across the view); it faces {self.words} (facing {self.facing_deg:+.0f} deg clockwise from the viewing "
            f"direction seen from above; ±180 = straight at the camera), from the {self.source}"
        )
        if self.caveat:
            out += f"; AMBIGUOUS: {self.caveat}"
        return out + f" (assumed: {self.assumed})"

    def __repr__(self) -> str:
        return self.text


def _words(facing_deg: float) -> str:
    """The facing in words: right / left, towards / away from the camera, or both joined."""
    a = np.radians(facing_deg)
    parts = []
    if abs(np.sin(a)) > 0.38:
        parts.append("right" if np.sin(a) > 0 else "left")
    if abs(np.cos(a)) > 0.38:
        parts.append("towards the camera" if np.cos(a) < 0 else "away from the camera")
    return "-and-".join(parts)


def _wrap(angle: np.ndarray) -> np.ndarray:
    return np.asarray((angle + 180.0) % 360.0 - 180.0)


def _box_of(box: Any, width: int, height: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) integer pixels of ``box`` (or of anything with ``.box``) clipped to the image."""
    box = getattr(box, "box", box)
    try:
        x0, y0, x1, y1 = (float(v) for v in np.asarray(box, dtype=np.float64).ravel())
    except (TypeError, ValueError):
        raise ValueError(f"box must be (x0, y0, x1, y1) pixels of the wall, got {box!r}") from None
    a, b = int(np.floor(max(x0, 0))), int(np.floor(max(y0, 0)))
    c, d = int(np.ceil(min(x1, width))), int(np.ceil(min(y1, height)))
    if c - a < 4 or d - b < 4:
        raise ValueError(
            f"box {tuple(round(v, 1) for v in (x0, y0, x1, y1))} leaves under 4x4 pixels of the wall inside the "
            f"{width}x{height} image; pass (x0, y0, x1, y1) pixels with x1 > x0, y1 > y0, inside the image"
        )
    return a, b, c, d


def _tilt(frame: Any, tilt: Any, K: np.ndarray | None, hfov: float | None) -> tuple[float, float, float, str]:
    """(pitch, roll, pitch sigma, how) degrees: given, read from the image, or assumed level."""
    if tilt is not None:
        if hasattr(tilt, "pitch_deg"):
            return float(tilt.pitch_deg), float(tilt.roll_deg), float(tilt.pitch_sigma_deg), f"tilt given: {tilt.text}"
        return float(tilt), 0.0, 0.0, f"pitch given {float(tilt):+.1f} deg, roll 0"
    try:
        seen = camera_tilt(frame, K=K, hfov_deg=hfov)
    except ValueError:
        return 0.0, 0.0, _LEVEL_SIGMA_DEG, f"camera level ± {_LEVEL_SIGMA_DEG:g} deg (the image does not show its tilt)"
    return (
        seen.pitch_deg,
        seen.roll_deg,
        seen.pitch_sigma_deg,
        f"camera pitch {seen.pitch_deg:+.1f} ± {seen.pitch_sigma_deg:g} deg from the image's {seen.source}",
    )


def _ground_angles(directions: np.ndarray, rotations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(angle degrees clockwise from the viewing direction on the ground, slant degrees above the ground) of
    (S, 3) camera-frame directions under (S, 3, 3) camera-to-level rotations (world +Y forward, +Z up)."""
    world = np.einsum("sij,sj->si", rotations, directions)
    slant = np.degrees(np.arcsin(np.clip(np.abs(world[:, 2]) / np.linalg.norm(world, axis=1), 0.0, 1.0)))
    return np.degrees(np.arctan2(world[:, 0], world[:, 1])), slant


def wall_direction(
    frame: Any,
    box: Any = None,
    *,
    depth: Any = None,
    tilt: Any = None,
    K: Any = None,
    hfov_deg: float | None = None,
) -> WallDirection:
    """Which way a wall faces, relative to the camera.

    The readout reads like "the wall runs 35 ± 4 deg from the viewing direction; it faces
    right-and-towards the camera (facing +125 deg ...)".

    With ``depth`` (a measured (H, W) map in metres, or a ``depth(...)`` result): the plane through the
    wall's points in ``box`` (a robust fit) gives its normal. Without: the wall's horizontal lines (a
    skirting board, a shelf, tiles, a picture's edges, the wall's top or foot) meet at a vanishing point; its
    direction on the ground is the wall's run, the face looks towards the camera's side. Either way the
    camera's tilt turns camera directions into ground directions: ``tilt`` (a ``CameraTilt`` or a pitch in
    degrees), else ``camera_tilt`` of the image, else level +- 10 degrees (``.assumed`` says which).

    Assumes an upright wall; a fitted normal or a vanishing direction more than 20 degrees from horizontal
    is refused (a floor, a ceiling or lines that are not the wall's). The sigma draws the vanishing point's
    fit (at least 2 degrees and 10 / sqrt(edges); or the plane's, plus an allowance of 2 deg for measured
    depth and 8 for a learned model's), the tilt and the field of view (60 +- 10 without ``K``) together.
    When the box's lines point to a second horizontal direction nearly as well (the floor's lines, a
    corner's other wall, furniture), ``.caveat`` names it.

    Args:
        frame: the image (Frame, PIL image or (H, W, 3) array).
        box: (x0, y0, x1, y1) pixels around the wall (only the wall if you can: its lines or its depth are
            read there), or anything with ``.box``; None = the whole image.
        depth: (H, W) metres along the camera z axis (0 / NaN = none), or a ``depth(...)`` result.
        K: (3, 3) intrinsics, pixels (a depth result's are used when not given); else ``hfov_deg``.
        hfov_deg: horizontal field of view, degrees (default 60 ± 10, assumed).
        tilt: a ``CameraTilt`` (``geom.camera_tilt``) or a pitch in degrees (> 0 up); None: from the image.

    Returns:
        ``WallDirection``: ``.facing_deg`` (clockwise from the viewing direction seen from above, degrees;
        ±180 = faces the camera), ``.run_deg`` (0..90), ``.sigma_deg``, ``.words``, ``.source``,
        ``.assumed``, ``.caveat``, ``.text``.

    Raises:
        ValueError: the box shows no family of horizontal lines (or too few depth points), or what it shows
            is not upright; the message says what to try (a box on the wall's lines, ``depth=``).
    """
    rgb = as_rgb_array(frame)
    height, width = rgb.shape[:2]
    x0, y0, x1, y1 = _box_of((0, 0, width, height) if box is None else box, width, height)
    if K is None and depth is not None and getattr(depth, "intrinsics", None) is not None:
        K = depth.intrinsics
    fov_known = K is not None or hfov_deg is not None
    hfov = DEFAULT_HFOV_DEG if hfov_deg is None else float(hfov_deg)
    if K is None:
        f = (width / 2.0) / np.tan(np.radians(hfov) / 2.0)
        K = np.array([[f, 0.0, (width - 1) / 2.0], [0.0, f, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
    K = as_intrinsics(K)
    pitch, roll, pitch_sigma, tilt_how = _tilt(frame, tilt, K if fov_known else None, hfov_deg)
    rng = np.random.default_rng(0)  # a fixed seed: the same frame reads the same
    n = _SAMPLES
    pitches = pitch + pitch_sigma * rng.standard_normal(n)
    rolls = roll + (_ROLL_SIGMA_DEG if tilt is None else 0.0) * rng.standard_normal(n)
    pitches[0], rolls[0] = pitch, roll
    rotations = np.stack([tilted_camera_pose(p, r)[:3, :3] for p, r in zip(pitches, rolls, strict=True)])
    focal_scale = np.ones(n)
    if not fov_known:
        fovs = np.clip(hfov + _HFOV_SIGMA_DEG * rng.standard_normal(n), 20.0, 120.0)
        focal_scale = np.tan(np.radians(hfov) / 2.0) / np.tan(np.radians(fovs) / 2.0)
        focal_scale[0] = 1.0
    centre_ray = np.linalg.solve(K, np.array([(x0 + x1 - 1) / 2.0, (y0 + y1 - 1) / 2.0, 1.0]))
    rival = None
    caveat = ""
    if depth is not None:
        up = rotations[0].T @ np.array([0.0, 0.0, 1.0])
        normal, fit_sigma, count, model, share = _plane_normal(depth, K, (x0, y0, x1, y1), (height, width), up, rng)
        allowance = _MODEL_DEPTH_SIGMA_DEG if model else _MEASURED_DEPTH_SIGMA_DEG
        sigma0 = float(np.hypot(fit_sigma, allowance))
        directions = _jitter(normal, sigma0, rng, n)
        source = f"depth plane fit ({count} points, {share:.0%} of the box's)"
        if share < 0.3:
            caveat = f"only {share:.0%} of the box's depth points lie on that plane: box the wall more tightly"
        facing, slant = _ground_angles(directions, rotations)
        if slant[0] > _MAX_SLANT_DEG:
            raise ValueError(
                f"the surface in box {(x0, y0, x1, y1)} tilts {90 - slant[0]:.0f} deg from vertical (its normal is "
                f"{slant[0]:.0f} deg from horizontal): not an upright wall (a floor, ceiling or slanted surface?); "
                "choose a box on the wall only"
            )
        facing = _towards_camera(facing, rotations, centre_ray)
    else:
        facing, sigma0, source, rival, caveat = _from_edges(
            frame, K, (x0, y0, x1, y1), rotations, focal_scale, centre_ray, rng
        )
    spread = float(np.sqrt(np.mean(_wrap(facing[1:] - facing[0]) ** 2)))
    value = float(_wrap(np.array(facing[0])))
    run = abs(float(_wrap(np.array(value - 90.0))))
    run = 180.0 - run if run > 90.0 else run
    assumed = "an upright wall; " + tilt_how + ("" if fov_known else f"; field of view {hfov:g} ± 10 deg")
    return WallDirection(
        round(value, 1),
        round(run, 1),
        round(max(spread, 0.5), 1),
        _words(value),
        source,
        assumed,
        caveat,
        rival,
    )


def _jitter(direction: np.ndarray, sigma_deg: float, rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, 3) unit directions scattered about ``direction`` by ``sigma_deg`` degrees; the first exact."""
    noise = rng.standard_normal((count, 3)) * np.radians(sigma_deg)
    noise -= np.outer(noise @ direction, direction)
    out = direction + noise
    out[0] = direction
    return np.asarray(out / np.linalg.norm(out, axis=1, keepdims=True))


def _towards_camera(facing: np.ndarray, rotations: np.ndarray, centre_ray: np.ndarray) -> np.ndarray:
    """Facings (degrees) turned to the wall's visible side: opposite the ground direction of the ray to the
    box's centre (the face looks back along it)."""
    ray, _ = _ground_angles(np.repeat(centre_ray[None], len(rotations), axis=0), rotations)
    flip = np.abs(_wrap(facing - ray)) < 90.0
    return np.asarray(_wrap(facing + 180.0 * flip))


def _plane_normal(
    depth: Any,
    K: np.ndarray,
    box: tuple[int, int, int, int],
    shape: tuple[int, int],
    up: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float, int, bool, float]:
    """(unit normal (3,) camera frame, its fit sigma degrees, inlier points, whether the depth is a model's,
    the inliers' share of the box's points) of the upright plane (normal within 20 degrees of horizontal,
    ``up`` the camera-frame up direction) that the most depth points in ``box`` lie on (RANSAC, inliers
    within 2% of the median depth), refined by least squares over its inliers."""
    model = hasattr(depth, "depth") and str(getattr(depth, "model", "")) not in ("", "stereo-sgbm")
    values = np.asarray(getattr(depth, "depth", depth), dtype=np.float64)
    if values.shape != shape:
        raise ValueError(f"depth is {values.shape[1]}x{values.shape[0]}, the image {shape[1]}x{shape[0]}: resize one")
    x0, y0, x1, y1 = box
    mask = np.zeros(shape, bool)
    mask[y0:y1, x0:x1] = True
    points = np.asarray(backproject(values, K, mask=mask))
    if len(points) < _MIN_DEPTH_POINTS:
        raise ValueError(f"only {len(points)} pixels in box {box} have depth (> 0): choose a box on the wall")
    threshold = 0.02 * float(np.median(points[:, 2]))
    triples = points[rng.integers(0, len(points), (_PLANE_HYPOTHESES, 3))]
    normals = np.cross(triples[:, 1] - triples[:, 0], triples[:, 2] - triples[:, 0])
    length = np.linalg.norm(normals, axis=1)
    ok = length > 1e-9
    normals, triples = normals[ok] / length[ok, None], triples[ok]
    upright = np.abs(normals @ up) <= np.sin(np.radians(_MAX_SLANT_DEG))
    if not upright.any():
        raise ValueError(
            f"no upright plane among the depth points in box {box} (a floor, ceiling or slanted surface?); choose "
            "a box on the wall only"
        )
    normals, triples = normals[upright], triples[upright]
    sample = points[rng.integers(0, len(points), min(len(points), 4000))]
    counts = (np.abs((sample[None] - triples[:, None, 0]) @ normals[..., None])[..., 0] < threshold).sum(axis=1)
    best = int(np.argmax(counts))
    inliers = np.abs((points - triples[best, 0]) @ normals[best]) < threshold
    centre = points[inliers].mean(axis=0)
    _, singular, vt = np.linalg.svd(points[inliers] - centre, full_matrices=False)
    normal = vt[2]
    residual = (points[inliers] - centre) @ normal
    count = int(inliers.sum())
    inplane = singular[1] ** 2 / max(count, 1)  # variance along the shorter in-plane axis, m^2
    sigma = float(np.degrees(float(np.std(residual)) / np.sqrt(max(count, 1) * max(inplane, 1e-12))))
    return normal, sigma, count, model, count / len(points)


def _from_edges(
    frame: Any,
    K: np.ndarray,
    box: tuple[int, int, int, int],
    rotations: np.ndarray,
    focal_scale: np.ndarray,
    centre_ray: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float, str, float | None, str]:
    """(facings (S,) degrees, the vanishing point's sigma, source, rival facing or None, caveat) from the
    lines inside ``box``: the horizontal direction on the ground (a vanishing point on the horizon of the
    nominal tilt) that the most edge length points at wins; then the same vanishing pixel is read under
    each drawn tilt and focal length."""
    _, segments, lengths = line_segments(frame)
    width = as_rgb_array(frame).shape[1]
    x0, y0, x1, y1 = box
    mid = (segments[:, :2] + segments[:, 2:]) / 2.0
    inside = (mid[:, 0] >= x0) & (mid[:, 0] < x1) & (mid[:, 1] >= y0) & (mid[:, 1] < y1)
    inside &= lengths >= 6.0 * width / 224.0
    segments, lengths = segments[inside], lengths[inside]
    tolerance = _EDGE_TOLERANCE_PX * width / 224.0
    R = rotations[0]
    vertical = segment_error_px(segments, K @ (R.T @ np.array([0.0, 0.0, 1.0]))) < tolerance
    on_horizon = np.ones(len(segments), bool)
    for psi in (0.0, 60.0, 120.0):  # a segment along the horizon points at every horizon point
        on_horizon &= segment_error_px(segments, K @ (R.T @ _ground_vector(psi))) < tolerance
    usable = ~vertical & ~on_horizon
    segments, lengths = segments[usable], lengths[usable]
    psis = np.arange(0.0, 180.0, 0.25)
    points = (K @ (R.T @ np.stack([_ground_vector(p) for p in psis], axis=1))).T  # (P, 3) vanishing pixels
    error = segment_error_px(segments, points) if len(segments) else np.zeros((len(psis), 0))
    support = (lengths * np.clip(1.0 - (error / tolerance) ** 2, 0.0, None)).sum(axis=1)
    members = error[int(np.argmax(support))] < tolerance if len(segments) else np.zeros(0, bool)
    if len(segments) == 0 or members.sum() < _MIN_EDGES:
        raise ValueError(
            f"too few horizontal lines in box {box} agree on a direction ({int(members.sum())} edges; "
            f"{_MIN_EDGES} needed): box the wall's horizontal lines (skirting, shelves, tiles, its top or foot), "
            "or pass depth= (a depth map) to fit its plane"
        )
    best = int(np.argmax(support))
    _, fit_sigma = refine_direction(plane_normals(segments[members], K), lengths[members])
    sigma = max(fit_sigma, _MIN_EDGE_SIGMA_DEG, _FEW_EDGES_DEG / np.sqrt(int(members.sum())))
    n = len(rotations)
    image_point = points[best]
    directions = np.repeat(np.linalg.solve(K, image_point)[None], n, axis=0)
    if not np.allclose(focal_scale, 1.0):  # the same vanishing pixel read with another focal length
        scaled = np.repeat(K[None], n, axis=0)
        scaled[:, 0, 0] *= focal_scale
        scaled[:, 1, 1] *= focal_scale
        directions = np.linalg.solve(scaled, np.repeat(image_point[None], n, axis=0)[..., None])[..., 0]
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    noise = rng.standard_normal((n, 3)) * np.radians(sigma)
    noise[0] = 0.0
    directions = directions + noise - np.einsum("si,si->s", noise, directions)[:, None] * directions
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    run, _ = _ground_angles(directions, rotations)
    facing = _towards_camera(np.asarray(_wrap(run + 90.0)), rotations, centre_ray)
    rival, caveat = None, ""
    peaks = np.flatnonzero((support >= np.roll(support, 1)) & (support > np.roll(support, -1)))
    far = [i for i in peaks if abs(_wrap(np.array(2.0 * (psis[i] - psis[best]))) / 2.0) >= _RIVAL_SEPARATION_DEG]
    strong = [i for i in far if support[i] >= _RIVAL_SHARE * support[best]]
    if strong:
        other = max(strong, key=lambda i: support[i])
        rival = float(_towards_camera(np.array([_wrap(np.array(psis[other] + 90.0))]), rotations[:1], centre_ray)[0])
        caveat = (
            f"the box's lines also point to a second horizontal direction ({support[other] / support[best]:.0%} of "
            f"the support): a wall facing {rival:+.0f} deg (another wall, or lines on the floor or furniture); a box "
            "on one wall only, or depth=, decides"
        )
    source = f"{int(members.sum())} horizontal edges meeting at a vanishing point"
    return facing, sigma, source, None if rival is None else round(rival, 1), caveat


def _ground_vector(psi_deg: float) -> np.ndarray:
    """The level world direction ``psi_deg`` clockwise from the viewing direction (world +Y forward, +X right)."""
    return np.array([np.sin(np.radians(psi_deg)), np.cos(np.radians(psi_deg)), 0.0])
