"""geom: cameras, transforms, distances, planes, boxes, directions, gravity alignment, rectification.

Exact answers on synthetic geometry built here, and accuracy on the real Redwood RGB-D frames.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image
from scipy.spatial import cKDTree

from spatialclaw.primitives.display.color import find_color
from spatialclaw.primitives.geometry import geom
from tests.geom_synthetic import Box, intrinsics, look_at, render_depth
from tests.paths import REPO_ROOT


def random_pose(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    R = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = R, rng.uniform(-3, 3, size=3)
    return pose


# ---- cameras and transforms ------------------------------------------------------------------------
def test_backproject_matches_the_pinhole_formula_pixel_by_pixel():
    rng = np.random.default_rng(1)
    depth = rng.uniform(0.5, 4.0, size=(12, 16))
    depth[3, 4] = 0.0
    depth[5, 6] = np.nan
    K = np.array([[200.0, 0, 7.5], [0, 210.0, 5.5], [0, 0, 1]])
    pose = random_pose(rng)
    points, pixels = geom.backproject(depth, K, pose=pose, return_pixels=True)
    expected = []
    for y in range(12):
        for x in range(16):
            z = depth[y, x]
            if np.isfinite(z) and z > 0:
                cam = np.array([(x - 7.5) * z / 200.0, (y - 5.5) * z / 210.0, z])
                expected.append(pose[:3, :3] @ cam + pose[:3, 3])
    assert points.shape == (12 * 16 - 2, 3)
    np.testing.assert_allclose(points, np.array(expected), atol=1e-12)
    uv, z = geom.project(points, K, pose)
    np.testing.assert_allclose(uv, pixels, atol=1e-9)
    np.testing.assert_allclose(z, depth[pixels[:, 1].astype(int), pixels[:, 0].astype(int)], atol=1e-12)


def test_backproject_mask_and_stride_select_pixels():
    depth = np.full((10, 10), 2.0)
    mask = np.zeros((10, 10), dtype=bool)
    mask[2:6, 2:6] = True
    _, pixels = geom.backproject(depth, intrinsics(10, 10, 50.0), mask=mask, stride=2, return_pixels=True)
    assert sorted(map(tuple, pixels.astype(int))) == [(x, y) for x in (2, 4) for y in (2, 4)]


def test_backproject_reads_a_depth_results_own_intrinsics():
    class Result:  # the attributes of depth()'s DepthResult that backproject reads
        depth = np.full((6, 8), 1.5)
        intrinsics = intrinsics(8, 6, 40.0)

    np.testing.assert_array_equal(geom.backproject(Result()), geom.backproject(Result.depth, Result.intrinsics))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: geom.backproject(np.ones((4, 4, 3)), np.eye(3)), "(H, W)"),
        (lambda: geom.backproject(np.ones((4, 4)), np.eye(4)), "(3, 3)"),
        (lambda: geom.backproject(np.ones((4, 4))), "needs intrinsics"),
        (lambda: geom.backproject(np.ones((4, 4)), np.eye(3), mask=np.ones((3, 3), bool)), "does not match"),
        (lambda: geom.transform(np.ones((5, 2)), np.eye(4)), "(N, 3)"),
        (lambda: geom.distance(np.zeros((0, 3)), np.zeros((2, 3))), "empty"),
        (lambda: geom.distance(np.array([[np.nan, 0, 0]]), np.zeros((2, 3))), "non-finite"),
        (lambda: geom.distance(np.zeros((1, 3)), np.zeros((2, 3)), kind="median"), "'centroid' or 'closest'"),
    ],
)
def test_bad_inputs_say_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_invert_pose_and_transform_roundtrip():
    rng = np.random.default_rng(2)
    pose = random_pose(rng)
    np.testing.assert_allclose(geom.invert_pose(pose) @ pose, np.eye(4), atol=1e-12)
    point = rng.normal(size=3)
    assert geom.transform(point, pose).shape == (3,)
    np.testing.assert_allclose(geom.transform(geom.transform(point, pose), geom.invert_pose(pose)), point, atol=1e-12)


# ---- distances and angles --------------------------------------------------------------------------
def test_centroid_and_closest_point_distances_between_boxes_are_exact():
    a = Box((0.5, 0.5, 0.5), (1.0, 1.0, 1.0)).surface_points(0.1)
    b = Box((3.5, 0.5, 0.5), (1.0, 1.0, 1.0)).surface_points(0.1)
    assert geom.distance(a, b) == pytest.approx(3.0, abs=1e-12)
    assert geom.distance(a, b, kind="closest") == pytest.approx(2.0, abs=1e-12)
    pa, pb, gap = geom.closest_points(b, a)
    assert pa[0] == pytest.approx(3.0) and pb[0] == pytest.approx(1.0) and gap == pytest.approx(2.0)
    assert geom.distance(a, a, kind="closest") == 0.0


def test_angle_between():
    assert geom.angle_between([1, 0, 0], [0, 2, 0]) == pytest.approx(90.0)
    assert geom.angle_between([1, 1, 0], [1, 0, 0]) == pytest.approx(45.0)
    assert geom.angle_between([1, 0, 0], [-3, 0, 0]) == pytest.approx(180.0)
    with pytest.raises(ValueError, match="zero-length"):
        geom.angle_between([0, 0, 0], [1, 0, 0])


# ---- planes ----------------------------------------------------------------------------------------
def test_fit_plane_finds_a_tilted_plane_among_outliers():
    rng = np.random.default_rng(3)
    normal = np.array([0.2, -0.3, 0.93])
    normal /= np.linalg.norm(normal)
    u = np.cross(normal, [1, 0, 0])
    u /= np.linalg.norm(u)
    v = np.cross(normal, u)
    st = rng.uniform(-2, 2, size=(3000, 2))
    on_plane = 0.7 * normal + st[:, :1] * u + st[:, 1:] * v + rng.normal(scale=0.003, size=(3000, 1)) * normal
    outliers = rng.uniform(-2, 2, size=(1500, 3))
    plane = geom.fit_plane(np.vstack([on_plane, outliers]), threshold=0.02)
    assert min(geom.angle_between(plane.normal, normal), geom.angle_between(plane.normal, -normal)) < 0.3
    assert plane.inliers[:3000].mean() > 0.99
    assert plane.inliers[3000:].mean() < 0.05
    assert abs(abs(plane.offset) - 0.7) < 0.005
    assert plane.rms_m < 0.005


def test_fit_plane_rejects_degenerate_input():
    with pytest.raises(ValueError, match="at least 3"):
        geom.fit_plane(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="collinear"):
        geom.fit_plane(np.outer(np.arange(10.0), [1, 2, 3]))


# ---- oriented boxes --------------------------------------------------------------------------------
def test_upright_box_recovers_yaw_and_size_of_a_rotated_box():
    points = Box((0, 0, 0.3), (2.0, 1.0, 0.6)).surface_points(0.05)
    yaw = np.radians(30)
    R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    box = geom.oriented_box(points @ R.T + [1.0, 2.0, 0.0])
    np.testing.assert_allclose(box.size, [2.0, 1.0, 0.6], atol=1e-9)
    np.testing.assert_allclose(box.center, [1.0, 2.0, 0.3], atol=1e-9)
    assert box.yaw_deg == pytest.approx(30.0, abs=1e-6)
    assert box.volume == pytest.approx(1.2, abs=1e-9)
    assert box.contains(points @ R.T + [1.0, 2.0, 0.0], margin=1e-9).all()
    assert np.isclose(np.linalg.det(box.rotation), 1.0)
    np.testing.assert_allclose(np.sort(box.corners[:, 2]), [0, 0, 0, 0, 0.6, 0.6, 0.6, 0.6], atol=1e-9)


def test_pca_box_follows_a_tilted_rod():
    points = Box((0, 0, 0), (3.0, 0.2, 0.2)).surface_points(0.05)
    tilt = np.radians(40)
    R = np.array([[np.cos(tilt), 0, -np.sin(tilt)], [0, 1, 0], [np.sin(tilt), 0, np.cos(tilt)]])
    box = geom.oriented_box(points @ R.T, upright=False)
    np.testing.assert_allclose(np.sort(box.size)[::-1], [3.0, 0.2, 0.2], atol=1e-6)
    assert min(geom.angle_between(box.rotation[:, 0], R[:, 0]), geom.angle_between(-box.rotation[:, 0], R[:, 0])) < 1e-4


# ---- directions ------------------------------------------------------------------------------------
def test_direction_is_read_in_the_observers_gravity_aligned_frame():
    reference, target = np.array([0.0, 3.0, 0.4]), np.array([-1.3, 3.4, 0.5])
    level = look_at((0, 0, 1.5), (0, 1, 1.5))
    pitched_rolled = look_at((0, 0, 1.5), (0, 3, 0.0), roll_deg=15)
    for pose in (level, pitched_rolled):
        d = geom.direction(target, reference, pose)
        assert (d.right_m, d.forward_m, d.up_m) == pytest.approx((-1.3, 0.4, 0.1), abs=1e-9)
        assert d.words == "1.3 m left of, 0.40 m behind and 0.10 m above"
    from_side = geom.direction(target, reference, look_at((-4, 3, 1.5), (0, 3, 1.5)))
    assert from_side.words == "0.40 m left of, 1.3 m in front of and 0.10 m above"
    from_opposite = geom.direction(target, reference, look_at((0, 6, 1.5), (0, 3, 1.5)))
    assert (
        from_opposite.sentence("chair", "table")
        == "the chair is 1.3 m right of, 0.40 m in front of and 0.10 m above the table"
    )
    level_pair = geom.direction([1.0, 5.0, 0.42], [0.0, 5.0, 0.40], level)
    assert level_pair.sentence("lamp", "sofa") == (
        "the lamp is 1.0 m right of the sofa (same front-back position and height within 0.05 m)"
    )
    looking_down = geom.direction([0.0, 1.0, 0.0], [0.0, 0.0, 0.0], look_at((0, 0, 3), (0, 1e-9, 0)))
    assert looking_down.forward_m == pytest.approx(1.0)


# ---- gravity alignment -----------------------------------------------------------------------------
def _room_views():
    boxes = [Box((0.0, 3.0, 0.4), (1.2, 0.8, 0.8)), Box((-1.3, 3.4, 0.5), (0.5, 0.5, 1.0))]
    K = intrinsics()
    poses = [
        look_at((0.3, 0.0, 1.4), (0.0, 3.0, 0.3)),
        look_at((-2.0, 1.0, 1.6), (0.0, 3.0, 0.3)),
        look_at((2.0, 0.5, 1.2), (-0.5, 3.0, 0.5)),
    ]
    depths = [render_depth(K, p, 320, 240, boxes)[0] for p in poses]
    return K, np.array(poses), depths


def test_gravity_alignment_recovers_the_design_frame_from_a_tilted_world():
    K, poses, depths = _room_views()
    rng = np.random.default_rng(4)
    tilt = random_pose(rng)  # an arbitrary input world (e.g. from SfM)
    T = geom.gravity_alignment(depths, tilt @ poses, intrinsics=K)
    expected = geom.frame_from_up([0, 0, 1], poses[0])  # design frame from the true world
    np.testing.assert_allclose(T @ tilt, expected, atol=1e-6)
    aligned = T @ tilt @ poses
    np.testing.assert_allclose(aligned[0, :3, 3], 0.0, atol=1e-9)
    forward = aligned[0, :3, 2]
    assert forward[0] == pytest.approx(0.0, abs=1e-6) and forward[1] > 0
    points = np.concatenate(
        [geom.backproject(d, K, T @ tilt @ p, stride=4) for d, p in zip(depths, poses, strict=True)]
    )
    assert geom.gravity_alignment(points, aligned) == pytest.approx(np.eye(4), abs=1e-6)


def test_gravity_alignment_falls_back_to_the_first_cameras_up_without_a_floor():
    K = intrinsics()
    pose = look_at((0, 0, 1.0), (1, 4, 1.0))
    wall = Box((0, 6, 1), (20, 0.2, 20))
    depth, _ = render_depth(K, pose, 320, 240, [wall], floor_z=None)
    T = geom.gravity_alignment([depth], pose[None], intrinsics=K)
    np.testing.assert_allclose(T @ pose[:, 1], [0, 0, -1, 0], atol=1e-9)  # camera y (down) -> -Z
    np.testing.assert_allclose((T @ pose)[:3, 2], [0, 1, 0], atol=1e-9)


def test_floor_beats_the_wall_in_front_of_a_camera_pitched_down():
    # Pitched 55 degrees down, the camera's up is 35 degrees from the wall's normal but 55 degrees from the
    # floor's: the wall is "more aligned", yet the camera is in front of it, not above it.
    K = intrinsics()
    pose = look_at((0, 0, 1.5), (0, 1.5 / np.tan(np.radians(55)), 0))
    wall = Box((0, 1.4, 2), (10, 0.2, 4))
    depth, ids = render_depth(K, pose, 320, 240, [wall])
    assert (ids == 0).mean() > 0.3 and (ids == -1).mean() > 0.3  # both are large planes
    points = geom.backproject(depth, K, pose)
    floor = geom.find_floor(points, pose[None])
    # Not exact: the wall's bottom 2 cm are within the inlier threshold of the floor and tilt the fit slightly.
    assert geom.angle_between(floor.normal, [0, 0, 1]) < 0.1
    assert floor.offset == pytest.approx(0.0, abs=1e-3)
    T = geom.gravity_alignment([depth], pose[None], intrinsics=K)
    assert geom.angle_between(T[2, :3], [0, 0, 1]) < 0.1


def test_gravity_alignment_needs_intrinsics_for_depth_maps():
    with pytest.raises(ValueError, match="intrinsics"):
        geom.gravity_alignment([np.ones((4, 4))], np.eye(4)[None])


# ---- Redwood RGB-D (real measured data) ------------------------------------------------------------
def load_redwood(root: Path) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Intrinsics (3, 3), camera-to-world poses (5, 4, 4) and depth maps in metres."""
    K = np.array(json.loads((root / "intrinsics.json").read_text())["intrinsic_matrix"]).reshape(3, 3).T
    rows = [line.split() for line in (root / "trajectory.log").read_text().splitlines() if line.strip()]
    poses = np.array([[[float(v) for v in r] for r in rows[i + 1 : i + 5]] for i in range(0, len(rows), 5)])
    depths = [np.asarray(Image.open(p), dtype=np.float64) / 1000.0 for p in sorted((root / "depth").glob("*.png"))]
    return K, poses, depths


@pytest.fixture(scope="module")
def redwood(test_data):
    return load_redwood(test_data / "rgbd-redwood")


def _median_residual(clouds: list[np.ndarray]) -> float:
    tree = cKDTree(clouds[0])
    return float(np.median(np.concatenate([tree.query(c, k=1)[0] for c in clouds[1:]])))


def test_redwood_frames_agree_after_backprojection_with_their_poses(redwood):
    K, poses, depths = redwood
    assert len(depths) == 5 and K[0, 0] == 525.0 and K[0, 2] == 319.5
    clouds = [geom.backproject(d, K, p, stride=2) for d, p in zip(depths, poses, strict=True)]
    residual = _median_residual(clouds)
    without_poses = _median_residual([geom.backproject(d, K, poses[0], stride=2) for d in depths])
    print(
        f"\nRedwood: median nearest-neighbour residual of frames 1-4 to frame 0: {residual * 1000:.2f} mm "
        f"(all frames placed with frame 0's pose instead: {without_poses * 1000:.2f} mm)"
    )
    # Points are ~1.9 m away, so at stride 2 neighbouring samples are 2 * 1.9 / 525 = 7 mm apart: a perfectly
    # registered cloud has a median nearest-neighbour distance of a few mm. 1 cm allows sensor noise.
    assert residual < 0.010
    assert without_poses > 2 * residual


def test_redwood_gravity_alignment_puts_the_floor_normal_on_plus_z(redwood):
    import open3d as o3d

    K, poses, depths = redwood
    T = geom.gravity_alignment(depths, poses, intrinsics=K)
    # Independent floor estimate: Open3D's RANSAC on the aligned points below the camera, then least squares.
    aligned = np.concatenate([geom.backproject(d, K, T @ p, stride=4) for d, p in zip(depths, poses, strict=True)])
    low = aligned[aligned[:, 2] < -0.2]
    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(low))
    o3d.utility.random.seed(0)
    (a, b, c, _), inliers = cloud.segment_plane(distance_threshold=0.02, ransac_n=3, num_iterations=500)
    normal = np.array([a, b, c]) * np.sign(c)
    floor = low[inliers]
    tilt = geom.angle_between(normal, [0, 0, 1])
    print(
        f"\nRedwood floor ({len(floor)} points, {floor[:, 2].mean():.3f} m below camera 0): "
        f"normal {tilt:.3f} deg from +Z after gravity alignment"
    )
    assert len(floor) > 5000
    assert tilt < 3.0
    assert np.linalg.norm((T @ poses[0])[:3, 3]) < 1e-9
    forward = (T @ poses[0])[:3, 2]
    assert forward[1] > 0 and abs(forward[0]) < 1e-9


# ---- rectify_plane ---------------------------------------------------------------------------------
def test_rectify_plane_recovers_metric_distances_on_a_warped_plane():
    width_m, height_m, ppm = 1.0, 0.7, 400
    texture = np.full((int(height_m * ppm), int(width_m * ppm), 3), 255, np.uint8)
    marks = {"a": (0.2, 0.15), "b": (0.8, 0.15), "c": (0.5, 0.55)}
    for x, y in marks.values():
        cv2.circle(texture, (int(x * ppm), int(y * ppm)), 12, (255, 0, 0), -1, lineType=cv2.LINE_AA)
    # A known homography from texture pixels to a perspective "photo" of the plane.
    corners_tex = np.array([[0, 0], [400, 0], [400, 280], [0, 280]], dtype=np.float64) - 0.5
    corners_img = np.array([[180, 90], [520, 120], [600, 420], [90, 380]], dtype=np.float64)
    H = geom.homography_from_points(corners_tex, corners_img)
    photo = cv2.warpPerspective(texture, H, (700, 500), flags=cv2.INTER_LINEAR, borderValue=(90, 90, 90))

    rect = geom.rectify_plane(photo, corners_img, size=(width_m, height_m), px_per_m=500)
    assert rect.image.size == (500, 350)
    blobs = find_color(rect.image, "red", min_area=100)
    assert len(blobs) == 3
    found = np.array(sorted(rect.top_view_to_plane(np.array([b.centroid for b in blobs])).tolist()))
    truth = np.array(sorted([(x + 0.5 / ppm, y + 0.5 / ppm) for x, y in marks.values()]))
    np.testing.assert_allclose(found, truth, atol=0.004)

    def in_photo(mark: str) -> np.ndarray:  # the mark's texture pixel, through the known homography
        return cv2.perspectiveTransform((np.asarray(marks[mark]) * ppm).reshape(1, 1, 2), H)[0, 0]

    a_img, b_img = in_photo("a"), in_photo("b")
    assert rect.distance_m(a_img, b_img) == pytest.approx(0.6, abs=1e-6)
    np.testing.assert_allclose(rect.to_plane(corners_img), [[0, 0], [1.0, 0], [1.0, 0.7], [0, 0.7]], atol=1e-9)
    np.testing.assert_allclose(rect.to_image(rect.to_plane(a_img)), a_img, atol=1e-6)


def test_rectify_plane_rejects_bad_quads():
    image = np.zeros((100, 100, 3), np.uint8)
    with pytest.raises(ValueError, match="not a convex"):
        geom.rectify_plane(image, [[10, 10], [90, 80], [90, 10], [10, 90]], size=(1, 1))
    with pytest.raises(ValueError, match="degenerate"):
        geom.rectify_plane(image, [[10, 10], [20, 20], [30, 30], [40, 40]], size=(1, 1))
    with pytest.raises(ValueError, match=r"\(4, 2\)"):
        geom.rectify_plane(image, [[10, 10], [20, 20]], size=(1, 1))
    with pytest.raises(ValueError, match="both > 0"):
        geom.rectify_plane(image, [[10, 10], [90, 10], [90, 90], [10, 90]], size=(0, 1))


# ---- the user guide's examples ---------------------------------------------------------------------
def test_geometry_doc_examples_run(tmp_path, monkeypatch):
    """The page's python blocks run in order on the room its first block renders (no data folder), and
    what they measure is the room's truth: camera height, stool height, the dots' floor positions."""
    import re

    guide = REPO_ROOT / "docs" / "geometry.md"
    text = guide.read_text().replace("/tmp/bev.png", str(tmp_path / "bev.png"))
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 8 and not any("../shared" in b or "SPATIALCLAW_TEST_DATA" in b for b in blocks)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for number, block in enumerate(blocks):
        exec(compile(block, f"docs/geometry.md block {number}", "exec"), namespace)
    assert (tmp_path / "bev.png").exists()
    assert namespace["residual"] < 0.01 and namespace["r"].closest_distance_m == pytest.approx(0.45, abs=1e-3)
    assert namespace["floor"].offset == pytest.approx(1.2, abs=0.005)  # the camera's height above the floor
    assert namespace["seat"].extent[1, 2] + namespace["floor"].offset == pytest.approx(0.45, abs=0.01)
    assert np.linalg.norm(np.subtract(namespace["known"].point, namespace["depth_says"])) < 0.1
