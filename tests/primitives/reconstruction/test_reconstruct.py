"""reconstruct(): poses against measured ground truth (Middlebury temple/dino rings, Redwood RGB-D
trajectory), metric scale from depth, the design world frame, and the errors a user can act on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from spatialclaw.primitives.reconstruction.inputs import MAX_FRAMES
from spatialclaw.primitives.reconstruction.points import metric_scale
from spatialclaw.primitives.reconstruction.reconstruct import reconstruct
from spatialclaw.primitives.reconstruction.result import Reconstruction, ReconstructionError
from spatialclaw.primitives.reconstruction.sfm import SfmResult


@dataclass
class FakeFrame:
    """The attributes of a kernel ``Frame`` that reconstruct() reads."""

    array: np.ndarray
    index: int


# ---- ground truth helpers -----------------------------------------------------------------------------------


def read_middlebury(folder: Path) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """name -> (K, R, t) with projection K [R t] (world-to-camera)."""
    par = next(folder.glob("*_par.txt"))
    cameras = {}
    for line in par.read_text().splitlines()[1:]:
        name, *values = line.split()
        v = np.array(values, dtype=float)
        cameras[name] = (v[:9].reshape(3, 3), v[9:18].reshape(3, 3), v[18:21])
    return cameras


def umeyama(source: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Similarity (scale, R, t) minimising |target - (scale R source + t)|^2 (Umeyama 1991)."""
    mu_s, mu_t = source.mean(axis=0), target.mean(axis=0)
    s, t = source - mu_s, target - mu_t
    U, S, Vt = np.linalg.svd(t.T @ s / len(source))
    D = np.eye(3)
    D[2, 2] = np.sign(np.linalg.det(U @ Vt))
    R = U @ D @ Vt
    scale = float(np.trace(np.diag(S) @ D) / ((s**2).sum() / len(source)))
    return scale, R, mu_t - scale * R @ mu_s


def rotation_angle_deg(R: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))


def ring_errors(rec: Reconstruction, cameras: list[tuple[np.ndarray, np.ndarray, np.ndarray]]):
    """(median rotation error deg, median centre error / ring radius) after similarity alignment."""
    ok = rec.registered
    centres = rec.poses[ok][:, :3, 3]
    truth = np.array([-R.T @ t for _, R, t in cameras])[ok]
    scale, R_align, t_align = umeyama(centres, truth)
    aligned = scale * centres @ R_align.T + t_align
    radius = np.linalg.norm(truth - truth.mean(axis=0), axis=1).mean()
    centre_error = np.linalg.norm(aligned - truth, axis=1) / radius
    true_rotations = [R.T for _, R, _ in cameras]  # camera-to-world
    rotation_error = [
        rotation_angle_deg((R_align @ est).T @ gt)
        for est, gt in zip(rec.poses[ok][:, :3, :3], np.array(true_rotations)[ok], strict=True)
    ]
    return float(np.median(rotation_error)), float(np.median(centre_error))


def read_redwood(folder: Path):
    from PIL import Image

    colors = [np.asarray(Image.open(folder / "color" / f"{i:05d}.jpg").convert("RGB")) for i in range(5)]
    depths = [np.asarray(Image.open(folder / "depth" / f"{i:05d}.png")).astype(np.float32) / 1000.0 for i in range(5)]
    rows = [line.split() for line in (folder / "trajectory.log").read_text().splitlines() if line.strip()]
    poses = [np.array(rows[5 * i + 1 : 5 * i + 5], dtype=float) for i in range(5)]
    K = np.array([[525.0, 0, 319.5], [0, 525.0, 239.5], [0, 0, 1]])
    return colors, depths, poses, K


# ---- multi-view rings (RGB only) ----------------------------------------------------------------------------


def test_temple_ring_poses_match_ground_truth_and_unmatchable_frames_are_reported(test_data):
    folder = test_data / "multiview-temple"
    cameras = read_middlebury(folder)
    names = sorted(p.name for p in folder.glob("*.png"))
    from PIL import Image

    frames = [FakeFrame(np.asarray(Image.open(folder / n).convert("RGB")), index=100 + i) for i, n in enumerate(names)]
    noise = np.random.default_rng(0).integers(0, 256, size=frames[0].array.shape, dtype=np.uint8)
    frames.append(FakeFrame(noise, index=999))
    with pytest.warns(UserWarning, match=r"frames \[999\] could not be registered"):
        rec = reconstruct(frames, depth=None)
    assert rec.frame_indices.tolist() == [100 + i for i in range(len(names))] + [999]
    assert rec.registered[:-1].all() and not rec.registered[-1]
    assert rec.unregistered == [999] and np.isnan(rec.poses[-1]).all()
    assert not rec.metric and "arbitrary" in rec.scale_source and rec.method == "sfm"
    rotation_error, centre_error = ring_errors(rec, [cameras[n] for n in names] + [cameras[names[0]]])
    assert rotation_error <= 2.0
    assert centre_error <= 0.05
    # design world frame: origin at the first camera, which looks along +Y (no roll/pitch of the origin)
    np.testing.assert_allclose(rec.pose(100)[:3, 3], 0.0, atol=1e-9)
    forward = rec.pose(100)[:3, 2]
    assert abs(forward[0]) < 1e-9 and forward[1] > 0
    assert rec.points.shape[1] == 3 and len(rec.points) == len(rec.colors) == len(rec.confidence) > 500
    with pytest.raises(KeyError, match="could not be registered"):
        rec.pose(999)


def test_two_views_with_known_intrinsics_match_the_relative_ground_truth_pose(test_data):
    folder = test_data / "multiview-temple"
    cameras = read_middlebury(folder)
    names = sorted(p.name for p in folder.glob("*.png"))[:3:2]  # two views 15 degrees apart on the ring
    (K, R0, t0), (_, R1, t1) = cameras[names[0]], cameras[names[1]]
    rec = reconstruct([folder / n for n in names], depth=None, intrinsics=K)
    assert rec.method == "two-view" and rec.registered.all()
    relative = np.linalg.inv(rec.poses[0]) @ rec.poses[1]  # camera 1 in camera 0's frame
    assert rotation_angle_deg(relative[:3, :3].T @ (R0 @ R1.T)) < 2.0
    true_direction = R0 @ (R1.T @ -t1 - R0.T @ -t0)
    cosine = relative[:3, 3] @ true_direction / np.linalg.norm(relative[:3, 3]) / np.linalg.norm(true_direction)
    assert np.degrees(np.arccos(min(cosine, 1.0))) < 3.0
    unknown = reconstruct([folder / n for n in names], depth=None)
    assert any("cannot fix the focal length" in note for note in unknown.notes)


@pytest.mark.slow
def test_dino_ring_poses_match_ground_truth(test_data):
    folder = test_data / "multiview-dino"
    cameras = read_middlebury(folder)
    names = sorted(p.name for p in folder.glob("*.png"))
    rec = reconstruct([folder / n for n in names], depth=None)
    assert rec.registered.sum() >= 0.9 * len(names)
    rotation_error, centre_error = ring_errors(rec, [cameras[n] for n in names])
    assert rotation_error <= 2.0
    assert centre_error <= 0.05


# ---- RGB-D ---------------------------------------------------------------------------------------------------


def test_redwood_rgbd_is_metric_and_matches_the_trajectory(test_data):
    colors, depths, truth, K = read_redwood(test_data / "rgbd-redwood")
    rec = reconstruct(colors, depth=depths, intrinsics=K)
    assert rec.method == "rgbd" and rec.metric and rec.registered.all()
    for i in range(1, 5):
        estimated = np.linalg.inv(rec.poses[0]) @ rec.poses[i]
        expected = np.linalg.inv(truth[0]) @ truth[i]
        assert np.linalg.norm(estimated[:3, 3] - expected[:3, 3]) < 0.01  # metres, over ~0.1 m of motion
        assert rotation_angle_deg(estimated[:3, :3].T @ expected[:3, :3]) < 0.5
    assert all(d is not None and d.shape == (480, 640) for d in rec.depth)
    assert np.array_equal(rec.intrinsics, np.stack([K] * 5))
    # dense points come from the depth maps, tagged with their frames, in the gravity-aligned world
    assert set(np.unique(rec.point_frames)) == {0, 1, 2, 3, 4}
    # +Z is up: the floor is one thin horizontal layer below the camera. A quarter of the points fall in one
    # 2 cm height band; tilting the cloud by 3 degrees would spread them to about 11%.
    heights = rec.points[:, 2]
    counts, edges = np.histogram(heights, bins=np.arange(heights.min(), heights.max() + 0.02, 0.02))
    assert counts.max() / len(heights) > 0.2
    assert edges[counts.argmax()] < -0.2
    image = rec.bev()
    assert image.size[0] > 100 and image.mode == "RGB"


def test_redwood_rgb_only_registers_small_camera_motion_with_accurate_rotations(test_data):
    colors, _, truth, K = read_redwood(test_data / "rgbd-redwood")  # ~2.4 cm between frames
    rec = reconstruct(colors, depth=None, intrinsics=K)
    assert rec.method == "sfm" and rec.registered.all() and not rec.metric
    for i in range(1, 5):
        estimated = np.linalg.inv(rec.poses[0]) @ rec.poses[i]
        expected = np.linalg.inv(truth[0]) @ truth[i]
        assert rotation_angle_deg(estimated[:3, :3].T @ expected[:3, :3]) < 0.5


def test_depth_results_carry_their_intrinsics_into_an_rgbd_reconstruction(test_data):
    from spatialclaw.primitives.perception.depth import DepthResult

    colors, depths, truth, K = read_redwood(test_data / "rgbd-redwood")
    results = [
        DepthResult(
            depth=d, intrinsics=K, confidence=np.ones_like(d), frame_index=i, model="sensor", intrinsics_source="user"
        )
        for i, d in enumerate(depths[:3])
    ]
    rec = reconstruct(colors[:3], depth=results)
    assert rec.method == "rgbd" and rec.metric and np.array_equal(rec.intrinsics[0], K)
    estimated = np.linalg.inv(rec.poses[0]) @ rec.poses[2]
    expected = np.linalg.inv(truth[0]) @ truth[2]
    assert np.linalg.norm(estimated[:3, 3] - expected[:3, 3]) < 0.01
    assert rec.confidence.min() == 1.0  # the given confidence maps travel with the points


def test_metric_scale_is_the_depth_to_sfm_depth_ratio():
    rng = np.random.default_rng(3)
    K = np.array([[100.0, 0, 50], [0, 100.0, 40], [0, 0, 1]])
    points = rng.uniform([-1, -1, 3], [1, 1, 5], size=(200, 3))
    poses = np.stack([np.eye(4), np.eye(4)])
    poses[1][:3, 3] = [0.3, 0, 0]
    observations, depth_maps = [], []
    true_scale = 2.5  # the depth maps are in metres, SfM is 2.5 times smaller
    for pose in poses:
        camera = (points - pose[:3, 3]) @ pose[:3, :3]
        xy = camera[:, :2] / camera[:, 2:] * 100.0 + [50, 40]
        depth = np.full((80, 100), np.nan, dtype=np.float32)
        inside = (xy[:, 0] >= 0) & (xy[:, 0] <= 99) & (xy[:, 1] >= 0) & (xy[:, 1] <= 79)
        depth[np.round(xy[inside, 1]).astype(int), np.round(xy[inside, 0]).astype(int)] = camera[inside, 2] * true_scale
        observations.append(np.column_stack([xy[inside], np.flatnonzero(inside)]))
        depth_maps.append(depth)
    sfm = SfmResult(
        poses,
        np.stack([K, K]),
        np.array([True, True]),
        points,
        np.zeros((200, 3), np.uint8),
        np.zeros(200),
        np.full(200, 2),
        observations,
        "synthetic",
    )
    assert metric_scale(sfm, depth_maps, sfm.registered) == pytest.approx(true_scale, rel=0.02)


def test_depth_model_makes_sfm_metric(test_data, tmp_path):
    pytest.importorskip("transformers")
    from tests.tiny_depth_models import save_tiny_depth_anything

    folder = save_tiny_depth_anything(tmp_path / "tiny")  # random weights: a constant 10 m everywhere
    names = sorted((test_data / "multiview-temple").glob("*.png"))[:6]
    rec = reconstruct(names, depth="auto", depth_model=str(folder))
    assert rec.metric and rec.scale_source == f"depth model {folder}"
    assert all(d.shape == (480, 640) for d in rec.depth)
    assert (rec.point_frames >= 0).all()
    # every depth is 10 m, so the SfM points seen by a camera are scaled to lie ~10 m in front of it
    in_first = rec.points[rec.point_frames == 0]
    distances = np.linalg.norm(in_first - rec.pose(0)[:3, 3], axis=1)
    assert 9.5 < np.median(distances) < 12.0


def test_auto_depth_without_weights_says_the_scale_is_arbitrary(test_data, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    colors, _, _, K = read_redwood(test_data / "rgbd-redwood")
    rec = reconstruct(colors[:3], intrinsics=K)
    assert not rec.metric and "arbitrary" in rec.scale_source
    assert any("weights missing" in note for note in rec.notes)
    assert rec.depth == [None, None, None]


def test_single_frame_with_depth_is_the_backprojection(test_data):
    colors, depths, _, K = read_redwood(test_data / "rgbd-redwood")
    rec = reconstruct([FakeFrame(colors[0], index=7)], depth=[depths[0]], intrinsics=K)
    assert rec.method == "single-frame" and rec.metric and rec.frame_indices.tolist() == [7]
    np.testing.assert_allclose(rec.pose(7)[:3, 3], 0.0, atol=1e-12)
    assert abs(np.linalg.norm(rec.points, axis=1).max()) < 10.0 and len(rec.points) > 10_000


# ---- errors -------------------------------------------------------------------------------------------------


def test_too_many_frames_says_how_to_subsample():
    frames = [np.zeros((8, 8, 3), np.uint8)] * (MAX_FRAMES + 1)
    with pytest.raises(ValueError, match=r"at most 64 frames.*frames\.sample\(count=32\)"):
        reconstruct(frames)


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="at least one frame"):
        reconstruct([])


def test_depth_in_millimetre_integers_is_refused_with_the_fix():
    images = [np.zeros((6, 8, 3), np.uint8)] * 2
    with pytest.raises(ValueError, match="1000"):
        reconstruct(images, depth=[np.ones((6, 8), np.uint16)] * 2)
    with pytest.raises(ValueError, match="resize"):
        reconstruct(images, depth=[np.ones((5, 8), np.float32)] * 2)
    with pytest.raises(ValueError, match="one depth map per frame"):
        reconstruct(images, depth=[np.ones((6, 8), np.float32)])
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        reconstruct(images, depth=None, intrinsics=np.eye(4))


def test_unmatchable_frames_raise_with_their_indices():
    rng = np.random.default_rng(5)
    frames = [FakeFrame(rng.integers(0, 256, size=(120, 160, 3), dtype=np.uint8), index=i) for i in (40, 41)]
    with pytest.raises(ReconstructionError, match=r"only 0 of 2 frames.*\[40, 41\]"):
        reconstruct(frames, depth=None)


# ---- benchmark-sized inputs (frames ~200 px wide, a handful of them) -------------------------------------------


def _small(image: np.ndarray, width: int = 200) -> np.ndarray:
    from tests.virtual_camera import shrink

    return shrink(image, width)


@pytest.mark.parametrize("folder_name", ["multiview-temple", pytest.param("multiview-dino", marks=pytest.mark.slow)])
def test_six_ring_views_at_200_px_register_with_ground_truth_rotations(test_data, folder_name):
    from PIL import Image

    from tests.virtual_camera import scaled_K

    folder = test_data / folder_name
    cameras = read_middlebury(folder)
    names = sorted(p.name for p in folder.glob("*.png"))[:6]
    full = [np.asarray(Image.open(folder / n).convert("RGB")) for n in names]
    small = [_small(image) for image in full]
    K_small = scaled_K(cameras[names[0]][0], 200 / full[0].shape[1])
    for intrinsics, limit in ((K_small, 2.0), (None, 4.0)):  # known K; focal estimated by SfM from 200 px frames
        rec = reconstruct(small, depth=None, intrinsics=intrinsics)
        assert rec.method == "sfm" and rec.registered.all()
        rotation_error, centre_error = ring_errors(rec, [cameras[n] for n in names])
        assert rotation_error <= limit and centre_error <= 0.05
        assert [s.status for s in rec.frame_status] == ["registered"] * 6
        assert all(s.inliers >= 50 for s in rec.frame_status)
    assert rec.intrinsics.shape == (6, 3, 3) and rec.intrinsics[0, 0, 2] == pytest.approx(99.5, abs=5)  # 200 px frame


def test_redwood_at_200_px_rgbd_and_rgb_only_recover_the_trajectory(test_data):
    from PIL import Image

    from tests.virtual_camera import scaled_K

    colors, depths, truth, K = read_redwood(test_data / "rgbd-redwood")
    small = [_small(c) for c in colors]
    small_depths = [np.asarray(Image.fromarray(d).resize((200, 150), Image.NEAREST)) for d in depths]
    K_small = scaled_K(K, 200 / 640)
    for depth, method in ((small_depths, "rgbd"), (None, "sfm")):
        rec = reconstruct(small, depth=depth, intrinsics=K_small)
        assert rec.method == method and rec.registered.all()
        for i in range(1, 5):
            estimated = np.linalg.inv(rec.poses[0]) @ rec.poses[i]
            expected = np.linalg.inv(truth[0]) @ truth[i]
            assert rotation_angle_deg(estimated[:3, :3].T @ expected[:3, :3]) < 0.6
            if method == "rgbd":
                assert np.linalg.norm(estimated[:3, 3] - expected[:3, 3]) < 0.015  # metres
    assert all(s.status in ("reference", "registered") for s in rec.frame_status)


def test_a_camera_that_only_pans_is_solved_as_rotation_per_frame(test_data):
    from spatialclaw.primitives.motion.angles import yaw_pitch_roll
    from tests.virtual_camera import redwood_frame, rotation_ypr, turning_sequence

    rgb, _, K = redwood_frame(test_data)
    frames = [
        FakeFrame(f, index=10 + i)
        for i, f in enumerate(turning_sequence(rgb, K, [rotation_ypr(6.0 * i) for i in range(6)]))
    ]
    rec = reconstruct(frames, depth=None)  # no intrinsics: the focal length is self-calibrated from the rotation
    assert rec.method == "rotation" and rec.registered.all()
    assert [s.status for s in rec.frame_status] == ["reference"] + ["rotation-only"] * 5
    assert all(s.inliers >= 30 and s.confidence > 0.5 for s in rec.frame_status[1:])
    for i in range(6):
        relative = np.linalg.inv(rec.pose(10)) @ rec.pose(10 + i)
        assert yaw_pitch_roll(relative[:3, :3])[0] == pytest.approx(6.0 * i, abs=1.0)
        np.testing.assert_allclose(relative[:3, 3], 0.0, atol=1e-9)
    assert any("self-calibrated" in note for note in rec.notes)
    two = reconstruct(frames[:2], depth=None, fov_deg=62.7)
    assert two.method == "rotation" and "frame 11: rotation-only" in repr(two)


def test_a_virtual_translation_of_a_single_rgbd_frame_at_200_px_gives_its_direction(test_data):
    from PIL import Image

    from tests.virtual_camera import scaled_K, translating_sequence

    rgb = np.asarray(Image.open(test_data / "rgbd-single" / "TUM_color.png").convert("RGB"))
    depth = np.asarray(Image.open(test_data / "rgbd-single" / "TUM_depth.png")).astype(np.float64) / 5000.0
    K = np.array([[525.0, 0, 319.5], [0, 525.0, 239.5], [0, 0, 1]])
    # the scene spans 1.8-3.1 m: 25 cm sideways and 10 cm forward leaves ~2 px of parallax at 200 px (with much
    # less, e.g. 15 + 5 cm, two views confuse a small pan with the sideways move by ~4 deg)
    frames = translating_sequence(rgb, depth, K, [np.zeros(3), np.array([0.25, 0.0, 0.10])])
    rec = reconstruct(frames, depth=None, intrinsics=scaled_K(K, 200 / 640))
    assert rec.method == "two-view" and rec.registered.all()
    relative = np.linalg.inv(rec.poses[0]) @ rec.poses[1]
    assert rotation_angle_deg(relative[:3, :3]) < 1.0  # the virtual camera did not turn
    truth = np.array([0.25, 0.0, 0.10]) / np.linalg.norm([0.25, 0.0, 0.10])
    direction = relative[:3, 3] / np.linalg.norm(relative[:3, 3])
    assert np.degrees(np.arccos(np.clip(direction @ truth, -1, 1))) < 10.0
    assert any("features at" in note for note in rec.notes)  # both scales tried, the kept one said


def test_the_documented_small_frame_example_runs_as_written(test_data, capsys):
    from tests.doc_examples import code_blocks

    (example,) = code_blocks("depth_and_reconstruction.md", "reconstruct(frames)", "python")[2:3]
    exec(example.replace('"../shared/data/multiview-temple"', repr(str(test_data / "multiview-temple"))), {})
    output = capsys.readouterr().out.splitlines()
    assert output[0] == "sfm 6"
    assert output[1].startswith("frame 1: registered (")
