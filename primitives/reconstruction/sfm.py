"""Incremental structure from motion with pycolmap: SIFT features, exhaustive matching with geometric
verification, incremental mapping with bundle adjustment, and the bundle-adjustment covariance of every
relative rotation and of the focal length. Scale is arbitrary (SfM cannot observe it).

Weakly textured objects (a white figure on black) give SIFT few keypoints at its default contrast threshold,
so small frames (upsampled for detection) are read at a lower threshold, and larger ones are read again at it
when frames are left unregistered. Up to ``DETERMINISTIC_MAX_FRAMES`` frames run single-threaded: COLMAP's
threads make its answer differ from run to run, and the same frames should give the same answer.

Conventions of the result: OpenCV camera frames (x right, y down, z forward), poses camera-to-world (4, 4)
in COLMAP's arbitrary world frame, intrinsics (3, 3) in pixels with integer coordinates at pixel centres
(COLMAP puts pixel centres at +0.5; converted here).
"""

from __future__ import annotations

import contextlib
import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from spatialclaw.primitives.runtime.library_failures import library_block

if TYPE_CHECKING:
    import pycolmap

__all__ = ["DETERMINISTIC_MAX_FRAMES", "WEAK_TEXTURE_PEAK_THRESHOLD", "SfmResult", "nothing_registered", "run_sfm"]

DETERMINISTIC_MAX_FRAMES = 16
WEAK_TEXTURE_PEAK_THRESHOLD = 0.002  # SIFT DoG contrast threshold for weak texture (COLMAP's default: 0.0067)
RETRY_MAX_FRAMES = 16  # larger inputs are not read a second time (time)


@dataclass
class SfmResult:
    """Poses for the registered images of the largest reconstructed model (arbitrary scale).

    poses: (N, 4, 4) camera-to-world, NaN for unregistered images; intrinsics: (N, 3, 3) pixels;
    registered: (N,) bool; points: (M, 3); colors: (M, 3) uint8; errors: (M,) reprojection error in pixels;
    track_lengths: (M,) number of images observing each point; observations: per image, an (K, 3) array of
    (x, y, point row) for its keypoints with a 3D point (x, y in pixels, pixel centres at integers);
    rotation_sd_deg: (N, N) standard deviation of the relative rotation of two registered images in degrees
    (bundle-adjustment covariance; NaN where unknown); focal_sd: relative standard deviation of the estimated
    focal length (NaN when it was fixed or unknown); focal_views: how many images fixed the focal length.
    """

    poses: np.ndarray
    intrinsics: np.ndarray
    registered: np.ndarray
    points: np.ndarray
    colors: np.ndarray
    errors: np.ndarray
    track_lengths: np.ndarray
    observations: list[np.ndarray]
    summary: str
    rotation_sd_deg: np.ndarray | None = None
    focal_sd: float = math.nan
    focal_views: int = 0


def nothing_registered(count: int, intrinsics: list[np.ndarray] | None, reason: str) -> SfmResult:
    """The result of a run that registered none of ``count`` images (NaN poses), ``reason`` as its summary."""
    return SfmResult(
        np.full((count, 4, 4), np.nan),
        np.stack(intrinsics) if intrinsics is not None else np.full((count, 3, 3), np.nan),
        np.zeros(count, dtype=bool),
        np.zeros((0, 3)),
        np.zeros((0, 3), np.uint8),
        np.zeros(0),
        np.zeros(0, int),
        [np.zeros((0, 3))] * count,
        reason,
    )


@contextlib.contextmanager
def _quiet_glog() -> Iterator[None]:
    """Silence COLMAP's glog progress output (it goes straight to the process's stderr)."""
    import pycolmap

    logging = getattr(pycolmap, "logging", None)
    previous = getattr(logging, "minloglevel", None)
    try:
        if logging is not None and previous is not None:
            logging.minloglevel = 3  # glog levels: 0 info, 1 warning, 2 error, 3 fatal; we report failures ourselves
        yield
    finally:
        if logging is not None and previous is not None:
            logging.minloglevel = previous


def _resize_matrix(factor: float) -> np.ndarray:
    """Pixel coordinates of an image resized by ``factor`` from the original (pixel centres at integers)."""
    return np.array([[factor, 0, 0.5 * factor - 0.5], [0, factor, 0.5 * factor - 0.5], [0, 0, 1.0]])


def run_sfm(
    images: list[np.ndarray],
    intrinsics: list[np.ndarray] | None = None,
    refine_intrinsics: bool = False,
    max_image_size: int = 1600,
    seed: int = 0,
) -> SfmResult:
    """Run SfM on (H, W, 3) uint8 RGB images. ``intrinsics``: (3, 3) pixel intrinsics per image, kept fixed
    unless ``refine_intrinsics`` (then they are a starting point), or None to estimate one shared focal
    length per image size (principal point at the centre).

    Small images (longer side under ``features.TARGET_FEATURE_SIDE``) are upsampled for SfM and read at
    ``WEAK_TEXTURE_PEAK_THRESHOLD``, so that SIFT finds enough keypoints; intrinsics and observations are
    mapped back to the original pixels. Larger images that leave frames unregistered are read again at that
    threshold (up to ``RETRY_MAX_FRAMES`` images) and the run that registers more frames is kept."""
    import cv2

    from spatialclaw.primitives.motion.features import feature_scale

    factor = min(feature_scale(rgb.shape) for rgb in images)
    if factor <= 1.0:
        result = _run_sfm(images, intrinsics, refine_intrinsics, max_image_size, seed, weak_texture=False)
        if result.registered.all() or len(images) > RETRY_MAX_FRAMES:
            return result
        retry = _run_sfm(images, intrinsics, refine_intrinsics, max_image_size, seed, weak_texture=True)
        if _better(retry, result):
            retry.summary += (
                f" (read again at a lower SIFT contrast threshold for weak texture: {int(retry.registered.sum())} "
                f"frames registered instead of {int(result.registered.sum())})"
            )
            return retry
        return result
    S = _resize_matrix(factor)
    big = [
        cv2.resize(rgb, (round(rgb.shape[1] * factor), round(rgb.shape[0] * factor)), interpolation=cv2.INTER_CUBIC)
        for rgb in images
    ]
    result = _run_sfm(
        big,
        None if intrinsics is None else [S @ K for K in intrinsics],
        refine_intrinsics,
        max_image_size,
        seed,
        weak_texture=True,
    )
    back = np.linalg.inv(S)
    result.intrinsics = np.stack([back @ K if np.isfinite(K).all() else K for K in result.intrinsics])
    for obs in result.observations:
        if len(obs):
            obs[:, :2] = (obs[:, :2] + 0.5) / factor - 0.5
    result.summary += f" (features at {factor:.1f}x and a lower SIFT contrast threshold: the frames are small)"
    return result


def _better(a: SfmResult, b: SfmResult) -> bool:
    """More frames registered, then more points."""
    return (int(a.registered.sum()), len(a.points)) > (int(b.registered.sum()), len(b.points))


def _run_sfm(
    images: list[np.ndarray],
    intrinsics: list[np.ndarray] | None,
    refine_intrinsics: bool,
    max_image_size: int,
    seed: int,
    weak_texture: bool,
) -> SfmResult:
    with tempfile.TemporaryDirectory(prefix="spatialclaw-sfm-") as tmp, _quiet_glog():
        with library_block("pycolmap"):  # its C++ errors arrive as RuntimeError: this run then registers nothing
            models, names = _map(images, intrinsics, refine_intrinsics, max_image_size, seed, weak_texture, Path(tmp))
        return _collect(models, names, images, refine_focal=intrinsics is None or refine_intrinsics)


def _map(
    images: list[np.ndarray],
    intrinsics: list[np.ndarray] | None,
    refine_intrinsics: bool,
    max_image_size: int,
    seed: int,
    weak_texture: bool,
    root: Path,
) -> tuple[dict[int, pycolmap.Reconstruction], list[str]]:
    """COLMAP's feature extraction, exhaustive matching and incremental mapping in ``root``: (its models, the
    image names in input order)."""
    import pycolmap
    from PIL import Image

    count = len(images)
    threads = 1 if count <= DETERMINISTIC_MAX_FRAMES else -1
    image_dir = root / "images"
    image_dir.mkdir()
    names = [f"{i:04d}.png" for i in range(count)]
    for name, rgb in zip(names, images, strict=True):
        Image.fromarray(rgb).save(image_dir / name, compress_level=1)
    database = root / "database.db"
    reader = pycolmap.ImageReaderOptions()
    sizes = {rgb.shape[:2] for rgb in images}
    if intrinsics is None:
        reader.camera_model = "SIMPLE_PINHOLE"
        mode = pycolmap.CameraMode.SINGLE if len(sizes) == 1 else pycolmap.CameraMode.PER_IMAGE
    else:
        reader.camera_model = "PINHOLE"
        first = intrinsics[0]
        reader.camera_params = ",".join(str(v) for v in _colmap_params(first))
        same = len(sizes) == 1 and all(np.allclose(K, first) for K in intrinsics)
        mode = pycolmap.CameraMode.SINGLE if same else pycolmap.CameraMode.PER_IMAGE
    extraction = pycolmap.FeatureExtractionOptions()
    extraction.max_image_size = max_image_size
    extraction.num_threads = threads
    if weak_texture:
        extraction.sift.peak_threshold = WEAK_TEXTURE_PEAK_THRESHOLD
    pycolmap.extract_features(
        database,
        image_dir,
        image_names=names,
        camera_mode=mode,
        reader_options=reader,
        extraction_options=extraction,
        device=pycolmap.Device.cpu,
    )
    if intrinsics is not None and mode == pycolmap.CameraMode.PER_IMAGE:
        _write_known_cameras(database, names, intrinsics)
    matching = pycolmap.FeatureMatchingOptions()
    matching.num_threads = threads
    pycolmap.match_exhaustive(database, matching_options=matching, device=pycolmap.Device.cpu)
    fixed = intrinsics is not None and not refine_intrinsics
    options = _mapping_options(fixed, seed, small_motion=False)
    options.num_threads = threads
    models = pycolmap.incremental_mapping(database, image_dir, root / "sparse", options)
    if _largest(models) < 2:  # no initial pair: retry for views with little camera motion (short baselines)
        options = _mapping_options(fixed, seed, small_motion=True)
        options.num_threads = threads
        models = pycolmap.incremental_mapping(database, image_dir, root / "sparse", options)
    return models, names


def _mapping_options(known_intrinsics: bool, seed: int, small_motion: bool) -> pycolmap.IncrementalPipelineOptions:
    """Incremental mapping options, relaxed from COLMAP's defaults so that weakly textured objects (few
    features per view) still register: fewer inliers needed per image and for the initial pair."""
    import pycolmap

    options = pycolmap.IncrementalPipelineOptions()
    options.random_seed = seed
    options.min_model_size = 2
    options.min_num_matches = 10
    options.mapper.abs_pose_min_num_inliers = 15
    options.mapper.abs_pose_min_inlier_ratio = 0.15
    options.mapper.init_min_num_inliers = 50
    if small_motion:
        options.mapper.init_min_tri_angle = 2.0
        options.mapper.init_max_forward_motion = 0.99
        options.triangulation.min_angle = 0.5
        options.mapper.filter_min_tri_angle = 0.5
    if known_intrinsics:
        options.ba_refine_focal_length = False
        options.ba_refine_principal_point = False
        options.ba_refine_extra_params = False
    return options


def _largest(models: dict[int, pycolmap.Reconstruction]) -> int:
    return max((rec.num_reg_images() for rec in models.values()), default=0)


def _colmap_params(K: np.ndarray) -> list[float]:
    return [float(K[0, 0]), float(K[1, 1]), float(K[0, 2]) + 0.5, float(K[1, 2]) + 0.5]


def _write_known_cameras(database: Path, names: list[str], intrinsics: list[np.ndarray]) -> None:
    import pycolmap

    db = pycolmap.Database.open(database)
    try:
        for name, K in zip(names, intrinsics, strict=True):
            image = db.read_image_with_name(name)
            if image is None:
                raise RuntimeError(f"COLMAP's database lost the image {name}")
            camera = db.read_camera(image.camera_id)
            camera.params = _colmap_params(K)
            camera.has_prior_focal_length = True
            db.update_camera(camera)
    finally:
        db.close()


def _collect(
    models: dict[int, pycolmap.Reconstruction], names: list[str], images: list[np.ndarray], refine_focal: bool
) -> SfmResult:
    from spatialclaw.primitives.reconstruction.covariance import sfm_uncertainty

    count = len(names)
    poses = np.full((count, 4, 4), np.nan)
    intrinsics = np.full((count, 3, 3), np.nan)
    registered = np.zeros(count, dtype=bool)
    observations = [np.zeros((0, 3)) for _ in range(count)]
    if not models:
        empty = np.zeros((0, 3))
        return SfmResult(
            poses,
            intrinsics,
            registered,
            empty,
            np.zeros((0, 3), np.uint8),
            np.zeros(0),
            np.zeros(0, int),
            observations,
            "no two images could be matched and triangulated",
        )
    model = max(models.values(), key=lambda rec: rec.num_reg_images())
    point_ids = list(model.points3D.keys())
    row_of = {pid: row for row, pid in enumerate(point_ids)}
    points = np.array([model.points3D[pid].xyz for pid in point_ids]).reshape(-1, 3)
    colors = np.array([model.points3D[pid].color for pid in point_ids], dtype=np.uint8).reshape(-1, 3)
    errors = np.array([model.points3D[pid].error for pid in point_ids], dtype=float)
    tracks = np.array([model.points3D[pid].track.length() for pid in point_ids], dtype=int)
    position = {name: i for i, name in enumerate(names)}
    for image in model.images.values():
        if not image.has_pose:
            continue
        i = position[image.name]
        cam_from_world = image.cam_from_world()
        world_from_cam = np.eye(4)
        matrix = cam_from_world.matrix()
        world_from_cam[:3, :3] = matrix[:3, :3].T
        world_from_cam[:3, 3] = -matrix[:3, :3].T @ matrix[:3, 3]
        poses[i] = world_from_cam
        K = np.array(image.camera.calibration_matrix(), dtype=float)
        K[0, 2] -= 0.5
        K[1, 2] -= 0.5
        intrinsics[i] = K
        registered[i] = True
        obs = [(p.xy[0] - 0.5, p.xy[1] - 0.5, row_of[p.point3D_id]) for p in image.points2D if p.has_point3D()]
        observations[i] = np.array(obs, dtype=float).reshape(-1, 3)
    uncertainty = sfm_uncertainty(model, position, count, refine_focal)
    summary = model.summary() + (f"; {uncertainty.note}" if uncertainty.note else "")
    return SfmResult(
        poses,
        intrinsics,
        registered,
        points,
        colors,
        errors,
        tracks,
        observations,
        summary,
        rotation_sd_deg=uncertainty.rotation_sd_deg,
        focal_sd=uncertainty.focal_sd,
        focal_views=int(registered.sum()) if refine_focal else 0,
    )
