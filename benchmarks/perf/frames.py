"""Video frame loading: our lazy, index-aware decoding against a plain PyAV decode loop, same run, same file.

Run: ``.venv/bin/python benchmarks/perf/frames.py``. Encodes a 20 s, 30 fps, 640x480 H.264 clip
(keyframe every 60 frames, B-frames), then times three workloads, each against the baseline a user
would write by hand (decode every frame in order with PyAV, convert the ones wanted to RGB):

- ``sample8``: ``load_video(count=8)`` and read the 8 arrays (ours may seek past unwanted GOPs);
- ``all``: load every frame and read each array in order (ours should cost about the same: overhead);
- ``reverse8``: read the 8 sampled frames last-to-first (ours seeks to keyframes; the baseline decodes
  from the start for each frame, as a plain decode loop must).

Prints a table, then one JSON line with ``sample8_ratio``, ``all_ratio``, ``reverse8_ratio`` (ours /
baseline; below 1 is faster) and ``load_ms`` (``load_video`` of the clip: demux index + one probe decode).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import av
import numpy as np

from spatialclaw.primitives.frames.frame import Frame
from spatialclaw.primitives.frames.load import load_video
from spatialclaw.primitives.frames.sources import clear_decoded_cache

FPS, SECONDS, WIDTH, HEIGHT = 30, 20, 640, 480
REPEATS = 3


def make_clip(path: Path) -> Path:
    rng = np.random.default_rng(0)
    texture = rng.integers(0, 256, (HEIGHT, WIDTH * 2, 3), dtype=np.uint8)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS, options={"preset": "veryfast", "g": "60", "bf": "2"})
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        for number in range(FPS * SECONDS):
            shift = number * 2
            image = np.ascontiguousarray(texture[:, shift : shift + WIDTH])
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())
    return path


def use(array: np.ndarray) -> int:
    """What a caller does with each frame, kept tiny so decoding dominates: a sparse checksum."""
    return int(array[::61, ::53].sum())


def baseline(path: Path, wanted: set[int]) -> dict[int, int]:
    """Decode frames in order up to the last wanted one; convert the wanted ones to RGB and use them."""
    used = {}
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for number, frame in enumerate(container.decode(stream)):
            if number in wanted:
                used[number] = use(frame.to_ndarray(format="rgb24"))
                if len(used) == len(wanted):
                    break
    return used


def ours(frames: Iterable[Frame]) -> dict[int, int]:
    return {frame.index: use(frame.array) for frame in frames}


def timed(run: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        clear_decoded_cache()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        clip = make_clip(Path(folder) / "clip.mp4")
        total = FPS * SECONDS
        sample = load_video(clip, count=8).indices

        load_s = timed(lambda: load_video(clip))
        ours_sample = timed(lambda: ours(load_video(clip, count=8)))
        base_sample = timed(lambda: baseline(clip, set(sample)))
        ours_all = timed(lambda: ours(load_video(clip)))
        base_all = timed(lambda: baseline(clip, set(range(total))))
        ours_reverse = timed(lambda: ours(reversed(load_video(clip, count=8))))
        base_reverse = timed(lambda: [baseline(clip, {index}) for index in reversed(sample)])

        # The comparison is fair only if both see the same pixels.
        clear_decoded_cache()
        assert ours(load_video(clip, count=8)) == baseline(clip, set(sample)), "decoded pixels differ from PyAV's"

    rows = [
        ("load_video (index + probe)", load_s, None),
        ("8 evenly sampled frames", ours_sample, base_sample),
        (f"all {total} frames in order", ours_all, base_all),
        ("8 sampled frames in reverse", ours_reverse, base_reverse),
    ]
    print(f"clip: {SECONDS} s, {FPS} fps, {WIDTH}x{HEIGHT}, H.264, keyframe every 60; median of {REPEATS}")
    print(f"{'workload':32} {'ours ms':>10} {'baseline ms':>12} {'ratio':>7}")
    for name, ours_s, base_s in rows:
        base = f"{base_s * 1000:12.1f}" if base_s else f"{'-':>12}"
        ratio = f"{ours_s / base_s:7.2f}" if base_s else f"{'-':>7}"
        print(f"{name:32} {ours_s * 1000:10.1f} {base} {ratio}")
    print(
        json.dumps(
            {
                "load_ms": round(load_s * 1000, 1),
                "sample8_ratio": round(ours_sample / base_sample, 3),
                "all_ratio": round(ours_all / base_all, 3),
                "reverse8_ratio": round(ours_reverse / base_reverse, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
