"""Perspective taking from references: where each one is (an object name, a camera's frame index or a world
point) and the ``Perspective`` readout from them (``Scene.perspective``).

Positions are (3,) world points in metres (+Z up), covariances (3, 3) in m^2 (zeros for objects measured
in 3D, for cameras and for given points); a camera also has its forward direction on the ground. Objects
on the floor of one photo are sampled jointly (their camera's error is shared; a sample whose pitch puts
any of them in the sky is dropped), and the readout is also read at every plausible pitch (``tilts``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.scene.objects import SceneObject, get_instance
from spatialclaw.primitives.scene.perspective import (
    Perspective,
    eight_way,
    perspective_from_positions,
    quadrant,
    signed_angles,
)
from spatialclaw.primitives.scene.readouts import observer_pose
from spatialclaw.primitives.scene.tilts import (
    answer_across_tilts,
    common_nominal,
    floor_of,
    tilt_worlds,
    unknown_floor_distances,
)

__all__ = ["joint_floor_samples", "perspective_across_tilts", "perspective_of", "place"]


def place(
    instances: dict[str, SceneObject], cameras: dict[int, np.ndarray], ref: Any, role: str
) -> tuple[str, np.ndarray, np.ndarray, np.ndarray | None]:
    """(wording, (3,) position, (3, 3) covariance, (3,) forward or None) of a name, camera or point."""
    if isinstance(ref, str):
        instance = get_instance(instances, ref)
        cov = instance.covariance if instance.covariance is not None else np.zeros((3, 3))
        return f"the {ref}", instance.center, cov, None
    if isinstance(ref, (int, np.integer)) and not isinstance(ref, (bool, np.bool_)):
        pose, who = observer_pose(cameras, int(ref))
        return who, pose[:3, 3].copy(), np.zeros((3, 3)), geom.observer_axes(pose)[1]
    point = np.asarray(ref, dtype=np.float64).ravel()
    if point.shape == (2,):
        point = np.append(point, 0.0)
    if point.shape != (3,) or not np.isfinite(point).all():
        raise ValueError(
            f"{role} must be an object name, a camera's frame index, or a world point (x, y[, z]) "
            f"in metres; got {ref!r}"
        )
    return f"({point[0]:.2f}, {point[1]:.2f}) m", point, np.zeros((3, 3)), None


def joint_floor_samples(
    instances: dict[str, SceneObject], names: tuple[Any, ...], seed: int
) -> tuple[np.ndarray, ...] | None:
    """Joint (S, 2) ground samples of objects located on the floor of one photo (each from one
    ``on_floor`` bearing with the same camera and assumptions), so their shared camera error (height,
    tilt, field of view) moves them together, and only pitches that keep all of them on the floor count;
    None when that does not apply."""
    from spatialclaw.primitives.geometry.floor import floor_samples

    if not all(isinstance(n, str) and n in instances for n in names):
        return None
    bearings = [instances[n].bearings for n in names]
    if not all(len(b) == 1 and b[0].floor is not None for b in bearings):
        return None
    floors = [b[0].floor for b in bearings]
    if not all(floors[0].camera.same_as(f.camera) for f in floors[1:]):
        return None
    drawn = floor_samples(floors, seed=seed)
    drawn = drawn[np.isfinite(drawn).all(axis=(1, 2))]
    if len(drawn) < 100:
        return None
    return tuple(drawn[:, k, :2] for k in range(len(names)))


def perspective_across_tilts(
    p: Perspective,
    instances: dict[str, SceneObject],
    cameras: dict[int, np.ndarray],
    target: Any,
    standing_at: Any,
    facing: Any,
) -> Perspective:
    """``p`` with its ``distance_note`` (also naming floor points whose distance is unknown) and, for
    objects on the floor of one photo, its ``tilt_note``: the answer at every plausible camera pitch."""
    names = (target, standing_at, facing)
    unknown = unknown_floor_distances(instances, names)
    note = p.distance_note
    if unknown:
        note = "; ".join(n for n in (note, unknown) if n)
    worlds = tilt_worlds(instances, names)
    if worlds is None:
        return replace(p, distance_note=note)
    roles = {"target": target, "standing_at": standing_at, "facing": facing}
    fixed = {role: place(instances, cameras, ref, role) for role, ref in roles.items() if ref is not None}

    def ground(role: str, i: int) -> np.ndarray:
        ref = roles[role]
        if isinstance(ref, str) and ref in worlds.names:
            return np.asarray(worlds.sweep.positions[i, worlds.names.index(ref)][:2])
        return np.asarray(fixed[role][1][:2])

    forward = fixed["standing_at"][3]  # a camera's own facing when facing is None (checked by perspective_of)
    angles = []
    for i in range(len(worlds)):
        viewer = ground("standing_at", i)
        ahead = ground("facing", i) - viewer if facing is not None else np.asarray(forward)[:2]
        angles.append(float(signed_angles(viewer[None], ahead[None], ground("target", i)[None])[0][0]))
    rival = any(label == "the rival" for _, label in worlds.sweep.candidates)
    tilt_note = answer_across_tilts(
        worlds, lambda i: eight_way(angles[i]), lambda i: quadrant(angles[i]), always=bool(note) or rival
    )
    return replace(p, distance_note=note, tilt_note=tilt_note)


def perspective_of(
    instances: dict[str, SceneObject],
    cameras: dict[int, np.ndarray],
    target: Any,
    standing_at: Any,
    facing: Any,
    seed: int,
) -> Perspective:
    """``Scene.perspective``: the ``Perspective`` of ``target`` for a viewer at ``standing_at`` facing ``facing``
    (names, camera frame indices or world points; ``facing=None``: a camera's own viewing direction)."""
    where = place(instances, cameras, standing_at, "standing_at")
    what = place(instances, cameras, target, "target")
    if facing is None:
        if where[3] is None:
            raise ValueError(
                "say what the viewer faces: facing=<object name, camera index or point>; only a "
                "camera (standing_at=<frame index>) has a facing of its own"
            )
        return perspective_from_positions(
            what[:3], where[:3], ("its viewing direction", None, None), forward=where[3], seed=seed
        )
    toward = place(instances, cameras, facing, "facing")
    joint = joint_floor_samples(instances, (target, standing_at, facing), seed)
    if joint is not None:  # one pitch for all three when some were placed at the image's rival pitch
        nominal = common_nominal([floor_of(instances[n]) for n in (target, standing_at, facing)])
        if nominal is not None:
            what, where, toward = ((r[0], n, *r[2:]) for r, n in zip((what, where, toward), nominal, strict=True))
    return perspective_from_positions(what[:3], where[:3], toward[:3], seed=seed, joint=joint)
