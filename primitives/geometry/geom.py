"""Geometry for spatial questions: cameras, transforms, distances, angles, planes, boxes, directions.

Conventions (everywhere in this module):
- Pixels are (x, y), origin top-left, integer coordinates at pixel centres.
- Camera frames are OpenCV: x right, y down, z forward; metres.
- World frames are metric and, after ``gravity_alignment`` (``reconstruct`` does this for you),
  right-handed with +Z up, origin at the first camera, +Y = the first camera's forward projected onto
  the ground, +X its right.
- Poses are (4, 4) camera-to-world matrices: ``world = R @ camera + t``.
- Point sets are (N, 3) float arrays in metres; angles are degrees.
- Directions ("left of", "behind", "above") are read in an observer camera's gravity-aligned frame:
  forward = the camera's viewing axis projected onto the ground, right = forward x up, up = +Z;
  "behind X" = farther from the observer than X along that forward.

Functions: each one below, by signature and summary. Also available (``manual("geom.NAME")``):
floor_samples (joint samples of one photo's floor points), tilted_camera_pose, horizon_row,
observer_axes, frame_from_up, camera_up_vectors, homography_from_points, format_metres, refine_quad;
result types Plane, OrientedBox, Direction, Rectified, Measurement, PlanePoint, KnownScale, FloorPoint,
CameraTilt, WallDirection.
"""

from __future__ import annotations

# The extras (not in ``__all__``: the manual lists those as the module's functions) are re-exported with
# ``X as X`` so that ``geom.observer_axes`` etc. work in a cell and the linter keeps them.
from spatialclaw.primitives.geometry.box import OrientedBox as OrientedBox
from spatialclaw.primitives.geometry.box import oriented_box
from spatialclaw.primitives.geometry.camera import backproject, invert_pose, project, transform
from spatialclaw.primitives.geometry.floor import FloorPoint as FloorPoint
from spatialclaw.primitives.geometry.floor import floor_point
from spatialclaw.primitives.geometry.floor import floor_samples as floor_samples
from spatialclaw.primitives.geometry.homography import homography_from_points as homography_from_points
from spatialclaw.primitives.geometry.metrology import find_plane_reference
from spatialclaw.primitives.geometry.plane import Plane as Plane
from spatialclaw.primitives.geometry.plane import camera_up_vectors as camera_up_vectors
from spatialclaw.primitives.geometry.plane import find_floor, fit_plane, gravity_alignment
from spatialclaw.primitives.geometry.plane import frame_from_up as frame_from_up
from spatialclaw.primitives.geometry.plane_measure import Measurement as Measurement
from spatialclaw.primitives.geometry.plane_measure import PlanePoint as PlanePoint
from spatialclaw.primitives.geometry.quad_fit import refine_quad
from spatialclaw.primitives.geometry.rectify import Rectified as Rectified
from spatialclaw.primitives.geometry.rectify import rectify_plane
from spatialclaw.primitives.geometry.relate import Direction as Direction
from spatialclaw.primitives.geometry.relate import angle_between, closest_points, direction, distance
from spatialclaw.primitives.geometry.relate import format_metres as format_metres
from spatialclaw.primitives.geometry.relate import observer_axes as observer_axes
from spatialclaw.primitives.geometry.scale import KnownScale as KnownScale
from spatialclaw.primitives.geometry.scale import scale_from_known_size
from spatialclaw.primitives.geometry.tilt import CameraTilt as CameraTilt
from spatialclaw.primitives.geometry.tilt import camera_tilt
from spatialclaw.primitives.geometry.tilt import horizon_row as horizon_row
from spatialclaw.primitives.geometry.tilt import tilted_camera_pose as tilted_camera_pose
from spatialclaw.primitives.geometry.wall import WallDirection as WallDirection
from spatialclaw.primitives.geometry.wall import wall_direction

__all__ = [
    "angle_between",
    "backproject",
    "camera_tilt",
    "closest_points",
    "direction",
    "distance",
    "find_floor",
    "find_plane_reference",
    "fit_plane",
    "floor_point",
    "gravity_alignment",
    "invert_pose",
    "oriented_box",
    "project",
    "rectify_plane",
    "refine_quad",
    "scale_from_known_size",
    "transform",
    "wall_direction",
]
