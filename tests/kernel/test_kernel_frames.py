"""The kernel preloaded with real frames: the namespace contract, absolute indices, clear load errors."""

from __future__ import annotations

import pytest

from spatialclaw import FrameSpec, Kernel, KernelPool, Task
from spatialclaw.kernel.errors import PreloadError


@pytest.fixture(scope="module")
def redwood_colour(test_data):
    return sorted(str(p) for p in (test_data / "rgbd-redwood" / "color").glob("*.jpg"))


def test_namespace_holds_frames_meta_and_primitives(redwood_colour, tmp_path):
    task = Task(
        question="How many frames?",
        inputs=[FrameSpec.images(redwood_colour, indices=[10, 20, 30, 40, 50])],
        answer_type="number",
        ground_truth=5,
    )
    with Kernel.for_task(task, workdir=tmp_path) as kernel:
        result = kernel.execute(
            "print(len(frames), frames.indices, frames[1].size)\n"
            "print(meta.question, meta.num_frames, meta.answer_type)\n"
            "print('ground_truth' in meta)\n"
            "print(callable(depth), callable(detect), type(plt).__name__)\n"
            "show(frames[2])\n"
            "answer(len(frames))"
        )
        assert result.ok, result.to_text()
        lines = result.stdout.splitlines()
        assert lines[0] == "5 [10, 20, 30, 40, 50] (640, 480)"
        assert lines[1] == "How many frames? 5 number"
        assert lines[2] == "False"
        assert lines[3] == "True True LazyModule"
        assert result.images[0].label == "frame 30" and (result.images[0].width, result.images[0].height) == (640, 480)
        assert result.answer == 5.0


def test_several_inputs_become_videos(redwood_colour, tmp_path):
    with Kernel(videos=[redwood_colour[:2], redwood_colour[2:]], workdir=tmp_path) as kernel:
        result = kernel.execute("print(len(videos), [len(v) for v in videos], len(frames))")
        assert result.stdout.strip() == "2 [2, 3] 2"


def test_corrupt_frame_is_a_clear_error_naming_the_file(tmp_path):
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8\xff\xe0 this is not really a jpeg")
    with pytest.raises(PreloadError, match=r"broken\.jpg"):
        Kernel(frames=[str(broken)], workdir=tmp_path / "work")


def test_pool_reset_with_bad_frames_raises_and_frees_the_slot(redwood_colour, tmp_path):
    with KernelPool(size=1) as pool:
        kernel = pool.acquire(frames=redwood_colour[:1])
        pool.release(kernel)
        with pytest.raises(PreloadError, match=r"missing\.png"):
            pool.acquire(frames=[str(tmp_path / "missing.png")])
        kernel = pool.acquire(frames=redwood_colour[:2])
        assert kernel.execute("print(len(frames))").stdout.strip() == "2"
        pool.release(kernel)
