"""geom.find_plane_reference(color="auto"): a sheet or a tape border found without being told its colour,
on exact perspective photos of a real texture (planar_photos) and on the dev set's A4 sheets composited
onto real RGB-D photos (benchmarks.devset.layout.planar)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.geometry import geom
from tests.planar_photos import (
    BORDER,
    PX_PER_M,
    SHEET,
    TABLE,
    _apply,
    _sheet_to_table,
    border_canvas,
    render,
    table_canvas,
)


def corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    """Max corner distance over the 8 ways to start and run the corner order, pixels."""
    return min(
        np.linalg.norm(np.roll(found, k, axis=0)[::step] - truth, axis=1).max() for k in range(4) for step in (1, -1)
    )


def tape_canvas(texture_path, colour: tuple[int, int, int], size: tuple[float, float]) -> np.ndarray:
    """The table top textured with a real photo and a tape border of ``colour`` (2 cm wide, outer edge
    ``size`` metres) where the sheet would lie, the floor showing inside."""
    width, height = int(TABLE[0] * PX_PER_M), int(TABLE[1] * PX_PER_M)
    texture = np.asarray(Image.open(texture_path).convert("RGB").resize((width, height), Image.BICUBIC))
    canvas = np.ascontiguousarray(0.8 * texture).astype(np.uint8)
    table_px = np.array([[PX_PER_M, 0, -0.5], [0, PX_PER_M, -0.5], [0, 0, 1.0]])
    to_px = table_px @ _sheet_to_table()
    w, h, tape = size[0], size[1], 0.02
    outer = np.round(_apply(to_px, np.array([[0, 0], [w, 0], [w, h], [0, h]])) * 256).astype(np.int32)
    inner = np.array([[tape, tape], [w - tape, tape], [w - tape, h - tape], [tape, h - tape]])
    border = np.zeros(canvas.shape[:2], np.uint8)
    cv2.fillPoly(border, [outer], 255, cv2.LINE_AA, 8)
    cv2.fillPoly(border, [np.round(_apply(to_px, inner) * 256).astype(np.int32)], 0, cv2.LINE_AA, 8)
    alpha = (border.astype(np.float64) / 255)[..., None]
    return (alpha * np.array(colour) + (1 - alpha) * canvas).astype(np.uint8)


@pytest.mark.parametrize("width", [pytest.param(1600, marks=pytest.mark.slow), 200])
def test_the_white_sheet_is_found_as_if_its_colour_had_been_given(test_data, width):
    texture = test_data / "rgbd-redwood" / "color" / "00000.jpg"
    photo = render(texture, width, canvas=table_canvas(texture))
    auto = geom.find_plane_reference(photo.image, size=SHEET, color="auto")
    assert auto.color.startswith("white (auto")
    given = geom.find_plane_reference(photo.image, size=SHEET, color="white")
    np.testing.assert_allclose(auto.quad, given.quad, atol=1e-6)
    assert corner_error(auto.quad, photo.sheet_corners_px()) < 1.5 * max(width / 1600, 0.4)
    assert "found by colour white (auto" in auto.text


def test_a_blue_tape_border_is_found_by_its_colour_among_red_bricks_and_wood(test_data):
    """The texture has red bricks and orange wood: a small well-fitting patch of them must not beat the
    whole border."""
    texture = test_data / "rgbd-redwood" / "color" / "00000.jpg"
    photo = render(texture, 200, canvas=border_canvas(texture))
    w, h = BORDER
    truth = cv2.perspectiveTransform(np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), photo.sheet_to_image)[0]
    plane = geom.find_plane_reference(photo.image, size=BORDER, color="auto")
    assert plane.color.startswith("blue (auto"), plane.color
    assert corner_error(plane.quad, truth) < 1.0
    assert plane.status == "ok"


@pytest.mark.parametrize(
    "colour, name, texture",
    [((200, 40, 40), "red", "rgbd-single/SUN_color.jpg"), ((40, 150, 60), "green", "rgbd-single/NYU_color.ppm")],
)
def test_tape_borders_of_other_colours_on_other_real_textures(test_data, colour, name, texture):
    """The same corners as when the colour is given, though the NYU photo holds brighter white patches that
    fit nearly as well (weighed by their area, they lose)."""
    size = (0.30, 0.25)
    photo = render(test_data / texture, 200, canvas=tape_canvas(test_data / texture, colour, size))
    w, h = size
    truth = cv2.perspectiveTransform(np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), photo.sheet_to_image)[0]
    plane = geom.find_plane_reference(photo.image, size=size, color="auto")
    assert plane.color.startswith(f"{name} (auto"), plane.color
    np.testing.assert_allclose(plane.quad, geom.find_plane_reference(photo.image, size=size, color=name).quad)
    assert corner_error(plane.quad, truth) < 1.0
    assert plane.length(plane.quad[0], plane.quad[2]).value == pytest.approx(np.hypot(w, h), rel=1e-9)


def test_the_dev_sets_a4_sheets_on_real_photos_are_found_as_with_white(test_data, tmp_path):
    from spatialclaw.benchmarks.devset.layout import planar

    records = planar(test_data, tmp_path, np.random.default_rng(0))[::2][:3]  # SUN, NYU and Redwood textures
    for record in records:
        image = np.asarray(Image.open(tmp_path / record["images"][0]).convert("RGB"))
        auto = geom.find_plane_reference(image, size=(0.297, 0.210), color="auto")
        given = geom.find_plane_reference(image, size=(0.297, 0.210), color="white")
        assert auto.color.startswith("white (auto"), (record["meta"], auto.color)
        np.testing.assert_allclose(auto.quad, given.quad, atol=1e-6)


def test_no_reference_in_any_colour_says_what_to_pass():
    flat = np.full((120, 160, 3), 90, np.uint8)
    with pytest.raises(ValueError, match=r"color='auto'.*white, red.*quad="):
        geom.find_plane_reference(flat, size=(0.297, 0.210), color="auto")
