"""depth(): learned metric depth through transformers (tiny random models loaded from local folders), and
stereo_depth(): classical SGBM depth checked against the Middlebury motorcycle ground truth."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from spatialclaw.primitives.perception import cache, models
from spatialclaw.primitives.perception.depth import DEFAULT_HFOV_DEG, DepthResult, depth, intrinsics_from_fov
from spatialclaw.primitives.reconstruction.stereo import stereo_depth

pytest.importorskip("transformers")
from tests.tiny_depth_models import save_tiny_depth_anything, save_tiny_depth_pro


@dataclass
class FakeFrame:
    """The two attributes of a kernel ``Frame`` that depth() reads."""

    array: np.ndarray
    index: int


@pytest.fixture(scope="module")
def tiny_da(tmp_path_factory):
    return save_tiny_depth_anything(tmp_path_factory.mktemp("da"))


@pytest.fixture(scope="module")
def tiny_pro(tmp_path_factory):
    return save_tiny_depth_pro(tmp_path_factory.mktemp("pro"))


@pytest.fixture
def image():
    return np.random.default_rng(1).integers(0, 256, size=(61, 83, 3), dtype=np.uint8)


# ---- learned backends -------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["tiny_da", "tiny_pro"])
def test_output_is_metric_float32_at_the_frame_resolution(backend, image, request):
    folder = request.getfixturevalue(backend)
    result = depth(FakeFrame(image, index=42), model=folder, device="cpu")
    assert isinstance(result, DepthResult)
    assert result.depth.shape == (61, 83) and result.depth.dtype == np.float32
    assert result.confidence.shape == (61, 83) and result.confidence.dtype == np.float32
    assert np.all((result.confidence >= 0) & (result.confidence <= 1))
    assert np.all(np.isfinite(result.depth)) and np.all(result.depth > 0)
    assert result.intrinsics.shape == (3, 3)
    assert result.frame_index == 42 and result.model == str(folder)


def test_depth_anything_uses_the_documented_default_fov_without_intrinsics(tiny_da, image):
    result = depth(image, model=tiny_da, device="cpu")
    assert result.intrinsics_source == "default-fov"
    expected_fx = 0.5 * 83 / np.tan(np.radians(DEFAULT_HFOV_DEG) / 2)
    np.testing.assert_allclose(result.intrinsics, [[expected_fx, 0, 41.0], [0, expected_fx, 30.0], [0, 0, 1]])
    assert result.frame_index is None


def test_user_intrinsics_and_fov_are_reported_as_user(tiny_da, image):
    K = np.array([[100.0, 0, 40], [0, 100.0, 30], [0, 0, 1]])
    assert np.array_equal(depth(image, model=tiny_da, intrinsics=K).intrinsics, K)
    from_fov = depth(image, model=tiny_da, fov_deg=90.0)
    assert from_fov.intrinsics_source == "user"
    np.testing.assert_allclose(from_fov.intrinsics[0, 0], 41.5)


def test_depth_pro_estimates_focal_length_and_rescales_depth_to_a_given_focal(tiny_pro, image):
    estimated = depth(image, model=tiny_pro, device="cpu")
    assert estimated.intrinsics_source == "model"
    f_est = estimated.intrinsics[0, 0]
    assert np.isfinite(f_est) and f_est > 0
    K = np.array([[2.0 * f_est, 0, 41.0], [0, 2.0 * f_est, 30.0], [0, 0, 1]])
    given = depth(image, model=tiny_pro, intrinsics=K)
    np.testing.assert_allclose(given.depth, 2.0 * estimated.depth, rtol=1e-5)


def test_depth_pro_without_a_usable_field_of_view_falls_back_to_the_default(tmp_path, image):
    folder = save_tiny_depth_pro(tmp_path / "bad-fov", fov_deg=-20.0)
    result = depth(image, model=folder)
    assert result.intrinsics_source == "default-fov"
    np.testing.assert_allclose(result.intrinsics, intrinsics_from_fov(83, 61, DEFAULT_HFOV_DEG))


def test_depth_pro_focal_comes_from_its_field_of_view(tiny_pro, image):
    expected = 0.5 * 83 / np.tan(np.radians(50.0) / 2)  # the tiny model always answers 50 degrees
    np.testing.assert_allclose(depth(image, model=tiny_pro).intrinsics[0, 0], expected, rtol=1e-4)


def test_second_call_is_a_cache_hit_with_the_same_result(tiny_da, image):
    first = depth(image, model=tiny_da)
    hits, misses = cache.stats["hits"], cache.stats["misses"]
    second = depth(image, model=tiny_da)
    assert cache.stats["hits"] == hits + 1 and cache.stats["misses"] == misses
    assert np.array_equal(first.depth, second.depth)
    depth(image, model=tiny_da, fov_deg=70.0)  # other arguments: a different computation
    assert cache.stats["misses"] == misses + 1
    other = image.copy()
    other[0, 0, 0] ^= 1
    depth(other, model=tiny_da)  # other bytes: a different computation
    assert cache.stats["misses"] == misses + 2


def test_a_cache_hit_does_not_load_the_model(tiny_da, image):
    first = depth(image, model=tiny_da)
    models.clear()  # as in a fresh kernel
    hits = cache.stats["hits"]
    second = depth(image, model=tiny_da)
    assert cache.stats["hits"] == hits + 1 and models.loaded_models() == []
    assert np.array_equal(first.depth, second.depth)


def test_cached_result_carries_the_callers_frame_index(tiny_da, image):
    depth(FakeFrame(image, index=3), model=tiny_da)
    assert depth(FakeFrame(image, index=7), model=tiny_da).frame_index == 7


def test_environment_variable_selects_the_model(tiny_pro, image, monkeypatch):
    monkeypatch.setenv("SPATIALCLAW_DEPTH_MODEL", str(tiny_pro))
    assert depth(image).model == str(tiny_pro)


def test_image_path_input(tiny_da, image, tmp_path):
    from PIL import Image

    path = tmp_path / "x.png"
    Image.fromarray(image).save(path)
    assert np.array_equal(depth(path, model=tiny_da).depth, depth(image, model=tiny_da).depth)
    with pytest.raises(FileNotFoundError, match="no image"):
        depth(tmp_path / "missing.png", model=tiny_da)


def test_points_backproject_with_the_result_intrinsics(tiny_da, image):
    result = depth(image, model=tiny_da)
    points = result.points()
    assert points.shape == (61 * 83, 3)
    np.testing.assert_allclose(np.sort(points[:, 2]), np.sort(result.depth.ravel()), rtol=1e-5)
    centre = points[30 * 83 + 41]  # pixel (41, 30) is the principal point: straight ahead
    np.testing.assert_allclose(centre[:2], [0.0, 0.0], atol=1e-6)


def test_relative_depth_model_is_refused_with_a_metric_alternative(tmp_path, image):
    from transformers import DepthAnythingForDepthEstimation

    folder = save_tiny_depth_anything(tmp_path / "rel")
    model = DepthAnythingForDepthEstimation.from_pretrained(folder)
    model.config.depth_estimation_type = "relative"
    model.save_pretrained(folder)
    with pytest.raises(ValueError, match="relative depth, not metres"):
        depth(image, model=folder)


def test_missing_weights_name_the_hub_id(image, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(models.MissingWeightsError, match="depth-anything/Depth-Anything-V2-Metric-Outdoor-Small-hf"):
        depth(image, model="depth-anything-outdoor")


def test_a_sequence_of_frames_is_refused_with_what_to_do(tiny_da, image):
    with pytest.raises(ValueError, match="ONE frame"):
        depth([image, image], model=tiny_da)


def test_intrinsics_from_fov_rejects_impossible_angles():
    with pytest.raises(ValueError, match="field of view"):
        intrinsics_from_fov(640, 480, 180.0)


# ---- classical stereo -------------------------------------------------------------------------------------

FOCAL_PX, BASELINE_M, DOFFS_PX = 994.978, 0.193001, 31.086


@pytest.fixture(scope="module")
def motorcycle():
    skdata = pytest.importorskip("skimage.data")
    return skdata.stereo_motorcycle()


def test_stereo_depth_matches_middlebury_ground_truth(motorcycle):
    left, right, disparity = motorcycle
    valid = np.isfinite(disparity)  # invalid ground truth is inf disparity
    truth = np.where(valid, BASELINE_M * FOCAL_PX / (np.where(valid, disparity, 1.0) + DOFFS_PX), np.nan)
    result = stereo_depth(left, right, FOCAL_PX, BASELINE_M, DOFFS_PX)
    estimated = valid & np.isfinite(result.depth)
    relative_error = np.abs(result.depth[estimated] - truth[estimated]) / truth[estimated]
    assert np.median(relative_error) <= 0.08
    assert estimated.sum() / valid.sum() >= 0.6  # most of the ground-truth pixels get a depth
    assert result.depth.shape == left.shape[:2] and result.depth.dtype == np.float32
    assert np.all(result.confidence[~np.isfinite(result.depth)] == 0)
    assert result.intrinsics[0, 0] == FOCAL_PX


def test_stereo_confidence_is_lower_where_depth_is_wrong(motorcycle):
    left, right, disparity = motorcycle
    valid = np.isfinite(disparity)
    truth = np.where(valid, BASELINE_M * FOCAL_PX / (np.where(valid, disparity, 1.0) + DOFFS_PX), np.nan)
    result = stereo_depth(left, right, FOCAL_PX, BASELINE_M, DOFFS_PX)
    both = valid & np.isfinite(result.depth)
    error = np.abs(result.depth - truth) / truth
    confident, doubtful = both & (result.confidence == 1), both & (result.confidence < 1)
    assert doubtful.sum() > 100
    assert np.median(error[confident]) < 0.5 * np.median(error[doubtful])


def test_swapped_stereo_pair_gives_little_depth(motorcycle):
    left, right, _ = motorcycle
    swapped = stereo_depth(right, left, FOCAL_PX, BASELINE_M, DOFFS_PX)
    correct = stereo_depth(left, right, FOCAL_PX, BASELINE_M, DOFFS_PX)
    assert np.isfinite(swapped.depth).mean() < 0.5 * np.isfinite(correct.depth).mean()


def test_stereo_rejects_bad_input(motorcycle):
    left, right, _ = motorcycle
    with pytest.raises(ValueError, match="same size"):
        stereo_depth(left, right[:, :-1], FOCAL_PX, BASELINE_M)
    with pytest.raises(ValueError, match="metres"):
        stereo_depth(left, right, FOCAL_PX, -193.0)
    with pytest.raises(ValueError, match="odd"):
        stereo_depth(left, right, FOCAL_PX, BASELINE_M, block_size=4)
