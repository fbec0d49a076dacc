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

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from PIL import Image

from spatialclaw.primitives.geometry.camera import as_points, as_pose
from spatialclaw.primitives.scene.bearings import Bearing
from spatialclaw.primitives.scene.bev import draw_bev
from spatialclaw.primitives.scene.objects import SceneObject, frame_index, get_instance, registered_cameras
from spatialclaw.primitives.scene.observations import bearing_from_pixel, fuse_bearing, points_from_mask
from spatialclaw.primitives.scene.perspective import Perspective
from spatialclaw.primitives.scene.places import perspective_of
from spatialclaw.primitives.scene.readouts import Readout, Relation, describe_scene, observer_pose, relation_between
from spatialclaw.primitives.scene.tilts import relation_across_tilts
from spatialclaw.primitives.scene.views import ViewLinking

__all__ = ["Scene"]


class Scene(ViewLinking):
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
    Views far apart without poses: ``add_view``, ``link_views``, ``set_north``, ``compass``, ``wall_facing``.
    """

    def __init__(self) -> None:
        self.instances: dict[str, SceneObject] = {}
        self.cameras: dict[int, np.ndarray] = {}
        self.unposed: list[int] = []
        self.pending: dict[str, tuple[Bearing, ...]] = {}
        self._reset_views()

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
        self.cameras, self.unposed = registered_cameras(poses, frame_indices)

    def add_camera(self, frame: Any, pose: Any) -> None:
        """Register (or replace) the (4, 4) camera-to-world pose of one absolute frame index."""
        self.cameras[frame_index(frame)] = as_pose(pose)

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
        indices = tuple(frame_index(f) for f in frame_list)
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
        points, index = points_from_mask(
            self.cameras, name, mask, depth, K, pose, frame, erode_px, reject_outliers, stride
        )
        return self.add(
            name,
            points,
            frames=() if index is None else [index],
            label=label or getattr(mask, "label", None),
            merge=merge,
        )

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
        pitch_deg: Any = None,
        tilt: Any = None,
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
                default: the intrinsics ``depth(frame)`` estimated for this frame with a camera-estimating
                model such as Depth Pro, else 60; stated in the readouts as an assumption) and the image
                size (from the Frame or ``image_size=(width, height)`` px).
            pose: (4, 4) camera-to-world pose. Default: the registered camera of ``frame``; with no
                camera registered at all, the design world's first camera: at the origin, level, facing +Y
                (stated as an assumption).
            pixel_sigma_px: uncertainty of ``pixel``, pixels (default 2).
            on_floor: the pixel shows a point ON the floor (where the object touches the ground, a marker
                dot on the floor): its distance comes from ``geom.floor_point`` (the ray meets the floor of
                a camera ``camera_height_m`` above it, default 1.5 m assumed, pitched ``pitch_deg``,
                default estimated from the Frame's edges or else -15 deg (15 down) assumed, or the
                registered/given pose's tilt) with the uncertainty of those assumptions; do not pass
                ``distance``. Use it for every object of a no-depth photo.
            camera_height_m / pitch_deg: with ``on_floor``: the camera's height above the floor (metres)
                and pitch (degrees, > 0 tilts up, < 0 looks down) when you know or can judge them.
            tilt: with ``on_floor``: the ``CameraTilt`` of ``geom.camera_tilt(frame)`` (or pass it as
                ``pitch_deg``): its sigma, and its rival pitch when the image also fits one, carry into the
                position and every readout (``perspective`` then says whether the answer holds at every
                plausible tilt or depends on it).

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
        if tilt is not None:
            if pitch_deg is not None:
                raise ValueError("pass either tilt= or pitch_deg=, not both")
            pitch_deg = tilt
        bearing, index = bearing_from_pixel(
            self.cameras,
            pixel,
            distance,
            distance_sigma,
            frame,
            K,
            hfov_deg,
            image_size,
            pose,
            pixel_sigma_px,
            on_floor,
            camera_height_m,
            pitch_deg,
        )
        return fuse_bearing(self, name, bearing, index, label, replace)

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
            ``.p_front``, ``.p_clock``, ``.p_direction`` and ``.text``. For objects on the floor of one photo
            ``.tilt_note`` says whether the answer holds at every camera tilt the image allows or depends
            on it ("AMBIGUOUS: ..."); ``.distance_note`` says when the distance is unknown (no P is then
            printed from it).
        """
        p = perspective_of(self.instances, self.cameras, target, standing_at, facing, seed)
        return self._compass_perspective(p, target, standing_at, facing)

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
        self._reset_views()

    def _get(self, name: str) -> SceneObject:
        return get_instance(self.instances, name)

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
    def relation(
        self, a: str, b: str, observer: Any = None, tolerance: float = 0.05, position: str = "box"
    ) -> Relation:
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
            the class docstring (camera k's gravity-aligned frame). For objects on the floor of one photo,
            ``.tilt_note`` says whether the words hold at every camera tilt the image allows.
        """
        if position not in ("box", "centroid"):
            raise ValueError(f"position must be 'box' or 'centroid', got {position!r}")
        ia, ib = self._get(a), self._get(b)
        pose, who = observer_pose(self.cameras, observer)
        r = relation_between(a, b, ia, ib, pose, who, tolerance=tolerance, position=position)
        return self._compass_relation(relation_across_tilts(r, self.instances, pose))

    def describe(self, observer: Any = None, tolerance: float = 0.05, position: str = "box") -> Readout:
        """All instances (sizes, positions) and their pairwise relations, in plain language.

        Pairs are listed in insertion order, at most 45 of them (the count left out is stated);
        ``observer``, ``tolerance`` and ``position`` are as in ``relation``.
        """
        return Readout(describe_scene(self, observer, tolerance, position) + self._compass_lines())

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
        return draw_bev(self.instances, self.cameras, size_px, max_points, title)
