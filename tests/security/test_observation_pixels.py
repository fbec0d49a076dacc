"""The host shrinks a bounded number of pixels per observation (issue 30, notes).

``show()`` was bounded in pixels and bytes per image but not in host CPU: sixteen 7000x7000 images (2.2 MB of
PNG) cost the host 23 s in ``observation_parts`` (decode and resize). An observation's images to shrink now
hold at most ``MAX_SHRUNK_PIXELS`` pixels in all, read from each PNG's header before anything is decoded; the
images past it become a note that names the limit.
"""

from __future__ import annotations

import time

from spatialclaw.agent.context import observation_parts
from spatialclaw.kernel.kernel import Kernel

LARGE = """
from IPython.display import display
from PIL import Image
for colour in ("red", "green", "blue"):
    display(Image.new("RGB", (5000, 4000), colour))
"""


def test_a_cell_showing_huge_images_costs_the_host_a_bounded_decode() -> None:
    with Kernel(memory_limit_mb=2048) as kernel:
        result = kernel.execute(LARGE, timeout=120)
    assert result.status == "ok" and [(i.width, i.height) for i in result.images] == [(5000, 4000)] * 3
    started = time.perf_counter()
    text, images = observation_parts(1, 10, result, 4000, 1568, [])
    spent = time.perf_counter() - started
    print(f"observation_parts: {spent:.2f} s for {len(images)} of 3 images of 20 M pixels decoded")
    assert [(i.width, i.height) for i in images] == [(1568, 1254)]  # the first one, shrunk; the limit is 32 M
    assert text.count("not shown: this step's images to shrink are over 32,000,000 pixels in all") == 2
    assert "image 'display' (5000x4000)" in text
