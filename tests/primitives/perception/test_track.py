"""track(): the classical optical-flow tracker against exact synthetic motion and real measured camera motion
(Redwood RGB-D: depth + ground-truth poses give where each pixel truly goes), plus SAM 2 routing and errors."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.perception import cache
from spatialclaw.primitives.perception.instances import Instance
from spatialclaw.primitives.perception.models import MissingWeightsError, clear
from spatialclaw.primitives.perception.track import MAX_TRACK_FRAMES, track
from spatialclaw.primitives.perception.track_result import Track
from tests.indexed_frames import IndexedFrame
from tests.tiny_instance_models import build_sam2_video, has_torchvision

H, W = 120, 160


def moving_square_video(count: int, step: tuple[float, float], start=(20, 30), size=30, seed=0):
    """A textured square pasted (with sub-pixel, bilinear placement) over a static textured background,
    moving by ``step`` pixels per frame. Returns frames, the first frame's mask and the true centroids."""
    rng = np.random.default_rng(seed)
    background = cv2.GaussianBlur(rng.integers(0, 255, (H, W, 3)).astype(np.uint8), (0, 0), 3)
    texture = cv2.GaussianBlur(rng.integers(0, 255, (size, size, 3)).astype(np.uint8), (0, 0), 1.0)
    layer = np.zeros_like(background)
    alpha = np.zeros((H, W), np.float32)
    x, y = start
    layer[y : y + size, x : x + size] = texture
    alpha[y : y + size, x : x + size] = 1.0
    frames, truth = [], []
    for t in range(count):
        shift = np.float32([[1, 0, step[0] * t], [0, 1, step[1] * t]])
        moved = cv2.warpAffine(layer, shift, (W, H), flags=cv2.INTER_LINEAR).astype(np.float32)
        weight = cv2.warpAffine(alpha, shift, (W, H), flags=cv2.INTER_LINEAR)[..., None]
        frames.append((background * (1 - weight) + moved * weight).round().astype(np.uint8))
        truth.append((x + (size - 1) / 2 + step[0] * t, y + (size - 1) / 2 + step[1] * t))
    mask = alpha > 0.5
    return frames, mask, np.array(truth)


@pytest.mark.parametrize("step, start", [((3.0, 2.0), (20, 30)), ((0.7, -0.4), (20, 30)), ((-2.3, 1.6), (100, 20))])
def test_mask_and_box_follow_a_moving_square_within_a_pixel(step, start):
    frames, mask, truth = moving_square_video(16, step, start=start)
    by_mask = track(frames, masks=mask, method="flow")
    by_box = track(frames, boxes=(start[0], start[1], start[0] + 30, start[1] + 30), method="flow")
    assert isinstance(by_mask, Track) and isinstance(by_box, Track)
    assert by_mask.visible.all() and by_box.visible.all()
    assert np.abs(by_mask.centroids - truth).max() < 1.0
    assert np.abs(by_box.centroids - truth).max() < 1.0
    assert by_mask.masks.shape == (16, H, W) and by_box.masks is None
    assert by_mask.boxes.shape == (16, 4)


def test_tracks_backwards_from_a_middle_start_frame_with_absolute_indices():
    frames, _, truth = moving_square_video(12, (2.5, 1.0))
    video = [IndexedFrame(array, 100 + 3 * t) for t, array in enumerate(frames)]  # e.g. frames[100::3]
    x, y = truth[6] - 14.5
    start_mask = np.zeros((H, W), bool)
    start_mask[int(round(y)) : int(round(y)) + 30, int(round(x)) : int(round(x)) + 30] = True
    result = track(video, masks=Instance("square", 0.9, (0, 0, 1, 1), mask=start_mask, frame_index=118), method="flow")
    assert result.start_index == 118 and result.label == "square"
    assert result.frame_indices.tolist() == [100 + 3 * t for t in range(12)]
    assert np.abs(result.centroids - truth).max() < 1.0
    assert result.at(106).frame_index == 106
    with pytest.raises(KeyError, match="not in this track"):
        result.at(101)
    assert "frame 118" in repr(result) and "optical flow" in repr(result)


def test_an_object_that_leaves_the_image_is_marked_lost():
    frames, mask, truth = moving_square_video(14, (6.0, 0.0), start=(90, 40))
    result = track(frames, masks=mask, method="flow")
    assert result.visible[0] and not result.visible[-1]
    lost_from = int(np.flatnonzero(~result.visible)[0])
    assert not result.visible[lost_from:].any()  # once lost, it stays lost
    fully_inside = truth[:, 0] + 15 < W
    assert np.abs(result.centroids[fully_inside] - truth[fully_inside]).max() < 1.0
    assert "LOST" in repr(result)


def test_motion_too_fast_to_follow_is_reported_lost_not_as_a_wrong_position():
    frames, mask, truth = moving_square_video(10, (12.0, 0.0), start=(10, 40))
    result = track(frames, masks=mask, method="flow")
    error = np.linalg.norm(result.centroids - truth, axis=1)
    assert ((error < 2.0) | ~result.visible).all()


def test_several_objects_give_one_track_each():
    frames, _mask, truth = moving_square_video(6, (2.0, 2.0))
    results = track(frames, boxes=[(20, 30, 50, 60), (100, 10, 150, 50)], method="flow")
    assert isinstance(results, list) and len(results) == 2
    assert np.abs(results[0].centroids - truth).max() < 1.0
    assert np.abs(results[1].centroids - results[1].centroids[0]).max() < 1.0  # static background patch


def test_second_call_is_a_cache_hit():
    frames, mask, _ = moving_square_video(5, (2.0, 1.0))
    first = track(frames, masks=mask, method="flow")
    hits = cache.stats["hits"]
    second = track(frames, masks=mask, method="flow")
    assert cache.stats["hits"] == hits + 1
    np.testing.assert_array_equal(first.boxes, second.boxes)


def _redwood(root: Path):
    folder = root / "rgbd-redwood"
    colours = [np.asarray(Image.open(folder / "color" / f"{i:05d}.jpg").convert("RGB")) for i in range(5)]
    depths = [np.asarray(Image.open(folder / "depth" / f"{i:05d}.png")).astype(np.float64) / 1000.0 for i in range(5)]
    rows = [line.split() for line in (folder / "trajectory.log").read_text().splitlines() if line.strip()]
    poses = [np.array(rows[5 * i + 1 : 5 * i + 5], dtype=np.float64) for i in range(5)]
    return colours, depths, poses


def _true_centroids(mask: np.ndarray, depth: np.ndarray, poses: list[np.ndarray]) -> np.ndarray:
    """Where the mask's pixels go in each frame: backproject with depth (fx = fy = 525, c = (319.5, 239.5)),
    move with the ground-truth camera-to-world poses, project; the mean of the projections per frame."""
    ys, xs = np.nonzero(mask)
    z = depth[ys, xs]
    points = np.stack([(xs - 319.5) * z / 525.0, (ys - 239.5) * z / 525.0, z, np.ones_like(z)])
    world = poses[0] @ points
    centroids = []
    for pose in poses:
        camera = np.linalg.inv(pose) @ world
        centroids.append(
            (np.mean(525.0 * camera[0] / camera[2] + 319.5), np.mean(525.0 * camera[1] / camera[2] + 239.5))
        )
    return np.array(centroids)


@pytest.mark.parametrize(
    "box", [(260, 180, 380, 300), (100, 100, 200, 200), (400, 250, 520, 370), (200, 300, 300, 420)]
)
def test_redwood_surface_patches_follow_the_measured_camera_motion(test_data, box):
    colours, depths, poses = _redwood(test_data)
    x0, y0, x1, y1 = box
    mask = np.zeros(depths[0].shape, bool)
    mask[y0:y1, x0:x1] = True
    mask &= np.abs(depths[0] - np.median(depths[0][mask])) < 0.05  # one surface (no parallax inside the patch)
    truth = _true_centroids(mask, depths[0], poses)
    assert np.linalg.norm(truth[-1] - truth[0]) > 8.0  # the camera really moves the patch
    result = track(colours, masks=mask, method="flow")
    assert result.visible.all()
    assert np.linalg.norm(result.centroids - truth, axis=1).max() < 1.5


@pytest.mark.parametrize(
    "box", [(260, 180, 380, 300), (100, 100, 200, 200), (400, 250, 520, 370), (200, 300, 300, 420)]
)
def test_redwood_forward_then_backward_returns_to_the_start(test_data, box):
    colours, _, _ = _redwood(test_data)
    x0, y0, x1, y1 = box
    mask = np.zeros(colours[0].shape[:2], bool)
    mask[y0:y1, x0:x1] = True
    forward = track(colours, masks=mask, method="flow")
    backward = track(colours, masks=forward[-1].mask, start_index=4, method="flow")
    assert np.linalg.norm(np.subtract(backward[0].centroid, forward[0].centroid)) < 1.0
    assert backward[0].iou(forward[0]) > 0.95


def test_auto_falls_back_to_flow_without_sam2_weights_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("SPATIALCLAW_TRACK_MODEL", raising=False)
    clear()
    frames, mask, truth = moving_square_video(4, (2.0, 0.0))
    result = track(frames, masks=mask)
    assert "optical flow" in result.method and "SAM 2 unavailable" in result.method
    assert np.abs(result.centroids - truth).max() < 1.0


def test_requested_sam2_without_weights_names_the_hub_id(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("SPATIALCLAW_TRACK_MODEL", raising=False)
    clear()
    frames, mask, _ = moving_square_video(3, (1.0, 0.0))
    with pytest.raises(MissingWeightsError, match=r"facebook/sam2\.1-hiera-tiny"):
        track(frames, masks=mask, method="sam2")


def test_bad_inputs_are_refused_with_what_to_do():
    frames, mask, _ = moving_square_video(3, (1.0, 0.0))
    with pytest.raises(ValueError, match="exactly one prompt"):
        track(frames)
    with pytest.raises(ValueError, match="exactly one prompt"):
        track(frames, masks=mask, boxes=(0, 0, 5, 5))
    with pytest.raises(ValueError, match="at least 2 frames"):
        track(frames[:1], masks=mask, method="flow")
    with pytest.raises(ValueError, match=r"frames\[::2\]"):
        track([np.zeros((8, 8, 3), np.uint8)] * (MAX_TRACK_FRAMES + 1), boxes=(1, 1, 4, 4), method="flow")
    with pytest.raises(ValueError, match="same size"):
        track([frames[0], frames[1][:-1]], masks=mask, method="flow")
    with pytest.raises(ValueError, match="start frame 7"):
        track(frames, masks=mask, start_index=7, method="flow")
    with pytest.raises(ValueError, match="does not match"):
        track(frames, masks=mask[:-1], method="flow")
    with pytest.raises(ValueError, match="empty"):
        track(frames, masks=np.zeros_like(mask), method="flow")
    with pytest.raises(ValueError, match="method"):
        track(frames, masks=mask, method="kalman")


@pytest.fixture(scope="module")
def tiny_sam2_video(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build_sam2_video(tmp_path_factory.mktemp("sam2") / "sam2-video"))


@pytest.mark.skipif(
    not has_torchvision(), reason="transformers' Sam2VideoProcessor needs torchvision, not installed here"
)
@pytest.mark.parametrize("prompt", ["masks", "boxes"])
def test_sam2_video_propagates_both_ways_with_absolute_indices(tiny_sam2_video, prompt):
    frames, mask, _ = moving_square_video(5, (2.0, 1.0))
    video = [IndexedFrame(array, 50 + t) for t, array in enumerate(frames)]
    given = {"masks": [mask, mask.copy()]} if prompt == "masks" else {"boxes": [(20, 30, 50, 60), (60, 10, 90, 40)]}
    results = track(video, start_index=52, method="sam2", model=tiny_sam2_video, **given)
    assert isinstance(results, list) and len(results) == 2
    for result in results:
        assert result.frame_indices.tolist() == [50, 51, 52, 53, 54]
        assert result.masks.shape == (5, H, W) and result.masks.dtype == bool
        assert result.method.startswith("SAM 2 video")
    hits = cache.stats["hits"]
    track(video, start_index=52, method="sam2", model=tiny_sam2_video, **given)
    assert cache.stats["hits"] == hits + 1


@pytest.mark.skipif(has_torchvision(), reason="checks the behaviour when torchvision is missing")
def test_sam2_without_torchvision_says_what_to_install_and_auto_falls_back_to_flow(tiny_sam2_video, monkeypatch):
    frames, mask, truth = moving_square_video(4, (2.0, 0.0))
    with pytest.raises(ImportError) as error:
        track(frames, masks=mask, method="sam2", model=tiny_sam2_video)
    assert "torchvision" in str(error.value) and "method='flow'" in str(error.value)
    monkeypatch.setenv("SPATIALCLAW_TRACK_MODEL", tiny_sam2_video)
    result = track(frames, masks=mask)
    assert "SAM 2 unavailable" in result.method and "torchvision" in result.method
    assert np.abs(result.centroids - truth).max() < 1.0


def test_the_documented_flow_example_runs_as_written(test_data, monkeypatch, capsys):
    from tests.doc_examples import code_blocks

    monkeypatch.setenv("SPATIALCLAW_TEST_DATA", str(test_data))
    (example,) = code_blocks("perception.md", "Tracking without weights", "python")
    exec(compile(example, "docs/perception.md", "exec"), {})
    output = capsys.readouterr().out
    assert output.startswith("Track('object', 5 frames 0..4, start frame 0, via optical flow")
    error = float(output.rsplit(":", 1)[1])
    assert error < 1.0


def _panning_scene(count: int, vanish_from: int | None = None, seed: int = 1):
    """The background pans 4 px left per frame while a 40 px textured object moves 3 px right; from
    ``vanish_from`` on the object is gone (only background). Returns frames and the object's true centres."""
    rng = np.random.default_rng(seed)
    wide = cv2.GaussianBlur(rng.integers(0, 255, (H, W + 80, 3)).astype(np.uint8), (0, 0), 2)
    texture = cv2.GaussianBlur(rng.integers(0, 255, (40, 40, 3)).astype(np.uint8), (0, 0), 1.0)
    frames, truth = [], []
    for t in range(count):
        frame = np.ascontiguousarray(wide[:, 4 * t : 4 * t + W])
        x = 50 + 3 * t
        if vanish_from is None or t < vanish_from:
            frame[40:80, x : x + 40] = texture
        frames.append(frame)
        truth.append((x + 19.5, 59.5))
    return frames, np.array(truth)


def test_under_a_panning_camera_a_box_follows_the_object_not_the_background():
    """The box prompt (76 px around a 40 px object) holds mostly background, which moves the other way.
    Without ego-motion compensation the box slid 28 px left with the background while scoring 0.4-0.8."""
    frames, truth = _panning_scene(8)
    result = track(frames, boxes=(32, 22, 108, 98), method="flow")
    assert result.visible.all()
    assert np.abs(result.centroids - truth).max() < 1.5


def test_an_object_that_disappears_under_a_panning_camera_is_marked_lost_not_kept_on_the_background():
    frames, truth = _panning_scene(8, vanish_from=5)
    result = track(frames, boxes=(32, 22, 108, 98), method="flow")
    assert result.visible[:5].all()
    assert not result.visible[5:].any()
    assert np.abs(result.centroids[:5] - truth[:5]).max() < 1.5
