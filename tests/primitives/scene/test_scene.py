"""scene: named instances, relations with exact numbers and wording, describe(), bird's-eye view.

The scene is a table and a chair (axis-aligned boxes on a 5 cm lattice, so centroids are the box centres
and facing surfaces share sample positions) and cameras placed around them; depth is rendered analytically.
"""

from __future__ import annotations

import numpy as np
import pytest

from spatialclaw.primitives.display.color import find_color
from spatialclaw.primitives.scene.memory import Scene
from tests.geom_synthetic import Box, intrinsics, look_at, render_depth

TABLE = Box((0.0, 3.0, 0.4), (1.2, 0.8, 0.8))
CHAIR = Box((-1.3, 3.4, 0.5), (0.5, 0.5, 1.0))
CAMERAS = {
    0: look_at((0.0, 0.0, 1.5), (0.0, 3.0, 0.4)),  # in front, looking +Y and down
    7: look_at((0.0, 6.0, 1.5), (0.0, 3.0, 0.4), roll_deg=10),  # opposite side, rolled
    9: look_at((-4.0, 3.0, 1.5), (0.0, 3.0, 1.5)),  # from the left, looking +X
}


@pytest.fixture
def scene() -> Scene:
    s = Scene()
    s.set_cameras(np.array(list(CAMERAS.values())), frame_indices=list(CAMERAS))
    s.add("table", points=TABLE.surface_points(), frames=[0, 7])
    s.add("chair", points=CHAIR.surface_points(), frames=[0])
    return s


def test_relation_numbers_are_exact(scene):
    r = scene.relation("chair", "table", observer=0)
    assert (r.direction.right_m, r.direction.forward_m, r.direction.up_m) == pytest.approx((-1.3, 0.4, 0.1), abs=1e-9)
    assert r.centre_distance_m == pytest.approx(np.sqrt(1.3**2 + 0.4**2 + 0.1**2), abs=1e-9)
    assert r.horizontal_distance_m == pytest.approx(np.hypot(1.3, 0.4), abs=1e-9)
    assert r.closest_distance_m == pytest.approx(0.45, abs=1e-9)  # chair's face x=-1.05, table's x=-0.6
    assert r.closest_points[0][0] == pytest.approx(-1.05) and r.closest_points[1][0] == pytest.approx(-0.6)


def test_relation_wording_from_each_camera(scene):
    assert scene.relation("chair", "table", observer=0).text == (
        "the chair is 1.3 m left of, 0.40 m behind and 0.10 m above the table, seen from camera 0. "
        "Centres 1.4 m apart (1.4 m on the ground); closest points 0.45 m apart."
    )
    assert str(scene.relation("chair", "table", observer=7)).startswith(
        "the chair is 1.3 m right of, 0.40 m in front of and 0.10 m above the table, seen from camera 7."
    )
    assert str(scene.relation("table", "chair", observer=9)).startswith(
        "the table is 0.40 m right of, 1.3 m behind and 0.10 m below the chair, seen from camera 9."
    )
    default = scene.relation("chair", "table")
    assert default.observer == "camera 0"
    assert "seen from the given viewpoint" in str(scene.relation("chair", "table", observer=CAMERAS[9]))


def test_same_height_is_stated_not_hidden():
    s = Scene()
    s.add_camera(0, CAMERAS[0])
    s.add("lamp", points=Box((1.0, 3.0, 0.4), (0.2, 0.2, 0.8)).surface_points())
    s.add("sofa", points=Box((-1.0, 3.0, 0.4), (1.0, 0.2, 0.8)).surface_points())
    assert str(s.relation("lamp", "sofa", observer=0)) == (
        "the lamp is 2.0 m right of the sofa (same front-back position and height within 0.05 m), seen from camera 0. "
        "Centres 2.0 m apart (2.0 m on the ground); closest points 1.4 m apart."
    )


def test_without_cameras_directions_use_the_world_axes():
    s = Scene()
    s.add("a", points=[[1.0, 0.0, 0.0]])
    s.add("b", points=[[0.0, 0.0, 0.0]])
    assert str(s.relation("a", "b")).startswith(
        "the a is 1.0 m right of the b (same front-back position and height within 0.05 m), seen from the world origin facing +Y."
    )


def test_describe_lists_sizes_and_every_pair(scene):
    scene.add("lamp", points=Box((1.5, 2.0, 0.9), (0.3, 0.3, 1.8)).surface_points(), frames=[9])
    text = scene.describe()
    lines = text.splitlines()
    assert lines[0] == (
        "Scene: 3 instances, 3 cameras (frames [0, 7, 9]). World frame: metres, +Z up. "
        "Directions seen from camera 0 (its forward projected onto the ground), between upright box centres."
    )
    assert lines[1].startswith(
        "- table: 1.2 m long x 0.80 m wide x 0.80 m tall, centre (0.00, 3.00, 0.40) m, "
        "from z=0.00 to 0.80 m, seen in frames [0, 7]"
    )
    assert lines[2].startswith("- chair: 0.50 m long x 0.50 m wide x 1.0 m tall, centre (-1.30, 3.40, 0.50) m")
    assert lines[4] == "Relations:"
    assert lines[5] == "- " + str(scene.relation("table", "chair"))
    assert len(lines) == 8 and lines[7].startswith("- the chair is")
    assert repr(text) == str(text)


def test_instances_from_masks_and_rendered_depth():
    K = intrinsics()
    s = Scene()
    s.set_cameras(np.array([CAMERAS[0]]))
    depth, ids = render_depth(K, CAMERAS[0], 320, 240, [TABLE, CHAIR])
    s.add_from_mask("table", ids == 0, depth, K, frame=0, erode_px=0, reject_outliers=False)
    s.add_from_mask("chair", ids == 1, depth, K, frame=0, erode_px=0, reject_outliers=False)
    table, chair = s["table"], s["chair"]
    assert table.frames == (0,)
    assert np.max(TABLE.distance_to_surface(table.points)) < 1e-9  # every point lies on the true surface
    assert np.max(CHAIR.distance_to_surface(chair.points)) < 1e-9
    # The camera (1.5 m high, in front) sees the table's top and front: its top height is exact, its footprint
    # exact up to one pixel's footprint on the surface: 3.5 m / 260 px = 1.3 cm across, and 1.3 cm / sin(11.6 deg)
    # = 6.7 cm along the top seen at a grazing 11.6 degrees at its far edge.
    assert table.extent[1, 2] == pytest.approx(0.8, abs=1e-9)
    np.testing.assert_allclose(table.extent[:, 0], [-0.6, 0.6], atol=0.013)
    assert table.extent[0, 1] == pytest.approx(2.6, abs=1e-9)
    assert 3.4 - 0.067 <= table.extent[1, 1] <= 3.4
    r = s.relation("chair", "table", observer=0)
    assert r.direction.right_m == pytest.approx(-1.3, abs=0.05)
    assert r.closest_distance_m == pytest.approx(0.45, abs=0.02)
    assert r.direction.words.startswith("1.3 m left of")


def test_box_centres_from_several_views_are_unbiased_where_centroids_are_not():
    K = intrinsics()
    cameras = {**CAMERAS, 4: look_at((4.0, 3.2, 1.5), (0.0, 3.2, 0.5))}
    s = Scene()
    for key, pose in cameras.items():
        depth, ids = render_depth(K, pose, 320, 240, [TABLE, CHAIR])
        s.add_from_mask("table", ids == 0, depth, K, pose, frame=key, merge=True)
        s.add_from_mask("chair", ids == 1, depth, K, pose, frame=key, merge=True)
    assert s["chair"].frames == (0, 4, 7, 9)
    # Tops are seen head-on by every camera, so they hold most points and pull the centroids up.
    np.testing.assert_allclose(s["table"].center[:2], TABLE.center[:2], atol=0.005)
    np.testing.assert_allclose(s["chair"].center[:2], CHAIR.center[:2], atol=0.005)
    np.testing.assert_allclose(s["table"].size, TABLE.size, atol=0.04)  # 2 px of mask erosion at the floor
    by_box = s.relation("chair", "table", observer=0)
    by_centroid = s.relation("chair", "table", observer=0, position="centroid")
    assert (by_box.direction.right_m, by_box.direction.forward_m) == pytest.approx((-1.3, 0.4), abs=0.005)
    assert abs(by_centroid.direction.up_m - 0.1) > abs(by_box.direction.up_m - 0.1)
    assert str(by_box).startswith("the chair is 1.3 m left of, 0.40 m behind and 0.10 m above the table")
    assert "Centroids" in str(by_centroid)


def test_mask_edges_and_background_leaks_are_rejected_by_default():
    K = intrinsics()
    depth, ids = render_depth(K, CAMERAS[0], 320, 240, [TABLE, CHAIR])
    mask = ids == 0
    ys, xs = np.nonzero(mask)
    leaked = depth.copy()
    leaked[ys[::50], xs[::50]] = 9.0  # background seen through the mask
    s = Scene()
    s.add_from_mask("raw", mask, leaked, K, CAMERAS[0], erode_px=0, reject_outliers=False)
    s.add_from_mask("clean", mask, leaked, K, CAMERAS[0])
    assert np.max(TABLE.distance_to_surface(s["raw"].points)) > 4.0
    assert np.max(TABLE.distance_to_surface(s["clean"].points)) < 1e-9


def test_add_replaces_or_merges_and_errors_name_the_fix(scene):
    scene.add("chair", points=CHAIR.surface_points() + [0, 0, 1], frames=[7])
    assert scene["chair"].centroid[2] == pytest.approx(1.5) and scene["chair"].frames == (7,)
    scene.add("chair", points=CHAIR.surface_points(), frames=[0], merge=True)
    assert scene["chair"].frames == (0, 7) and scene["chair"].centroid[2] == pytest.approx(1.0)
    with pytest.raises(KeyError, match="known: \\['chair', 'table'\\]"):
        scene.relation("sofa", "table")
    with pytest.raises(ValueError, match="registered frames: \\[0, 7, 9\\]"):
        scene.relation("chair", "table", observer=3)
    with pytest.raises(ValueError, match="empty"):
        scene.add("ghost", points=np.zeros((0, 3)))
    with pytest.raises(ValueError, match="needs a camera pose"):
        scene.add_from_mask("x", np.ones((4, 4), bool), np.ones((4, 4)), np.eye(3), frame=5)
    with pytest.raises(ValueError, match="no pixel with valid depth"):
        scene.add_from_mask("x", np.ones((4, 4), bool), np.zeros((4, 4)), intrinsics(4, 4), CAMERAS[0])
    scene.remove("chair")
    assert scene.names == ["table"]


def test_bev_draws_instances_where_they_are():
    s = Scene()
    s.set_cameras(np.array([CAMERAS[0]]))
    s.add("west", points=Box((-2.0, 3.0, 0.5), (0.6, 0.6, 1.0)).surface_points())  # tab10 blue
    s.add("east", points=Box((2.0, 3.0, 0.5), (0.6, 0.6, 1.0)).surface_points())  # tab10 orange
    image = s.bev(size_px=600)
    assert image.size == (600, 600)
    blue = find_color(image, (31, 119, 180), min_area=30)
    orange = find_color(image, (255, 127, 14), min_area=30)
    assert blue and orange
    assert blue[0].centroid[0] < 300 < orange[0].centroid[0]  # +X to the right of the page
    assert abs(blue[0].centroid[1] - orange[0].centroid[1]) < 10  # same Y -> same height on the page
    with pytest.raises(ValueError, match="nothing to draw"):
        Scene().bev()


def test_the_kernel_scene_persists_across_cells_and_renders():
    import textwrap

    from spatialclaw import Kernel

    with Kernel() as kernel:
        first = kernel.execute(
            textwrap.dedent("""
            cube = lambda c, s: np.array(c) + (np.indices((3, 3, 3)).reshape(3, -1).T / 2 - 0.5) * s
            scene.add("table", points=cube((0.0, 3.0, 0.4), 0.8), frames=[0])
            scene.add("chair", points=cube((-1.3, 3.4, 0.5), 0.5), frames=[0])
            scene.add_camera(0, np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, -1, 0, 1.5], [0, 0, 0, 1.0]]))
        """)
        )
        assert first.error is None, first.to_text(2000)
        second = kernel.execute("print(scene.relation('chair', 'table', observer=0))\nshow(scene.bev(size_px=400))")
        assert second.error is None, second.to_text(2000)
        assert second.stdout.startswith(
            "the chair is 1.3 m left of, 0.40 m behind and 0.10 m above the table, seen from camera 0."
        )
        assert len(second.images) == 1 and (second.images[0].width, second.images[0].height) == (400, 400)


class FakeReconstruction:
    """The attributes of ``reconstruct``'s result that the scene reads (that module is tested on its own)."""

    def __init__(self, poses, depths, K, frame_indices):
        self.poses = np.array(poses)
        self.depth = depths
        self.intrinsics = np.stack([K] * len(poses))
        self.frame_indices = np.array(frame_indices)


def test_instances_from_a_reconstruction_and_unposed_frames():
    K = intrinsics()
    pose = CAMERAS[0]
    depth, ids = render_depth(K, pose, 320, 240, [TABLE, CHAIR])
    rec = FakeReconstruction([pose, np.full((4, 4), np.nan)], [depth, None], K, [30, 60])
    s = Scene()
    s.set_cameras(rec)
    assert sorted(s.cameras) == [30] and s.unposed == [60]
    table = s.add_from_mask("table", ids == 0, rec, frame=30, erode_px=0, reject_outliers=False)
    assert table.frames == (30,) and np.max(TABLE.distance_to_surface(table.points)) < 1e-9
    assert "frames without a pose: [60]" in s.describe().splitlines()[0]
    with pytest.raises(ValueError, match="not registered"):
        s.add_from_mask("x", ids == 1, rec, frame=60)
    with pytest.raises(ValueError, match=r"not in the reconstruction; its frames are \[30, 60\]"):
        s.add_from_mask("x", ids == 1, rec, frame=5)
    sparse = FakeReconstruction([pose], [None], K, [7])
    with pytest.raises(ValueError, match="no depth map for frame 7"):
        s.add_from_mask("x", ids == 1, sparse, frame=7)
