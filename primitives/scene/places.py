"""Perspective taking from references: where each one is (an object name, a camera's frame index or a world
point) and the ``Perspective`` readout from them (``Scene.perspective``).

Positions are (3,) world points in metres (+Z up), covariances (3, 3) in m^2 (zeros for objects measured
in 3D, for cameras and for given points); a camera also has its forward direction on the ground.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.scene.objects import SceneObject, get_instance
from spatialclaw.primitives.scene.perspective import Perspective, perspective_from_positions
from spatialclaw.primitives.scene.readouts import observer_pose

__all__ = ["joint_floor_samples", "perspective_of", "place"]


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
    tilt, field of view) moves them together; None when that does not apply."""
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
    return perspective_from_positions(
        what[:3],
        where[:3],
        toward[:3],
        seed=seed,
        joint=joint_floor_samples(instances, (target, standing_at, facing), seed),
    )
