"""Scene layout from 2D evidence (bearings + distance estimates) and perspective-taking queries."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.scene.memory import Scene
from spatialclaw.primitives.scene.perspective import EIGHT_WAY
from tests.geom_synthetic import Box, intrinsics, look_at

K = intrinsics(200, 150, 160.0)
CAMERA = look_at((0.0, 0.0, 1.5), (0.0, 5.0, 1.0))
SIDE_CAMERA = look_at((3.0, 1.0, 1.4), (-0.5, 4.0, 0.8))
LAYOUT = {"sofa": (-1.0, 4.0, 0.4), "tv": (1.5, 5.0, 0.8), "lamp": (-2.0, 2.5, 1.2), "plant": (0.6, 3.0, 0.5)}


def true_angle(target, standing, facing) -> float:
    """Clockwise-from-ahead horizontal angle, degrees, from exact positions (independent formula)."""
    ahead = np.subtract(facing, standing)[:2]
    to = np.subtract(target, standing)[:2]
    cross = ahead[0] * to[1] - ahead[1] * to[0]  # > 0: counter-clockwise (left) seen from above
    return float(-np.degrees(np.arctan2(cross, ahead @ to)))


def pixel_of(point, pose, K=K) -> np.ndarray:
    return geom.project(np.array([point]), K, pose)[0][0]


def bearing_scene(distance_sigma_fraction: float = 0.02, pixel_sigma_px: float = 0.5) -> Scene:
    scene = Scene()
    scene.add_camera(0, CAMERA)
    for name, position in LAYOUT.items():
        distance = float(np.linalg.norm(np.subtract(position, CAMERA[:3, 3])))
        scene.add_bearing(
            name,
            pixel_of(position, CAMERA),
            distance=distance,
            distance_sigma=distance_sigma_fraction * distance,
            frame=0,
            K=K,
            pixel_sigma_px=pixel_sigma_px,
        )
    return scene


@pytest.mark.parametrize(
    "target, standing, facing",
    [
        ("lamp", "sofa", "tv"),
        ("tv", "lamp", "plant"),
        ("plant", "tv", "sofa"),
        ("sofa", "plant", "lamp"),
    ],
)
def test_perspective_from_bearings_matches_the_exact_layout(target, standing, facing):
    answer = bearing_scene().perspective(target, standing_at=standing, facing=facing)
    expected = true_angle(LAYOUT[target], LAYOUT[standing], LAYOUT[facing])
    assert answer.angle_deg == pytest.approx(expected, abs=1e-6)  # the estimate sits on the truth
    assert 0 < answer.angle_sigma_deg < 10
    assert answer.side == ("right" if expected > 0 else "left")
    assert answer.depth == ("in front" if abs(expected) < 90 else "behind")
    assert answer.clock == (round(expected / 30) % 12 or 12)
    assert answer.direction == EIGHT_WAY[round(expected / 45) % 8]
    distance = np.linalg.norm(np.subtract(LAYOUT[target], LAYOUT[standing])[:2])
    assert answer.distance_m == pytest.approx(distance, abs=1e-6)
    assert f"{answer.clock} o'clock" in answer.text and "±" in answer.text


def test_the_same_queries_work_on_objects_measured_in_3d():
    scene = Scene()
    scene.add_camera(0, CAMERA)
    for name, position in LAYOUT.items():
        scene.add(name, points=Box(position, (0.4, 0.4, 0.4)).surface_points())
    answer = scene.perspective("lamp", standing_at="sofa", facing="tv")
    assert answer.angle_deg == pytest.approx(true_angle(LAYOUT["lamp"], LAYOUT["sofa"], LAYOUT["tv"]), abs=0.01)
    assert answer.angle_sigma_deg == 0 and "P(right)" not in answer.text  # exact evidence, no spread
    from_bearings = bearing_scene().perspective("lamp", standing_at="sofa", facing="tv")
    assert (answer.clock, answer.direction, answer.side) == (
        from_bearings.clock,
        from_bearings.direction,
        from_bearings.side,
    )


def test_a_camera_faces_its_own_viewing_direction():
    scene = bearing_scene()
    answer = scene.perspective("tv", standing_at=0)
    forward = geom.observer_axes(CAMERA)[1]
    expected = true_angle(LAYOUT["tv"], CAMERA[:3, 3], CAMERA[:3, 3] + forward)
    assert answer.angle_deg == pytest.approx(expected, abs=1e-6) and answer.clock == 1
    with pytest.raises(ValueError, match="facing="):
        scene.perspective("tv", standing_at="sofa")


def test_two_views_triangulate_without_distances_and_say_how_sure():
    scene = Scene()
    scene.add_camera(0, CAMERA)
    scene.add_camera(7, SIDE_CAMERA)
    truth = np.array(LAYOUT["sofa"])
    kept = scene.add_bearing("sofa", pixel_of(truth, CAMERA), frame=0, K=K)
    assert "located once you add a bearing" in kept and "sofa" not in scene and "sofa" in scene.pending
    with pytest.raises(ValueError, match="parallel"):  # the same ray again cannot triangulate
        scene.add_bearing("sofa", pixel_of(truth, CAMERA), frame=0, K=K)
    rng = np.random.default_rng(0)
    errors, sigmas = [], []
    for _trial in range(20):
        s = Scene()
        s.add_camera(0, CAMERA)
        s.add_camera(7, SIDE_CAMERA)
        for frame, pose in ((0, CAMERA), (7, SIDE_CAMERA)):
            s.add_bearing("sofa", pixel_of(truth, pose) + rng.normal(0, 1.0, 2), frame=frame, K=K, pixel_sigma_px=1.0)
        obj = s["sofa"]
        errors.append(obj.center - truth)
        sigmas.append(obj.sigma_m)
        assert "triangulated" in obj.located and obj.frames == (0, 7)
    errors, sigmas = np.abs(np.array(errors)), np.array(sigmas)
    assert np.mean(errors < 2.5 * sigmas) > 0.85  # the stated sigma describes the real scatter
    assert np.median(np.linalg.norm(errors, axis=1)) < 0.15


def test_the_stated_uncertainty_covers_the_truth_under_realistic_noise():
    rng = np.random.default_rng(1)
    inside = []
    for _ in range(40):
        scene = Scene()
        scene.add_camera(0, CAMERA)
        for name, position in LAYOUT.items():
            distance = float(np.linalg.norm(np.subtract(position, CAMERA[:3, 3])))
            guess = distance * (1 + rng.normal(0, 0.15))
            scene.add_bearing(
                name,
                pixel_of(position, CAMERA) + rng.normal(0, 2.0, 2),
                distance=guess,
                distance_sigma=0.15 * guess,
                frame=0,
                K=K,
                pixel_sigma_px=2.0,
            )
        answer = scene.perspective("lamp", standing_at="sofa", facing="tv")
        expected = true_angle(LAYOUT["lamp"], LAYOUT["sofa"], LAYOUT["tv"])
        inside.append(abs((answer.angle_deg - expected + 180) % 360 - 180) <= 2 * answer.angle_sigma_deg)
    assert np.mean(inside) > 0.85


def test_a_field_of_view_stands_in_for_missing_intrinsics_and_is_stated():
    from spatialclaw.primitives.frames.frame import Frame

    frame = Frame.from_image(Image.new("RGB", (200, 150)), index=3)
    scene = Scene()
    obj = scene.add_bearing("door", (150, 60), distance=3.0, frame=frame)
    assert "60 deg horizontal field of view" in obj.summary()
    assert "camera at the origin, level, facing +Y" in obj.summary()
    f = 100 / np.tan(np.radians(30))
    expected = np.array([(150 - 99.5) / f, 1.0, -(60 - 74.5) / f])
    expected *= 3.0 / np.linalg.norm(expected)
    np.testing.assert_allclose(obj.center, expected, atol=1e-6)
    assert scene.perspective("door", standing_at=(0, 0), facing=(0, 1)).side == "right"
    with pytest.raises(ValueError, match="image_size"):
        Scene().add_bearing("door", (150, 60), distance=3.0)
    with pytest.raises(ValueError, match="pixel must be"):
        scene.add_bearing("x", "middle", distance=1.0, image_size=(200, 150))
    with pytest.raises(ValueError, match="already in the scene from 3D points"):
        scene.add("box", points=np.zeros((4, 3)) + [0, 2, 0])
        scene.add_bearing("box", (100, 75), distance=2.0, image_size=(200, 150))


def test_bev_draws_uncertainty_ellipses_for_bearing_located_objects():
    from spatialclaw.primitives.display.color import find_color

    scene = bearing_scene(distance_sigma_fraction=0.15, pixel_sigma_px=2.0)
    image = scene.bev(size_px=600)
    blue = find_color(image, (31, 119, 180), min_area=30, hue_tolerance=8)  # tab10 blue: the sofa
    assert blue and blue[0].weighted_area > 200  # an ellipse, not a dot


def test_bev_draws_an_object_named_by_a_colour_in_that_colour():
    """Markers named "red"/"blue" (a common case: coloured dots) are drawn in their own colours, not in
    the figure cycle (where "blue" came out orange and "red" blue)."""
    from spatialclaw.primitives.display.color import find_color

    scene = Scene()
    scene.add_bearing("red", (40, 75), distance=3.0, image_size=(200, 150))
    scene.add_bearing("blue", (160, 75), distance=3.0, image_size=(200, 150))
    image = scene.bev(size_px=600)
    reds, blues = find_color(image, "red", min_area=20), find_color(image, "blue", min_area=20)
    assert reds and blues
    assert reds[0].centroid[0] < blues[0].centroid[0]  # red is on the left of the camera, blue on the right


def test_redwood_layout_from_bearings_and_measured_depth_agrees_with_3d(test_data):
    root = test_data / "rgbd-redwood"
    Kr = np.array(json.loads((root / "intrinsics.json").read_text())["intrinsic_matrix"]).reshape(3, 3).T
    rows = [line.split() for line in (root / "trajectory.log").read_text().splitlines() if line.strip()]
    poses = np.array([[[float(v) for v in r] for r in rows[i + 1 : i + 5]] for i in range(0, len(rows), 5)])
    depths = [np.asarray(Image.open(p), dtype=np.float64) / 1000.0 for p in sorted((root / "depth").glob("*.png"))]
    T = geom.gravity_alignment(depths, poses, Kr)
    poses = np.array([T @ p for p in poses])
    pixels = {"a": (100, 120), "b": (540, 140), "c": (330, 420), "d": (560, 400)}
    truth, scene = {}, Scene()
    scene.set_cameras(poses)
    for name, (x, y) in pixels.items():
        z = depths[0][y, x]
        assert z > 0
        point = geom.transform(np.linalg.solve(Kr, [x, y, 1.0]) * z, poses[0])
        truth[name] = point
        ray_distance = float(np.linalg.norm(point - poses[0][:3, 3]))
        scene.add_bearing(name, (x, y), distance=ray_distance * 1.03, distance_sigma=0.05 * ray_distance, frame=0, K=Kr)
        u, v = np.round(pixel_of(point, poses[4], Kr)).astype(int)  # the same point seen from frame 4,
        measured = depths[4][v, u] * np.linalg.norm(np.linalg.solve(Kr, [u, v, 1.0]))  # with frame 4's own depth
        scene.add_bearing(
            name, (u, v), distance=measured, distance_sigma=0.03 * measured, frame=4, K=Kr, pixel_sigma_px=1.0
        )
    for target, standing, facing in (("c", "a", "b"), ("d", "b", "c"), ("a", "c", "d")):
        answer = scene.perspective(target, standing_at=standing, facing=facing)
        expected = true_angle(truth[target], truth[standing], truth[facing])
        print(
            f"\nRedwood, standing at {standing} facing {facing}, {target}: {answer.angle_deg:+.1f} ± "
            f"{answer.angle_sigma_deg:.1f} deg from bearings vs {expected:+.1f} deg from depth (3D)"
        )
        assert abs(answer.angle_deg - expected) < 3 * answer.angle_sigma_deg + 1.0, answer.text
        assert abs(answer.angle_deg - expected) < 8.0
        assert answer.side == ("right" if expected > 0 else "left")


def test_bearings_and_perspective_in_a_real_kernel(test_data):
    from spatialclaw import Kernel

    with Kernel(frames=[str(test_data / "rgbd-redwood" / "color" / "00000.jpg")]) as kernel:
        result = kernel.execute(
            "for name, px, d in (('door', (600, 200), 3.0), ('chair', (450, 330), 1.5), ('shelf', (80, 150), 2.5)):\n"
            "    scene.add_bearing(name, px, distance=d, frame=frames[0], hfov_deg=60)\n"
            "p = scene.perspective('shelf', standing_at='chair', facing='door')\n"
            "print(p.side, p.clock, isinstance(p, Perspective))\n"
            "show(scene.bev())"
        )
        assert result.error is None, result.to_text(2000)
        side, clock, typed = result.stdout.split()
        assert side == "left" and 7 <= int(clock) <= 11 and typed == "True"
        assert len(result.images) == 1


def test_relations_between_bearing_located_objects_state_their_uncertainty():
    scene = bearing_scene(distance_sigma_fraction=0.1, pixel_sigma_px=2.0)
    relation = scene.relation("lamp", "sofa", observer=0)
    axes = geom.observer_axes(CAMERA)
    expected = axes @ (np.array(LAYOUT["lamp"]) - LAYOUT["sofa"])
    np.testing.assert_allclose(
        [relation.direction.right_m, relation.direction.forward_m, relation.direction.up_m], expected, atol=1e-6
    )
    covariance = scene["lamp"].covariance + scene["sofa"].covariance
    np.testing.assert_allclose(relation.offset_sigma_m, np.sqrt(np.diag(axes @ covariance @ axes.T)), rtol=1e-9)
    assert relation.offset_sigma_m[1] > 0.2 and "1 sigma: ±" in relation.text
    exact = Scene()
    exact.add_camera(0, CAMERA)
    for name in ("lamp", "sofa"):
        exact.add(name, points=Box(LAYOUT[name], (0.4, 0.4, 0.4)).surface_points())
    assert exact.relation("lamp", "sofa", observer=0).offset_sigma_m == (0.0, 0.0, 0.0)
    assert "sigma" not in exact.relation("lamp", "sofa", observer=0).text
