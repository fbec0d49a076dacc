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

Functions: backproject, project, transform, invert_pose; distance (centroid | closest), closest_points,
angle_between, direction; fit_plane (RANSAC), find_floor, gravity_alignment; oriented_box (upright
yaw-only, or PCA); rectify_plane (metric top view from four image points); find_plane_reference
(planar metrology: finds a sheet/square/border of known size to sub-pixel precision and returns a
Rectified plane whose length/angle/ratio/area/point measure in its units with a sigma);
scale_from_known_size (metres per pixel and distance from an object of known size, with the uncertainty
its assumed size range brings); floor_point (one image, no depth: the 3D floor position of a pixel
that touches the floor, from an assumed camera height, tilt and field of view, with the uncertainty
those assumptions bring; feeds ``scene.add_bearing(..., on_floor=True)``). Also available:
camera_tilt (pitch and roll from the vertical edges of one image), floor_samples (joint samples of one
photo's floor points), observer_axes, frame_from_up,
camera_up_vectors, homography_from_points, format_metres, refine_quad, tilted_camera_pose, horizon_row,
and the result types Plane, OrientedBox, Direction, Rectified, Measurement, PlanePoint, KnownScale,
FloorPoint, CameraTilt.
"""

from __future__ import annotations

from .geom_box import OrientedBox, oriented_box
from .geom_camera import backproject, invert_pose, project, transform
from .geom_floor import CameraTilt, FloorPoint, camera_tilt, floor_point, floor_samples, horizon_row, tilted_camera_pose
from .geom_plane import Plane, camera_up_vectors, find_floor, fit_plane, frame_from_up, gravity_alignment
from .geom_metrology import Measurement, PlanePoint, find_plane_reference, refine_quad
from .geom_rectify import Rectified, homography_from_points, rectify_plane
from .geom_scale import KnownScale, scale_from_known_size
from .geom_relate import (
    Direction,
    angle_between,
    closest_points,
    direction,
    distance,
    format_metres,
    observer_axes,
)

__all__ = [
    "backproject", "project", "transform", "invert_pose",
    "distance", "closest_points", "angle_between", "direction",
    "fit_plane", "find_floor", "gravity_alignment", "oriented_box", "rectify_plane",
    "find_plane_reference", "refine_quad", "scale_from_known_size", "floor_point", "floor_samples", "camera_tilt",
]
