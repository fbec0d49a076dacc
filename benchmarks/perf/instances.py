"""Speed of detect / segment / track, each against a baseline measured in the same run.

1. detect() cache hit against cache miss (a tiny random Grounding DINO saved to a local folder and loaded
   with ``from_pretrained``; the model is loaded before timing, so the miss is inference + caching).
2. segment() with 8 boxes in one SAM call against 8 one-box calls (tiny random SAM, cache off).
3. track(method="flow") on the five Redwood frames (640x480) against computing dense Farneback optical
   flow between the same frame pairs (the usual classical alternative), per frame.

Run: ``python benchmarks/perf/instances.py``. The last line is one JSON object with the figures.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the tiny-model builders shared with the tests
DATA = Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO.parent / "shared" / "data"))


def best_of(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def redwood_frames() -> list[np.ndarray]:
    from PIL import Image

    folder = DATA / "rgbd-redwood" / "color"
    return [np.asarray(Image.open(path).convert("RGB")) for path in sorted(folder.glob("*.jpg"))]


def bench_detect_cache(frame: np.ndarray, root: Path) -> dict[str, float]:
    from tiny_instance_models import build_grounding_dino

    from spatialclaw.primitives.perception import cache
    from spatialclaw.primitives.perception.detect import detect, load_detector

    folder = str(build_grounding_dino(root / "gdino"))
    load_detector(folder)
    misses = []
    for i in range(5):
        os.environ["SPATIALCLAW_CACHE"] = str(root / f"cache-miss-{i}")
        start = time.perf_counter()
        detect(frame, ["chair", "table"], model=folder)
        misses.append(time.perf_counter() - start)
    before = cache.stats["hits"]
    hit = best_of(5, lambda: detect(frame, ["chair", "table"], model=folder))
    assert cache.stats["hits"] == before + 5
    return {"detect_miss_s": min(misses), "detect_hit_s": hit, "detect_miss_over_hit": min(misses) / hit}


def bench_segment_batch(frame: np.ndarray, root: Path) -> dict[str, float]:
    from tiny_instance_models import build_sam

    from spatialclaw.primitives.perception.segment import load_sam, segment

    os.environ["SPATIALCLAW_CACHE"] = "off"
    folder = str(build_sam(root / "sam"))
    load_sam(folder)
    boxes = [(40 + 60 * i, 50 + 20 * i, 120 + 60 * i, 200 + 20 * i) for i in range(8)]
    together = best_of(3, lambda: segment(frame, box=boxes, model=folder))
    apart = best_of(3, lambda: [segment(frame, box=box, model=folder) for box in boxes])
    return {
        "segment_8_boxes_one_call_s": together,
        "segment_8_boxes_8_calls_s": apart,
        "segment_separate_over_batched": apart / together,
    }


def bench_flow_track(frames: list[np.ndarray]) -> dict[str, float]:
    import cv2

    from spatialclaw.primitives.perception.track import track

    os.environ["SPATIALCLAW_CACHE"] = "off"
    patch = np.zeros(frames[0].shape[:2], bool)
    patch[180:300, 260:380] = True
    ours = best_of(3, lambda: track(frames, masks=patch, method="flow"))
    grays = [cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) for frame in frames]
    # flow=None is how OpenCV allocates the output; the stubs of some OpenCV versions require an array, so the
    # call goes through an untyped name instead of an ignore that another version would call unused
    dense_flow: Any = cv2.calcOpticalFlowFarneback
    farneback = best_of(
        3,
        lambda: [dense_flow(a, b, None, 0.5, 4, 21, 3, 5, 1.1, 0) for a, b in pairwise(grays)],
    )
    pairs = len(frames) - 1
    return {
        "track_flow_per_frame_s": ours / pairs,
        "farneback_per_frame_s": farneback / pairs,
        "farneback_over_track_flow": farneback / ours,
    }


def main() -> None:
    frames = redwood_frames()
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results.update(bench_detect_cache(frames[0], Path(tmp)))
        results.update(bench_segment_batch(frames[0], Path(tmp)))
    results.update(bench_flow_track(frames))
    print(f"{'measure':<36}{'value':>12}")
    for key, value in results.items():
        print(f"{key:<36}{value:>12.4g}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
