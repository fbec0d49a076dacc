"""Scene memory: named 3D instances that persist across cells, with plain-language spatial readouts.

The kernel creates one ``scene = Scene()`` per episode. All coordinates are metres in the episode's
world frame, which should be the design world frame (``reconstruct`` returns it; otherwise use
``geom.gravity_alignment``): right-handed, +Z up, origin at the first camera, +Y its forward on the ground.

What "left / right / in front / behind / above / below, seen from camera k" means: the offset between
the two instances' positions is expressed in camera k's *gravity-aligned* frame: forward = camera k's
viewing direction (+z of its pose) projected onto the ground plane and normalised; right = forward x up
(the viewer's right, horizontal); up = world +Z. "A is 1.3 m left of B" = A's position is 1.3 m further
to the viewer's left than B's; "A is behind B" = A is farther from the viewer than B along forward.
Camera pitch and roll never change these words. Camera k is the camera of absolute frame index k
(``scene.cameras``), not the k-th list position.

An instance's position is, by default, the centre of its upright box (``SceneObject.center``): it does not
move when one side is sampled more densely than another (faces seen head-on, or only the visible side),
unlike the mean of the points (``SceneObject.centroid``, available with ``position="centroid"``).
Distances in readouts: "centres" = centre-to-centre; "closest points" = the gap between the two point
sets (KD-tree nearest pair; 0 when they touch).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from dataclasses import replace as replace_fields
from functools import cached_property
from itertools import combinations
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

if TYPE_CHECKING:
    from PIL import Image

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.box import OrientedBox
from spatialclaw.primitives.geometry.camera import as_points, as_pose
from spatialclaw.primitives.geometry.relate import Direction, format_metres
from spatialclaw.primitives.scene.bearings import (
    DEFAULT_PIXEL_SIGMA_PX,
    Bearing,
    intrinsics_from_fov,
    level_camera_pose,
    locate,
    make_bearing,
)
from spatialclaw.primitives.scene.perspective import Perspective, perspective_from_positions

__all__ = ["Scene", "SceneObject", "Relation", "Readout", "Perspective", "Bearing"]

DEFAULT_HFOV_DEG = 60.0
"""Horizontal field of view assumed for a bearing when neither K nor hfov_deg is given, degrees."""

MAX_PAIRS_IN_DESCRIPTION = 45


class Readout(str):
    """A plain-language readout; displays as its text (no quotes) in a notebook."""

    def __repr__(self) -> str:
        return str(self)


def _frame_index(frame: Any) -> int:
    index = getattr(frame, "index", frame)
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
        raise ValueError(f"a frame must be an absolute frame index (int) or a Frame with .index, got {frame!r}")
    return int(index)


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
        return self.points.mean(axis=0)

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
            return (f"{self.name}{label}: at ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f}) m ± ({sx:.2f}, {sy:.2f}, {sz:.2f}) m "
                    f"(1 sigma), located from {self.located}{frames}{note}")
        length, width, height = self.size
        z_lo, z_hi = self.extent[:, 2]
        label = f" ({self.label})" if self.label != self.name else ""
        frames = f", seen in frames {list(self.frames)}" if self.frames else ""
        return (f"{self.name}{label}: {format_metres(length)} long x {format_metres(width)} wide x "
                f"{format_metres(height)} tall, centre ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f}) m, "
                f"from z={z_lo:.2f} to {z_hi:.2f} m{frames}, {len(self.points)} points")

    def __repr__(self) -> str:
        return f"SceneObject({self.summary()})"


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
        text: the full readout.
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

    @property
    def text(self) -> Readout:
        """E.g. "the chair is 1.3 m left of and 0.40 m behind the table (same height within 0.05 m), seen
        from camera 0. Centres 1.4 m apart (1.4 m on the ground); closest points 0.52 m apart." """
        what = "Centres" if self.position == "box" else "Centroids"
        spread = ""
        if any(self.offset_sigma_m):
            r, f, u = (format_metres(v) for v in self.offset_sigma_m)
            spread = f" (1 sigma: ± {r} left-right, ± {f} front-back, ± {u} in height)"
        return Readout(
            f"{self.direction.sentence(self.a, self.b)}, seen from {self.observer}{spread}. "
            f"{what} {format_metres(self.centre_distance_m)} apart "
            f"({format_metres(self.horizontal_distance_m)} on the ground); "
            f"closest points {format_metres(self.closest_distance_m)} apart."
        )

    def __str__(self) -> str:
        return str(self.text)

    def __repr__(self) -> str:
        return str(self.text)


class Scene:
    """Memory of named 3D instances and cameras for one episode (persists across cells).

    Coordinates: metres in the episode's world frame (``reconstruct``'s: +Z up, origin at the first
    camera, +Y its forward on the ground). "Seen from camera k" (k = absolute frame index): the offset
    between two instances' positions is read in camera k's gravity-aligned frame: forward = camera k's
    viewing direction projected onto the ground; right = forward x up (the viewer's right); up = +Z.
    "A is 1.3 m left of B" = A is 1.3 m further to that viewer's left than B; "A is behind B" = A is
    farther from the viewer than B along forward; "above" = higher along +Z. Camera pitch and roll never
    change the words. An instance's position = the centre of its upright box (``position="box"``) unless
    ``position="centroid"`` (mean of its points) is asked for.

    Typical use::

        rec = reconstruct(frames)
        scene.set_cameras(rec)                      # camera k = pose of frame index k
        chair = segment(frames[0], text="chair")[0]
        scene.add_from_mask("chair", chair, rec)    # its mask, frame index, and rec's depth/K/pose there
        scene.add_from_mask("table", table_mask, depth_map, K, pose, frame=3)
        scene.add("lamp", points=lamp_points, frames=[0, 3])
        scene.relation("chair", "table", observer=0)   # numbers + .text
        scene.describe(); show(scene.bev())

    Without depth (small benchmark frames): locate objects by where they are in the image and a distance
    estimate (a judgement, or ``geom.scale_from_known_size``), then ask perspective questions::

        scene.add_bearing("sofa", (52, 95), distance=3.0, distance_sigma=0.5, frame=frames[0], hfov_deg=60)
        scene.add_bearing("tv", (160, 80), distance=4.0, frame=frames[0], hfov_deg=60)
        scene.add_bearing("lamp", (20, 70), distance=2.0, frame=frames[0], hfov_deg=60)
        scene.perspective("lamp", standing_at="sofa", facing="tv")   # "at 4 o'clock (back-right): 116° ± 39° ..."

    A bearing from a second frame with its camera pose (``scene.add_camera(k, pose)``) fuses with the first.
    """

    def __init__(self) -> None:
        self.instances: dict[str, SceneObject] = {}
        self.cameras: dict[int, np.ndarray] = {}
        self.unposed: list[int] = []
        self.pending: dict[str, tuple[Bearing, ...]] = {}

    # ---- cameras -------------------------------------------------------------------------------
    def set_cameras(self, poses: Any, frame_indices: Sequence[int] | None = None) -> None:
        """Register camera poses (replacing earlier ones).

        Args:
            poses: (N, 4, 4) camera-to-world poses in the world frame, or an object with ``.poses`` and
                ``.frame_indices`` (a ``Reconstruction``).
            frame_indices: absolute frame index of each pose; default ``poses.frame_indices`` or 0..N-1.

        Poses with NaN entries (frames a reconstruction could not register) are not registered; their
        frame indices are listed in ``scene.unposed`` and in ``describe()``.
        """
        if frame_indices is None:
            frame_indices = getattr(poses, "frame_indices", None)
        poses = np.asarray(getattr(poses, "poses", poses), dtype=np.float64)
        if poses.ndim != 3 or poses.shape[1:] != (4, 4):
            raise ValueError(f"poses must be (N, 4, 4) camera-to-world matrices, got shape {poses.shape}")
        indices = list(range(len(poses))) if frame_indices is None else [_frame_index(i) for i in frame_indices]
        if len(indices) != len(poses):
            raise ValueError(f"got {len(poses)} poses but {len(indices)} frame indices")
        finite = np.isfinite(poses).all(axis=(1, 2))
        self.unposed = [i for i, ok in zip(indices, finite) if not ok]
        self.cameras = {i: as_pose(p, name=f"pose of frame {i}") for i, p, ok in zip(indices, poses, finite) if ok}

    def add_camera(self, frame: Any, pose: Any) -> None:
        """Register (or replace) the (4, 4) camera-to-world pose of one absolute frame index."""
        self.cameras[_frame_index(frame)] = as_pose(pose)

    # ---- instances -----------------------------------------------------------------------------
    def add(
        self,
        name: str,
        points: Any,
        frames: Sequence[Any] | Any = (),
        label: str | None = None,
        merge: bool = False,
    ) -> SceneObject:
        """Store (or replace) an instance from its 3D points.

        Args:
            name: unique key ("chair", "chair_2"); an existing instance of that name is replaced,
                or extended with ``merge=True`` (points and frames appended).
            points: (N, 3) world points in metres (non-finite rows are an error).
            frames: absolute frame indices (or Frames) it was seen in.
            label: category; defaults to ``name``.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        pts = as_points(points, name=f"points of {name!r}")
        frame_list = [frames] if not isinstance(frames, (list, tuple, np.ndarray, range)) else list(frames)
        indices = tuple(_frame_index(f) for f in frame_list)
        if merge and name in self.instances:
            old = self.instances[name]
            pts = np.concatenate([old.points, pts])
            indices = tuple(sorted(set(old.frames) | set(indices)))
            label = label or old.label
        instance = SceneObject(name=name, label=label or name, points=pts, frames=tuple(sorted(set(indices))))
        self.instances[name] = instance
        return instance

    def add_from_mask(
        self,
        name: str,
        mask: Any,
        depth: Any,
        K: Any = None,
        pose: Any = None,
        frame: Any = None,
        label: str | None = None,
        merge: bool = False,
        erode_px: int = 2,
        reject_outliers: bool = True,
        stride: int = 1,
    ) -> SceneObject:
        """Store an instance from an image mask and the frame's metric depth.

        Args:
            mask: (H, W) bool mask of the instance in the frame, or a segmentation ``Instance`` (its
                ``.mask``, ``.label`` and ``.frame_index`` are used).
            depth: (H, W) depth in metres, a depth result with ``.depth`` (and ``.intrinsics``), or a
                ``Reconstruction`` (its depth map, intrinsics and pose of ``frame`` are used).
            K: (3, 3) intrinsics in pixels (taken from ``depth`` when omitted).
            pose: (4, 4) camera-to-world pose; default the registered camera of ``frame``.
            frame: absolute frame index (or Frame) the mask comes from; recorded, and used to look up the pose
                (default: the mask's or the depth result's ``frame_index``).
            erode_px: shrink the mask by this many pixels first (mask edges hold mixed foreground/background depth).
            reject_outliers: drop points whose depth is further than max(0.1 m, 4 x 1.4826 x MAD) from the
                median depth inside the mask (flying pixels, background leaking through the mask).
        """
        if frame is None:
            frame = getattr(mask, "frame_index", None)
            frame = getattr(depth, "frame_index", None) if frame is None else frame
        label = label or getattr(mask, "label", None)
        mask_array = np.asarray(getattr(mask, "mask", mask)).astype(bool)
        if hasattr(depth, "poses") and hasattr(depth, "frame_indices"):
            depth, K, pose = self._from_reconstruction(depth, frame, K, pose)
        if depth is None:
            raise ValueError(f"no depth map for {name!r}: pass an (H, W) depth map in metres, e.g. depth(frame)")
        if K is None:
            K = getattr(depth, "intrinsics", getattr(depth, "K", None))
            if K is None:
                raise ValueError("add_from_mask needs intrinsics: pass K=(3, 3) or a depth result with .intrinsics")
        depth_map = np.asarray(getattr(depth, "depth", depth), dtype=np.float64)
        index = None if frame is None else _frame_index(frame)
        if pose is None:
            if index is None or index not in self.cameras:
                known = sorted(self.cameras)
                raise ValueError(
                    f"add_from_mask needs a camera pose: pass pose=(4, 4), or frame=<index> of a registered camera "
                    f"(registered frames: {known}; register with scene.set_cameras(rec))"
                )
            pose = self.cameras[index]
        elif index is not None and index not in self.cameras:
            self.add_camera(index, pose)
        if mask_array.shape != depth_map.shape:
            raise ValueError(f"mask shape {mask_array.shape} differs from depth shape {depth_map.shape}; resize the mask to the depth map")
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
        points = geom.backproject(depth_map, K, pose=pose, mask=valid, stride=stride)
        return self.add(name, points, frames=() if index is None else [index], label=label, merge=merge)

    @staticmethod
    def _from_reconstruction(rec: Any, frame: Any, K: Any, pose: Any) -> tuple[Any, Any, Any]:
        if frame is None:
            raise ValueError("add_from_mask with a reconstruction needs the frame: pass frame=<absolute index> "
                             "(or a segmentation Instance with .frame_index)")
        index = _frame_index(frame)
        positions = np.flatnonzero(np.asarray(rec.frame_indices) == index)
        if len(positions) == 0:
            raise ValueError(f"frame {index} is not in the reconstruction; its frames are {np.asarray(rec.frame_indices).tolist()}")
        i = int(positions[0])
        rec_pose = np.asarray(rec.poses[i], dtype=np.float64)
        if pose is None and not np.isfinite(rec_pose).all():
            raise ValueError(f"frame {index} was not registered by the reconstruction (no pose); use another frame")
        if rec.depth is None or rec.depth[i] is None:
            raise ValueError(f"the reconstruction has no depth map for frame {index}; pass depth=depth(frames.at({index})) "
                             f"with K and pose=rec.poses[{i}] instead")
        return rec.depth[i], (rec.intrinsics[i] if K is None else K), (rec_pose if pose is None else pose)

    def add_bearing(
        self,
        name: str,
        pixel: Any,
        distance: float | None = None,
        distance_sigma: float | None = None,
        frame: Any = None,
        K: Any = None,
        hfov_deg: float | None = None,
        image_size: tuple[int, int] | None = None,
        pose: Any = None,
        pixel_sigma_px: float | None = None,
        label: str | None = None,
        replace: bool = False,
        on_floor: bool = False,
        camera_height_m: float | None = None,
        pitch_deg: float | None = None,
    ) -> SceneObject | Readout:
        """Locate an object from 2D evidence: where it is in an image plus (optionally) how far it is.

        Each call adds one observation; calling again with the same name and another view fuses the
        bearings (triangulation when the camera poses differ, with or without distances), so a layout
        can be built from a few small frames with no depth model. The position and its covariance come
        from a weighted least-squares fit (see ``scene_bearings``); every readout that uses the object
        (``perspective``, ``relation``, ``describe``, ``bev``) carries that uncertainty.

        Args:
            name: the object's name (an existing bearing-located object of that name gets this
                observation added; ``replace=True`` starts it over).
            pixel: (x, y) pixels of the object's centre (or a ``Blob``/detection centre) in the frame.
            distance: estimated distance from the camera to the object along that ray, metres (from a
                depth map or a judgement), or a ``KnownScale`` (``geom.scale_from_known_size``: its distance
                and sigma are used); None for a bearing only. distance_sigma: its standard deviation,
                metres (default 25% of distance).
            frame: the absolute frame index or the ``Frame`` the pixel is in (a Frame, or a PIL image,
                also gives the image size). Its registered camera pose is used unless ``pose`` is given.
            K: (3, 3) intrinsics, pixels. Without K: ``hfov_deg`` (horizontal field of view, degrees;
                default 60, stated in the readouts as an assumption) and the image size (from the Frame or
                ``image_size=(width, height)`` px).
            pose: (4, 4) camera-to-world pose. Default: the registered camera of ``frame``; with no
                camera registered at all, the design world's first camera: at the origin, level, facing +Y
                (stated as an assumption).
            pixel_sigma_px: uncertainty of ``pixel``, pixels (default 2).
            on_floor: the pixel shows a point ON the floor (where the object touches the ground, a marker
                dot on the floor): its distance comes from ``geom.floor_point`` (the ray meets the floor of
                a camera ``camera_height_m`` above it, default 1.5 m assumed, tilted ``pitch_deg`` down,
                default estimated from the Frame's vertical edges or else 15 deg assumed, or the
                registered/given pose's tilt) with the uncertainty of those assumptions; do not pass
                ``distance``. Use it for every object of a no-depth photo.
            camera_height_m / pitch_deg: with ``on_floor``: the camera's height above the floor (metres)
                and downward tilt (degrees, > 0 looks down) when you know or can judge them.

        Returns:
            The located ``SceneObject`` (``.center``, ``.covariance``, ``.sigma_m``, ``.located``); for a
            first bearing without a distance, a ``Readout`` saying it is kept (``scene.pending``) until a
            second view or a distance locates it.

        Example::

            scene.add_bearing("sofa", (52, 120), distance=3.0, distance_sigma=0.5, frame=frames[0], hfov_deg=60)
            scene.add_bearing("tv", (160, 95), distance=2.5, frame=frames[0], hfov_deg=60)
            scene.add_bearing("lamp", (20, 100), distance=1.8, frame=frames[0], hfov_deg=60)
            scene.perspective("lamp", standing_at="sofa", facing="tv")   # clock, left/right, degrees, metres

            # marker dots on the floor of one photo, no depth: distances from the floor geometry
            for c in ("red", "blue", "green"):
                scene.add_bearing(c, find_color(frames[0], c, shape="dot")[0], frame=frames[0], on_floor=True)
            scene.perspective("green", standing_at="red", facing="blue").direction   # e.g. "front-right"
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if hasattr(distance, "distance_m"):               # a KnownScale from geom.scale_from_known_size
            if distance.distance_m is None:
                raise ValueError("this KnownScale has no distance (no focal length): pass K= or hfov_deg= to "
                                 "geom.scale_from_known_size")
            distance, distance_sigma = distance.distance_m, distance_sigma or distance.distance_sigma_m or None
        has_index = frame is not None and (hasattr(frame, "index") or isinstance(frame, (int, np.integer)))
        index = _frame_index(frame) if has_index else None
        assumed: list[str] = []
        if on_floor:
            if distance is not None:
                raise ValueError("on_floor=True computes the distance from the floor geometry; drop distance= "
                                 "(or drop on_floor to use your distance)")
            camera = pose if pose is not None else self.cameras.get(index) if index is not None else None
            if camera is None and self.cameras:
                raise ValueError(f"no camera pose for frame {index}: pass pose=(4, 4) camera-to-world, or register "
                                 f"it (scene.add_camera); registered frames: {sorted(self.cameras)}")
            if camera is not None and pitch_deg is not None:
                raise ValueError("this frame's camera pose already fixes the tilt; drop pitch_deg= (or pass pose=)")
            size = image_size if image_size is not None else (
                (frame.width, frame.height) if hasattr(frame, "width") and hasattr(frame, "height") else None)
            image = frame if hasattr(frame, "width") and hasattr(frame, "height") else None
            floor = geom.floor_point(pixel, image, image_size=size, K=K, hfov_deg=hfov_deg, camera_height_m=camera_height_m,
                                     pitch_deg=pitch_deg, pose=camera,
                                     pixel_sigma_px=DEFAULT_PIXEL_SIGMA_PX if pixel_sigma_px is None else pixel_sigma_px)
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
                raise ValueError("add_bearing needs K=(3, 3), or the image size to go with a field of view: pass "
                                 "frame=<the Frame>, or image_size=(width, height) pixels")
            if hfov_deg is None:
                hfov_deg = DEFAULT_HFOV_DEG
                assumed.append(f"{DEFAULT_HFOV_DEG:g} deg horizontal field of view")
            K = intrinsics_from_fov(int(size[0]), int(size[1]), float(hfov_deg))
        if pose is None:
            if index is not None and index in self.cameras:
                pose = self.cameras[index]
            elif not self.cameras:
                pose = level_camera_pose()
                assumed.append("camera at the origin, level, facing +Y")
            else:
                raise ValueError(f"no camera pose for frame {index}: pass pose=(4, 4) camera-to-world, or register "
                                 f"it (scene.add_camera); registered frames: {sorted(self.cameras)}")
        bearing = make_bearing(pixel, index, K, pose, pixel_sigma_px, distance, distance_sigma, "; ".join(assumed))
        if on_floor:
            bearing = replace_fields(bearing, floor=floor)
        previous = self.instances.get(name)
        if previous is not None and not replace and previous.covariance is None:
            raise ValueError(f"{name!r} is already in the scene from 3D points; pass replace=True to locate it from "
                             f"bearings instead, or use another name")
        earlier = () if replace else (previous.bearings if previous is not None else self.pending.get(name, ()))
        bearings = earlier + (bearing,)
        if index is not None and index not in self.cameras and "camera at the origin" not in bearing.assumed:
            self.add_camera(index, bearing.pose)
        if len(bearings) == 1 and bearing.distance_m is None:
            self.pending[name] = bearings
            return Readout(f"{name}: 1 bearing kept (frame {index}); it is located once you add a bearing of it from "
                           f"another view (with that camera's pose) or a distance estimate")
        position, covariance, how = locate(bearings)
        self.pending.pop(name, None)
        frames = tuple(sorted({b.frame for b in bearings if b.frame is not None}))
        instance = SceneObject(name=name, label=label or (previous.label if previous is not None else name),
                               points=position[None], frames=frames, covariance=covariance, bearings=bearings,
                               located=how)
        self.instances[name] = instance
        return instance

    def _place(self, ref: Any, role: str) -> tuple[str, np.ndarray, np.ndarray, np.ndarray | None]:
        """(wording, (3,) position, (3, 3) covariance, (3,) forward or None) of a name, camera or point."""
        if isinstance(ref, str):
            instance = self._get(ref)
            cov = instance.covariance if instance.covariance is not None else np.zeros((3, 3))
            return f"the {ref}", instance.center, cov, None
        if isinstance(ref, (int, np.integer)) and not isinstance(ref, (bool, np.bool_)):
            pose, who = self._observer(int(ref))
            return who, pose[:3, 3].copy(), np.zeros((3, 3)), geom.observer_axes(pose)[1]
        point = np.asarray(ref, dtype=np.float64).ravel()
        if point.shape == (2,):
            point = np.append(point, 0.0)
        if point.shape != (3,) or not np.isfinite(point).all():
            raise ValueError(f"{role} must be an object name, a camera's frame index, or a world point (x, y[, z]) "
                             f"in metres; got {ref!r}")
        return f"({point[0]:.2f}, {point[1]:.2f}) m", point, np.zeros((3, 3)), None

    def perspective(self, target: Any, standing_at: Any, facing: Any = None, seed: int = 0) -> Perspective:
        """Perspective taking: standing at ``standing_at`` facing ``facing``, where is ``target``?

        Read on the ground plane (world XY, +Z up): ahead = the horizontal direction from the viewer to
        ``facing``; the answer is a clock hour (12 ahead, 3 right), an eight-way direction (front,
        front-right, right, ... also as a compass with ahead = N), left/right and in front/behind, the
        signed angle in degrees (> 0 to the right) and the horizontal distance in metres, each with its
        standard deviation and the probability of the wording, propagated from the positions'
        uncertainties (bearing-located objects). Works the same for objects measured in 3D.

        Args:
            target, standing_at, facing: object names, a camera's absolute frame index (the camera's
                position; as ``standing_at`` with ``facing=None`` it faces its own viewing direction), or
                world points (x, y) / (x, y, z) in metres.
            seed: random seed of the uncertainty sampling.

        Returns:
            A ``Perspective``: ``.angle_deg``, ``.angle_sigma_deg``, ``.clock``, ``.direction``,
            ``.compass``, ``.side``, ``.depth``, ``.distance_m``, ``.distance_sigma_m``, ``.p_right``,
            ``.p_front``, ``.p_clock``, ``.p_direction`` and ``.text``.
        """
        where = self._place(standing_at, "standing_at")
        what = self._place(target, "target")
        if facing is None:
            if where[3] is None:
                raise ValueError("say what the viewer faces: facing=<object name, camera index or point>; only a "
                                 "camera (standing_at=<frame index>) has a facing of its own")
            return perspective_from_positions(what[:3], where[:3], ("its viewing direction", None, None),
                                              forward=where[3], seed=seed)
        toward = self._place(facing, "facing")
        return perspective_from_positions(what[:3], where[:3], toward[:3], seed=seed,
                                          joint=self._floor_samples((target, standing_at, facing), seed))

    def _floor_samples(self, names: tuple[Any, ...], seed: int) -> tuple[np.ndarray, ...] | None:
        """Joint (S, 2) ground samples of objects located on the floor of one photo (each from one
        ``on_floor`` bearing with the same camera and assumptions), so their shared camera error (height,
        tilt, field of view) moves them together; None when that does not apply."""
        from spatialclaw.primitives.geometry.floor import floor_samples

        if not all(isinstance(n, str) and n in self.instances for n in names):
            return None
        bearings = [self.instances[n].bearings for n in names]
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

    def remove(self, name: str) -> None:
        """Forget an instance."""
        self._get(name)
        del self.instances[name]

    def clear(self) -> None:
        """Forget all instances and cameras."""
        self.instances.clear()
        self.cameras.clear()
        self.pending.clear()
        self.unposed = []

    def _get(self, name: str) -> SceneObject:
        if name not in self.instances:
            raise KeyError(f"no instance named {name!r} in the scene; known: {sorted(self.instances)} (add with scene.add)")
        return self.instances[name]

    def __getitem__(self, name: str) -> SceneObject:
        """``scene["chair"]``: the stored ``SceneObject`` (KeyError listing the known names otherwise)."""
        return self._get(name)

    def __contains__(self, name: object) -> bool:
        return name in self.instances

    def __len__(self) -> int:
        """Number of instances."""
        return len(self.instances)

    def __iter__(self) -> Iterator[SceneObject]:
        return iter(self.instances.values())

    @property
    def names(self) -> list[str]:
        """Object names in insertion order."""
        return list(self.instances)

    # ---- readouts ------------------------------------------------------------------------------
    def _observer(self, observer: Any) -> tuple[np.ndarray, str]:
        if observer is None:
            if self.cameras:
                first = min(self.cameras)
                return self.cameras[first], f"camera {first}"
            world_view = np.eye(4)
            world_view[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
            return world_view, "the world origin facing +Y"
        if isinstance(observer, (int, np.integer)) and not isinstance(observer, (bool, np.bool_)):
            if int(observer) not in self.cameras:
                raise ValueError(
                    f"no camera for frame {int(observer)}; registered frames: {sorted(self.cameras)} "
                    f"(register with scene.set_cameras(rec) or scene.add_camera(frame, pose))"
                )
            return self.cameras[int(observer)], f"camera {int(observer)}"
        return as_pose(observer, name="observer"), "the given viewpoint"

    def relation(self, a: str, b: str, observer: Any = None, tolerance: float = 0.05,
                 position: str = "box") -> Relation:
        """Where instance ``a`` is relative to instance ``b``.

        Args:
            a, b: instance names.
            observer: an absolute frame index k (camera k), a (4, 4) camera-to-world pose, or None
                (the first registered camera; the world axes, facing +Y, when no camera is registered).
            tolerance: offsets below this many metres are not worded (reported as "same ... within").
            position: "box" (default): compare upright box centres; "centroid": compare point means.

        Returns:
            A ``Relation``: signed offsets (``.direction.right_m/forward_m/up_m``), centre-to-centre, horizontal
            and closest-point distances in metres, and ``.text``. Left/right/front/behind are defined in
            the class docstring (camera k's gravity-aligned frame).
        """
        if position not in ("box", "centroid"):
            raise ValueError(f"position must be 'box' or 'centroid', got {position!r}")
        ia, ib = self._get(a), self._get(b)
        pose, who = self._observer(observer)
        pos_a, pos_b = (ia.center, ib.center) if position == "box" else (ia.centroid, ib.centroid)
        offset_direction = geom.direction(pos_a, pos_b, pose, tolerance=tolerance)
        pa, pb, gap = geom.closest_points(ia.points, ib.points)
        delta = pos_a - pos_b
        covariance = sum(np.asarray(i.covariance) for i in (ia, ib) if i.covariance is not None)
        sigma = (0.0, 0.0, 0.0)
        if isinstance(covariance, np.ndarray):
            axes = geom.observer_axes(pose)
            sigma = tuple(float(v) for v in np.sqrt(np.clip(np.diag(axes @ covariance @ axes.T), 0, None)))
        return Relation(
            a=a, b=b, observer=who, position=position, direction=offset_direction,
            centre_distance_m=float(np.linalg.norm(delta)),
            horizontal_distance_m=float(np.hypot(delta[0], delta[1])),
            closest_distance_m=gap, closest_points=(pa, pb), offset_sigma_m=sigma,
        )

    def describe(self, observer: Any = None, tolerance: float = 0.05, position: str = "box") -> Readout:
        """All instances (sizes, positions) and their pairwise relations, in plain language.

        Pairs are listed in insertion order, at most 45 of them (the count left out is stated);
        ``observer``, ``tolerance`` and ``position`` are as in ``relation``.
        """
        if not self.instances:
            return Readout("The scene is empty: add instances with scene.add(name, points=...) or scene.add_from_mask(...).")
        _, who = self._observer(observer)
        cams = f"{len(self.cameras)} camera{'s' if len(self.cameras) != 1 else ''} (frames {sorted(self.cameras)})" if self.cameras else "no cameras registered"
        if self.unposed:
            cams += f"; frames without a pose: {self.unposed}"
        if self.pending:
            cams += f"; waiting for a second view or a distance: {sorted(self.pending)}"
        count = f"{len(self.instances)} instance{'s' if len(self.instances) != 1 else ''}"
        lines = [f"Scene: {count}, {cams}. World frame: metres, +Z up. "
                 f"Directions seen from {who} (its forward projected onto the ground), between "
                 f"{'upright box centres' if position == 'box' else 'point centroids'}."]
        lines += [f"- {instance.summary()}" for instance in self.instances.values()]
        pairs = list(combinations(self.instances, 2))
        if pairs:
            lines.append("Relations:")
            for a, b in pairs[:MAX_PAIRS_IN_DESCRIPTION]:
                lines.append(f"- {self.relation(a, b, observer=observer, tolerance=tolerance, position=position).text}")
            if len(pairs) > MAX_PAIRS_IN_DESCRIPTION:
                lines.append(f"({len(pairs) - MAX_PAIRS_IN_DESCRIPTION} more pairs not listed; ask with scene.relation(a, b))")
        return Readout("\n".join(lines))

    def __repr__(self) -> str:
        return f"Scene({len(self.instances)} instances: {self.names}; cameras at frames {sorted(self.cameras)})"

    # ---- bird's-eye view -----------------------------------------------------------------------
    def bev(self, size_px: int = 800, max_points: int = 4000, title: str | None = None) -> Image.Image:
        """Top-down view of the world XY plane (+Y up the page, +X to the right), metres on the axes.

        Draws each instance's points, its upright box footprint and its name; an object located from
        bearings as a cross with its 2-sigma uncertainty ellipse (95% of the position's probability on
        the ground) and dashed rays from the cameras that saw it; each camera as a dot with an arrow along
        its forward direction on the ground, labelled "cam k". Returns a PIL RGB image about ``size_px``
        pixels across.
        """
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from PIL import Image

        if not self.instances and not self.cameras:
            raise ValueError("nothing to draw: the scene has no instances and no cameras")
        dpi = 100
        figure = Figure(figsize=(size_px / dpi, size_px / dpi), dpi=dpi)
        FigureCanvasAgg(figure)
        ax = figure.add_subplot(1, 1, 1)
        colours = [object_colour(name, i) for i, name in enumerate(self.instances)]
        rng = np.random.default_rng(0)
        spans = []
        for colour, instance in zip(colours, self.instances.values()):
            if instance.covariance is not None:
                spans.append(_draw_bearing_object(ax, instance, colour))
                continue
            pts = instance.points
            if len(pts) > max_points:
                pts = pts[rng.choice(len(pts), max_points, replace=False)]
            ax.scatter(pts[:, 0], pts[:, 1], s=2, color=colour, alpha=0.35, linewidths=0)
            footprint = np.vstack([instance.box.footprint, instance.box.footprint[:1]])
            ax.plot(footprint[:, 0], footprint[:, 1], color=colour, linewidth=1.5)
            c = instance.center
            ax.annotate(instance.name, (c[0], c[1]), ha="center", va="center", fontsize=9, weight="bold",
                        bbox=dict(boxstyle="round,pad=0.2", fc="white", ec=colour, alpha=0.85))
            spans.append(instance.extent[:, :2])
        arrow = 0.3
        if spans or self.cameras:
            allxy = np.vstack(spans + [p[:3, 3][None, :2] for p in self.cameras.values()])
            arrow = max(0.1, 0.08 * float(np.max(np.ptp(allxy, axis=0))) if len(allxy) > 1 else 0.3)
        groups: list[tuple[np.ndarray, list[int]]] = []   # cameras closer than half an arrow share a label
        for index, pose in sorted(self.cameras.items()):
            _, forward, _ = geom.observer_axes(pose)
            x, y = pose[0, 3], pose[1, 3]
            ax.plot([x], [y], marker="o", color="black", markersize=5)
            ax.arrow(x, y, forward[0] * arrow, forward[1] * arrow, color="black", width=arrow * 0.04,
                     length_includes_head=True)
            near = next((g for g in groups if np.hypot(*(g[0] - (x, y))) < arrow / 2), None)
            if near is None:
                groups.append((np.array([x, y]), [index]))
            else:
                near[1].append(index)
        for (x, y), indices in groups:
            text = f"cam {indices[0]}" if len(indices) == 1 else "cams " + ", ".join(map(str, indices))
            if len(indices) > 6:
                text = f"cams {indices[0]}..{indices[-1]} ({len(indices)})"
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, -10), fontsize=8)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("X (m)")
        ax.set_ylabel("Y (m)")
        ax.grid(True, alpha=0.3)
        ax.set_title(title or "Bird's-eye view: world XY, +Z up (out of the page)")
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=dpi)
        buffer.seek(0)
        return Image.open(buffer).convert("RGB")


def _draw_bearing_object(ax: Any, instance: SceneObject, colour: Any) -> np.ndarray:
    """Cross, 2-sigma ellipse (chi-square 95% for 2 dof: 2.45 sigma) and rays; returns its (2, 2) XY span."""
    from matplotlib.patches import Ellipse

    c = instance.center
    cov = np.asarray(instance.covariance)[:2, :2]
    values, vectors = np.linalg.eigh(cov)
    values = np.clip(values, 0, None)
    k = float(np.sqrt(5.991))
    width, height = 2 * k * np.sqrt(values[1]), 2 * k * np.sqrt(values[0])
    angle = float(np.degrees(np.arctan2(vectors[1, 1], vectors[0, 1])))
    ax.add_patch(Ellipse((c[0], c[1]), width, height, angle=angle, fill=True, alpha=0.18, color=colour))
    ax.add_patch(Ellipse((c[0], c[1]), width, height, angle=angle, fill=False, linewidth=1.5, color=colour))
    ax.plot([c[0]], [c[1]], marker="+", markersize=10, color=colour, markeredgewidth=2)
    for bearing in instance.bearings:
        o = bearing.origin
        ax.plot([o[0], c[0]], [o[1], c[1]], linestyle="--", linewidth=0.8, color=colour, alpha=0.7)
    ax.annotate(instance.name, (c[0], c[1]), textcoords="offset points", xytext=(6, 6), fontsize=9, weight="bold",
                bbox=dict(boxstyle="round,pad=0.2", fc="white", ec=colour, alpha=0.85))
    half = k * np.sqrt(np.clip(np.diag(cov), 0, None))
    return np.array([c[:2] - half, c[:2] + half])


def figure_colour(i: int) -> tuple[float, float, float]:
    """The i-th colour of matplotlib's tab10 cycle as an RGB tuple in [0, 1]."""
    from matplotlib import colormaps

    return tuple(colormaps["tab10"](i % 10)[:3])


def object_colour(name: str, i: int) -> tuple[float, float, float]:
    """How the bird's-eye view draws object ``name`` (the i-th): in the colour its name says when it says
    one ("red", "blue dot", "green_marker"), else the i-th figure colour, so a "blue" object is never
    drawn orange."""
    from matplotlib.colors import to_rgb

    for word in str(name).lower().replace("_", " ").replace("-", " ").split():
        if word in _NAMED_COLOURS:
            return to_rgb(word)
    return figure_colour(i)


_NAMED_COLOURS = {"red", "green", "blue", "yellow", "orange", "purple", "pink", "brown", "black", "white", "gray",
                  "grey", "cyan", "magenta"}
