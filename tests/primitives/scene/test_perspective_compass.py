"""scene.perspective says compass words only once north is set (issue 32, item 4): before that, "compass
NE" meant ahead-as-north, which a model read as a true compass direction."""

from __future__ import annotations

import re

import numpy as np

from spatialclaw.primitives.scene.memory import Scene
from tests.geom_synthetic import Box

CAMERA = [[1, 0, 0, 0], [0, 0, 1, 0], [0, -1, 0, 1.5], [0, 0, 0, 1.0]]  # at the origin, looking along +Y
LAYOUT = {"sofa": (0.0, 1.0, 0.2), "tv": (0.0, 4.0, 0.5), "lamp": (1.5, 2.5, 0.9)}
COMPASS_WORD = re.compile(r"\b(compass|N|NE|E|SE|S|SW|W|NW|north|east|south|west)\b", re.I)


def _scene() -> Scene:
    scene = Scene()
    scene.add_camera(0, np.array(CAMERA, dtype=float))
    for name, position in LAYOUT.items():
        scene.add(name, points=Box(position, (0.4, 0.4, 0.4)).surface_points())
    return scene


def test_no_compass_words_without_north_and_true_ones_after_set_north():
    scene = _scene()
    plain = scene.perspective("lamp", standing_at="sofa", facing="tv")
    assert plain.direction == "front-right" and COMPASS_WORD.search(plain.text) is None, plain.text
    scene.set_north(view=0, direction="east")  # camera 0 looks east, so the sofa-to-tv line points east
    told = scene.perspective("lamp", standing_at="sofa", facing="tv")
    assert "Facing E" in told.text and "SE" in told.text, told.text
