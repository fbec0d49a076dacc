"""geom.camera_tilt(frame, known=...) fixes the camera's pitch from an object of known real height standing on
the floor: on a rendered room whose camera pitch and height are exact, on a real RGB-D photo whose pitch and
camera height come from its depth's floor plane, and it says when the known size cannot decide."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from spatialclaw.benchmarks.devset.render import View, project
from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.tilt import tilted_camera_pose
from tests.paths import DATA_ROOT
from tests.primitives.geometry.tiled_room import front_edge, view

K640 = np.array([[525.0, 0.0, 319.5], [0.0, 525.0, 239.5], [0.0, 0.0, 1.0]])


@pytest.fixture(scope="module")
def room_view() -> View:
    return view(heading_deg=20.0, pitch_deg=-22.0, position=(-0.3, -1.5, 1.35))


def test_one_known_object_in_a_rendered_room_gives_the_pitch_within_its_sigma(room_view: View) -> None:
    top, bottom, height = front_edge(room_view, "oven")
    tilt = geom.camera_tilt(Image.fromarray(room_view.rgb), K=room_view.K, known=((top, bottom), height))
    assert "1 object of known height" in tilt.source
    assert abs(tilt.pitch_deg - (-22.0)) <= 2 * tilt.pitch_sigma_deg, tilt.text
    assert tilt.pitch_sigma_deg < 6.0
    assert abs(tilt.camera_height_m - 1.35) <= 2 * tilt.camera_height_sigma_m, tilt.text


def test_two_known_objects_solve_the_camera_height_and_floor_point_uses_it(room_view: View) -> None:
    known = [(front_edge(room_view, name)[:2], front_edge(room_view, name)[2]) for name in ("oven", "desk")]
    blank = Image.new("RGB", (320, 240), (128, 128, 128))  # no edges: the heights alone decide
    tilt = geom.camera_tilt(blank, K=room_view.K, known=known)
    assert tilt.camera_height_how == "solved" and "2 objects" in tilt.source
    assert abs(tilt.pitch_deg - (-22.0)) <= 2 * tilt.pitch_sigma_deg, tilt.text
    assert abs(tilt.camera_height_m - 1.35) <= 2 * tilt.camera_height_sigma_m, tilt.text
    assert tilt.camera_height_sigma_m < 0.15
    floor_xy = np.array([[0.5, 1.0, 0.0]])  # a floor point whose true distance is exact
    pixel, _ = project(room_view.K, room_view.pose, floor_xy)
    point = geom.floor_point(pixel[0], blank, K=room_view.K, tilt=tilt)
    truth = float(np.linalg.norm(floor_xy[0] - room_view.pose[:3, 3]))
    assert "from the tilt" in point.assumed
    assert abs(point.distance_m - truth) <= 2 * point.distance_sigma_m, point.text


def test_without_edges_the_steep_second_root_is_named_not_hidden() -> None:
    K = np.array([[194.0, 0.0, 111.5], [0.0, 194.0, 83.5], [0.0, 0.0, 1.0]])
    pose = tilted_camera_pose(-15.0)
    pose[2, 3] = 1.5
    pixels = [K @ (pose[:3, :3].T @ (np.array([0.4, 3.0, z]) - pose[:3, 3])) for z in (0.76, 0.0)]
    top, bottom = (tuple(p[:2] / p[2]) for p in pixels)
    tilt = geom.camera_tilt(Image.new("RGB", (224, 168), (120, 120, 120)), K=K, known=((top, bottom), 0.76))
    assert abs(tilt.pitch_deg + 15.0) < 0.5  # the camera's true height was the assumed one
    assert tilt.rival_pitch_deg is not None and tilt.rival_pitch_deg < -50.0
    assert "AMBIGUOUS" in tilt.text and "nothing in the image decides" in tilt.text


def test_an_object_at_the_horizon_that_cannot_pin_the_pitch_says_so() -> None:
    K = np.array([[194.0, 0.0, 111.5], [0.0, 194.0, 83.5], [0.0, 0.0, 1.0]])
    pose = tilted_camera_pose(-3.0)
    pose[2, 3] = 1.5
    # a 0.15 m box 25 m away: 1 px tall, its floor contact on the horizon's row
    pixels = [K @ (pose[:3, :3].T @ (np.array([0.0, 25.0, z]) - pose[:3, 3])) for z in (0.15, 0.0)]
    top, bottom = (tuple(p[:2] / p[2]) for p in pixels)
    tilt = geom.camera_tilt(Image.new("RGB", (224, 168), (120, 120, 120)), K=K, known=((top, bottom), 0.15))
    assert tilt.pitch_sigma_deg >= 10.0 and "barely pins the pitch" in tilt.caveat, tilt.text


def test_bad_known_inputs_are_refused_with_what_to_pass() -> None:
    frame = Image.new("RGB", (224, 168), (120, 120, 120))
    with pytest.raises(ValueError, match="below the top"):
        geom.camera_tilt(frame, known=(((100, 120), (100, 60)), 0.76))
    with pytest.raises(ValueError, match="height must be > 0"):
        geom.camera_tilt(frame, known=((90, 40, 120, 130), 0.0))
    with pytest.raises(ValueError, match="known= takes"):
        geom.camera_tilt(frame, known=0.76)


@pytest.mark.skipif(not (DATA_ROOT / "rgbd-single").is_dir(), reason=f"real data not found at {DATA_ROOT}")
def test_a_real_cabinet_of_known_height_gives_the_pitch_and_camera_height_of_the_depth() -> None:
    """SUN RGB-D's office corridor: the filing cabinet's front face at column 430 runs from row 89.5 (its top)
    to row 415.5 (its floor contact); its height, the camera's height and pitch come from the depth."""
    raw = np.asarray(Image.open(DATA_ROOT / "rgbd-single/SUN_depth.png")).astype(np.uint32)
    depth = (((raw >> 3) | (raw << 13)) & 0xFFFF) / 1000.0
    v, u = np.mgrid[0:480, 0:640]
    points = np.stack([(u - 319.5) * depth / 525, (v - 239.5) * depth / 525, depth], -1)
    floor = geom.find_floor(points[(depth > 0) & (depth < 8.0)], np.eye(4)[None])
    assert floor is not None
    true_pitch = float(np.degrees(np.arcsin(floor.normal[2])))  # -3.5
    true_height = float(floor.offset)  # 1.13 m
    cabinet = float(np.median(points[90:92, 425:436].reshape(-1, 3) @ floor.normal + floor.offset))  # 1.72 m
    rgb = Image.open(DATA_ROOT / "rgbd-single/SUN_color.jpg").convert("RGB")
    tilt = geom.camera_tilt(rgb, K=K640, known=(((430.0, 89.5), (430.0, 415.5)), round(cabinet, 2)))
    assert abs(tilt.pitch_deg - true_pitch) <= 2 * tilt.pitch_sigma_deg, tilt.text
    assert abs(tilt.camera_height_m - true_height) <= 2 * tilt.camera_height_sigma_m, tilt.text
    assert tilt.pitch_sigma_deg < 5.0 and "averaged in" in tilt.note  # the edges agreed and sharpened it
    small = rgb.resize((224, 168))  # a benchmark's small frame, no intrinsics: the field of view is drawn too
    s = 224 / 640
    loose = geom.camera_tilt(small, known=(((430 * s, 89.5 * s), (430 * s, 415.5 * s)), round(cabinet, 2)))
    assert abs(loose.pitch_deg - true_pitch) <= 2 * loose.pitch_sigma_deg, loose.text


def test_a_known_height_decides_between_the_two_pitches_the_edges_offer(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the edges support two pitches (a rival), the object's height picks the one that fits and says so."""
    from spatialclaw.primitives.geometry import tilt as tilt_module

    K = np.array([[194.0, 0.0, 111.5], [0.0, 194.0, 83.5], [0.0, 0.0, 1.0]])
    pose = tilted_camera_pose(-28.0)
    pose[2, 3] = 1.5
    pixels = [K @ (pose[:3, :3].T @ (np.array([-0.3, 2.5, z]) - pose[:3, 3])) for z in (0.74, 0.0)]
    top, bottom = (tuple(p[:2] / p[2]) for p in pixels)
    real_tilt = tilt_module.camera_tilt

    def two_pitches(frame: object, **kwargs: object) -> object:
        if kwargs.get("known") is not None:
            return real_tilt(frame, **kwargs)
        return tilt_module.CameraTilt(
            -12.0, 0.0, 13.0, 20, caveat="the edges also fit pitch -28.0 deg", rival_pitch_deg=-28.0
        )

    monkeypatch.setattr(tilt_module, "camera_tilt", two_pitches)
    tilt = real_tilt(Image.new("RGB", (224, 168)), K=K, known=((top, bottom), 0.74))
    assert abs(tilt.pitch_deg + 28.0) <= 2 * tilt.pitch_sigma_deg and abs(tilt.pitch_deg + 12.0) > 8.0, tilt.text
    assert "sides with the edges' pitch -28.0 over -12.0" in tilt.note
