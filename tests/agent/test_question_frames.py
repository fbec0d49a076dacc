"""Frame numbers a question names, matched to the loaded frames (issue 32, item 1): the prompt says which
loaded frame "frame 16 of 32" is when the inputs say how, and warns plainly when they cannot."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from spatialclaw.agent.prompting import task_prompt
from spatialclaw.agent.question import make_task
from spatialclaw.agent.question_frames import FrameRef, frame_notes, frame_refs, time_refs
from spatialclaw.primitives.frames.load import load_frames
from spatialclaw.task import FrameSpec, Task

DATA = Path(os.environ.get("SPATIALCLAW_TEST_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def _dino(count: int) -> list[Path]:
    paths = [DATA / "multiview-dino" / f"dino{i:04d}.png" for i in range(1, count + 1)]
    if not all(p.is_file() for p in paths):
        pytest.skip(f"the multiview-dino frames are missing under {DATA} (set SPATIALCLAW_TEST_DATA)")
    return paths


def _video(path: Path, frames: int) -> Path:
    """A real mpeg4 video whose frame i is grey level 4*i (so a decoded frame tells its source number)."""
    import av

    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(frames):
            pixels = np.full((48, 64, 3), 4 * i, np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        container.mux(stream.encode())
    return path


def test_frame_references_in_the_question():
    question = "Between frames 3 to 9 of 32 and at frame 120 (frame #120 again), 4.5 s and 12 seconds in?"
    assert frame_refs(question) == [FrameRef(3, 32), FrameRef(9, 32), FrameRef(120)]
    assert time_refs(question) == [4.5, 12.0]
    assert frame_refs("How far is the chair?") == [] and time_refs("two frames, 3 sofas") == []


def test_six_key_frames_without_source_numbers_get_a_plain_warning():
    task = make_task("At frame 16 of 32, does the camera turn left?", inputs=[FrameSpec.images(_dino(6))])
    prompt = task_prompt(task)
    assert "WARNING: frame 16 of 32" in prompt and "cannot be matched" in prompt
    assert "`frames[i]` is image i (0 to 5)" in prompt and "nearest `frames[2]`" in prompt


def test_key_frames_with_source_indices_and_times_are_matched():
    spec = FrameSpec.images(_dino(6), indices=[0, 60, 120, 180, 240, 300], times=[0, 2, 4, 6, 8, 10])
    notes = frame_notes(Task("What is at frame 120, at frame 130, at frame 400 and at 4.4 s?", inputs=[spec]))
    assert notes == [
        "frame 120 is `frames[2]`.",
        "frame 130 was not loaded; it lies between `frames[2]` (source frame 120) and `frames[3]` (source frame 180).",
        "frame 400 is outside the loaded frames (source frames 0 to 300).",
        "4.4 s is nearest `frames[2]` (at 4 s).",
    ]
    frames = load_frames(spec.to_dict())
    assert frames[2].index == 120  # the loaded frame the note names carries that source number


def test_frame_x_of_n_on_an_even_sampling_names_the_loaded_frame_nearest_that_moment(tmp_path):
    video = _video(tmp_path / "clip.mp4", 62)
    task = Task("What is in view at frame 16 of 32?", inputs=[FrameSpec.video(video, count=6)])
    (note,) = frame_notes(task)
    assert "lies between `frames[2]` and `frames[3]`, nearer `frames[2]`" in note and "counted from 1" in note
    frames = load_frames(task.inputs[0].to_dict())
    target = (16 - 1) / (32 - 1) * (62 - 1)  # frame 16 of 32 in the source's numbering
    nearest = min(range(len(frames)), key=lambda i: abs(frames[i].index - target))
    assert nearest == 2 and abs(float(np.asarray(frames[2].image).mean()) - 4 * frames[2].index) < 3
    exact = frame_notes(Task("At frame 0 of 32?", inputs=[FrameSpec.video(video, count=32)]))
    assert exact == ["frame 0 of 32 (counted from 0: 0% of the way through the video) is `frames[0]`."]


def test_other_inputs_get_a_rule_or_nothing():
    video = "/nonexistent/clip.mp4"  # no file is read
    by_fps = frame_notes(Task("At frame 16 of 32?", inputs=[FrameSpec.video(video, fps=2)]))
    assert by_fps and "`frames[round(0.4839 * (len(frames) - 1))]`" in by_fps[0]
    keyed = frame_notes(Task("At frame 16 of 32?", inputs=[FrameSpec.video(video, indices=[0, 50, 100])]))
    assert "source frames 0, 50, 100" in keyed[0] and "~0.4839 * (F - 1)" in keyed[0]
    timed = frame_notes(Task("At frame 16 of 32?", inputs=[FrameSpec.images(["/x/a.png"], times=[1.0])]))
    assert "frames[i].time" in timed[0]
    assert frame_notes(Task("At frame 16?", inputs=[FrameSpec.video(video)])) == []  # frames[i].index says it
    assert frame_notes(Task("How far is it?", inputs=[FrameSpec.video(video)])) == []


def test_plain_frame_numbers_on_images_and_several_inputs():
    images = FrameSpec.images(["/x/a.png", "/x/b.png", "/x/c.png"])
    notes = frame_notes(Task("Compare frame 0, frame 2 and frame 7.", inputs=[images, images]))
    assert notes[0] == "In `videos[0]`: frame 0 is `videos[0][0]`."
    assert "`videos[0][2]` is image 2 counting from 0" in notes[1] and "`videos[0][1]`" in notes[1]
    assert notes[2].startswith("In `videos[0]`: WARNING: frame 7 cannot be matched") and "3 images (0 to 2)" in notes[2]
    assert len(notes) == 6 and notes[3].startswith("In `videos[1]`")


def test_a_frame_before_the_second_loaded_one_lies_between_the_first_two():
    keyed = FrameSpec.images(["/x/a.png", "/x/b.png", "/x/c.png"], indices=[0, 60, 120])
    assert frame_notes(Task("What is at frame 30?", inputs=[keyed])) == [
        "frame 30 was not loaded; it lies between `frames[0]` (source frame 0) and `frames[1]` (source frame 60)."
    ]


def test_frame_1_of_1_is_the_first_loaded_frame():
    video = "/nonexistent/clip.mp4"  # no file is read
    assert frame_notes(Task("At frame 1 of 1?", inputs=[FrameSpec.video(video, count=6)])) == [
        "frame 1 of 1 (counted from 1: 0% of the way through the video) is `frames[0]`."
    ]


def test_a_long_list_of_loaded_source_frames_is_cut_after_twelve():
    keyed = FrameSpec.video("/nonexistent/clip.mp4", indices=list(range(0, 130, 10)))  # 13 key frames
    (note,) = frame_notes(Task("At frame 16 of 32?", inputs=[keyed]))
    assert "source frames 0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, ...: take the one nearest" in note


def test_the_last_frame_of_n_on_plain_images_is_nearest_the_last_image():
    images = FrameSpec.images([f"/x/{i}.png" for i in range(6)])
    (note,) = frame_notes(Task("At frame 32 of 32?", inputs=[images]))
    assert note.startswith("WARNING: frame 32 of 32 (counted from 1: 100% of the way through the video) cannot")
    assert note.endswith("is it nearest `frames[5]`).")


def test_six_key_frames_without_source_numbers_warn_in_the_prompt_without_reading_them():
    # the notes come from the inputs' description alone: no image is read (the paths need not exist)
    images = FrameSpec.images([f"/x/{i}.png" for i in range(6)])
    prompt = task_prompt(make_task("At frame 16 of 32, does the camera turn left?", inputs=[images]))
    assert (
        "Frames the question names: WARNING: frame 16 of 32 (counted from 1: 48% of the way through the video) cannot "
        "be matched to the loaded frames: the 6 images carry no source frame numbers or times; `frames[i]` is image i "
        "(0 to 5), not the question's frame numbering (only if the images are spread evenly over the whole video is "
        "it nearest `frames[2]`)." in prompt
    )


def test_key_frames_late_in_the_video_and_moments_between_loaded_times():
    spec = FrameSpec.images(
        [f"/x/{i}.png" for i in range(6)], indices=[0, 60, 120, 180, 240, 300], times=[0, 2, 4, 6, 8, 10]
    )
    notes = frame_notes(Task("What is at frame 250, at frame 400, at 7.2 s and at 0.6 s?", inputs=[spec]))
    assert notes == [
        "frame 250 was not loaded; it lies between `frames[4]` (source frame 240) and `frames[5]` (source frame 300).",
        "frame 400 is outside the loaded frames (source frames 0 to 300).",
        "7.2 s is nearest `frames[4]` (at 8 s).",
        "0.6 s is nearest `frames[0]` (at 0 s).",
    ]


def test_frame_x_of_n_past_the_middle_of_two_loaded_frames_is_nearer_the_later():
    video = "/nonexistent/clip.mp4"  # no file is read
    assert frame_notes(Task("At frame 18 of 32?", inputs=[FrameSpec.video(video, count=6)])) == [
        "frame 18 of 32 (counted from 1: 55% of the way through the video) lies between `frames[2]` and "
        "`frames[3]`, nearer `frames[3]`."
    ]


def test_a_frame_past_n_names_the_last_loaded_frame_not_one_past_it():
    video = "/nonexistent/clip.mp4"
    assert frame_notes(Task("At frame 40 of 32?", inputs=[FrameSpec.video(video, count=6)])) == [
        "frame 40 of 32 (counted from 1: 100% of the way through the video) is `frames[5]`."
    ]


def test_a_plain_frame_0_does_not_make_frame_x_of_n_count_from_0():
    # "frame 0" is a source frame number; only "frame 0 of N" says the X of N count from 0
    (note,) = frame_notes(Task("Compare frame 0 with frame 16 of 32.", inputs=[FrameSpec.video("/x/c.mp4", count=6)]))
    assert note.startswith("frame 16 of 32 (counted from 1: 48% of the way through the video)")


def test_the_frame_number_equal_to_the_image_count_is_past_the_last_image():
    images = FrameSpec.images(["/x/a.png", "/x/b.png", "/x/c.png"])
    assert frame_notes(Task("Compare frame 3.", inputs=[images])) == [
        "WARNING: frame 3 cannot be matched to the loaded frames: there are 3 images (0 to 2) and they carry no "
        "source frame numbers or times."
    ]
