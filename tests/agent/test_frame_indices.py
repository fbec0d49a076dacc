"""Frame indices are the source's, for every kind of input (the rule of ``primitives/runtime/conventions.py``):
an image's index is its position in the task's full image list, or the frame number the harness gives;
key frames of a longer video or image list keep their place in it, in the kernel's ``frames``/``videos``
and in the labels of the preview frames shown with the question. Every image and video frame shows its
own number (``test_frames.numbered_frame``), so each check proves which source frame arrived."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw import Kernel
from spatialclaw.agent.task_inputs import preview_frames
from spatialclaw.task import FrameSpec, Task
from tests.primitives.frames.test_frames import encode_video, numbered_frame, read_number

SOURCE_FRAMES = 32  # "frame 16 of 32": a source list of 32 images, of which the benchmark gives key frames
KEY = [0, 8, 16, 24, 31]


@pytest.fixture(scope="module")
def source_list(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A full list of 32 images; image n shows the number n."""
    folder = tmp_path_factory.mktemp("list")
    paths = [folder / f"img_{n:02d}.png" for n in range(SOURCE_FRAMES)]
    for number, path in enumerate(paths):
        Image.fromarray(numbered_frame(number)).save(path)
    return paths


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 300-frame video whose frame n shows the number n."""
    return encode_video(tmp_path_factory.mktemp("video") / "clip.mp4", 300)


def _shown(task: Task) -> list[tuple[str | None, int]]:
    """(label, number the pixels show) of each preview frame that goes with the question."""
    images, _ = preview_frames(task, count=16, max_side=4096)
    return [(part.label, read_number(np.asarray(Image.open(io.BytesIO(part.png)).convert("RGB")))) for part in images]


def test_a_video_given_as_key_frame_numbers_keeps_them_in_the_kernel_and_the_preview(clip: Path) -> None:
    spec = FrameSpec.video(clip, indices=[0, 150, 299])
    assert spec.indices == [0, 150, 299] and spec.fps is None and spec.count is None
    with pytest.raises(ValueError, match="only one of fps, count or indices"):
        FrameSpec.video(clip, count=8, indices=[0, 150])
    task = Task("Where is the camera at frame 150?", inputs=[spec], meta={"key_frames": 3})
    assert _shown(task) == [("frame 0", 0), ("frame 150", 150), ("frame 299", 299)]
    assert Task.from_dict(task.to_dict()).inputs[0].indices == [0, 150, 299]  # a replayed task keeps them
    with Kernel.for_task(task) as kernel:
        out = kernel.execute("print(frames.indices, [frames.at(150).index, frames[-1].index])")
    assert out.error is None, out.to_text()
    assert "[0, 150, 299] [150, 299]" in out.stdout


def test_key_frames_of_a_longer_image_list_carry_their_source_indices(source_list: list[Path]) -> None:
    keys = FrameSpec.images([source_list[n] for n in KEY], indices=KEY)
    full = FrameSpec.images(source_list)  # no indices: an image's index is its position in the full list
    task = Task("What changed from frame 16 of 32?", inputs=[keys, full], meta={"key_frames": 3})
    assert _shown(task) == [
        ("input 1 frame 0", 0),
        ("input 1 frame 16", 16),
        ("input 1 frame 31", 31),
        ("input 2 frame 0", 0),
        ("input 2 frame 16", 16),
        ("input 2 frame 31", 31),
    ]
    code = (
        "print(videos[0].indices, videos[0].at(16).source.endswith('img_16.png'))\n"
        "print(videos[1].indices == list(range(32)), videos[1][10:13].indices, videos[1].at(16).source[-10:])"
    )
    with Kernel.for_task(task) as kernel:
        out = kernel.execute(code)
    assert out.error is None, out.to_text()
    assert out.stdout.splitlines() == [f"{KEY} True", "True [10, 11, 12] img_16.png"]
