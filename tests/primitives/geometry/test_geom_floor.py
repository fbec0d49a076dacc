"""geom.floor_point: floor pixels located without depth (synthetic exact geometry and a real RGB-D floor),
and scene.add_bearing(on_floor=True) feeding perspective questions."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.scene.memory import Scene

K640 = np.array([[525.0, 0.0, 319.5], [0.0, 525.0, 239.5], [0.0, 0.0, 1.0]])


def project_world(points: np.ndarray, K: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """(N, 2) pixels of world points seen by a camera-to-world ``pose``."""
    cam = (points - pose[:3, 3]) @ pose[:3, :3]
    uvw = cam @ K.T
    return uvw[:, :2] / uvw[:, 2:]


@pytest.mark.parametrize("pitch, roll, height", [(-15.0, 0.0, 1.5), (-32.0, -4.0, 1.1), (-3.0, 2.5, 0.45)])
def test_floor_points_projected_through_a_known_camera_are_recovered(pitch, roll, height):
    pose = geom.tilted_camera_pose(pitch, roll)
    floor = np.array([[x, y, -height] for x in (-1.5, -0.2, 0.9, 2.0) for y in (1.2, 2.5, 4.0)])
    pixels = project_world(floor, K640, pose)
    for pixel, truth in zip(pixels, floor, strict=True):
        p = geom.floor_point(pixel, K=K640, camera_height_m=height, pitch_deg=pitch, roll_deg=roll, pixel_sigma_px=1e-6)
        np.testing.assert_allclose(p.point, truth, atol=1e-6)
        assert p.distance_m == pytest.approx(np.linalg.norm(truth), abs=1e-6)
        assert p.ground_distance_m == pytest.approx(np.linalg.norm(truth[:2]), abs=1e-6)
        assert p.assumed == ""
        assert np.all(p.sigma_m < 1e-4)  # nothing uncertain was assumed


def test_the_tilted_pose_frame_is_the_design_world():
    pose = geom.tilted_camera_pose(-20.0, 0.0)  # pitch < 0: looking down (the signs of motion)
    forward, right = pose[:3, 2], pose[:3, 0]
    assert forward[1] > 0 and forward[2] == pytest.approx(-np.sin(np.radians(20.0)))  # +Y ahead, looking down
    assert geom.tilted_camera_pose(10.0)[2, 2] == pytest.approx(np.sin(np.radians(10.0)))  # > 0 looks up
    np.testing.assert_allclose(right, [1.0, 0.0, 0.0], atol=1e-12)  # +X right
    p = geom.floor_point((319.5, 400.0), K=K640, camera_height_m=1.5, pitch_deg=-20.0, roll_deg=0.0)
    assert p.point[0] == pytest.approx(0.0, abs=1e-9) and p.point[2] == pytest.approx(-1.5)
    right_side = geom.floor_point((600.0, 400.0), K=K640, camera_height_m=1.5, pitch_deg=-20.0, roll_deg=0.0)
    assert right_side.point[0] > 0.3  # a pixel right of centre is on the floor to the +X side


def test_a_pose_gives_the_tilt_and_the_floor_sits_below_its_height():
    pose = geom.tilted_camera_pose(-25.0, 3.0)
    pose[:3, 3] = [2.0, -1.0, 0.3]
    truth = np.array([2.4, 1.5, 0.3 - 1.2])
    pixel = project_world(truth[None], K640, pose)[0]
    p = geom.floor_point(pixel, K=K640, camera_height_m=1.2, pose=pose, pixel_sigma_px=1e-6)
    np.testing.assert_allclose(p.point, truth, atol=1e-6)
    assert p.pitch_deg == pytest.approx(-25.0) and p.roll_deg == pytest.approx(3.0)
    with pytest.raises(ValueError, match="not both"):
        geom.floor_point(pixel, K=K640, pose=pose, pitch_deg=10.0)


def test_assumptions_are_stated_and_their_ranges_make_the_uncertainty():
    p = geom.floor_point((112.0, 140.0), image_size=(224, 168))
    for words in (
        "60 ± 10 deg horizontal field of view",
        "1.5 ± 0.25 m above the floor",
        "pitch -15 ± 8 deg (15 down",
        "pitch not given",
    ):
        assert words in p.assumed and words in p.text
    assert p.point[2] == pytest.approx(-1.5)
    # the nominal answer: 60 deg fov, 15 deg down, 1.5 m
    f = 112.0 / np.tan(np.radians(30.0))
    below_axis = np.degrees(np.arctan((140.0 - 83.5) / f))
    assert p.ground_distance_m == pytest.approx(1.5 / np.tan(np.radians(15.0 + below_axis)), rel=1e-3)
    assert 0.1 * p.distance_m < p.distance_sigma_m < p.distance_m
    known = geom.floor_point(
        (112.0, 140.0), image_size=(224, 168), hfov_deg=60.0, camera_height_m=1.5, pitch_deg=-15.0, roll_deg=0.0
    )
    assert known.assumed == "" and known.distance_sigma_m < 0.2 * p.distance_sigma_m
    wider = geom.floor_point((112.0, 140.0), image_size=(224, 168), height_sigma_m=0.5)
    assert wider.distance_sigma_m > p.distance_sigma_m


def test_a_pixel_above_the_horizon_is_refused_clearly():
    with pytest.raises(ValueError, match=r"above the horizon .*row 32.*pitch_deg="):
        geom.floor_point((100.0, 10.0), image_size=(224, 168))
    assert geom.horizon_row(K640, -15.0) == pytest.approx(239.5 - 525.0 * np.tan(np.radians(15.0)))
    with pytest.raises(ValueError, match="image size"):
        geom.floor_point((100.0, 100.0))
    with pytest.raises(ValueError, match="pixel must be"):
        geom.floor_point("red", image_size=(224, 168))
    with pytest.raises(ValueError, match="camera_height_m"):
        geom.floor_point((100.0, 100.0), image_size=(224, 168), camera_height_m=-1.0)


def _redwood_floor(test_data) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float, float]:
    """(H, W, 3) camera-frame points from the depth, the floor mask, the colour image, and the camera's
    height, pitch and roll measured from the depth's floor plane."""
    root = test_data / "rgbd-redwood"
    depth = np.asarray(Image.open(root / "depth" / "00000.png"), dtype=np.float64) / 1000.0
    v, u = np.mgrid[0 : depth.shape[0], 0 : depth.shape[1]]
    points = np.stack([(u - K640[0, 2]) * depth / K640[0, 0], (v - K640[1, 2]) * depth / K640[1, 1], depth], -1)
    valid = depth > 0
    plane = geom.find_floor(points[valid], np.eye(4)[None])
    assert plane is not None
    floor = np.zeros(depth.shape, bool)
    floor[valid] = plane.inliers
    up = plane.normal  # camera frame, pointing from the floor to the camera
    pitch = float(np.degrees(np.arcsin(up[2])))  # > 0 up
    roll = float(np.degrees(np.arctan2(-up[0], -up[1])))
    colour = np.asarray(Image.open(root / "color" / "00000.jpg").convert("RGB"))
    return points, floor, colour, float(plane.offset), pitch, roll


def test_real_floor_pixels_land_where_the_depth_puts_them(test_data):
    points, floor, _, height, pitch, roll = _redwood_floor(test_data)
    R = geom.tilted_camera_pose(pitch, roll)[:3, :3]
    ys, xs = np.nonzero(floor)
    near = points[ys, xs, 2] < 3.0  # within 3 m (past that 1 px is tens of cm at this tilt)
    pick = np.random.default_rng(0).choice(np.flatnonzero(near), 60, replace=False)
    errors = []
    for i in pick:
        truth = R @ points[ys[i], xs[i]]
        p = geom.floor_point((xs[i], ys[i]), K=K640, camera_height_m=height, pitch_deg=pitch, roll_deg=roll)
        errors.append(np.linalg.norm(p.point - truth) / np.linalg.norm(truth))
    assert np.median(errors) < 0.01 and np.max(errors) < 0.05
    # the same pixels on the 224-px image the model sees (K scaled with it)
    s = 224 / 640
    K224 = K640 * np.array([[s], [s], [1.0]])
    K224[:2, 2] = (K640[:2, 2] + 0.5) * s - 0.5
    small = [
        geom.floor_point(
            ((xs[i] + 0.5) * s - 0.5, (ys[i] + 0.5) * s - 0.5),
            K=K224,
            camera_height_m=height,
            pitch_deg=pitch,
            roll_deg=roll,
        ).point
        for i in pick
    ]
    truths = np.array([R @ points[ys[i], xs[i]] for i in pick])
    assert np.median(np.linalg.norm(np.array(small) - truths, axis=1) / np.linalg.norm(truths, axis=1)) < 0.01


def test_a_wrong_camera_height_scales_the_layout_but_keeps_perspective_answers(test_data):
    """Marker dots on the real floor, the camera's tilt known but its height assumed (1.5 m; the true
    height is about 0.44 m): every position is off by the same factor, so 'standing at A facing B,
    where is C' comes out as the depth says."""
    points, floor, _, height, pitch, roll = _redwood_floor(test_data)
    R = geom.tilted_camera_pose(pitch, roll)[:3, :3]
    dots = {"red": (150, 420), "blue": (480, 380), "green": (330, 450)}
    assert all(floor[y, x] for x, y in dots.values())
    truth = {name: R @ points[y, x] for name, (x, y) in dots.items()}
    scene = Scene()
    for name, (x, y) in dots.items():
        scene.add_bearing(name, (x, y), K=K640, image_size=(640, 480), on_floor=True, pitch_deg=pitch)
        located = scene[name].center
        assert located[2] == pytest.approx(-1.5, abs=0.05)
        np.testing.assert_allclose(located[:2] * height / 1.5, truth[name][:2], rtol=0.06, atol=0.03)
    reading = scene.perspective("green", standing_at="red", facing="blue")
    true_scene = Scene()
    for name, p in truth.items():
        true_scene.add(name, points=p[None])
    expected = true_scene.perspective("green", standing_at="red", facing="blue")
    assert reading.angle_deg == pytest.approx(expected.angle_deg, abs=3.0)
    assert reading.direction == expected.direction
    assert "on the floor" in scene["red"].bearings[0].assumed and "1.5 ± 0.25 m" in scene["red"].bearings[0].assumed


def test_add_bearing_on_floor_matches_floor_point_and_refuses_a_distance():
    scene = Scene()
    obj = scene.add_bearing("dot", (150.0, 140.0), image_size=(224, 168), on_floor=True)
    p = geom.floor_point((150.0, 140.0), image_size=(224, 168), pixel_sigma_px=2.0)
    np.testing.assert_allclose(obj.center, p.point, atol=0.02 * p.distance_m)
    assert obj.bearings[0].distance_sigma_m == pytest.approx(p.distance_sigma_m)
    assert "camera pitch -15 ± 8 deg (15 down" in obj.bearings[0].assumed
    assert 0 not in scene.cameras  # the assumed camera is not registered as known
    with pytest.raises(ValueError, match="drop distance="):
        scene.add_bearing("x", (150.0, 140.0), image_size=(224, 168), on_floor=True, distance=2.0)
    with pytest.raises(ValueError, match="above the horizon"):
        scene.add_bearing("sky", (150.0, 5.0), image_size=(224, 168), on_floor=True)
    assert "sky" not in scene and "x" not in scene


TILT_PHOTOS = {  # colour image, depth, depth kind, intrinsics (fx, fy, cx, cy) of the shared RGB-D frames
    "redwood": ("rgbd-redwood/color/00000.jpg", "rgbd-redwood/depth/00000.png", 1000.0, (525.0, 525.0, 319.5, 239.5)),
    "tum": ("rgbd-single/TUM_color.png", "rgbd-single/TUM_depth.png", 5000.0, (525.0, 525.0, 319.5, 239.5)),
}


@pytest.mark.parametrize("name", sorted(TILT_PHOTOS))
def test_camera_tilt_from_vertical_edges_matches_the_depths_floor(test_data, name):
    colour_path, depth_path, per_metre, (fx, fy, cx, cy) = TILT_PHOTOS[name]
    depth = np.asarray(Image.open(test_data / depth_path), dtype=np.float64) / per_metre
    v, u = np.mgrid[0 : depth.shape[0], 0 : depth.shape[1]]
    points = np.stack([(u - cx) * depth / fx, (v - cy) * depth / fy, depth], -1)[depth > 0]
    up = geom.find_floor(points, np.eye(4)[None]).normal
    true_pitch = float(np.degrees(np.arcsin(up[2])))  # > 0 up, as every tool says
    photo = Image.open(test_data / colour_path).convert("RGB")
    small = photo.resize((224, round(photo.height * 224 / photo.width)), Image.LANCZOS)
    tilt = geom.camera_tilt(small)  # 60 deg field of view assumed (truly 62.7)
    assert abs(tilt.pitch_deg - true_pitch) < 6.0, (name, tilt, true_pitch)
    assert 5.0 <= tilt.pitch_sigma_deg <= 12.0 and tilt.edges >= 6  # wider when a rival pitch fits too
    p = geom.floor_point((112, 150), small)
    assert "estimated from the image's vertical edges" in p.assumed and p.pitch_deg == tilt.pitch_deg
    given = geom.floor_point((112, 150), small, tilt=tilt)  # the same tilt handed over as a CameraTilt
    np.testing.assert_allclose(given.point, p.point, atol=1e-9)
    assert "camera tilt given" in given.assumed


def test_a_featureless_image_gives_no_tilt_and_floor_point_says_it_assumed_one():
    blank = Image.new("RGB", (224, 168), (200, 200, 200))
    with pytest.raises(ValueError, match=r"too few near-vertical edges.*pitch_deg="):
        geom.camera_tilt(blank)
    p = geom.floor_point((112, 150), blank)
    assert p.pitch_deg == -15.0 and "pitch -15 ± 8 deg (15 down; too few near-vertical edges" in p.assumed


def test_points_of_one_photo_share_its_camera_error_in_perspective_readouts():
    """A height or tilt error moves all floor points of a photo together, so 'standing at A facing B'
    is much better known than independent per-object errors would say."""
    from spatialclaw.primitives.scene.perspective import perspective_from_positions

    scene = Scene()
    for name, pixel in {"a": (60.0, 150.0), "b": (170.0, 130.0), "c": (120.0, 160.0)}.items():
        scene.add_bearing(name, pixel, image_size=(224, 168), on_floor=True)
    joint = scene.perspective("c", standing_at="a", facing="b")
    places = [(n, scene[n].center, scene[n].covariance) for n in ("c", "a", "b")]
    separate = perspective_from_positions(*places)
    assert joint.angle_deg == pytest.approx(separate.angle_deg)
    assert joint.angle_sigma_deg < 0.6 * separate.angle_sigma_deg
    assert joint.p_direction > separate.p_direction
    drawn = geom.floor_samples([scene[n].bearings[0].floor for n in ("a", "b", "c")], samples=500)
    assert drawn.shape == (500, 3, 3)
    heights = drawn[..., 2]
    ok = np.isfinite(heights).all(axis=1)
    np.testing.assert_allclose(heights[ok], heights[ok][:, :1].repeat(3, axis=1))  # one floor per sample
    other = geom.floor_point((100.0, 150.0), image_size=(224, 168), camera_height_m=1.2)
    with pytest.raises(ValueError, match="different cameras"):
        geom.floor_samples([scene["a"].bearings[0].floor, other])


@pytest.mark.parametrize("pitch, roll", [(-20.0, 0.0), (12.0, 0.0), (-8.0, 5.0)])
def test_geometry_and_motion_share_one_sign_convention(pitch, roll):
    """The turn from a level camera to ``tilted_camera_pose(pitch, roll)`` reads back through ``motion``'s
    yaw/pitch/roll as the same pitch and roll: > 0 up and clockwise in every tool."""
    from spatialclaw.primitives.motion.angles import yaw_pitch_roll

    level, tilted = geom.tilted_camera_pose(0.0, 0.0), geom.tilted_camera_pose(pitch, roll)
    yaw, read_pitch, read_roll = yaw_pitch_roll(level[:3, :3].T @ tilted[:3, :3])
    assert (yaw, read_pitch, read_roll) == pytest.approx((0.0, pitch, roll), abs=1e-9)
    assert geom.floor_point((319.5, 300.0), K=K640, pitch_deg=-10.0, roll_deg=0.0).distance_m < 10.0
    with pytest.raises(ValueError, match="above the horizon"):  # looking up, the centre row is sky
        geom.floor_point((319.5, 260.0), K=K640, pitch_deg=10.0, roll_deg=0.0)


def test_floor_point_takes_a_camera_tilt_and_flags_distances_beyond_a_room():
    tilt = geom.CameraTilt(pitch_deg=-30.0, roll_deg=2.0, pitch_sigma_deg=5.0, edges=9)
    p = geom.floor_point((319.5, 400.0), K=K640, camera_height_m=1.5, tilt=tilt)
    q = geom.floor_point((319.5, 400.0), K=K640, camera_height_m=1.5, pitch_deg=-30.0, roll_deg=2.0)
    np.testing.assert_allclose(p.point, q.point, atol=1e-9)
    assert p.distance_sigma_m > q.distance_sigma_m  # the tilt's sigma came with it
    assert "looks down 30.0 deg" in p.text and p.notes == ""
    with pytest.raises(ValueError, match="not both"):
        geom.floor_point((319.5, 400.0), K=K640, tilt=tilt, pitch_deg=-10.0)
    with pytest.raises(ValueError, match="CameraTilt"):
        geom.floor_point((319.5, 400.0), K=K640, tilt=-30.0)
    far = geom.floor_point((319.5, 250.0), K=K640, camera_height_m=1.5, pitch_deg=-5.0, roll_deg=0.0)
    assert far.ground_distance_m > 6.0 and "beyond most rooms" in far.notes and "IMPLAUSIBLE?" in far.text
