"""The camera tilt's ambiguity carried into floor points and perspective answers (issue 21's ``perspective``
class): a rival pitch the image also fits is kept as a weighted candidate instead of one wide spread, is
ruled out where it would put a floor dot in the sky, and the readouts say whether the answer holds at every
plausible pitch or depends on it; a distance whose sigma exceeds it reads as unknown and prints no P."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
from PIL import Image, ImageDraw

from spatialclaw.primitives.display.color import find_color
from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.scene.memory import Scene

K640 = np.array([[525.0, 0.0, 319.5], [0.0, 525.0, 239.5], [0.0, 0.0, 1.0]])
COLOURS = {"red": (230, 30, 30), "blue": (40, 90, 255), "green": (30, 200, 60)}
QUADRANTS = ["front-left", "front-right", "back-left", "back-right"]


def quadrant_of(p) -> str:
    """The dev set's four-way answer of a ``Perspective``."""
    return ("front-" if abs(p.angle_deg) < 90 else "back-") + ("right" if p.angle_deg > 0 else "left")


def chain(image, tilt=None):
    """The model's chain from issue 21: dots by colour, each located on the floor, then the question."""
    scene = Scene()
    for colour in COLOURS:
        dot = find_color(image, colour, shape="dot")[0]
        scene.add_bearing(colour, dot, frame=image, on_floor=True, tilt=tilt)
    return scene, scene.perspective("green", standing_at="red", facing="blue")


# ---- exact geometry: the candidates are weighed, not smeared ---------------------------------------------
def test_a_pixel_in_the_sky_at_the_estimate_is_placed_at_the_rival_pitch():
    """A tilt whose edges also fit 15 degrees down: row 150 of a 640x480 view is above the horizon of the
    estimate (1 degree down, horizon at row 230) but on the floor at the rival, so it is placed there."""
    tilt = geom.CameraTilt(-1.0, 0.0, 12.0, 12, caveat="the edges also fit pitch -15.0 deg", rival_pitch_deg=-15.0)
    p = geom.floor_point((319.5, 150.0), K=K640, camera_height_m=1.5, tilt=tilt)
    exact = geom.floor_point((319.5, 150.0), K=K640, camera_height_m=1.5, pitch_deg=-15.0, roll_deg=0.0)
    np.testing.assert_allclose(p.point, exact.point, atol=1e-9)
    assert p.pitch_deg == pytest.approx(-15.0) and "placed at the rival pitch -15.0 deg" in p.assumed
    estimate, rival = p.pitch_readings
    assert (estimate.pitch_deg, rival.pitch_deg) == (-1.0, -15.0)
    assert np.isnan(estimate.distance_m) and "above the horizon: ruled out" in p.text
    assert rival.weight > 0.9 and rival.distance_m == pytest.approx(exact.distance_m)
    with pytest.raises(ValueError, match="above the horizon"):  # without the rival it is in the sky
        geom.floor_point((319.5, 150.0), K=K640, camera_height_m=1.5, pitch_deg=-1.0, roll_deg=0.0)


def test_both_candidates_keep_their_own_spread_and_a_far_pixel_reads_as_distance_unknown():
    tilt = geom.CameraTilt(-20.0, 0.0, 12.5, 12, rival_pitch_deg=-5.0, rival_support=0.5)
    p = geom.floor_point((319.5, 300.0), K=K640, camera_height_m=1.5, tilt=tilt)
    estimate, rival = p.pitch_readings
    for reading, pitch in ((estimate, -20.0), (rival, -5.0)):
        exact = geom.floor_point((319.5, 300.0), K=K640, camera_height_m=1.5, pitch_deg=pitch, roll_deg=0.0)
        assert reading.distance_m == pytest.approx(exact.distance_m)
    assert estimate.weight == pytest.approx(2.0 / 3.0, abs=0.05)  # weighted 1 : rival_support
    assert p.camera.pitch_sigma_deg == pytest.approx(5.0)  # one reading's spread, not the widened 12.5
    assert "the camera tilt is ambiguous: at pitch -20.0 deg (the estimate)" in p.text
    assert p.distance_known and "distance unknown" not in p.text
    far = geom.floor_point((319.5, 230.0), K=K640, camera_height_m=1.5, tilt=tilt)  # 4 deg below the rival's horizon
    assert far.distance_sigma_m > far.distance_m and not far.distance_known
    assert "distance unknown (its sigma exceeds it)" in far.text


# ---- the dev set's perspective items ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory, test_data):
    from spatialclaw.benchmarks.devset import build

    os.environ.setdefault("SPATIALCLAW_TEST_DATA", str(test_data))
    path = build.generate(tmp_path_factory.mktemp("perspective"), classes=("perspective",))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["task_id"]: (r, Image.open(path.parent / r["images"][0]).convert("RGB")) for r in records}


def test_the_dev_sets_answers_stay_right_and_say_how_the_tilt_bears_on_them(items):
    rivals = 0
    for task_id, (record, image) in items.items():
        _, p = chain(image)
        assert quadrant_of(p) == QUADRANTS[ord(record["answer"]) - ord("A")], (task_id, p.text)
        assert "AMBIGUOUS" not in p.text, (task_id, p.text)
        if geom.camera_tilt(image).rival_pitch_deg is not None:  # the redwood photo's edges also fit +11
            rivals += 1
            assert f"{p.side} and {p.depth} at every plausible camera pitch" in p.tilt_note, (task_id, p.text)
            assert "a floor point would be in the sky" in p.tilt_note  # the rival +11 deg is ruled out
    assert rivals >= 2


def test_the_61_metre_item_reads_as_unknown_and_prints_no_confident_probability(items):
    """perspective-4: the readout said "6.3 m ± 61.3 m away on the ground" and "P(front-left) = 0.67"."""
    record, image = items["perspective-4"]
    assert geom.camera_tilt(image).rival_pitch_deg == pytest.approx(11.0, abs=1.0)
    scene, p = chain(image)
    assert p.distance_sigma_m > p.distance_m and p.distance_note
    assert "distance unknown (" in p.text and "the floor distances of" in p.text
    assert "P(" not in p.text.replace(p.tilt_note, "")  # no P resting on those distances; only over the tilt
    assert "left and in front at every plausible camera pitch" in p.text  # the answer needs no distance
    assert QUADRANTS[ord(record["answer"]) - ord("A")] == "front-left"
    red = scene["red"].bearings[0].floor
    assert not red.distance_known and "distance unknown" in red.text
    assert "at pitch +11.0 deg (the rival) above the horizon: ruled out" in red.text


# ---- a view whose rival pitch flips the answer ---------------------------------------------------------------
MARKS_640 = {"red": (286, 404), "blue": (568, 447), "green": (396, 372)}  # floor pixels of the redwood photo


@pytest.fixture(scope="module")
def flipped(test_data):
    """The redwood photo at 224 px with three dots on its floor whose four-way answer is front-left at the
    tilt's estimate (-1 deg) and back-left at the rival pitch its edges also fit (+11 deg); the truth from the
    measured depth's floor."""
    from spatialclaw.benchmarks.devset.data import rgbd, small_frame

    rgb, depth, K = rgbd(test_data, "redwood")
    image = small_frame(rgb)
    scale = image.width / rgb.shape[1]
    draw = ImageDraw.Draw(image)
    for colour, (u, v) in MARKS_640.items():
        x, y = u * scale, v * scale
        draw.ellipse((x - 6, y - 6, x + 6, y + 6), fill=(255, 255, 255))
        draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=COLOURS[colour])
    v, u = np.mgrid[0 : depth.shape[0], 0 : depth.shape[1]]
    cloud = np.stack([(u - K[0, 2]) * depth / K[0, 0], (v - K[1, 2]) * depth / K[1, 1], depth], -1)
    up = geom.find_floor(cloud[depth > 0], np.eye(4)[None]).normal
    a, b, c = (cloud[y, x] - (cloud[y, x] @ up) * up for x, y in MARKS_640.values())
    cross, dot = float(np.cross(b - a, c - a) @ up), float((b - a) @ (c - a))
    truth = ("front-" if dot > 0 else "back-") + ("left" if cross > 0 else "right")
    return image, truth


def test_a_rival_pitch_that_flips_the_answer_is_stated_with_each_answers_share(flipped):
    image, truth = flipped
    tilt = geom.camera_tilt(image)
    assert tilt.rival_pitch_deg == pytest.approx(11.0, abs=1.0) and "AMBIGUOUS" in tilt.text
    scene, p = chain(image, tilt=tilt)
    assert truth == "front-left" and quadrant_of(p) == truth  # the estimate's answer is the right one
    note = p.tilt_note
    assert note.startswith("AMBIGUOUS: the answer depends on the camera tilt: left and in front at -1.0 deg")
    assert "left and behind at +11.0 deg" in note and note in p.text
    shares = {word: float(share) for word, share in re.findall(r"P\(([a-z ]+)\) = ([0-9]\.[0-9]+)", note)}
    assert shares["left and in front"] > shares["left and behind"] >= 0.05
    assert shares["left and in front"] + shares["left and behind"] == pytest.approx(1.0, abs=0.02)
    # the same dots read as compass directions (north = from red toward blue) and as relations
    scene.set_north(facing="blue", standing_at="red", direction="north")
    compass = scene.compass("green", "red")
    assert "AMBIGUOUS: the answer depends on the camera tilt" in compass.text
    relation = scene.relation("blue", "green").text  # seen from the camera: blue right of green, or left of it
    assert "AMBIGUOUS: the answer depends on the camera tilt: right of and in front of at -1.0 deg" in relation
    assert "left of and in front of at +11.0 deg" in relation and "Distance unknown (" in relation
