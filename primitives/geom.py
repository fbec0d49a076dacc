"""Geometry for spatial questions: cameras, transforms, distances, angles, planes, boxes, directions.

Conventions (everywhere in this module):
- Pixels are (x, y), origin top-left, integer coordinates at pixel centres.
- Camera frames are OpenCV: x right, y down, z forward; metres.
- World frames are metric and, after ``gravity_alignment`` (``reconstruct`` does this for you),
  right-handed with +Z up, origin at the first camera, +Y = the first camera's forward projected onto
  the ground, +X its right.
- Poses are (4, 4) camera-to-world matrices: ``world = R @ camera + t``.
- Point sets are (N, 3) float arrays in metres; angles are degrees.
"""

from __future__ import annotations

from .geom_camera import backproject, invert_pose, project, transform
from .geom_plane import Plane, camera_up_vectors, find_floor, fit_plane, gravity_alignment

__all__ = [
    "backproject", "project", "transform", "invert_pose",
    "Plane", "fit_plane", "find_floor", "gravity_alignment", "camera_up_vectors",
]
