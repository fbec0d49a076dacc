"""Planar metrology on exact perspective photos of a known sheet over a real texture (see planar_photos)."""

from __future__ import annotations

from itertools import combinations

import cv2
import numpy as np
import pytest

from spatialclaw.primitives.display.color import find_color
from spatialclaw.primitives.geometry import geom
from tests.planar_photos import DOTS, SHEET, render, table_canvas

COLOUR_NAMES = {"red": "red", "blue": "blue", "green": "green", "pale_yellow": "yellow", "pale_pink": "pink"}
DOT_DIAMETER = 0.022


@pytest.fixture(scope="module")
def canvas(test_data):
    return table_canvas(test_data / "rgbd-redwood" / "color" / "00000.jpg")


@pytest.fixture(scope="module", params=[1600, 200], ids=["full-1600px", "benchmark-200px"])
def photo(request, canvas, test_data):
    return render(test_data / "rgbd-redwood" / "color" / "00000.jpg", request.param, canvas=canvas)


def _corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    """Max corner distance, over the 8 ways to start/orient the corner order (the sheet is symmetric)."""
    return min(
        np.linalg.norm(np.roll(found, k, axis=0)[::step] - truth, axis=1).max() for k in range(4) for step in (1, -1)
    )


def _true_angle(a, vertex, b) -> float:
    u, v = np.subtract(a, vertex), np.subtract(b, vertex)
    return float(np.degrees(np.arccos(u @ v / np.linalg.norm(u) / np.linalg.norm(v))))


def test_the_sheet_is_found_to_sub_pixel_precision_despite_an_occluded_side(photo):
    plane = geom.find_plane_reference(photo.image, size=SHEET, color="white")
    scale = photo.image.shape[1] / 1600
    assert _corner_error(plane.quad, photo.sheet_corners_px()) < 1.5 * max(scale, 0.4)
    assert max(plane.edge_rms_px) < 1.0
    assert "0.297 x 0.21 m" in plane.text


def test_ratios_within_one_percent_and_angles_within_one_degree(photo):
    plane = geom.find_plane_reference(photo.image, size=SHEET, color="white")
    found = {}
    for name, colour in COLOUR_NAMES.items():
        blobs = find_color(photo.image, colour, expected_size=DOT_DIAMETER, rectified=plane, min_area=2)
        assert blobs, f"{name} dot not found"
        found[name] = blobs[0]
    names = list(DOTS)
    truth = {n: np.array(DOTS[n][0]) for n in names}
    long_pairs = [p for p in combinations(names, 2) if np.linalg.norm(truth[p[0]] - truth[p[1]]) >= 0.12]
    assert len(long_pairs) >= 5
    worst_ratio = worst_angle = 0.0
    for (a, b), (c, d) in combinations(long_pairs, 2):  # segments of 12 cm or more (40+ px at 200 px)
        ratio = plane.ratio((found[a], found[b]), (found[c], found[d]))
        expected = np.linalg.norm(truth[a] - truth[b]) / np.linalg.norm(truth[c] - truth[d])
        worst_ratio = max(worst_ratio, abs(ratio.value / expected - 1))
        assert abs(ratio.value - expected) < 4 * ratio.sigma + 0.002, ratio.text
    for a, vertex, b in combinations(names, 3):
        angle = plane.angle(found[a], found[vertex], found[b])
        expected = _true_angle(truth[a], truth[vertex], truth[b])
        worst_angle = max(worst_angle, abs(angle.value - expected))
        assert abs(angle.value - expected) < 4 * angle.sigma + 0.1, angle.text
    assert worst_ratio < 0.01
    assert worst_angle < 1.0
    length = plane.length(found["red"], found["blue"])
    assert length.value == pytest.approx(np.linalg.norm(truth["red"] - truth["blue"]), rel=0.01)
    assert length.unit == "m" and "±" in length.text


def test_an_expected_size_ranks_the_sticker_above_a_large_object_of_similar_hue(photo):
    plane = geom.find_plane_reference(photo.image, size=SHEET, color="white")
    by_area = find_color(photo.image, "yellow", min_area=2)
    assert by_area[0].area > 20 * by_area[1].area  # without a size: the yellow book comes first
    ranked = find_color(photo.image, "yellow", expected_size=DOT_DIAMETER, rectified=plane, min_area=2)
    assert np.linalg.norm(np.subtract(ranked[0].plane_xy, DOTS["pale_yellow"][0])) < 0.004
    book = next(b for b in ranked if b.area == by_area[0].area)
    assert ranked[0].match > 0.3 > book.match
    x, y = np.round(photo.tape_centre_px()).astype(int)  # the light-brown tape is not "yellow"
    assert not by_area.mask[y - 1 : y + 2, x - 1 : x + 2].any()


def test_pale_colours_are_found_with_default_thresholds():
    image = np.full((120, 160, 3), (238, 238, 232), np.uint8)
    cv2.circle(image, (40, 60), 12, (250, 195, 210), -1, lineType=cv2.LINE_AA)  # pale pink
    cv2.circle(image, (110, 60), 12, (245, 235, 150), -1, lineType=cv2.LINE_AA)  # pale yellow
    cv2.circle(image, (80, 20), 8, (200, 20, 40), -1, lineType=cv2.LINE_AA)  # saturated red
    pink, yellow, red = find_color(image, "pink"), find_color(image, "yellow"), find_color(image, "red")
    assert len(pink) == 1 and pink[0].centroid == pytest.approx((40, 60), abs=0.1)
    assert len(yellow) == 1 and yellow[0].centroid == pytest.approx((110, 60), abs=0.1)
    assert len(red) == 1 and red[0].centroid == pytest.approx((80, 20), abs=0.1)
    assert len(find_color(image, "blue")) == 0 and len(find_color(image, "green")) == 0


def test_centroids_are_sub_pixel():
    errors = []
    rng = np.random.default_rng(3)
    for _ in range(10):
        centre = rng.uniform(30, 50, 2)
        image = np.full((80, 80, 3), 235, np.uint8)
        shift = 8
        cv2.circle(
            image,
            tuple(int(v) for v in np.round(centre * 2**shift)),
            int(4.5 * 2**shift),
            (30, 60, 220),
            -1,
            lineType=cv2.LINE_AA,
            shift=shift,
        )
        blob = find_color(image, "blue", min_area=5)[0]
        errors.append(np.linalg.norm(np.subtract(blob.centroid, centre)))
    assert max(errors) < 0.08, errors


def test_a_hand_given_quad_has_measurements_with_a_sigma_from_its_corner_uncertainty():
    image = np.zeros((200, 300, 3), np.uint8)
    quad = np.array([[50.0, 40.0], [250.0, 50.0], [240.0, 170.0], [60.0, 160.0]])
    loose = geom.rectify_plane(image, quad, size=(2.0, 1.0), corner_sigma_px=2.0, unit="square")
    tight = geom.rectify_plane(image, quad, size=(2.0, 1.0), corner_sigma_px=0.2, unit="square")
    a, b = quad[0], quad[2]
    assert loose.length(a, b).value == pytest.approx(np.sqrt(5.0), rel=1e-9)
    assert loose.length(a, b).sigma > 3 * tight.length(a, b).sigma > 0
    assert loose.angle(quad[1], quad[0], quad[3]).value == pytest.approx(90.0, abs=1e-6)
    assert loose.area(quad).value == pytest.approx(2.0, rel=1e-9) and loose.area(quad).unit == "square^2"
    with pytest.raises(ValueError, match="pixels"):
        loose.length("a", b)


def test_no_reference_of_that_colour_says_what_to_pass():
    with pytest.raises(ValueError, match="quad="):
        geom.find_plane_reference(np.zeros((60, 80, 3), np.uint8), size=(1, 1), color="white")


def test_scale_from_known_size_gives_distance_and_the_uncertainty_of_the_assumed_size():
    from spatialclaw.primitives.scene.memory import Scene
    from tests.geom_synthetic import intrinsics

    K = intrinsics(200, 150, 160.0)
    door_px = 160.0 * 2.0 / 4.0  # a 2.0 m door 4.0 m away spans 80 px
    exact = geom.scale_from_known_size(door_px, 2.0, K=K, size_px_sigma=0.0)
    assert exact.distance_m == pytest.approx(4.0) and exact.metres_per_px == pytest.approx(0.025)
    assert exact.measure(40).value == pytest.approx(1.0) and exact.distance_sigma_m == 0
    ranged = geom.scale_from_known_size((10, 20, 40, 20 + door_px), (1.9, 2.1), K=K)
    assert ranged.distance_m == pytest.approx(4.0)
    expected_relative = np.hypot(0.2 / np.sqrt(12) / 2.0, 1.0 / door_px)
    assert ranged.relative_sigma == pytest.approx(expected_relative)
    assert ranged.distance_sigma_m == pytest.approx(4.0 * expected_relative)
    wide = geom.scale_from_known_size(
        door_px, (1.5, 2.5), hfov_deg=2 * np.degrees(np.arctan(100 / 160.0)), image_width=200
    )
    assert wide.distance_m == pytest.approx(4.0) and wide.distance_sigma_m > 4 * ranged.distance_sigma_m
    assert "m from the camera" in ranged.text
    scene = Scene()  # feeding the scene memory
    obj = scene.add_bearing(
        "door",
        (99.5, 74.5),
        distance=ranged.distance_m,
        distance_sigma=ranged.distance_sigma_m,
        image_size=(200, 150),
        K=K,
    )
    assert obj.center[1] == pytest.approx(4.0, abs=1e-6) and obj.sigma_m[1] == pytest.approx(
        ranged.distance_sigma_m, rel=0.02
    )
    same = scene.add_bearing("door_again", (99.5, 74.5), distance=ranged, image_size=(200, 150), K=K)
    np.testing.assert_allclose(same.covariance, obj.covariance)
    with pytest.raises(ValueError, match="image_width"):
        geom.scale_from_known_size(80, 2.0, hfov_deg=60)
    with pytest.raises(ValueError, match="no distance"):
        scene.add_bearing("door_3", (99.5, 74.5), distance=geom.scale_from_known_size(80, 2.0), image_size=(200, 150))


@pytest.mark.parametrize("width", [1600, 200])
def test_a_tape_border_cut_by_an_occluder_is_found_by_its_colour(test_data, width):
    from tests.planar_photos import BORDER, border_canvas

    texture = test_data / "rgbd-redwood" / "color" / "00000.jpg"
    photo = render(texture, width, canvas=border_canvas(texture))
    w, h = BORDER
    truth = cv2.perspectiveTransform(np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), photo.sheet_to_image)[0]
    plane = geom.find_plane_reference(photo.image, size=BORDER, color="blue")
    assert _corner_error(plane.quad, truth) < (1.5 if width == 1600 else 1.0)
    diagonal = plane.length(plane.quad[0], plane.quad[2])
    assert diagonal.value == pytest.approx(np.hypot(w, h), rel=1e-9)  # corners map to the true size
    assert 0 < diagonal.sigma < 0.01


def test_tape_whose_hue_touches_yellow_ranks_below_the_yellow_sticker_of_the_expected_size():
    image = np.full((160, 240, 3), (235, 235, 228), np.uint8)
    cv2.rectangle(image, (10, 110), (230, 130), (205, 175, 95), -1)  # light-brown tape, hue ~44 deg
    cv2.circle(image, (120, 50), 9, (240, 215, 40), -1, lineType=cv2.LINE_AA)  # the yellow sticker
    by_area = find_color(image, "yellow", hue_tolerance=20)  # wide band: the tape is in
    assert len(by_area) == 2 and by_area[0].box[1] >= 105  # largest first: the tape
    ranked = find_color(image, "yellow", hue_tolerance=20, expected_size=18)
    assert ranked[0].centroid == pytest.approx((120, 50), abs=0.15)
    assert ranked[0].match > 2 * ranked[1].match
