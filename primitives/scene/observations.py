"""Turning image evidence into scene-memory instances: a mask with metric depth -> 3D points, a pixel -> a
``Bearing`` (fused with the object's earlier bearings into its position).

Coordinates are metres in the episode's world frame; poses are (4, 4) camera-to-world; ``K`` (3, 3)
intrinsics in pixels. ``cameras`` is the scene's registry (absolute frame index -> pose): read to find a
frame's pose, and (for a mask with a given pose) extended with that frame's camera.
"""

from __future__ import annotations

from dataclasses import replace as replace_fields
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.camera import as_pose
from spatialclaw.primitives.scene.bearings import (
    DEFAULT_PIXEL_SIGMA_PX,
    Bearing,
    intrinsics_from_fov,
    level_camera_pose,
    locate,
    make_bearing,
)
from spatialclaw.primitives.scene.objects import SceneObject, frame_index
from spatialclaw.primitives.scene.readouts import Readout

__all__ = ["DEFAULT_HFOV_DEG", "bearing_from_pixel", "fuse_bearing", "points_from_mask"]

DEFAULT_HFOV_DEG = 60.0
"""Horizontal field of view assumed for a bearing when neither K nor hfov_deg is given, degrees."""


def points_from_mask(
    cameras: dict[int, np.ndarray],
    name: str,
    mask: Any,
    depth: Any,
    K: Any,
    pose: Any,
    frame: Any,
    erode_px: int,
    reject_outliers: bool,
    stride: int,
) -> tuple[np.ndarray, int | None]:
    """((N, 3) world points in metres, absolute frame index or None) of instance ``name`` for
    ``Scene.add_from_mask`` (its arguments, documented there)."""
    if frame is None:
        frame = getattr(mask, "frame_index", None)
        frame = getattr(depth, "frame_index", None) if frame is None else frame
    mask_array = np.asarray(getattr(mask, "mask", mask)).astype(bool)
    if hasattr(depth, "poses") and hasattr(depth, "frame_indices"):
        depth, K, pose = _from_reconstruction(depth, frame, K, pose)
    if depth is None:
        raise ValueError(f"no depth map for {name!r}: pass an (H, W) depth map in metres, e.g. depth(frame)")
    if K is None:
        K = getattr(depth, "intrinsics", getattr(depth, "K", None))
        if K is None:
            raise ValueError("add_from_mask needs intrinsics: pass K=(3, 3) or a depth result with .intrinsics")
    depth_map = np.asarray(getattr(depth, "depth", depth), dtype=np.float64)
    index = None if frame is None else frame_index(frame)
    if pose is None:
        if index is None or index not in cameras:
            known = sorted(cameras)
            raise ValueError(
                f"add_from_mask needs a camera pose: pass pose=(4, 4), or frame=<index> of a registered camera "
                f"(registered frames: {known}; register with scene.set_cameras(rec))"
            )
        pose = cameras[index]
    elif index is not None and index not in cameras:
        cameras[index] = as_pose(pose)
    if mask_array.shape != depth_map.shape:
        raise ValueError(
            f"mask shape {mask_array.shape} differs from depth shape {depth_map.shape}; resize the mask to the depth map"
        )
    if erode_px > 0:
        from scipy.ndimage import binary_erosion

        eroded = binary_erosion(mask_array, iterations=int(erode_px))
        mask_array = eroded if eroded.any() else mask_array
    valid = mask_array & np.isfinite(depth_map) & (depth_map > 0)
    if not valid.any():
        raise ValueError(f"the mask of {name!r} covers no pixel with valid depth; check the mask and depth map")
    if reject_outliers:
        z = depth_map[valid]
        median = np.median(z)
        spread = max(0.1, 4.0 * 1.4826 * np.median(np.abs(z - median)))
        valid &= np.abs(depth_map - median) <= spread
    # without return_pixels, backproject returns the (N, 3) points alone
    points = cast(np.ndarray, geom.backproject(depth_map, K, pose=pose, mask=valid, stride=stride))
    return points, index


def _from_reconstruction(rec: Any, frame: Any, K: Any, pose: Any) -> tuple[Any, Any, Any]:
    if frame is None:
        raise ValueError(
            "add_from_mask with a reconstruction needs the frame: pass frame=<absolute index> "
            "(or a segmentation Instance with .frame_index)"
        )
    index = frame_index(frame)
    positions = np.flatnonzero(np.asarray(rec.frame_indices) == index)
    if len(positions) == 0:
        raise ValueError(
            f"frame {index} is not in the reconstruction; its frames are {np.asarray(rec.frame_indices).tolist()}"
        )
    i = int(positions[0])
    rec_pose = np.asarray(rec.poses[i], dtype=np.float64)
    if pose is None and not np.isfinite(rec_pose).all():
        raise ValueError(f"frame {index} was not registered by the reconstruction (no pose); use another frame")
    if rec.depth is None or rec.depth[i] is None:
        raise ValueError(
            f"the reconstruction has no depth map for frame {index}; pass depth=depth(frames.at({index})) "
            f"with K and pose=rec.poses[{i}] instead"
        )
    return rec.depth[i], (rec.intrinsics[i] if K is None else K), (rec_pose if pose is None else pose)


def _estimated_camera(index: int, image_size: Any, frame: Any, assumed: list[str]) -> np.ndarray | None:
    from spatialclaw.primitives.perception.depth import estimated_intrinsics

    size = image_size
    if size is None and hasattr(frame, "width") and hasattr(frame, "height"):
        size = (frame.width, frame.height)
    found = estimated_intrinsics(index, None if size is None else (int(size[0]), int(size[1])))
    if found is None:
        return None
    assumed.append(f"intrinsics estimated by {found[1]} for frame {index} (fx {found[0][0, 0]:.0f} px)")
    return found[0]


def bearing_from_pixel(
    cameras: dict[int, np.ndarray],
    pixel: Any,
    distance: Any,
    distance_sigma: float | None,
    frame: Any,
    K: Any,
    hfov_deg: float | None,
    image_size: tuple[int, int] | None,
    pose: Any,
    pixel_sigma_px: float | None,
    on_floor: bool,
    camera_height_m: float | None,
    pitch_deg: float | None,
) -> tuple[Bearing, int | None]:
    """(the ``Bearing`` of one observation, its absolute frame index or None) for ``Scene.add_bearing``
    (its arguments, documented there): fills in the distance (a ``KnownScale``, or the floor geometry with
    ``on_floor``), the intrinsics and the pose, recording every assumption in ``Bearing.assumed``."""
    if hasattr(distance, "distance_m"):  # a KnownScale from geom.scale_from_known_size
        if distance.distance_m is None:
            raise ValueError(
                "this KnownScale has no distance (no focal length): pass K= or hfov_deg= to geom.scale_from_known_size"
            )
        distance, distance_sigma = distance.distance_m, distance_sigma or distance.distance_sigma_m or None
    has_index = frame is not None and (hasattr(frame, "index") or isinstance(frame, (int, np.integer)))
    index = frame_index(frame) if has_index else None
    assumed: list[str] = []
    if K is None and hfov_deg is None and index is not None:  # a camera a depth model estimated for this frame
        K = _estimated_camera(index, image_size, frame, assumed)
    if on_floor:
        if distance is not None:
            raise ValueError(
                "on_floor=True computes the distance from the floor geometry; drop distance= "
                "(or drop on_floor to use your distance)"
            )
        camera = pose if pose is not None else cameras.get(index) if index is not None else None
        if camera is None and cameras:
            raise ValueError(
                f"no camera pose for frame {index}: pass pose=(4, 4) camera-to-world, or register "
                f"it (scene.add_camera); registered frames: {sorted(cameras)}"
            )
        if camera is not None and pitch_deg is not None:
            raise ValueError("this frame's camera pose already fixes the tilt; drop pitch_deg= (or pass pose=)")
        size = (
            image_size
            if image_size is not None
            else ((frame.width, frame.height) if hasattr(frame, "width") and hasattr(frame, "height") else None)
        )
        image = frame if hasattr(frame, "width") and hasattr(frame, "height") else None
        floor = geom.floor_point(
            pixel,
            image,
            image_size=size,
            K=K,
            hfov_deg=hfov_deg,
            camera_height_m=camera_height_m,
            pitch_deg=pitch_deg,
            pose=camera,
            pixel_sigma_px=DEFAULT_PIXEL_SIGMA_PX if pixel_sigma_px is None else pixel_sigma_px,
        )
        assert not isinstance(floor, list)  # one pixel, one FloorPoint
        K, distance, distance_sigma = floor.K, floor.distance_m, floor.distance_sigma_m
        if camera is None:
            pose = floor.pose
            assumed.append("camera at the origin facing +Y")
        assumed.append(f"on the floor ({floor.assumed})" if floor.assumed else "on the floor")
    if K is None:
        size = image_size
        if size is None and hasattr(frame, "width") and hasattr(frame, "height"):
            size = (frame.width, frame.height)
        if size is None or len(size) != 2:
            raise ValueError(
                "add_bearing needs K=(3, 3), or the image size to go with a field of view: pass "
                "frame=<the Frame>, or image_size=(width, height) pixels"
            )
        if hfov_deg is None:
            hfov_deg = DEFAULT_HFOV_DEG
            assumed.append(f"{DEFAULT_HFOV_DEG:g} deg horizontal field of view")
        K = intrinsics_from_fov(int(size[0]), int(size[1]), float(hfov_deg))
    if pose is None:
        if index is not None and index in cameras:
            pose = cameras[index]
        elif not cameras:
            pose = level_camera_pose()
            assumed.append("camera at the origin, level, facing +Y")
        else:
            raise ValueError(
                f"no camera pose for frame {index}: pass pose=(4, 4) camera-to-world, or register "
                f"it (scene.add_camera); registered frames: {sorted(cameras)}"
            )
    bearing = make_bearing(pixel, index, K, pose, pixel_sigma_px, distance, distance_sigma, "; ".join(assumed))
    if on_floor:
        bearing = replace_fields(bearing, floor=floor)
    return bearing, index


def fuse_bearing(
    scene: Any, name: str, bearing: Bearing, index: int | None, label: str | None, replace: bool
) -> SceneObject | Readout:
    """``Scene.add_bearing``'s last step: add ``bearing`` to object ``name``'s earlier ones (or start over
    with ``replace``), register its camera, and locate the object (a ``Readout`` while one bearing without
    a distance waits in ``scene.pending``)."""
    previous = scene.instances.get(name)
    if previous is not None and not replace and previous.covariance is None:
        raise ValueError(
            f"{name!r} is already in the scene from 3D points; pass replace=True to locate it from "
            f"bearings instead, or use another name"
        )
    earlier = () if replace else (previous.bearings if previous is not None else scene.pending.get(name, ()))
    bearings = earlier + (bearing,)
    if index is not None and index not in scene.cameras and "camera at the origin" not in bearing.assumed:
        scene.add_camera(index, bearing.pose)
    if len(bearings) == 1 and bearing.distance_m is None:
        scene.pending[name] = bearings
        return Readout(
            f"{name}: 1 bearing kept (frame {index}); it is located once you add a bearing of it from "
            f"another view (with that camera's pose) or a distance estimate"
        )
    position, covariance, how = locate(bearings)
    scene.pending.pop(name, None)
    instance = SceneObject(
        name=name,
        label=label or (previous.label if previous is not None else name),
        points=position[None],
        frames=tuple(sorted({b.frame for b in bearings if b.frame is not None})),
        covariance=covariance,
        bearings=bearings,
        located=how,
    )
    scene.instances[name] = instance
    return instance
