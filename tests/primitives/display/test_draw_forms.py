"""draw() and zoom() as a model uses them: one set of argument forms for every kind, labels across kinds,
polygons for plane references, labels that name a colour drawn in it, and short signatures that list the
values a parameter takes (with errors that show a call that works)."""

from __future__ import annotations

import inspect
from typing import Any, Literal

import numpy as np
import pytest

from spatialclaw.primitives.display.color import find_color
from spatialclaw.primitives.display.color_names import COLOR_NAMES, DISPLAY_RGB, label_rgb
from spatialclaw.primitives.display.look import zoom
from spatialclaw.primitives.display.overlay import draw
from spatialclaw.primitives.display.show import show
from spatialclaw.primitives.geometry.rectify import rectify_plane
from spatialclaw.primitives.runtime.manual import parameter_choices

GREY = 90


def canvas(width: int = 160, height: int = 120) -> np.ndarray:
    return np.full((height, width, 3), GREY, np.uint8)


def changed(out: Any) -> np.ndarray:
    """(H, W) bool: where the drawing differs from the plain grey canvas."""
    return np.any(np.asarray(out) != GREY, axis=2)


def test_a_dict_value_that_is_a_list_draws_every_item_under_its_label():
    out = changed(draw(canvas(), lines={"edge": [(0, 10, 159, 10), (0, 100, 159, 100)]}, width=1))
    assert out[10, 5] and out[10, 150] and out[100, 5] and out[100, 150]  # both segments, end to end
    out = changed(draw(canvas(), points={"corners": [(20, 60), (140, 60)]}, boxes={"cups": [(40, 20, 60, 40)]}))
    assert out[60, 20] and out[60, 140] and out[20, 50]
    masks = np.zeros((2, 120, 160), bool)
    masks[0, 70:90, 10:30] = masks[1, 70:90, 120:140] = True
    out = changed(draw(canvas(), masks={"rug": list(masks)}))
    assert out[85, 15] and out[85, 135] and not out[50, 80]


def test_every_kind_takes_one_item_a_list_or_a_dict_alike():
    segment = (10, 60, 150, 60)
    for form in (segment, [segment], [(10, 60), (150, 60)], {"edge": segment}, {"edge": [(10, 60), (150, 60)]}):
        out = changed(draw(canvas(), lines=form, width=1))
        assert out[60, 12] and out[60, 148] and not out[30, 80], form
    for form in ((80, 60), [(80, 60)], {"dot": (80, 60)}, {"dots": [(80, 60)]}):
        assert changed(draw(canvas(), points=form))[60, 80], form
    with pytest.raises(
        ValueError, match=r"lines must be .* got an array of shape \(3,\).*Example: draw\(frame, lines="
    ):
        draw(canvas(), lines={"edge": (1, 2, 3)})


def test_labels_apply_to_several_kinds_at_once_in_parameter_order():
    image = canvas()
    out = np.asarray(draw(image, points=[(30, 60)], boxes=[(80, 40, 140, 100)], labels=["red", "blue box"]))
    assert tuple(out[60, 30]) == DISPLAY_RGB["red"]  # the first label goes to the point
    assert tuple(out[70, 80]) == DISPLAY_RGB["blue"]  # the second to the box
    with pytest.raises(ValueError) as error:
        draw(image, points=[(30, 60)], boxes=[(80, 40, 140, 100)], labels=["cup"])
    message = str(error.value)
    assert "1 labels for 2 items" in message and "1 points, 1 boxes" in message
    example = message.split("e.g. ", 1)[1]
    assert np.asarray(eval(example, {"draw": draw, "frame": image})).shape == image.shape  # the example works


def test_polygons_draw_a_plane_reference_quad():
    quad = np.array([(30.0, 20.0), (130.0, 25.0), (125.0, 100.0), (35.0, 95.0)])
    plane = rectify_plane(canvas(), quad, (0.297, 0.21))
    assert np.array_equal(plane.quad, quad)  # what find_plane_reference / rectify_plane expose
    for form in ({"sheet": plane.quad}, {"sheet": plane}, plane, [plane.quad], quad.tolist()):
        out = changed(draw(canvas(), polygons=form, width=1))
        sides = [(80, 22), (128, 60), (80, 97), (32, 57)]  # a point on each side, (x, y)
        assert all(out[y - 1 : y + 2, x - 1 : x + 2].any() for x, y in sides), form
        assert not out[60, 80], form  # the inside is left alone
    with pytest.raises(ValueError, match="at least 3 corners"):
        draw(canvas(), polygons=[(0, 0), (10, 10)])


def test_a_label_that_names_a_colour_is_drawn_in_it():
    labels = {"blue": (30, 30), "green": (80, 30), "red": (130, 30), "Yellow cup": (30, 90), "black": (80, 90)}
    out = np.asarray(draw(np.zeros((120, 160, 3), np.uint8), points=labels, width=3))
    for label, (x, y) in labels.items():
        assert tuple(out[y, x]) == label_rgb(label), label
    assert tuple(out[90, 80 + 6]) == (255, 255, 255)  # a black dot on black gets a white outline
    red = find_color(out, "red", min_area=10)
    assert red[0].centroid == pytest.approx((130, 30), abs=1.0)  # find_color agrees the "red" dot is red
    cup = np.asarray(draw(canvas(), points={"blue": (30, 60), "cup": (90, 60)}))[60, 90]
    assert np.abs(cup.astype(int) - DISPLAY_RGB["blue"]).sum() > 150  # an unnamed label avoids the named blue


def test_every_colour_name_is_drawn_in_a_colour_find_color_calls_by_that_name():
    assert set(COLOR_NAMES) | {"white", "black", "gray", "grey"} == set(DISPLAY_RGB)
    for name, rgb in DISPLAY_RGB.items():
        image = np.full((60, 80, 3), 30 if name in ("gray", "grey") else 128, np.uint8)
        image[20:40, 20:50] = rgb
        assert [blob.area for blob in find_color(image, name)][:1] == [600], name
    assert label_rgb("reddish") == DISPLAY_RGB["red"] and label_rgb("green_2") == DISPLAY_RGB["green"]
    assert label_rgb("dark green") == (11, 105, 22) and label_rgb("cup") is None and label_rgb("tangent") is None


def test_short_signatures_list_the_values_a_parameter_takes():
    from spatialclaw.agent.kernel_docs import api_section

    core = api_section("core")
    assert "contrast: None|'auto'" in core.split("- `zoom(", 1)[1].split("\n")[0]
    assert "interpolation: 'nearest'|'bilinear'|'bicubic'|'lanczos'" in core
    assert "contrast: None|'auto'" in core.split("- `show(", 1)[1].split("\n")[0]
    assert "kind: 'centroid'|'closest'" in core  # from a Literal annotation
    assert "method: 'auto'|'sam3'|'sam2'|'flow'" in core  # from the docstring
    assert "### `zoom(" in api_section("full") and "contrast: None|'auto' = None" in api_section("full")


def _choices(function: Any) -> dict[str, list[Any] | None]:
    return {p.name: parameter_choices(function, p) for p in inspect.signature(function).parameters.values()}


def test_fixed_values_come_from_literal_annotations_or_the_docstring_and_nothing_else():
    def sample(
        mode: Literal["fast", "exact"] = "exact",
        side: str = "left",
        shape: str | None = None,
        label: str | None = None,
        depth: Any = "auto",
        unit: str = "m",
    ) -> None:
        """A sample.

        Args:
            mode: how.
            side: "left", "right" or "both".
            shape: None (default), "dot" or "any".
            label: a text prompt, e.g. "cup" or "chair".
            depth: "auto", None, or a depth map.
            unit: the unit ("m" by default).
        """

    assert _choices(sample) == {
        "mode": ["exact", "fast"],  # the default first
        "side": ["left", "right", "both"],
        "shape": [None, "dot", "any"],
        "label": None,  # examples, not a set: the default (None) is not named
        "depth": None,  # not a text parameter
        "unit": None,  # one value is no choice
    }


def test_contrast_errors_show_a_call_that_works():
    frames = [np.tile(np.arange(100, dtype=np.uint8)[None, :, None], (80, 1, 3))]
    with pytest.raises(ValueError, match="contrast must be None or 'auto'") as error:
        zoom(frames[0], (10, 10, 90, 60), contrast=2.0)  # type: ignore[arg-type]
    assert eval(str(error.value).split("e.g. ", 1)[1], {"zoom": zoom, "frames": frames}).contrast == "auto"
    with pytest.raises(ValueError, match="contrast must be None or 'auto'") as error:
        show(frames[0], contrast=2.0)  # type: ignore[arg-type]
    assert "show(frames[0], contrast='auto')" in str(error.value)
    with pytest.raises(ValueError, match=r"e\.g\. zoom") as error:
        zoom(frames[0], (10, 10, 90, 60), interpolation="cubic")  # type: ignore[arg-type]
    assert eval(str(error.value).split("e.g. ", 1)[1], {"zoom": zoom, "frames": frames}).interpolation == "bicubic"


def test_a_model_draws_and_zooms_in_a_real_kernel(test_data):
    from spatialclaw import Kernel

    paths = [str(test_data / "rgbd-redwood" / "color" / "00000.jpg")]
    cell = (
        "out = draw(frames[0], lines={'edge': [(0, 10, 200, 10), (0, 300, 200, 300)]}, points={'red': (320, 240)},\n"
        "           polygons={'sheet': [(400, 100), (600, 110), (590, 300), (410, 290)]}, labels=None)\n"
        "a = np.asarray(out)\n"
        "print(tuple(a[240, 320].tolist()), a[10, 20].tolist() != np.asarray(frames[0])[10, 20].tolist())\n"
        "show(out, label='drawn')"
    )
    with Kernel(frames=paths) as kernel:
        result = kernel.execute(cell)
        assert result.error is None, result.to_text(2000)
        assert result.stdout.split("\n")[0] == f"{DISPLAY_RGB['red']} True"
        assert len(result.images) == 1 and result.images[0].label == "drawn"
        wrong = kernel.execute("zoom(frames[0], (300, 100, 400, 180), contrast=2.0)")
        assert "zoom(frames[0], (300, 100, 400, 180), contrast='auto')" in wrong.to_text(4000)  # the caller's box
        manual = kernel.execute("manual('zoom')")
        assert "contrast: None|'auto' = None" in manual.stdout, manual.to_text(2000)
