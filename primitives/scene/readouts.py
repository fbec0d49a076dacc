"""Plain-language readouts of the scene memory: the ``Readout`` text, pairwise ``Relation``s, observers, ``describe``.

"Left / right / in front / behind / above / below, seen from camera k": the offset between the two
instances' positions is expressed in camera k's *gravity-aligned* frame: forward = camera k's viewing
direction (+z of its pose) projected onto the ground plane and normalised; right = forward x up (the
viewer's right, horizontal); up = world +Z. Distances in readouts: "centres" = centre-to-centre;
"closest points" = the gap between the two point sets (KD-tree nearest pair; 0 when they touch).
All distances are metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.camera import as_pose
from spatialclaw.primitives.geometry.plausibility import size_note
from spatialclaw.primitives.geometry.relate import Direction, format_metres
from spatialclaw.primitives.scene.objects import SceneObject

__all__ = ["MAX_PAIRS_IN_DESCRIPTION", "Readout", "Relation", "describe_scene", "observer_pose", "relation_between"]

MAX_PAIRS_IN_DESCRIPTION = 45


class Readout(str):
    """A plain-language readout; displays as its text (no quotes) in a notebook."""

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Relation:
    """How instance ``a`` sits relative to instance ``b`` as seen by an observer (metres).

    Attributes:
        a, b: instance names. observer: who sees it, e.g. "camera 0".
        position: "box" (upright box centres) or "centroid" (point means): what is compared.
        direction: ``geom.Direction`` of a's position relative to b's (right/forward(=behind)/up, metres).
        centre_distance_m: position-to-position distance. horizontal_distance_m: the same on the ground plane.
        closest_distance_m: gap between the point sets; closest_points: ((3,), (3,)) the nearest pair (a, b).
        offset_sigma_m: (right, forward, up) standard deviations of the offset, metres, from the positions'
            covariances (objects located from bearings); zeros for objects measured in 3D.
        compass_note: after ``scene.set_north``, a's true compass direction from b ("The chair is NE
            (41° ± 3°) of the table."), else "". text: the full readout.
        tilt_note: for objects on the floor of one photo, whether the words hold at every camera pitch the
            image allows or depend on it, else "". distance_note: why the distances are unknown (their
            sigma exceeds them, a floor point they rest on is unknown), else "".
    """

    a: str
    b: str
    observer: str
    position: str
    direction: Direction
    centre_distance_m: float
    horizontal_distance_m: float
    closest_distance_m: float
    closest_points: tuple[np.ndarray, np.ndarray] = field(repr=False)
    offset_sigma_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    compass_note: str = ""
    tilt_note: str = ""
    distance_note: str = ""

    @property
    def text(self) -> Readout:
        """E.g. "the chair is 1.3 m left of and 0.40 m behind the table (same height within 0.05 m), seen
        from camera 0. Centres 1.4 m apart (1.4 m on the ground); closest points 0.52 m apart." """
        what = "Centres" if self.position == "box" else "Centroids"
        spread = ""
        if any(self.offset_sigma_m):
            r, f, u = (format_metres(v) for v in self.offset_sigma_m)
            spread = f" (1 sigma: ± {r} left-right, ± {f} front-back, ± {u} in height)"
        apart = (
            f"{what} {format_metres(self.centre_distance_m)} apart "
            f"({format_metres(self.horizontal_distance_m)} on the ground); "
            f"closest points {format_metres(self.closest_distance_m)} apart."
        )
        if self.distance_note:
            apart = f"Distance unknown ({apart[0].lower()}{apart[1:-1]}: {self.distance_note})."
        return Readout(
            f"{self.direction.sentence(self.a, self.b)}, seen from {self.observer}{spread}. {apart}"
            + (f" {self.tilt_note}" if self.tilt_note else "")
            + (f" {self.compass_note}" if self.compass_note else "")
        )

    def __str__(self) -> str:
        return str(self.text)

    def __repr__(self) -> str:
        return str(self.text)


def observer_pose(cameras: dict[int, np.ndarray], observer: Any) -> tuple[np.ndarray, str]:
    """(camera-to-world pose, wording) of an observer: a registered camera's frame index, a (4, 4) pose, or
    None (the first registered camera; the world axes facing +Y when there is none)."""
    if observer is None:
        if cameras:
            first = min(cameras)
            return cameras[first], f"camera {first}"
        world_view = np.eye(4)
        world_view[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
        return world_view, "the world origin facing +Y"
    if isinstance(observer, (int, np.integer)) and not isinstance(observer, (bool, np.bool_)):
        if int(observer) not in cameras:
            raise ValueError(
                f"no camera for frame {int(observer)}; registered frames: {sorted(cameras)} "
                f"(register with scene.set_cameras(rec) or scene.add_camera(frame, pose))"
            )
        return cameras[int(observer)], f"camera {int(observer)}"
    return as_pose(observer, name="observer"), "the given viewpoint"


def relation_between(
    a: str, b: str, ia: SceneObject, ib: SceneObject, pose: np.ndarray, who: str, tolerance: float, position: str
) -> Relation:
    """The ``Relation`` of instance ``ia`` (named ``a``) to ``ib`` (named ``b``) seen from ``pose`` (worded
    ``who``); ``tolerance`` and ``position`` as in ``Scene.relation``."""
    pos_a, pos_b = (ia.center, ib.center) if position == "box" else (ia.centroid, ib.centroid)
    offset_direction = geom.direction(pos_a, pos_b, pose, tolerance=tolerance)
    pa, pb, gap = geom.closest_points(ia.points, ib.points)
    delta = pos_a - pos_b
    covariance = sum(np.asarray(i.covariance) for i in (ia, ib) if i.covariance is not None)
    sigma, unknown = (0.0, 0.0, 0.0), ""
    if isinstance(covariance, np.ndarray):
        axes = geom.observer_axes(pose)
        sx, sy, sz = np.sqrt(np.clip(np.diag(axes @ covariance @ axes.T), 0, None))
        sigma = (float(sx), float(sy), float(sz))
        along = delta[:2] / max(float(np.hypot(delta[0], delta[1])), 1e-12)
        spread = float(np.sqrt(max(along @ covariance[:2, :2] @ along, 0.0)))
        if spread > np.hypot(delta[0], delta[1]):
            unknown = f"± {format_metres(spread)} on the ground exceeds it"
    return Relation(
        a=a,
        b=b,
        observer=who,
        position=position,
        direction=offset_direction,
        centre_distance_m=float(np.linalg.norm(delta)),
        horizontal_distance_m=float(np.hypot(delta[0], delta[1])),
        closest_distance_m=gap,
        closest_points=(pa, pb),
        offset_sigma_m=sigma,
        distance_note=unknown,
    )


def _implausible(instance: SceneObject) -> str:
    """The readout's plausibility note, "; IMPLAUSIBLE? ...", when a measured object's size is far outside
    the everyday range of its label or a floor point it was located from is beyond a room or too near the
    horizon; else ""."""
    measured = instance.covariance is None and len(instance.points) >= 10  # a handful of points has no size
    notes = [size_note(instance.size, instance.label)] if measured else []
    notes += [b.floor.notes for b in instance.bearings if getattr(b, "floor", None) is not None]
    notes = [n for n in notes if n]
    return f"; IMPLAUSIBLE? {'; '.join(notes)}" if notes else ""


def describe_scene(scene: Any, observer: Any, tolerance: float, position: str) -> Readout:
    """The text of ``Scene.describe``: a ``Scene``'s instances, cameras and pairwise relations."""
    if not scene.instances:
        return Readout(
            "The scene is empty: add instances with scene.add(name, points=...) or scene.add_from_mask(...)."
        )
    _, who = observer_pose(scene.cameras, observer)
    cams = (
        f"{len(scene.cameras)} camera{'s' if len(scene.cameras) != 1 else ''} (frames {sorted(scene.cameras)})"
        if scene.cameras
        else "no cameras registered"
    )
    if scene.unposed:
        cams += f"; frames without a pose: {scene.unposed}"
    if scene.pending:
        cams += f"; waiting for a second view or a distance: {sorted(scene.pending)}"
    count = f"{len(scene.instances)} instance{'s' if len(scene.instances) != 1 else ''}"
    lines = [
        f"Scene: {count}, {cams}. World frame: metres, +Z up. "
        f"Directions seen from {who} (its forward projected onto the ground), between "
        f"{'upright box centres' if position == 'box' else 'point centroids'}."
    ]
    lines += [f"- {instance.summary()}{_implausible(instance)}" for instance in scene.instances.values()]
    pairs = list(combinations(scene.instances, 2))
    if pairs:
        lines.append("Relations:")
        for a, b in pairs[:MAX_PAIRS_IN_DESCRIPTION]:
            lines.append(f"- {scene.relation(a, b, observer=observer, tolerance=tolerance, position=position).text}")
        if len(pairs) > MAX_PAIRS_IN_DESCRIPTION:
            lines.append(
                f"({len(pairs) - MAX_PAIRS_IN_DESCRIPTION} more pairs not listed; ask with scene.relation(a, b))"
            )
    return Readout("\n".join(lines))
