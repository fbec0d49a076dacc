"""One named thing of the scene memory (``SceneObject``), how frames are named (absolute indices) and how
their camera poses are registered (``Scene.set_cameras``).

Coordinates are metres in the episode's world frame (right-handed, +Z up). An instance's position is,
by default, the centre of its upright box (``SceneObject.center``): it does not move when one side is
sampled more densely than another (faces seen head-on, or only the visible side), unlike the mean of
the points (``SceneObject.centroid``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.box import OrientedBox
from spatialclaw.primitives.geometry.camera import as_pose
from spatialclaw.primitives.geometry.relate import format_metres
from spatialclaw.primitives.scene.bearings import Bearing

__all__ = ["SceneObject", "frame_index", "get_instance", "registered_cameras"]


def frame_index(frame: Any) -> int:
    index = getattr(frame, "index", frame)
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
        raise ValueError(f"a frame must be an absolute frame index (int) or a Frame with .index, got {frame!r}")
    return int(index)


def registered_cameras(poses: Any, frame_indices: Sequence[Any] | None) -> tuple[dict[int, np.ndarray], list[int]]:
    """(absolute frame index -> (4, 4) camera-to-world pose, frame indices whose pose has NaN entries) from
    (N, 4, 4) ``poses`` or a ``Reconstruction`` (``.poses``, ``.frame_indices``); see ``Scene.set_cameras``."""
    if frame_indices is None:
        frame_indices = getattr(poses, "frame_indices", None)
    poses = np.asarray(getattr(poses, "poses", poses), dtype=np.float64)
    if poses.ndim != 3 or poses.shape[1:] != (4, 4):
        raise ValueError(f"poses must be (N, 4, 4) camera-to-world matrices, got shape {poses.shape}")
    indices = list(range(len(poses))) if frame_indices is None else [frame_index(i) for i in frame_indices]
    if len(indices) != len(poses):
        raise ValueError(f"got {len(poses)} poses but {len(indices)} frame indices")
    finite = np.isfinite(poses).all(axis=(1, 2))
    unposed = [i for i, ok in zip(indices, finite, strict=True) if not ok]
    cameras = {i: as_pose(p, name=f"pose of frame {i}") for i, p, ok in zip(indices, poses, finite, strict=True) if ok}
    return cameras, unposed


@dataclass
class SceneObject:
    """One named thing in the scene.

    Attributes:
        name: unique key, used in readouts as "the <name>".
        label: category (e.g. "chair"); defaults to the name.
        points: (N, 3) world points in metres (one point, the estimate, for a bearing-located object).
        frames: absolute frame indices it was observed in.
        covariance: (3, 3) position covariance in m^2 for an object located from bearings (None for one
            measured in 3D, whose position is taken as exact).
        bearings: the image observations it was located from (``Bearing``s), if any.
        located: how it was located, e.g. "2 bearings from 2 views, 1 with a distance estimate".
    """

    name: str
    label: str
    points: np.ndarray = field(repr=False)
    frames: tuple[int, ...] = ()
    covariance: np.ndarray | None = field(default=None, repr=False)
    bearings: tuple[Bearing, ...] = field(default=(), repr=False)
    located: str = ""

    @property
    def sigma_m(self) -> np.ndarray:
        """(3,) standard deviation of the position along world X, Y, Z, metres (zeros for 3D-measured objects)."""
        return np.zeros(3) if self.covariance is None else np.sqrt(np.clip(np.diag(self.covariance), 0, None))

    @property
    def centroid(self) -> np.ndarray:
        """(3,) mean of the points, metres."""
        centroid: np.ndarray = self.points.mean(axis=0)
        return centroid

    @property
    def center(self) -> np.ndarray:
        """(3,) centre of the upright box, metres: the instance's position in relations."""
        return self.box.center

    @cached_property
    def box(self) -> OrientedBox:
        """Upright (yaw-only, +Z up) oriented box; ``box.size`` = (length, width, height) in metres."""
        return geom.oriented_box(self.points, upright=True)

    @property
    def extent(self) -> np.ndarray:
        """(2, 3) axis-aligned bounds [[xmin, ymin, zmin], [xmax, ymax, zmax]], metres."""
        return np.stack([self.points.min(axis=0), self.points.max(axis=0)])

    @property
    def size(self) -> np.ndarray:
        """(3,) (length, width, height) of the upright box, metres."""
        return self.box.size

    def summary(self) -> str:
        """One line: name, label, size, centre, height range, frames, point count (for a bearing-located
        object: its position with the standard deviations and how it was located)."""
        c = self.center
        if self.covariance is not None:
            sx, sy, sz = self.sigma_m
            label = f" ({self.label})" if self.label != self.name else ""
            frames = f", seen in frames {list(self.frames)}" if self.frames else ""
            assumed = sorted({b.assumed for b in self.bearings if b.assumed})
            note = f"; assumed {'; '.join(assumed)}" if assumed else ""
            return (
                f"{self.name}{label}: at ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f}) m ± ({sx:.2f}, {sy:.2f}, {sz:.2f}) m "
                f"(1 sigma), located from {self.located}{frames}{note}"
            )
        length, width, height = self.size
        z_lo, z_hi = self.extent[:, 2]
        label = f" ({self.label})" if self.label != self.name else ""
        frames = f", seen in frames {list(self.frames)}" if self.frames else ""
        return (
            f"{self.name}{label}: {format_metres(length)} long x {format_metres(width)} wide x "
            f"{format_metres(height)} tall, centre ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f}) m, "
            f"from z={z_lo:.2f} to {z_hi:.2f} m{frames}, {len(self.points)} points"
        )

    def __repr__(self) -> str:
        return f"SceneObject({self.summary()})"


def get_instance(instances: dict[str, SceneObject], name: str) -> SceneObject:
    """The instance ``name`` of a scene's ``instances`` (KeyError listing the known names otherwise)."""
    if name not in instances:
        raise KeyError(f"no instance named {name!r} in the scene; known: {sorted(instances)} (add with scene.add)")
    return instances[name]
