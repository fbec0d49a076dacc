"""Depth Pro (a tiny randomly initialised model saved and loaded through from_pretrained) returns its camera
with the depth, and the scene uses that camera where it would otherwise guess a field of view."""

from __future__ import annotations

import numpy as np
import pytest

from spatialclaw.primitives.frames.frame import Frame
from spatialclaw.primitives.frames.sources import ArraySource
from spatialclaw.primitives.perception.depth import depth, estimated_intrinsics
from spatialclaw.primitives.scene.memory import Scene
from tests.tiny_depth_models import save_tiny_depth_pro


@pytest.fixture(scope="module")
def pro70(tmp_path_factory):
    return save_tiny_depth_pro(tmp_path_factory.mktemp("pro70"), fov_deg=70.0)


def frame(index: int, width: int = 83, height: int = 61) -> Frame:
    rgb = np.random.default_rng(index).integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    return Frame(ArraySource(rgb), index)


@pytest.mark.parametrize("fov", [50.0, 70.0])
def test_depth_returns_the_models_field_of_view_and_focal_length(tmp_path, fov):
    folder = save_tiny_depth_pro(tmp_path / "pro", fov_deg=fov)
    result = depth(frame(3), model=folder, device="cpu")
    assert result.intrinsics_source == "model"
    assert result.fov_deg == pytest.approx(fov, abs=1e-3)
    assert result.focal_px == pytest.approx(0.5 * 83 / np.tan(np.radians(fov) / 2), rel=1e-5)


def test_add_bearing_uses_the_camera_depth_pro_estimated_for_that_frame(pro70):
    seen, unseen = frame(7), frame(8)
    result = depth(seen, model=pro70, device="cpu")
    K, model = estimated_intrinsics(7, (83, 61))
    np.testing.assert_allclose(K, result.intrinsics)
    assert model == str(pro70)
    assert estimated_intrinsics(8) is None and estimated_intrinsics(7, (100, 61)) is None
    pixel = (80.0, 30.0)  # near the right edge: its bearing depends strongly on the field of view
    scene = Scene()
    scene.add_bearing("lamp", pixel, distance=2.0, frame=seen)
    lamp = scene.instances["lamp"]
    assert "intrinsics estimated by" in lamp.bearings[0].assumed
    other = Scene()
    other.add_bearing("lamp", pixel, distance=2.0, frame=unseen)
    guessed = other.instances["lamp"]
    assert "60 deg" in guessed.bearings[0].assumed
    # the level first camera looks along +Y with +X right: the pixel's azimuth is atan((x - cx) / fx)
    for obj, fx in ((lamp, result.focal_px), (guessed, 0.5 * 83 / np.tan(np.radians(30.0)))):
        azimuth = np.degrees(np.arctan2(obj.center[0], obj.center[1]))
        assert azimuth == pytest.approx(np.degrees(np.arctan((80.0 - 41.0) / fx)), abs=0.5)
