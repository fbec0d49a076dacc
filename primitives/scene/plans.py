"""The floor plans that fit, as scene worlds: each plan's cameras and objects, so that a readout can be asked
of every plan and mixed by the plans' weights (part of ``scene``; ``viewlinks.LayoutSolution.plans``).

Poses are camera-to-world (4, 4) matrices in the design world (metres, +Z up); headings are degrees clockwise
seen from above from world +Y. A view's camera in a plan stands at the plan's ground position, at the height
of the first view, facing the plan's heading with the view's own pitch and roll (``ViewSpec.tilt``). An
object in a plan: a linked landmark at the plan's place with the plan's own covariance; an object located
from bearings (``add_bearing``) in a linked view is located again from that view's camera in the plan;
anything else is where it is in the scene.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.scene.bearings import locate
from spatialclaw.primitives.scene.layout_problem import ViewSpec
from spatialclaw.primitives.scene.objects import SceneObject
from spatialclaw.primitives.scene.viewlinks import LayoutSolution

__all__ = ["PlanWorld", "heading_of_pose", "plan_worlds", "resolve_hint", "view_pose"]


def heading_of_pose(pose: np.ndarray) -> float:
    """Heading (degrees clockwise from world +Y, seen from above) of a camera-to-world pose's forward on the ground."""
    forward = geom.observer_axes(pose)[1]
    return float(np.degrees(np.arctan2(forward[0], forward[1])))


def view_pose(heading_deg: float, position: Any, tilt: np.ndarray | None = None) -> np.ndarray:
    """(4, 4) camera-to-world pose of a camera at ``position`` (x, y, z metres) facing ``heading_deg`` on the
    ground, level or turned by ``tilt`` ((3, 3) camera axes -> level axes, ``ViewSpec.tilt``)."""
    h = np.radians(heading_deg)
    forward, right = np.array([np.sin(h), np.cos(h), 0.0]), np.array([np.cos(h), -np.sin(h), 0.0])
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, [0.0, 0.0, -1.0], forward], axis=1)
    if tilt is not None:
        pose[:3, :3] = pose[:3, :3] @ tilt
    pose[:3, 3] = position
    return pose


@dataclass(frozen=True)
class PlanWorld:
    """One floor plan as a scene: its weight (the plans' weights sum to 1), the objects asked about and every
    camera, placed by that plan."""

    weight: float
    instances: dict[str, SceneObject]
    cameras: dict[int, np.ndarray]


def plan_worlds(
    layout: LayoutSolution | None,
    views: dict[int, ViewSpec],
    instances: dict[str, SceneObject],
    cameras: dict[int, np.ndarray],
    names: Iterable[Any],
) -> list[PlanWorld]:
    """Every plan of ``layout`` (best first) as a world holding the objects among ``names`` (other
    references, camera indices and points, need no object) and every camera; [] when one plan fits."""
    if layout is None or len(layout.plans) < 2:
        return []
    anchor = next(iter(views))
    z = float(cameras[anchor][2, 3]) if anchor in cameras else 0.0
    wanted = [n for n in names if isinstance(n, str) and n in instances]
    worlds = []
    for plan in layout.plans:
        placed = dict(cameras)
        for v, h in plan.headings_deg.items():
            placed[v] = view_pose(h, (*plan.positions[v], z), views[v].tilt)
        objects = {}
        for name in wanted:
            thing = instances[name]
            if name in plan.landmarks:
                position = plan.landmarks[name] + [0.0, 0.0, z]
                objects[name] = replace(thing, points=position[None], covariance=plan.landmark_covariances[name])
            elif any(b.frame in plan.headings_deg for b in thing.bearings):
                bearings = tuple(
                    replace(b, pose=placed[b.frame]) if b.frame in plan.headings_deg else b for b in thing.bearings
                )
                position, covariance, _ = locate(bearings)
                objects[name] = replace(thing, points=position[None], covariance=covariance, bearings=bearings)
            else:
                objects[name] = thing
        worlds.append(PlanWorld(plan.weight, objects, placed))
    return worlds


def resolve_hint(layout: LayoutSolution) -> str:
    """What would tell the plans apart: distances, or another landmark seen by the views they disagree on."""
    views = ", ".join(str(v) for v in layout.ambiguous_views) or "the linked views"
    return (
        f"To resolve it, give distances (each landmark's distance from the camera, e.g. a depth map's value, as "
        f"(name, (x_a, y_a), (x_b, y_b), dist_a, dist_b) in link_views) or name another landmark seen by view(s) "
        f"{views} and a view already placed."
    )
