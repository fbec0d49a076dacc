"""A camera that only turns, for ``reconstruct``: ``motion``'s rotation steps (one pair estimator,
``motion.pair``, for both tools) chained into camera-to-world poses (camera centres all at the first
camera's, OpenCV camera axes), the test that every step is a pure rotation, and the vertical those turns
are about (``leveled``): with no floor to find, the world's up is the one ``motion`` measured its angles
about, so both tools read one yaw and one pitch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from spatialclaw.primitives.motion.result import CameraStep

__all__ = ["RotationChain", "leveled", "only_turns", "rotation_chain"]


class RotationChain(NamedTuple):
    """``rotation_chain``'s answer. poses: (N, 4, 4) camera-to-world (the first camera's frame, OpenCV
    axes; NaN where unregistered); registered: (N,) bool; intrinsics: (N, 3, 3) pixels; steps: ``motion``'s
    steps; focal_source: where the focal length came from; tilt_deg: the first camera's pitch (degrees,
    > 0 up) about whose vertical ``motion`` measured the turns (``Motion.tilt_deg``), or None (camera axes)."""

    poses: np.ndarray
    registered: np.ndarray
    intrinsics: np.ndarray
    steps: list[CameraStep]
    focal_source: str
    tilt_deg: float | None


def only_turns(steps: list[CameraStep], count: int) -> bool:
    """True when ``motion``'s pair estimator found every consecutive step of ``count`` frames a pure
    rotation (or no motion): the camera only turns, so ``reconstruct`` solves it as rotations."""
    return count >= 2 and len(steps) == count - 1 and all(step.kind in ("rotation", "static") for step in steps)


def rotation_chain(
    arrays: list[np.ndarray],
    items: list[Any],
    indices: list[int],
    K_list: list[np.ndarray] | None,
    fov_deg: float | None,
) -> RotationChain:
    """Poses of a camera that only turns, chaining consecutive rotation steps of ``motion`` (``RotationChain``).
    A frame after a step that is not a rotation is unregistered."""
    from spatialclaw.primitives.motion.estimate import motion

    count = len(arrays)
    poses = np.full((count, 4, 4), np.nan)
    registered = np.zeros(count, dtype=bool)
    if len({a.shape for a in arrays}) != 1:
        return RotationChain(
            poses, registered, np.full((count, 3, 3), np.nan), [], "no focal (frames differ in size)", None
        )
    K = K_list[0] if K_list is not None else None
    result = motion(_sourced(arrays, items, indices), intrinsics=K, fov_deg=None if K is not None else fov_deg)
    poses[0], registered[0] = np.eye(4), True
    orientation = np.eye(3)
    for i, step in enumerate(result.steps, start=1):
        if step.kind not in ("rotation", "static") or not registered[i - 1]:
            continue
        # a rotation or static step always carries its geometry with the rotation R_ab
        assert step.geometry is not None and step.geometry.R_ab is not None
        orientation = poses[i - 1][:3, :3] @ step.geometry.R_ab
        poses[i] = np.eye(4)
        poses[i][:3, :3] = orientation
        registered[i] = True
    return RotationChain(
        poses, registered, np.stack([result.intrinsics] * count), result.steps, result.focal_source, result.tilt_deg
    )


def leveled(poses: np.ndarray, tilt_deg: float) -> np.ndarray:
    """Camera-to-world ``poses`` (N, 4, 4) of the design frame built on the first camera's own up (+Z its up,
    +Y its forward: what ``gravity_align`` falls back on without a floor), turned about +X so that +Z is the
    vertical a first camera pitched ``tilt_deg`` (> 0 up) turns about: its forward then rises ``tilt_deg``
    above the ground plane. Centres stay where they are (a turning camera's are all at the origin)."""
    c, s = np.cos(np.radians(tilt_deg)), np.sin(np.radians(tilt_deg))
    T = np.eye(4)
    T[1:3, 1:3] = [[c, -s], [s, c]]  # +Y (the first camera's forward) -> (0, cos, sin): elevation tilt_deg
    return np.asarray(T @ poses)


@dataclass
class _Sourced:
    """A decoded frame with the file it came from (so ``motion`` can still read its EXIF focal length)."""

    array: np.ndarray
    source: Any
    index: int


def _sourced(arrays: list[np.ndarray], items: list[Any], indices: list[int]) -> list[_Sourced]:
    return [
        _Sourced(array, item if isinstance(item, (str, Path)) else getattr(item, "source", None), index)
        for array, item, index in zip(arrays, items, indices, strict=True)
    ]
