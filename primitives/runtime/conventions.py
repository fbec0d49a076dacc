"""The one statement of the conventions every kernel tool follows (the system prompt and ``manual()`` print it).

Every tool's docstring and readout uses these signs and frames; a tool that needs another says so.
"""

from __future__ import annotations

__all__ = ["CONVENTIONS"]

CONVENTIONS = """\
- Pixels are (x, y) with the origin at the top-left corner; x grows to the right, y downwards.
- Camera frames follow OpenCV: x right, y down, z forward (out of the camera). Depth is z, in metres.
- World frames are metric (metres), right-handed and gravity-aligned with +Z up. The origin is the
  first camera's position, +Y is the first camera's viewing direction projected onto the ground, +X is
  to its right.
- Poses are camera-to-world 4x4 matrices.
- Angles are degrees with one sign convention in every tool (`motion`, `geom.camera_tilt`,
  `geom.floor_point`, `scene.add_bearing`): yaw > 0 turns RIGHT, pitch > 0 tilts UP (a camera looking
  down at the floor has a NEGATIVE pitch: -20 = 20 degrees down), roll > 0 rolls clockwise as the camera
  sees it (its right side lower).
- Frame indices are the absolute indices of the source (the video's frame numbers; for a list of images,
  its position in the task's full image list), never positions in `frames`: `frames[i].index` tells you
  the absolute index of the i-th loaded frame.
- "Left", "right", "in front of" and "behind" depend on the observer: say which camera or object you
  measure from."""
