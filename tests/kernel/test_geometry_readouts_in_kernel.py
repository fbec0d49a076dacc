"""The readouts models wrote by hand (issue 32, item 3) run in a real kernel on a frame given as a file: the
pitch from an object of known height, a wall's direction and a colour counted inside a box, with their
one-line manual entries, on a rendered room whose geometry is exact."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PIL import Image

from spatialclaw import Kernel
from tests.primitives.geometry.tiled_room import front_edge, tiled_room, true_facing, view, wall_box


def test_known_height_pitch_wall_direction_and_colour_in_a_box_read_out_in_a_kernel(tmp_path: Path) -> None:
    v = view(heading_deg=-40.0, pitch_deg=-15.0)
    path = tmp_path / "room.png"
    Image.fromarray(v.rgb).save(path)
    box = tuple(round(x) for x in wall_box(v, "wall x-"))
    top, bottom, height = front_edge(v, "desk")
    desk = v.label == tiled_room().labels.index("desk")
    ys, xs = np.nonzero(desk)
    desk_box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
    with Kernel(frames=[path], workdir=tmp_path / "work") as kernel:
        result = kernel.execute(
            f"K = np.array({v.K.tolist()})\n"
            f"print(geom.camera_tilt(frames[0], K=K, known=(({top}, {bottom}), {height})))\n"
            f"print(geom.wall_direction(frames[0], {box}, K=K))\n"
            f"print(find_color(frames[0], 'brown', box={desk_box}))\n"
            "manual('geom.wall_direction')"
        )
    assert result.error is None, result.error
    text = result.stdout
    pitch, sigma = (float(g) for g in re.search(r"camera pitch ([-+\d.]+) ± ([\d.]+) deg", text).groups())
    height, height_sigma = (float(g) for g in re.search(r"camera ([\d.]+) ± ([\d.]+) m above the floor", text).groups())
    assert "(from 1 object of known height)" in text and abs(pitch - (-15.0)) <= 2 * sigma, text
    assert abs(height - 1.5) <= 2 * height_sigma, text  # the view's camera is 1.5 m up
    facing, facing_sigma = re.search(r"the wall runs \d+ ± ([\d.]+) deg.*?\(facing ([-+\d.]+) deg", text).groups()[::-1]
    assert abs(float(facing) - true_facing(v, "wall x-")) <= 2 * float(facing_sigma), text
    assert "it faces right-and-towards the camera" in text, text
    pixels = (desk_box[2] - desk_box[0]) * (desk_box[3] - desk_box[1])
    assert f"in box {desk_box} ({pixels} px)" in text and f"box={desk_box}" in text, text  # the desk, full-frame
    assert "== manual('geom.wall_direction') ==" in text and "facing_deg" in text, text
