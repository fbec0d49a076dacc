"""Cost of forwarding ``depth`` to a shared perception actor, against the same call in this process.

A tiny random Depth Anything (saved to a local folder, loaded with ``from_pretrained``) runs on 640x480
Redwood frames (random pixels when the test data is absent), with the cache off so every call computes:

1. local: ``depth(frame, model=FOLDER)`` in this process (model loaded before timing);
2. service: the same call with ``SPATIALCLAW_PERCEPTION`` naming one actor on a local Ray instance (model
   loaded on the actor before timing), so each call ships the frame to the actor and the maps back.

Both sides use one torch thread (Ray gives an actor with one CPU ``OMP_NUM_THREADS=1``; this process is
set to match), so the comparison is of the same computation. The tiny model's inference is a few milliseconds, so the difference is the forwarding overhead per call
(serialisation, Ray round trip) that a real model's inference time (tens to hundreds of ms on a GPU) hides.

Run: ``python benchmarks/perf/perception_service.py``. The last line is one JSON object with the figures.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the tiny-model builder shared with the tests
DATA = Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO.parent / "shared" / "data"))
CALLS = 20


def frames() -> list[np.ndarray]:
    folder = DATA / "rgbd-redwood" / "color"
    paths = sorted(folder.glob("*.jpg"))
    if not paths:
        rng = np.random.default_rng(0)
        return [rng.integers(0, 256, (480, 640, 3), dtype=np.uint8) for _ in range(5)]
    from PIL import Image

    return [np.asarray(Image.open(path).convert("RGB")) for path in paths]


def per_call_ms(images: list[np.ndarray], model: str) -> float:
    from spatialclaw.primitives.perception.depth import depth

    depth(images[0], model=model)  # load (here or on the actor) before timing
    start = time.perf_counter()
    for index in range(CALLS):
        depth(images[index % len(images)], model=model)
    return 1000.0 * (time.perf_counter() - start) / CALLS


def main() -> None:
    os.environ["SPATIALCLAW_CACHE"] = "off"
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
    import ray
    import torch
    from tiny_depth_models import save_tiny_depth_anything

    from spatialclaw.primitives.perception import remote
    from spatialclaw.services.perception import start_perception_service

    torch.set_num_threads(1)  # as in the actor (one CPU)
    images = frames()
    with tempfile.TemporaryDirectory() as root:
        model = str(save_tiny_depth_anything(Path(root) / "tiny-da"))
        local_ms = per_call_ms(images, model)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        service = start_perception_service(actors=1, num_gpus=0)
        try:
            os.environ[remote.ENV_VAR] = service.url
            service_ms = per_call_ms(images, model)
            runs = service.stats()[0]["calls"]["run:depth"]
        finally:
            os.environ.pop(remote.ENV_VAR, None)
            service.close()
            ray.shutdown()
    assert runs == CALLS + 1, runs
    height, width = images[0].shape[:2]
    print(f"depth() on {width}x{height} frames, tiny Depth Anything, cache off, {CALLS} calls each")
    print(f"{'where':<28}{'ms per call':>12}")
    print(f"{'this process (baseline)':<28}{local_ms:>12.1f}")
    print(f"{'shared actor (Ray)':<28}{service_ms:>12.1f}")
    print(f"forwarding overhead: {service_ms - local_ms:.1f} ms per call ({service_ms / local_ms:.2f}x the local call)")
    print(
        json.dumps(
            {
                "benchmark": "perception_service",
                "frame": [width, height],
                "calls": CALLS,
                "local_ms_per_call": round(local_ms, 2),
                "service_ms_per_call": round(service_ms, 2),
                "overhead_ms_per_call": round(service_ms - local_ms, 2),
                "ratio_service_over_local": round(service_ms / local_ms, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
