"""The readouts models wrote by hand (issue 32) run in a real kernel on frames given as files: a turning camera's
heading sweep (``motion(frames).headings()``), the parallax by region (``motion(..., regions="bands")``) and a
change map shown as an image (``change_map``), renders of a camera turning in a room of real photos."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from spatialclaw import Kernel
from tests.photo_room import turning_in_room


def test_heading_sweep_parallax_and_change_map_read_out_in_a_kernel(test_data, tmp_path: Path):
    views, fov = turning_in_room(test_data, [45.0 * i for i in range(9)], width=200)
    paths = []
    for i, view in enumerate(views):
        paths.append(tmp_path / f"frame_{i}.png")
        Image.fromarray(view).save(paths[-1])
    with Kernel(frames=paths, workdir=tmp_path / "work") as kernel:
        result = kernel.execute(
            f"m = motion(frames, fov_deg={fov})\n"
            "print(m.headings())\n"
            f"print(motion(frames[:2], fov_deg={fov}, regions='bands'))\n"
            "cm = change_map(frames[0], frames[1])\n"
            "print(cm)\n"
            "show(cm.image)\n"
            "manual('HeadingSweep')"
        )
    assert result.error is None, result.error
    text = result.stdout
    assert "came BACK to its starting heading after 1 full turn right" in text, text
    assert "frames 0->1 by region: top:" in text and "no parallax" in text, text
    assert "frames 0 vs 1: aligned by one homography" in text and "NO CHANGE" in text, text
    assert "HeadingSweep" in text and len(result.images) == 1
