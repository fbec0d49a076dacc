"""reconstruct() with a learned multi-view backend: the DA3 service and adapter end to end (a stand-in model
with random weights, in a separate process), and the conversion of a backend's output into the design world
frame on REAL poses (the Redwood RGB-D ground truth served as if a DA3 model had predicted it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.reconstruction.da3 import Da3Backend, MultiViewServiceError
from spatialclaw.primitives.reconstruction.da3_service import Da3Server, Prediction
from spatialclaw.primitives.reconstruction.reconstruct import reconstruct
from tests.paths import TESTS
from tests.primitives.reconstruction.test_reconstruct import read_redwood


def relative(poses: np.ndarray) -> np.ndarray:
    return np.stack([np.linalg.inv(poses[0]) @ pose for pose in poses])


def rotation_deg(R: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))


class GroundTruthDA3:
    """Answers DA3's ``inference`` contract with measured ground truth: Redwood's depth at half resolution
    (so the adapter must rescale depth and intrinsics), its camera-to-world poses moved into an arbitrary
    world frame ``world`` and sent as world-to-camera 3x4, as DA3 sends them."""

    model_id = "ground-truth"
    metric = True

    def __init__(self, depths, poses, K, world: np.ndarray, shift: dict[int, np.ndarray] | None = None):
        self.depths, self.poses, self.K, self.world, self.shift = depths, poses, K, world, shift or {}

    def inference(self, image, process_res=504, **_):
        half = [d[::2, ::2] for d in self.depths]  # nearest: pixel (2u, 2v) of the original
        K = self.K.copy()
        K[:2] /= 2.0
        K[0, 2], K[1, 2] = (self.K[0, 2] + 0.5) / 2 - 0.5, (self.K[1, 2] + 0.5) / 2 - 0.5
        extrinsics = []
        for i, pose in enumerate(self.poses):
            moved = self.world @ pose
            moved[:3, 3] += self.shift.get(i, 0.0)
            extrinsics.append(np.linalg.inv(moved)[:3])
        count = len(image)
        return Prediction(
            processed_images=np.zeros((count, *half[0].shape, 3), np.uint8),
            depth=np.stack(half).astype(np.float32),
            conf=np.full((count, *half[0].shape), 50.0, np.float32),
            extrinsics=np.asarray(extrinsics, np.float32 if not self.shift else np.float64),
            intrinsics=np.repeat(K[None], count, axis=0).astype(np.float32),
        )


def random_rigid(seed: int) -> np.ndarray:
    import cv2

    rng = np.random.default_rng(seed)
    T = np.eye(4)
    T[:3, :3] = cv2.Rodrigues(rng.normal(size=3))[0]
    T[:3, 3] = rng.normal(size=3) * 3
    return T


@pytest.fixture
def redwood(test_data):
    return read_redwood(test_data / "rgbd-redwood")


def serve(tmp_path: Path, model) -> Da3Server:
    return Da3Server(str(tmp_path / "da3.sock"), model)


def test_ground_truth_through_the_da3_adapter_lands_in_the_design_frame(redwood, tmp_path):
    colors, depths, truth, K = redwood
    truth = np.stack(truth)
    server = serve(tmp_path, GroundTruthDA3(depths, truth, K, random_rigid(1)))
    try:
        rec = reconstruct(colors, backend=Da3Backend(server.path))
    finally:
        server.close()
    assert rec.method == "learned" and rec.metric and rec.registered.all()
    # world-to-camera inverted, re-anchored: the measured relative motion comes back exactly
    np.testing.assert_allclose(relative(rec.poses), relative(truth), atol=2e-5)
    # half-resolution intrinsics brought back to the 640x480 images
    np.testing.assert_allclose(rec.intrinsics, np.repeat(K[None], 5, axis=0), atol=1e-4)
    assert rec.depth[0] is not None and rec.depth[0].shape == (480, 640)
    # design frame: origin at the first camera, its forward along +Y on the ground, +Z up (floor normal),
    # the same frame the gravity alignment finds from the measured depth and poses directly
    np.testing.assert_allclose(rec.poses[0][:3, 3], 0.0, atol=1e-9)
    forward = rec.poses[0][:3, 2]
    assert abs(forward[0]) < 1e-6 and forward[1] > 0
    expected = geom.gravity_alignment(depths, truth, intrinsics=K) @ truth
    for got, want in zip(rec.poses, expected, strict=True):
        assert rotation_deg(got[:3, :3].T @ want[:3, :3]) < 1.0
        assert np.linalg.norm(got[:3, 3] - want[:3, 3]) < 0.02
    assert rec.poses[0][2, 1] < 0  # the camera's y axis (down in the image) points down in the world
    # points: a measured pixel of frame 3 lands where the design-frame pose puts it
    v, u = 300, 200
    z = depths[3][v, u]
    camera = np.array([(u - K[0, 2]) * z / K[0, 0], (v - K[1, 2]) * z / K[1, 1], z, 1.0])
    world = rec.poses[3] @ camera
    near = rec.points[rec.point_frames == 3]
    assert np.min(np.linalg.norm(near - world[:3], axis=1)) < 0.01


def test_the_backends_own_world_frame_does_not_change_the_result(redwood, tmp_path):
    colors, depths, truth, K = redwood
    results = []
    for seed in (2, 3):
        server = serve(tmp_path, GroundTruthDA3(depths[:3], np.stack(truth[:3]), K, random_rigid(seed)))
        try:
            results.append(reconstruct(colors[:3], backend=Da3Backend(server.path)))
        finally:
            server.close()
    np.testing.assert_allclose(results[0].poses, results[1].poses, atol=1e-4)


def test_cross_check_agrees_on_truth_and_flags_a_wrong_pose(redwood, tmp_path):
    colors, depths, truth, K = redwood
    checks = {}
    for name, shift in (("truth", None), ("shifted", {2: np.array([0.15, 0.0, 0.0])})):
        server = serve(tmp_path, GroundTruthDA3(depths, np.stack(truth), K, np.eye(4), shift))
        try:
            rec = reconstruct(colors, backend=Da3Backend(server.path), cross_check=True)
        finally:
            server.close()
        checks[name] = [note for note in rec.notes if note.startswith("cross-check")]
    assert "classical rgbd path" in checks["truth"][0]
    worst = float(checks["truth"][0].split("camera-centre difference ")[1].split(" m")[0])
    assert worst < 0.03
    line = next(note for note in checks["shifted"] if "frame 2:" in note)
    assert float(line.split("camera centre by ")[1].split(" m")[0]) > 0.1


def test_rgbd_depth_maps_keep_the_classical_path_even_with_a_service_set(redwood, monkeypatch, tmp_path):
    colors, depths, _, K = redwood
    monkeypatch.setenv("SPATIALCLAW_MULTIVIEW_SOCKET", str(tmp_path / "none.sock"))
    assert reconstruct(colors[:2], depth=depths[:2], intrinsics=K).method == "rgbd"
    with pytest.raises(ValueError, match="not both"):
        reconstruct(colors[:2], depth=depths[:2], intrinsics=K, backend="da3")


def test_an_unreachable_service_falls_back_to_the_classical_path(monkeypatch, tmp_path):
    monkeypatch.setenv("SPATIALCLAW_MULTIVIEW_SOCKET", str(tmp_path / "none.sock"))
    image = np.random.default_rng(0).integers(0, 255, (60, 80, 3), dtype=np.uint8)
    with pytest.warns(UserWarning, match="classical path was used instead"):
        rec = reconstruct([image], depth=None)
    assert rec.method == "single-frame"
    assert any("does not answer" in note for note in rec.notes)
    with pytest.raises(MultiViewServiceError, match="no DA3 service"):
        monkeypatch.delenv("SPATIALCLAW_MULTIVIEW_SOCKET")
        Da3Backend()


def test_a_service_error_reaches_the_caller_with_its_reason(tmp_path):
    server = serve(tmp_path, object())  # no inference(): every request fails on the service side
    try:
        with pytest.raises(MultiViewServiceError, match="images must be"):
            Da3Backend(server.path).call({"images": []})
        with pytest.raises(MultiViewServiceError, match="AttributeError"):
            Da3Backend(server.path).run([np.zeros((8, 8, 3), np.uint8)])
    finally:
        server.close()


def test_stand_in_da3_service_in_its_own_process_end_to_end(tmp_path, monkeypatch):
    """The service started as `python -m` (random-weight stand-in, documented as such) and the adapter."""
    sock = tmp_path / "da3.sock"
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    process = subprocess.Popen(
        [sys.executable, "-m", "spatialclaw.primitives.reconstruction.da3_service", "--socket", str(sock)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert sock.exists(), process.stdout.read().decode() if process.poll() is not None else "no socket"
        monkeypatch.setenv("SPATIALCLAW_MULTIVIEW_SOCKET", str(sock))
        rng = np.random.default_rng(0)
        images = [rng.integers(0, 255, (120, 160, 3), dtype=np.uint8) for _ in range(3)]
        rec = reconstruct(images)  # the service named by the environment is the default backend
        raw = Da3Backend(process_res=504).run(images)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert rec.method == "learned" and rec.registered.all() and rec.metric
    assert raw.depth[0].shape == (378, 504)  # DA3's processing size: longest side 504, multiples of 14
    assert all(d is not None and d.shape == (120, 160) for d in rec.depth)
    np.testing.assert_allclose(rec.intrinsics[:, 0, 0], raw.intrinsics[:, 0, 0] * 160 / 504, rtol=1e-6)
    np.testing.assert_allclose(relative(rec.poses), relative(raw.poses), atol=1e-5)
    assert rec.frame_status[0].status == "reference" and 0.0 <= rec.frame_status[1].confidence <= 1.0
    assert len(rec.points) == sum(int(np.isfinite(d).sum()) for d in rec.depth if d is not None)
