"""motion(): camera ego-motion and object motion on real photos moved by exact virtual cameras (pans, tilts,
rolls and zooms by homographies of a real image; translations rendered with the measured depth of a real
RGB-D frame), at benchmark resolution (200 px wide), plus real multi-view pairs with ground-truth poses."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.geometry.focal_prior import exif_focal_px, prior_intrinsics
from spatialclaw.primitives.motion.angles import direction_words, yaw_pitch_roll
from spatialclaw.primitives.motion.estimate import motion
from spatialclaw.primitives.motion.result import Motion
from tests.virtual_camera import redwood_frame, rotation_ypr, scaled_K, shrink, translating_sequence, turning_sequence

WIDTH = 200


@pytest.fixture(scope="module")
def redwood(test_data):
    rgb, depth, K = redwood_frame(test_data, 0)
    return rgb, depth, K, scaled_K(K, WIDTH / rgb.shape[1])


def test_yaw_pitch_roll_signs_follow_the_stated_convention():
    yaw, pitch, roll = yaw_pitch_roll(rotation_ypr(20, -5, 3))
    assert (yaw, pitch, roll) == pytest.approx((20, -5, 3), abs=1e-9)
    turned_right = rotation_ypr(30)
    assert turned_right[0, 2] > 0  # the new forward axis points to the old camera's right (+x)
    assert direction_words(np.array([0.1, -0.05, 0.99])) == "forward"
    assert (
        direction_words(np.array([-0.7, 0.0, 0.7])) == "left and forward"
        or direction_words(np.array([-0.7, 0.0, 0.7])) == "forward and left"
    )


@pytest.mark.parametrize(
    "yaw, pitch, roll", [(3, 0, 0), (12, 0, 0), (-25, 0, 0), (0, 8, 0), (0, -6, 0), (0, 0, 5), (10, 4, 0)]
)
def test_a_turning_camera_is_rotation_within_a_degree(redwood, yaw, pitch, roll):
    rgb, _, K, K_small = redwood
    frames = turning_sequence(rgb, K, [np.eye(3), rotation_ypr(yaw, pitch, roll)], width=WIDTH)
    result = motion(frames, intrinsics=K_small)
    (step,) = result.steps
    assert step.kind == "rotation", step.reason
    assert step.translation is None
    assert step.yaw_deg == pytest.approx(yaw, abs=1.0)
    assert step.pitch_deg == pytest.approx(pitch, abs=1.0)
    assert step.roll_deg == pytest.approx(roll, abs=1.0)
    assert step.confidence > 0.5 and step.inliers >= 30
    assert "no measurable translation" in step.readout()


@pytest.mark.parametrize(
    "centre, words",
    [
        ((0.10, 0, 0), "right"),
        ((-0.10, 0, 0), "left"),
        ((0, 0, 0.2), "forward"),
        ((0, 0, -0.2), "back"),
        ((0, -0.08, 0), "up"),
        ((0, 0.08, 0), "down"),
    ],
)
def test_a_translating_camera_is_told_from_a_turning_one_with_its_direction(redwood, centre, words):
    rgb, depth, K, K_small = redwood
    frames = translating_sequence(rgb, depth, K, [np.zeros(3), np.array(centre)], width=WIDTH)
    (step,) = motion(frames, intrinsics=K_small).steps
    assert step.kind == "translation", step.reason
    assert step.translation_words.split(" and ")[0] == words
    truth = np.array(centre) / np.linalg.norm(centre)
    assert math.degrees(math.acos(np.clip(step.translation @ truth, -1, 1))) < 25.0
    assert step.rotation_deg < 1.5  # it did not turn
    assert f"moves {words}" in step.readout()


def test_a_zoom_is_a_zoom_not_a_forward_move(redwood):
    rgb, _, K, K_small = redwood
    frames = turning_sequence(rgb, K, [np.eye(3), np.eye(3)], zooms=[1.0, 1.12], width=WIDTH)
    (step,) = motion(frames, intrinsics=K_small).steps
    assert step.kind == "rotation" and step.zoom == pytest.approx(1.12, rel=0.01)
    assert step.rotation_deg < 0.3 and "zooms in" in step.readout()
    # Without parallax a zoom cannot be told from moving forward towards a shallow scene: the readout
    # says so instead of "no measurable translation", which sent a model away from the right option.
    assert "a lens zoom, or the camera moving forward" in step.readout()
    assert "no measurable translation" not in step.readout()


def test_identical_frames_are_static(redwood):
    rgb = shrink(redwood[0], WIDTH)
    (step,) = motion([rgb, rgb.copy()], fov_deg=60).steps
    assert step.kind == "static" and "no measurable camera motion" in step.readout()


def test_a_pan_over_eight_frames_self_calibrates_the_focal_and_reads_out(redwood):
    rgb, _, K, K_small = redwood
    frames = turning_sequence(rgb, K, [rotation_ypr(4.0 * i) for i in range(8)], width=WIDTH)
    result = motion(frames)  # no intrinsics, no EXIF: the rotation itself fixes the focal length
    assert isinstance(result, Motion) and len(result.steps) == 7
    assert result.focal_source.startswith("self-calibrated")
    assert result.intrinsics[0, 0] == pytest.approx(K_small[0, 0], rel=0.05)
    assert set(result.kinds) == {"rotation"}
    np.testing.assert_allclose(result.yaw_deg, 4.0, atol=0.5)
    assert "pans right 4.0 deg per step" in result.readout
    assert "no measurable translation" in result.readout
    orientations = result.orientations()
    assert yaw_pitch_roll(orientations[-1])[0] == pytest.approx(28.0, abs=1.0)
    against_first = motion(frames[:4], reference="first", intrinsics=K_small)
    assert against_first.yaw_deg == pytest.approx([4, 8, 12], abs=1.0)


def test_a_stated_field_of_view_and_exif_are_used_and_said(tmp_path, redwood):
    rgb = shrink(redwood[0], WIDTH)
    K, source = prior_intrinsics(None, 200, 150, fov_deg=90)
    assert K[0, 0] == pytest.approx(100.0) and "stated 90" in source
    image = Image.fromarray(rgb)
    exif = Image.Exif()
    exif.get_ifd(0x8769)[0xA405] = 26  # a phone's 26 mm equivalent
    path = tmp_path / "phone.jpg"
    image.save(path, exif=exif)
    focal = exif_focal_px(str(path), 200, 150)
    assert focal == pytest.approx(26 * math.hypot(200, 150) / math.hypot(36, 24))
    assert "EXIF" in prior_intrinsics(str(path), 200, 150)[1]
    assert prior_intrinsics(None, 200, 150)[1].startswith("ASSUMED")


def _paste(background: np.ndarray, patch: np.ndarray, centre: tuple[float, float], scale: float = 1.0) -> np.ndarray:
    size = patch.shape[0] * scale
    A = np.float32([[scale, 0, centre[0] - size / 2], [0, scale, centre[1] - size / 2]])
    layer = cv2.warpAffine(patch, A, background.shape[1::-1], flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(np.ones(patch.shape[:2], np.float32), A, background.shape[1::-1])[..., None]
    return (background * (1 - alpha) + layer * alpha).round().astype(np.uint8)


def test_an_object_moving_over_a_panning_background_is_measured_relative_to_it(redwood, test_data):
    rgb, _, K, K_small = redwood
    backgrounds = turning_sequence(rgb, K, [rotation_ypr(3.0 * i) for i in range(4)], width=WIDTH)
    patch = np.asarray(Image.open(sorted((test_data / "multiview-temple").glob("*.png"))[0]).convert("RGB"))
    patch = cv2.resize(patch[140:340, 200:400], (44, 44), interpolation=cv2.INTER_AREA)
    frames = [_paste(bg, patch, (80 + 6.0 * i, 75)) for i, bg in enumerate(backgrounds)]  # 6 px right per frame
    result = motion(frames, intrinsics=K_small, object=(58, 53, 102, 97), object_heading_deg=90)
    pan = K_small @ rotation_ypr(3.0).T @ np.linalg.inv(K_small)  # where the background at a pixel goes
    for i, step in enumerate(result.steps):
        assert step.kind == "rotation" and step.yaw_deg == pytest.approx(3.0, abs=1.0)  # the object is ignored
        # in the image the patch moves +6 px while the background there moves ~-8.6 px: relative to it ~+14.6
        carried = pan @ np.array([80 + 6.0 * i, 75, 1.0])
        expected = 80 + 6.0 * (i + 1) - carried[0] / carried[2]
        assert step.object is not None and step.object.image_shift_px[0] == pytest.approx(expected, abs=1.0)
        assert step.object.moving and step.object.direction == "right"
        assert step.object.own_direction == "forward"  # heading 90 deg = facing the camera's right
    assert "moves right relative to the background" in result.steps[0].readout()
    # the same from a Track of the object (its per-frame boxes), named by its label
    from spatialclaw.primitives.perception.track import track

    followed = track(frames, boxes=(58, 53, 102, 97), method="flow", label="cart")
    by_track = motion(frames, intrinsics=K_small, object=followed, object_heading_deg=90)
    assert [s.object.direction for s in by_track.steps] == ["right"] * 3
    assert "the cart moves right relative to the background" in by_track.steps[1].readout()
    assert "forward in its own heading" in by_track.steps[1].readout()
    # without the box, the object's matches are found as one compact group that breaks the camera model,
    # and are left out instead of being taken for the parallax of a translating camera
    unmasked = motion(frames, intrinsics=K_small)
    assert set(unmasked.kinds) == {"rotation"}
    np.testing.assert_allclose(unmasked.yaw_deg, 3.0, atol=1.0)
    assert all("moving object" in step.reason for step in unmasked.steps)


def test_an_object_growing_in_view_approaches_the_camera(redwood, test_data):
    rgb, _, _K, K_small = redwood
    background = shrink(rgb, WIDTH)
    patch = np.asarray(Image.open(sorted((test_data / "multiview-temple").glob("*.png"))[3]).convert("RGB"))
    patch = cv2.resize(patch[140:340, 200:400], (40, 40), interpolation=cv2.INTER_AREA)
    frames = [_paste(background, patch, (100, 75), scale) for scale in (1.0, 1.15)]
    (step,) = motion(frames, intrinsics=K_small, object=(80, 55, 120, 95), object_heading_deg=180).steps
    assert step.kind == "static"
    assert step.object.scale == pytest.approx(1.15, rel=0.03)
    assert step.object.direction == "towards the camera" and step.object.depth_change < 0
    assert step.object.own_direction == "forward"  # facing the camera and coming closer


def test_real_temple_views_at_200_px_give_the_ground_truth_rotation(test_data):
    from tests.primitives.reconstruction.test_reconstruct import read_middlebury, rotation_angle_deg

    folder = test_data / "multiview-temple"
    cameras = read_middlebury(folder)
    names = sorted(p.name for p in folder.glob("*.png"))[:3]
    images = [np.asarray(Image.open(folder / n).convert("RGB")) for n in names]
    small = [shrink(image, WIDTH) for image in images]
    K_small = scaled_K(cameras[names[0]][0], WIDTH / images[0].shape[1])
    result = motion(small, intrinsics=K_small)
    for step, (a, b) in zip(result.steps, [(0, 1), (1, 2)], strict=True):
        (_, R_a, _), (_, R_b, _) = cameras[names[a]], cameras[names[b]]
        truth = R_a @ R_b.T  # camera b's orientation in camera a's frame
        assert step.kind == "translation"  # the cameras circle the object
        assert rotation_angle_deg(step.geometry.R_ab.T @ truth) < 3.0


def test_unmatchable_frames_say_why_instead_of_guessing():
    rng = np.random.default_rng(0)
    noise = [rng.integers(0, 256, (150, 200, 3), dtype=np.uint8) for _ in range(2)]
    (step,) = motion(noise, fov_deg=60).steps
    assert step.kind == "unknown" and step.yaw_deg is None
    assert "feature matches" in step.reason or "no single camera motion" in step.reason
    assert "could not be measured" in motion(noise, fov_deg=60).readout


def test_bad_inputs_are_refused_with_what_to_do():
    image = np.zeros((40, 50, 3), np.uint8)
    with pytest.raises(ValueError, match="at least two frames"):
        motion([image])
    with pytest.raises(ValueError, match="same size"):
        motion([image, np.zeros((41, 50, 3), np.uint8)])
    with pytest.raises(ValueError, match="positions"):
        motion([image, image], pairs=[(0, 5)])
    with pytest.raises(ValueError, match="reference"):
        motion([image, image], reference="last")
    with pytest.raises(ValueError, match="field of view"):
        motion([image, image], fov_deg=200)
    with pytest.raises(ValueError, match="field of view"):
        motion([image, image], hfov_deg=200)  # the geom tools' name reaches the same check
    with pytest.raises(ValueError, match="not both"):
        motion([image, image], fov_deg=60, hfov_deg=60)
    with pytest.raises(ValueError, match="not both"):
        motion([image, image], intrinsics=np.eye(3), K=np.eye(3))


def test_the_geom_tools_names_for_the_camera_give_the_same_readout(redwood):
    """A model that calls motion(..., hfov_deg=, K=) as it calls the geom tools gets fov_deg= / intrinsics=."""
    rgb, _, _, K_small = redwood
    small = shrink(rgb, WIDTH)
    pair = [small[:, :-6], small[:, 6:]]  # the view slides 6 px: a small pan or a sideways move
    assert motion(pair, hfov_deg=70).readout == motion(pair, fov_deg=70).readout
    assert motion(pair, K=K_small).readout == motion(pair, intrinsics=K_small).readout
