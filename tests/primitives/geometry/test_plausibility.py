"""Plausibility notes in readouts: floor points beyond a room or too near the horizon (with what 1 degree
of pitch does to them), object sizes far outside everyday ranges in the scene readout, boxes, known
scales and a planar reference's status."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from spatialclaw.primitives.geometry import geom
from spatialclaw.primitives.geometry.plausibility import size_note
from spatialclaw.primitives.scene.memory import Scene

K640 = np.array([[525.0, 0.0, 319.5], [0.0, 525.0, 239.5], [0.0, 0.0, 1.0]])


def test_a_floor_point_near_the_horizon_says_how_far_one_degree_of_pitch_moves_it():
    """A low camera (0.4 m, level): a pixel 4 deg below the horizon is 5.7 m away, inside a room, but
    1 deg of pitch moves it 1.9 m. Before: no note at all."""
    row = 239.5 + 525.0 * np.tan(np.radians(4.0))
    p = geom.floor_point((319.5, row), K=K640, camera_height_m=0.4, pitch_deg=0.0, roll_deg=0.0)
    assert p.ground_distance_m == pytest.approx(0.4 / np.tan(np.radians(4.0)), rel=1e-6)
    assert p.below_horizon_deg == pytest.approx(4.0, abs=1e-6)
    farther = 0.4 / np.tan(np.radians(3.0)) - p.ground_distance_m  # pitched 1 deg up, the ray is 3 deg down
    assert p.pitch_sensitivity_m == pytest.approx(farther, rel=1e-6)
    assert p.notes == f"the ray is only 4.0 deg below the horizon: 1 deg of pitch moves it {farther:.1f} m"
    assert "IMPLAUSIBLE? the ray is only 4.0 deg below the horizon" in p.text
    steep = geom.floor_point((319.5, 400.0), K=K640, camera_height_m=1.5, pitch_deg=-20.0, roll_deg=0.0)
    assert steep.notes == "" and steep.pitch_sensitivity_m < 0.2


def test_a_radiator_placed_beyond_a_room_is_flagged_with_its_sensitivity_to_pitch():
    """The issue's dorm room: a camera 1.5 m up, pitched 5 deg down, a pixel placing the radiator 7.6 m
    away. The note names the number to check: how far 1 deg of pitch moves it."""
    below = np.degrees(np.arctan(1.5 / 7.6))  # the ray's angle below the horizon
    row = 239.5 + 525.0 * np.tan(np.radians(below - 5.0))
    p = geom.floor_point((319.5, row), K=K640, camera_height_m=1.5, pitch_deg=-5.0, roll_deg=0.0)
    assert p.ground_distance_m == pytest.approx(7.6, rel=1e-6)
    farther = 1.5 / np.tan(np.radians(below - 1.0)) - 7.6
    assert "7.6 m on the ground is beyond most rooms" in p.notes
    assert f"1 deg of pitch moves it {farther:.1f} m" in p.notes
    past = geom.floor_point((319.5, 240.0 + 525 * np.tan(np.radians(0.5))), K=K640, pitch_deg=0.0, roll_deg=0.0)
    assert "1 deg of pitch moves it past the horizon" in past.notes and np.isinf(past.pitch_sensitivity_m)


def test_sizes_far_outside_the_everyday_range_of_their_label_get_a_short_note():
    assert size_note([3.9, 0.6, 0.9], "office chair").startswith("a chair 3.9 m long? chairs are 0.3-1.4 m")
    assert size_note([0.55, 0.5, 0.95], "chair_2") == ""
    assert "wall or floor behind it" in size_note(7.6, "radiator")
    assert "fragment" in size_note(0.02, "table")
    assert size_note(12.0, "thing") == "" and "objects are 0.003-30 m" in size_note(80.0, "thing")
    assert len(size_note([3.9, 0.6, 0.9], "chair")) < 110  # a clause, not a paragraph


def test_the_scene_readout_flags_an_oversized_object_and_a_floor_point_beyond_the_room():
    rng = np.random.default_rng(0)
    scene = Scene()
    scene.add("chair", points=rng.uniform([0.0, 2.0, -1.5], [3.9, 2.6, -0.6], (200, 3)))  # a wall came with it
    scene.add("table", points=rng.uniform([-1.0, 3.0, -1.5], [0.2, 3.8, -0.75], (200, 3)))
    scene.add_bearing("radiator", (112.0, 86.0), image_size=(224, 168), on_floor=True, pitch_deg=-5.0)
    lines = {line.split(":")[0].lstrip("- "): line for line in scene.describe().splitlines()}
    assert "IMPLAUSIBLE? a chair 3.8 m long? chairs are 0.3-1.4 m" in lines["chair"]
    assert "IMPLAUSIBLE" not in lines["table"]
    assert "IMPLAUSIBLE?" in lines["radiator"] and "beyond most rooms" in lines["radiator"]


def test_boxes_and_known_scales_flag_impossible_sizes():
    box = geom.oriented_box(np.array([[0.0, 0.0, 0.0], [60.0, 1.0, 0.0], [0.0, 1.0, 1.0], [60.0, 0.0, 1.0]]))
    assert "IMPLAUSIBLE? an object 60 m long?" in repr(box)
    assert "IMPLAUSIBLE" not in repr(geom.oriented_box(np.array([[0, 0, 0], [0.5, 0.4, 0.9], [0.5, 0.0, 0.9]])))
    wrong_unit = geom.scale_from_known_size(80.0, 200.0, hfov_deg=60.0, image_width=224)  # a door of 200 "m"
    assert "IMPLAUSIBLE? an object 200 m long?" in wrong_unit.text
    assert "IMPLAUSIBLE" not in geom.scale_from_known_size(80.0, 2.0, hfov_deg=60.0, image_width=224).text


def test_a_plane_reference_in_the_wrong_unit_makes_its_status_suspect():
    image = np.full((240, 320, 3), 60, np.uint8)
    quad = np.array([[60.0, 50.0], [250.0, 60.0], [262.0, 190.0], [48.0, 180.0]])
    cv2.fillPoly(image, [np.round(quad * 16).astype(np.int32)], (240, 240, 235), cv2.LINE_AA, shift=4)
    metres = geom.find_plane_reference(image, size=(0.297, 0.210), color="white")
    assert "reference" not in metres.status
    millimetres_as_metres = geom.find_plane_reference(image, size=(297, 210), color="white")
    assert (
        millimetres_as_metres.status.startswith("suspect") and "a reference 297 m long?" in millimetres_as_metres.status
    )
    assert "wrong unit" not in geom.find_plane_reference(image, size=(297, 210), unit="mm", color="white").status
