"""Pixels on the floor without depth: intersect a pixel's ray with the floor plane of an assumed camera.

One image, no depth model: if a pixel shows a point ON the floor (where an object touches the ground, a
marker dot on the floor), its 3D position follows from the camera's height above the floor, its tilt
(pitch, roll) and its intrinsics. Each of these is assumed when not given and its range is propagated
into the result's uncertainty (Monte Carlo, fixed seed), so the result can feed ``scene.add_bearing``
(``on_floor=True``) and ``scene.perspective``.

World frame of the result (the design world of a single camera): metres, right-handed, +Z up, origin at
the camera's centre, +Y = the camera's viewing direction projected onto the ground, +X = its right; the
floor is the plane z = -camera_height_m. With ``pose=`` (a camera-to-world pose) the result is in that
pose's world instead and the floor is z = pose_z - camera_height_m.

Pitch and roll (degrees), the same signs as ``motion``: pitch > 0 = the camera tilts UP by that angle
from level, so a camera looking down at the floor has a NEGATIVE pitch (-15 = 15 degrees down); roll > 0
= rolled clockwise as the camera sees it (right side lower, the horizon rises towards the right of the
image). With no tilt given, it is estimated from the image (``camera_tilt``: its vertical edges, else its
horizon or floor-wall line) and, when the image shows none of them, assumed: pitch -15 +- 8 (15 down),
level in roll +- 3. When the image supports two pitches (``CameraTilt.rival_pitch_deg``), both are kept
as a mixture weighted by their evidence, and a pitch that puts the pixel above the horizon is ruled out
(``floor_tilt``). The readout says which, says "distance unknown" when the distance's sigma exceeds the
distance itself, and flags distances beyond room scale or too near the horizon to trust (with how far 1
degree of pitch moves the point).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spatialclaw.primitives.geometry.camera import as_intrinsics, as_pose
from spatialclaw.primitives.geometry.floor_camera import FloorCamera, pitch_roll_of_pose
from spatialclaw.primitives.geometry.floor_reading import FloorPoint
from spatialclaw.primitives.geometry.floor_tilt import intersect, mode_readings, robust_sigma, tilt_modes
from spatialclaw.primitives.geometry.tilt import (
    DEFAULT_HFOV_DEG,
    camera_tilt,
    horizon_row,
    rot_x,
    tilted_camera_pose,
)

__all__ = ["DEFAULT_CAMERA_HEIGHT_M", "DEFAULT_PITCH_DEG", "FloorPoint", "floor_point", "floor_samples"]

DEFAULT_CAMERA_HEIGHT_M = 1.5
"""Assumed camera height above the floor, metres (a hand-held camera or a standing person's eyes)."""
DEFAULT_CAMERA_HEIGHT_SIGMA_M = 0.25
DEFAULT_PITCH_DEG = -15.0
"""Assumed pitch of the camera, degrees (15 down), when neither ``pitch_deg`` nor a pose is given."""
DEFAULT_PITCH_SIGMA_DEG = 8.0
DEFAULT_ROLL_SIGMA_DEG = 3.0
DEFAULT_HFOV_SIGMA_DEG = 10.0
SAMPLES = 2000


def floor_point(
    pixel: Any,
    frame: Any = None,
    *,
    image_size: tuple[int, int] | None = None,
    K: Any = None,
    hfov_deg: float | None = None,
    camera_height_m: float | None = None,
    pitch_deg: float | None = None,
    roll_deg: float | None = None,
    tilt: Any = None,
    pose: Any = None,
    height_sigma_m: float | None = None,
    pitch_sigma_deg: float | None = None,
    hfov_sigma_deg: float | None = None,
    pixel_sigma_px: float = 1.0,
    seed: int = 0,
) -> FloorPoint | list[FloorPoint]:
    """3D position of a pixel that shows a point ON the floor, from one image and no depth.

    An (N, 2) array of pixels gives a list of N (one camera set-up and one shared camera error for all:
    faster than N calls).

    Intersects the pixel's ray with the floor plane of a camera at ``camera_height_m`` above the floor,
    pitched ``pitch_deg`` (> 0 up, < 0 down) and rolled ``roll_deg``. Without ``pitch_deg`` (or a
    ``tilt=`` from ``camera_tilt``) the tilt is estimated from the image (``camera_tilt``: vertical edges,
    else the horizon or the floor-wall line, with its sigma) when ``frame`` is an image that shows them.
    Whatever else is not given is assumed (height 1.5 ± 0.25 m; pitch -15 ± 8 degrees (15 down) when it
    cannot be estimated; roll 0 ± 3; horizontal field of view 60 ± 10 degrees) and listed in ``.assumed``; the ranges (and ``pixel_sigma_px``) are propagated into ``.covariance`` and
    ``.distance_sigma_m``. All points of one image share the camera's error, so relative directions
    between them are better known than their independent sigmas suggest (a height error only scales the
    whole layout). Use it for where objects TOUCH the floor (feet of a chair, a dot on the floor), not
    their tops.

    World frame: metres, +Z up, origin at the camera's centre, +Y = the camera's forward projected onto
    the ground, +X = its right, floor at z = -camera_height_m (with ``pose=``: that pose's world, floor at
    z = pose_z - camera_height_m; the tilt then comes from the pose).

    Args:
        pixel: (x, y) pixels (or anything with ``.centroid``, e.g. a ``find_color`` Blob), or an (N, 2) array
            of them (then a list of N ``FloorPoint``; a pixel above the horizon raises for the call).
        frame: the Frame / PIL image / (H, W, 3) array the pixel is in (gives the image size), or None with
            ``image_size``.
        image_size: (width, height) pixels, when no frame is given and no K.
        K: (3, 3) intrinsics, pixels; else ``hfov_deg`` (default 60, assumed) and the image size.
        camera_height_m: camera height above the floor, metres. height_sigma_m: its std (default 0.25 when
            assumed, else 0).
        pitch_deg: pitch, degrees (> 0 tilts up, < 0 looks down); None: from ``tilt``, estimated from
            ``frame`` or assumed. pitch_sigma_deg: its std (default 5 when estimated, 8 when assumed, else
            0). roll_deg: roll, degrees (clockwise, right side lower, for > 0; default 0 ± 3 assumed).
        tilt: a ``CameraTilt`` from ``geom.camera_tilt`` (its pitch, roll and sigma; with a rival pitch,
            both pitches weighted by their evidence; from ``known=``, also the camera height it solved or
            was given), instead of pitch_deg (which also takes one).
        pose: (4, 4) camera-to-world pose instead of pitch/roll/tilt (e.g. ``scene.cameras[k]``).
        hfov_sigma_deg: std of the field of view (default 10 when assumed, else 0).
        pixel_sigma_px: std of the pixel, pixels (default 1).
        seed: random seed of the uncertainty sampling.

    Returns:
        A ``FloorPoint`` (``.point``, ``.covariance``, ``.sigma_m``, ``.distance_m``,
        ``.distance_sigma_m``, ``.ground_distance_m``, ``.assumed``, ``.notes``, ``.text``); ``.notes``
        flags a distance beyond room scale (usually a pixel above the true floor contact or a wrong tilt)
        or a ray within 5 degrees of the horizon, with ``.pitch_sensitivity_m`` (metres per degree).

    Raises:
        ValueError: the pixel is at or above the horizon of that camera (its ray never meets the floor).

    Example::

        red = find_color(frames[0], "red", shape="dot")[0]
        p = geom.floor_point(red, frames[0])            # tilt from the image; 1.5 m, 60 deg fov assumed: says so
        p.point, p.distance_m, p.distance_sigma_m
        scene.add_bearing("red", red, frame=frames[0], on_floor=True)   # the same, as a scene object
    """
    try:
        pixels_in = np.asarray(getattr(pixel, "centroid", pixel), dtype=np.float64)
    except (TypeError, ValueError):
        pixels_in = np.empty(0)
    many = pixels_in.ndim == 2
    xys = pixels_in.reshape(-1, 2) if pixels_in.size and pixels_in.shape[-1:] == (2,) else np.empty((0, 3))
    if xys.shape[1] != 2 or pixels_in.ndim not in (1, 2) or not len(xys) or not np.isfinite(xys).all():
        raise ValueError(
            f"pixel must be the floor point's (x, y) in the image, or an (N, 2) array of them, pixels, got {pixel!r}"
        )
    assumed: list[str] = []
    if K is None:
        size = image_size
        if size is None and frame is not None and hasattr(frame, "width") and hasattr(frame, "height"):
            size = (frame.width, frame.height)
        elif size is None and isinstance(frame, np.ndarray) and frame.ndim in (2, 3):
            size = (frame.shape[1], frame.shape[0])  # an (H, W[, 3]) image array
        if size is None or len(size) != 2:
            raise ValueError(
                "floor_point needs K=(3, 3), or the image size to go with a field of view: pass the "
                "Frame as frame=, or image_size=(width, height) pixels"
            )
        width, height_px = int(size[0]), int(size[1])
        if hfov_deg is None:
            hfov_deg = DEFAULT_HFOV_DEG
            hfov_sigma_deg = DEFAULT_HFOV_SIGMA_DEG if hfov_sigma_deg is None else hfov_sigma_deg
            assumed.append(f"{DEFAULT_HFOV_DEG:g} ± {hfov_sigma_deg:g} deg horizontal field of view")
        if not 1.0 < float(hfov_deg) < 179.0:
            raise ValueError(f"hfov_deg must be a horizontal field of view in degrees (1..179), got {hfov_deg}")
        fov, fov_sigma = float(hfov_deg), float(hfov_sigma_deg or 0.0)
    else:
        if hfov_deg is not None:
            raise ValueError("pass either K= or hfov_deg=, not both")
        K = as_intrinsics(K)
        fov, fov_sigma = 0.0, 0.0
    carried: Any = tilt if tilt is not None else pitch_deg
    if camera_height_m is None and str(getattr(carried, "camera_height_how", "")).startswith(("given", "solved")):
        camera_height_m = carried.camera_height_m  # the height the known-size pitch goes with
        height_sigma_m = carried.camera_height_sigma_m if height_sigma_m is None else height_sigma_m
        assumed.append(f"camera {camera_height_m:.2f} ± {height_sigma_m:.2f} m above the floor (from the tilt)")
    if camera_height_m is None:
        camera_height_m = DEFAULT_CAMERA_HEIGHT_M
        height_sigma_m = DEFAULT_CAMERA_HEIGHT_SIGMA_M if height_sigma_m is None else height_sigma_m
        assumed.append(f"camera {DEFAULT_CAMERA_HEIGHT_M:g} ± {height_sigma_m:g} m above the floor")
    camera_height_m = float(camera_height_m)
    if not (np.isfinite(camera_height_m) and camera_height_m > 0):
        raise ValueError(
            f"camera_height_m must be the camera's height above the floor, metres (> 0), got {camera_height_m}"
        )
    roll_sigma, sigma_given = 0.0, pitch_sigma_deg
    modes: tuple[tuple[float, float, float], ...] = ()
    if tilt is None and hasattr(pitch_deg, "pitch_sigma_deg"):  # a CameraTilt passed as the pitch
        tilt, pitch_deg = pitch_deg, None
    if tilt is not None:
        if not all(hasattr(tilt, a) for a in ("pitch_deg", "roll_deg", "pitch_sigma_deg")):
            raise ValueError(f"tilt= takes a CameraTilt from geom.camera_tilt, got {type(tilt).__name__}")
        if pitch_deg is not None or roll_deg is not None:
            raise ValueError("pass either tilt= or pitch_deg=/roll_deg=, not both")
        pitch_deg, roll_deg, roll_sigma = float(tilt.pitch_deg), float(tilt.roll_deg), DEFAULT_ROLL_SIGMA_DEG
        pitch_sigma_deg, modes = tilt_modes(tilt, sigma_given)
        assumed.append(f"camera tilt given: {tilt.text}")
    if pose is not None:
        if pitch_deg is not None or roll_deg is not None:
            raise ValueError("pass either pose= or pitch_deg=/roll_deg=/tilt=, not both (the pose fixes the tilt)")
        pose = as_pose(pose)
        pitch_sigma = float(pitch_sigma_deg or 0.0)
        pitch_deg, roll_deg = pitch_roll_of_pose(pose)
    else:
        if pitch_deg is None:
            tilt, why = None, "pitch not given and no image to estimate it from"
            if frame is not None and not isinstance(frame, (int, np.integer)):
                try:
                    tilt = _cached_tilt(frame, K, hfov_deg)
                except ValueError as error:
                    why = str(error).split(";")[0]
            if tilt is not None:
                pitch_deg = tilt.pitch_deg
                pitch_sigma_deg, modes = tilt_modes(tilt, sigma_given)
                if roll_deg is None:
                    roll_deg, roll_sigma = tilt.roll_deg, DEFAULT_ROLL_SIGMA_DEG
                assumed.append(
                    f"camera tilt estimated from the image's {tilt.source}: {tilt.text.split(' (from')[0]}"
                    + (f" (AMBIGUOUS: {tilt.caveat})" if tilt.caveat else "")
                )
            else:
                pitch_deg = DEFAULT_PITCH_DEG
                pitch_sigma_deg = DEFAULT_PITCH_SIGMA_DEG if pitch_sigma_deg is None else pitch_sigma_deg
                assumed.append(
                    f"camera pitch {DEFAULT_PITCH_DEG:g} ± {pitch_sigma_deg:g} deg ({-DEFAULT_PITCH_DEG:g} down; {why})"
                )
        if roll_deg is None:
            roll_deg, roll_sigma = 0.0, DEFAULT_ROLL_SIGMA_DEG
            assumed.append(f"no roll (± {DEFAULT_ROLL_SIGMA_DEG:g} deg)")
        if not -89.0 < float(pitch_deg) < 89.0:
            raise ValueError(
                f"pitch_deg must be the camera's pitch in degrees (-89..89, > 0 up, < 0 looks down), got {pitch_deg}"
            )
        pitch_sigma = float(pitch_sigma_deg or 0.0)
        pose = tilted_camera_pose(float(pitch_deg), float(roll_deg))
    camera = FloorCamera(
        K=K,
        width=0 if K is not None else width,
        height_px=0 if K is not None else height_px,
        hfov_deg=fov,
        hfov_sigma_deg=fov_sigma,
        pose=pose,
        camera_height_m=camera_height_m,
        height_sigma_m=float(height_sigma_m or 0.0),
        pitch_sigma_deg=pitch_sigma,
        roll_sigma_deg=roll_sigma,
        pixel_sigma_px=float(pixel_sigma_px),
        pitch_modes=modes,
    )
    rng = np.random.default_rng(seed)
    shared = camera.sample(SAMPLES, rng)  # one camera error for all the points of this call
    results = [
        _place(xy, camera, shared, rng, pose, float(pitch_deg), float(roll_deg), camera_height_m, list(assumed))
        for xy in xys
    ]
    return results if many else results[0]


_TILTS: dict[tuple[Any, ...], Any] = {}
"""``camera_tilt`` results per image content and lens (a sweep of floor points reads one frame's tilt once)."""


def _cached_tilt(frame: Any, K: Any, hfov_deg: float | None) -> Any:
    """``camera_tilt(frame, K=K, hfov_deg=hfov_deg)``, remembered per image content (a hash of its pixels)."""
    import hashlib

    from spatialclaw.primitives.imaging import as_rgb_array

    array = np.ascontiguousarray(as_rgb_array(frame))
    key = (
        hashlib.blake2b(array.tobytes(), digest_size=16).hexdigest(),
        array.shape,
        None if K is None else np.asarray(K, dtype=np.float64).tobytes(),
        hfov_deg,
    )
    if key not in _TILTS:
        if len(_TILTS) >= 64:
            _TILTS.pop(next(iter(_TILTS)))
        try:
            _TILTS[key] = camera_tilt(frame, K=K, hfov_deg=hfov_deg)
        except ValueError as error:
            _TILTS[key] = error
    found = _TILTS[key]
    if isinstance(found, ValueError):
        raise found
    return found


def _place(
    xy: np.ndarray,
    camera: FloorCamera,
    shared: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    rng: np.random.Generator,
    pose: np.ndarray,
    pitch_deg: float,
    roll_deg: float,
    camera_height_m: float,
    assumed: list[str],
) -> FloorPoint:
    """The FloorPoint of one pixel ``xy`` for ``camera`` (``shared``: its sampled errors, ``FloorCamera.sample``)."""
    K_used = camera.nominal_K
    Ks, rotations, heights, which = shared
    pixels = xy[None] + camera.pixel_sigma_px * rng.standard_normal((SAMPLES, 2))
    points, distances = intersect(pixels, Ks, rotations, heights)
    hit = np.isfinite(distances)
    readings = mode_readings(camera, xy, hit, which, K_used)
    fits = next((r for r in readings[1:] if np.isfinite(r.distance_m)), None)
    if fits is not None and not np.isfinite(readings[0].distance_m):  # in the sky at the estimate, not the rival
        pose = pose.copy()
        pose[:3, :3] = camera.rotation_at(fits.pitch_deg - float(pitch_deg))
        assumed.append(f"placed at the rival pitch {fits.pitch_deg:+.1f} deg: the estimate puts it above the horizon")
        pitch_deg = fits.pitch_deg
    point0, distance0 = intersect(xy[None], K_used[None], pose[:3, :3][None], np.array([camera_height_m]))
    if not np.isfinite(distance0[0]):
        row = horizon_row(K_used, pitch_deg)
        rival = f" (and at the rival pitch {readings[1].pitch_deg:+.1f} deg)" if readings else ""
        raise ValueError(
            f"pixel ({xy[0]:.1f}, {xy[1]:.1f}) is at or above the horizon (about row {row:.0f} for a "
            f"camera pitch {pitch_deg:+.1f} deg){rival}, so its ray never meets the floor: pick the pixel where "
            f"the object touches the floor, or pass a more negative pitch_deg= if the camera looks down more"
        )
    origin = pose[:3, 3]
    point = point0[0] + origin
    if hit.sum() >= 10:
        d = distances[hit]
        keep = (d >= np.percentile(d, 2.5)) & (d <= np.percentile(d, 97.5))
        covariance = np.cov(points[hit][keep].T)
        distance_sigma = robust_sigma(d)
    else:
        covariance, distance_sigma = np.diag([np.inf] * 3), float("inf")
    ray = pose[:3, :3] @ np.linalg.solve(K_used, np.array([xy[0], xy[1], 1.0]))
    below = float(np.degrees(np.arcsin(np.clip(-ray[2] / np.linalg.norm(ray), -1.0, 1.0))))
    ground = float(np.linalg.norm(point0[0][:2]))
    turned = [  # the same pixel with the camera pitched 1 degree up and down (about its own x axis)
        intersect(xy[None], K_used[None], (pose[:3, :3] @ rot_x(d))[None], np.array([camera_height_m]))[0][0]
        for d in (1.0, -1.0)
    ]
    sensitivity = max(abs(float(np.linalg.norm(t[:2])) - ground) if np.isfinite(t).all() else np.inf for t in turned)
    return FloorPoint(
        pixel=(float(xy[0]), float(xy[1])),
        point=point,
        covariance=covariance,
        distance_m=float(distance0[0]),
        distance_sigma_m=max(distance_sigma, 1e-6),
        ground_distance_m=ground,
        camera_height_m=camera_height_m,
        pitch_deg=float(pitch_deg),
        roll_deg=float(roll_deg),
        K=K_used,
        pose=pose,
        assumed="; ".join(assumed),
        p_on_floor=float(hit.mean()),
        camera=camera,
        below_horizon_deg=below,
        pitch_sensitivity_m=sensitivity,
        pitch_readings=readings,
    )


def floor_samples(points: Any, samples: int = SAMPLES, seed: int = 0) -> np.ndarray:
    """(samples, len(points), 3) joint uncertainty samples of ``FloorPoint``s of ONE image, metres: each
    sample draws the camera's height, tilt and field of view once for all of them (a shared error) and
    each pixel's noise separately; NaN where a sample's ray misses the floor. Directions between points
    of one photo are far better known this way than from their separate covariances."""
    points = list(points)
    if not points or not all(isinstance(p, FloorPoint) and p.camera is not None for p in points):
        raise ValueError("floor_samples needs FloorPoints from geom.floor_point")
    camera = points[0].camera
    if not all(camera.same_as(p.camera) for p in points[1:]):
        raise ValueError(
            "these floor points were located with different cameras or assumptions; sample them separately"
        )
    rng = np.random.default_rng(seed)
    Ks, rotations, heights, _ = camera.sample(int(samples), rng)
    out = np.empty((int(samples), len(points), 3))
    for k, p in enumerate(points):
        pixels = np.asarray(p.pixel)[None] + camera.pixel_sigma_px * rng.standard_normal((int(samples), 2))
        out[:, k] = intersect(pixels, Ks, rotations, heights)[0] + camera.pose[:3, 3]
    return out
