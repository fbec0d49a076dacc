"""``geom.floor_point`` over many pixels of one photo: one call with an (N, 2) array against the per-point
loop of single calls that a sweep used to run (66 calls took 11.9 s), on a real frame.

Run: ``SPATIALCLAW_TEST_DATA=/work/shared/data .venv/bin/python benchmarks/perf/floor_point.py [--points N]``.
Times, on the Redwood colour frame 00000 (640x480) with the camera tilt estimated from the image:

- ``loop``: N single calls ``floor_point((x, y), frame)`` with the tilt cache cleared before each, as the
  old code ran them (each call estimated the tilt again; its camera sampling is today's vectorised one,
  so the ratio understates the gain over the old code);
- ``array``: one call ``floor_point(pixels, frame)`` with the (N, 2) array (a fresh tilt cache, so it
  estimates the tilt once too);
- ``single``: one more single call after the tilt is cached (the per-call cost of a sweep's later calls).

Prints one JSON line: ``points``, ``loop_s``, ``array_s``, ``single_s`` (seconds) and ``ratio``
(loop / array: how many times faster the array call is).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from PIL import Image

from spatialclaw.primitives.geometry import floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=66)
    args = parser.parse_args()
    data = Path(os.environ.get("SPATIALCLAW_TEST_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
    frame = Image.open(data / "rgbd-redwood" / "color" / "00000.jpg").convert("RGB")
    rng = np.random.default_rng(0)
    pixels = np.column_stack([rng.uniform(40, 600, args.points), rng.uniform(380, 470, args.points)])
    looped = []
    start = time.perf_counter()
    for x, y in pixels:
        floor._TILTS.clear()
        looped.append(floor.floor_point((float(x), float(y)), frame))
    loop_s = time.perf_counter() - start
    floor._TILTS.clear()
    start = time.perf_counter()
    together = floor.floor_point(pixels, frame)
    array_s = time.perf_counter() - start
    start = time.perf_counter()
    floor.floor_point((float(pixels[0][0]), float(pixels[0][1])), frame)
    single_s = time.perf_counter() - start
    assert isinstance(together, list) and len(together) == len(looped)
    print(
        json.dumps(
            {
                "points": args.points,
                "loop_s": round(loop_s, 3),
                "array_s": round(array_s, 3),
                "single_s": round(single_s, 4),
                "ratio": round(loop_s / array_s, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
