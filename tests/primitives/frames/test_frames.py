"""Frames from image files and videos: absolute indices, timestamps, sampling, lazy decoding, clear errors.

The test video is encoded here with PyAV (H.264 with B-frames and a keyframe every 60 frames); every
frame carries its own number as a row of black/white blocks, so each decoded frame proves which frame
the decoder actually produced.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.frames.frame import Frame, FrameNotFound, Frames
from spatialclaw.primitives.frames.load import load_frames, load_images, load_video
from spatialclaw.primitives.frames.sources import FrameLoadError, clear_decoded_cache, decode_stats

FPS, SECONDS, WIDTH, HEIGHT, BITS = 30, 10, 320, 240, 10
BLOCK = WIDTH // BITS


def numbered_frame(number: int, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """A frame whose top half shows ``number`` in binary (one block per bit, most significant first)."""
    array = np.full((height, width, 3), 60, np.uint8)
    block = width // BITS
    for bit in range(BITS):
        if number >> (BITS - 1 - bit) & 1:
            array[: height // 2, bit * block : (bit + 1) * block] = 255
        else:
            array[: height // 2, bit * block : (bit + 1) * block] = 0
    return array


def read_number(array: np.ndarray) -> int:
    height, width = array.shape[:2]
    block = width // BITS
    top = array[: height // 2].astype(np.float64).mean(axis=(0, 2))
    bits = [top[bit * block + 4 : (bit + 1) * block - 4].mean() > 128 for bit in range(BITS)]
    return int("".join("1" if b else "0" for b in bits), 2)


def encode_video(path: Path, frames: int, fps: int = FPS, rotation: int | None = None, faststart: bool = False) -> Path:
    container = av.open(str(path), "w", options={"movflags": "faststart"} if faststart else {})
    stream = container.add_stream("libx264", rate=fps, options={"preset": "veryfast", "g": "60", "bf": "2"})
    stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
    if rotation is not None:
        stream.set_display_rotation(rotation)
    for number in range(frames):
        frame = av.VideoFrame.from_ndarray(numbered_frame(number), format="rgb24")
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    container.close()
    return path


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 10 s, 30 fps, 320x240 H.264 video whose frame n shows the number n."""
    return encode_video(tmp_path_factory.mktemp("video") / "clip.mp4", FPS * SECONDS)


@pytest.fixture
def images(tmp_path: Path) -> list[Path]:
    paths = []
    for number in range(4):
        path = tmp_path / f"view_{number}.png"
        Image.fromarray(numbered_frame(number * 7, 160, 120)).save(path)
        paths.append(path)
    return paths


@pytest.fixture(autouse=True)
def _cold_frame_cache() -> None:
    """Decoded frames are cached per process; each test starts cold so decode counts are its own."""
    clear_decoded_cache()


def counters() -> dict[str, int]:
    return dict(decode_stats)


def delta(before: dict[str, int]) -> dict[str, int]:
    return {key: decode_stats[key] - before[key] for key in before}


# --- image files -------------------------------------------------------------------------------------


def test_images_get_the_given_absolute_indices_and_decode_only_when_used(images: list[Path]) -> None:
    before = counters()
    frames = load_images(images, indices=[10, 20, 30, 40])
    assert frames.indices == [10, 20, 30, 40]
    assert frames.times == [None] * 4
    assert (frames[1].width, frames[1].height) == (160, 120)
    assert repr(frames[1]) == "Frame(index=20, 160x120, source='view_1.png')"
    assert delta(before)["image_files_decoded"] == 0
    assert read_number(frames.at(30).array) == 14
    assert delta(before)["image_files_decoded"] == 1
    assert frames[2].source == str(images[2].resolve())


def test_slices_and_position_lists_keep_absolute_indices(images: list[Path]) -> None:
    frames = load_images(images, indices=[5, 6, 7, 8])
    tail = frames[1:]
    assert isinstance(tail, Frames)
    assert tail.indices == [6, 7, 8]
    assert tail[0].index == 6
    assert frames[-1].index == 8
    assert frames[[3, 0]].indices == [8, 5]
    assert frames[np.array([True, False, False, True])].indices == [5, 8]
    assert frames[np.array([3, -4])].indices == [8, 5]
    assert frames.every(2).indices == [5, 7]
    assert frames.sample(2).indices == [5, 8]
    assert frames.sample(10).indices == [5, 6, 7, 8]
    assert read_number(tail.at(7).array) == 14


def test_at_an_absent_index_lists_the_indices_that_exist(images: list[Path]) -> None:
    frames = load_images(images, indices=[0, 15, 30, 45])
    with pytest.raises(FrameNotFound) as caught:
        frames.at(20)
    message = str(caught.value)
    assert "20" in message and "[0, 15, 30, 45]" in message and "nearest: 15, 30" in message
    with pytest.raises(IndexError, match=r"frames\.at"):
        frames[4]
    long = Frames(Frame.from_image(np.zeros((2, 2, 3), np.uint8), index=i) for i in range(0, 900, 3))
    with pytest.raises(FrameNotFound, match=r"indices \[0, 3, 6, \.\.\., 897\] \(every 3\) \(nearest: 3, 6\)"):
        long.at(4)


def test_image_indices_must_match_the_paths(images: list[Path]) -> None:
    with pytest.raises(FrameLoadError, match="3 indices for 4 images"):
        load_images(images, indices=[0, 1, 2])
    with pytest.raises(FrameLoadError, match="repeated: \\[1\\]"):
        load_images(images, indices=[0, 1, 1, 2])
    with pytest.raises(FrameLoadError, match="no image paths"):
        load_images([])


def test_exif_orientation_is_applied(tmp_path: Path) -> None:
    array = np.zeros((40, 80, 3), np.uint8)
    array[:, :40] = 255  # left half white in the stored (sideways) pixels
    exif = Image.Exif()
    exif[0x0112] = 6  # the viewer must rotate 90 degrees clockwise
    path = tmp_path / "phone.jpg"
    Image.fromarray(array).save(path, exif=exif, quality=95)
    frame = load_images([path])[0]
    assert (frame.width, frame.height) == (40, 80)
    upright = frame.array
    assert upright.shape == (80, 40, 3)
    assert upright[:30].mean() > 200 and upright[50:].mean() < 50  # the left half became the top


# --- videos ------------------------------------------------------------------------------------------


def test_every_frame_of_a_10s_video_has_its_number_and_timestamp(video: Path) -> None:
    frames = load_video(video)
    assert len(frames) == FPS * SECONDS
    assert frames.indices == list(range(FPS * SECONDS))
    assert frames.fps == pytest.approx(FPS)
    assert frames.duration == pytest.approx(SECONDS)
    assert frames.total_frames == FPS * SECONDS
    np.testing.assert_allclose(frames.times, np.arange(FPS * SECONDS) / FPS, atol=1e-6)
    before = counters()
    decoded = [read_number(frame.array) for frame in frames]
    assert decoded == list(range(FPS * SECONDS))
    work = delta(before)
    assert work["video_frames_decoded"] == FPS * SECONDS  # reading in order is one pass, nothing decoded twice
    assert work["video_seeks"] == 0


def test_fps_sampling_takes_the_frame_nearest_each_tick(video: Path) -> None:
    frames = load_video(video, fps=2)
    assert frames.indices == list(range(0, 300, 15))
    np.testing.assert_allclose(frames.times, np.arange(20) * 0.5, atol=1e-6)
    assert [read_number(frame.array) for frame in frames] == frames.indices
    assert load_video(video, fps=7).indices[:4] == [0, 4, 9, 13]  # 1/7 s = frame 4.29, 2/7 s = 8.57, 3/7 s = 12.86
    assert load_video(video, fps=100).indices == list(range(300))


def test_count_sampling_spreads_frames_evenly_and_decodes_only_them(video: Path) -> None:
    before = counters()
    frames = load_video(video, count=8)
    assert frames.indices == [0, 43, 85, 128, 171, 214, 256, 299]
    np.testing.assert_allclose(frames.times, np.array(frames.indices) / FPS, atol=1e-6)
    assert delta(before) == {key: 0 for key in before}  # loading decodes no pixels
    assert [read_number(frame.array) for frame in frames] == frames.indices
    work = delta(before)
    assert work["video_frames_converted"] == 8
    assert work["video_frames_decoded"] <= FPS * SECONDS
    assert "8 frames" in repr(frames) and "30.00 fps" in repr(frames) and "clip.mp4" in repr(frames)


def test_video_decoding_waits_until_pixels_are_used(video: Path) -> None:
    before = counters()
    frames = load_video(video, fps=1)
    frame = frames.at(150)
    facts = (frame.index, frame.time, frame.width, frame.height, frame.size, frame.shape, repr(frame), repr(frames))
    assert facts[:6] == (150, 5.0, WIDTH, HEIGHT, (WIDTH, HEIGHT), (HEIGHT, WIDTH, 3))
    assert facts[6] == "Frame(index=150, time=5.00s, 320x240, source='clip.mp4')"
    assert delta(before) == {key: 0 for key in before}
    assert read_number(frame.array) == 150
    work = delta(before)
    assert work["video_seeks"] == 1 and work["video_frames_decoded"] == 31  # from the keyframe at 120, not from 0
    assert work["video_frames_converted"] == 2  # 150, and 120 (also selected) on the way
    assert read_number(frame.array) == 150
    assert read_number(frames.at(120).array) == 120
    assert delta(before)["video_frames_converted"] == 2  # both come from the cache now


def test_random_access_after_reading_forward_gets_the_right_frames(video: Path) -> None:
    frames = load_video(video, indices=[299, 3, 200, 61, 0])
    assert frames.indices == [299, 3, 200, 61, 0]
    assert [read_number(frame.array) for frame in frames] == [299, 3, 200, 61, 0]
    assert frames.at_time(2.1).index == 61


@pytest.mark.parametrize(
    ("suffix", "codec"),
    [(".avi", "mpeg4"), (".mkv", "libx264"), (".webm", "libvpx-vp9"), (".mov", "mjpeg"), (".mpg", "mpeg2video")],
)
def test_other_containers_and_codecs_decode_the_right_frames(tmp_path: Path, suffix: str, codec: str) -> None:
    if codec not in av.codecs_available:
        pytest.skip(f"this PyAV build has no {codec} encoder")
    path = tmp_path / f"clip{suffix}"
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=25)
        stream.width, stream.height = WIDTH, HEIGHT
        stream.pix_fmt = "yuvj420p" if codec == "mjpeg" else "yuv420p"
        for number in range(50):
            container.mux(stream.encode(av.VideoFrame.from_ndarray(numbered_frame(number), format="rgb24")))
        container.mux(stream.encode())
    frames = load_video(path, count=5)
    assert frames.indices == [0, 12, 24, 37, 49]
    np.testing.assert_allclose(frames.times, np.array(frames.indices) / 25, atol=1e-3)
    assert [read_number(frame.array) for frame in reversed(frames)] == [49, 37, 24, 12, 0]  # backward jumps
    clear_decoded_cache()
    assert [read_number(frame.array) for frame in frames] == [0, 12, 24, 37, 49]


def test_max_frames_thins_a_selection_evenly(video: Path) -> None:
    assert load_video(video, max_frames=4).indices == [0, 100, 199, 299]
    assert load_video(video, fps=2, max_frames=3).indices == [0, 150, 285]


def test_display_rotation_is_applied(tmp_path: Path) -> None:
    path = encode_video(tmp_path / "portrait.mp4", 3, rotation=90)
    frame = load_video(path)[2]
    assert (frame.width, frame.height) == (HEIGHT, WIDTH)
    upright = frame.array
    assert upright.shape == (WIDTH, HEIGHT, 3)
    # 90 degrees counter-clockwise: the stored top half (the number) becomes the left half
    assert read_number(np.rot90(upright, k=-1)) == 2


def test_frames_survive_pickling_and_decode_afterwards(video: Path) -> None:
    frames = load_video(video, count=3)
    restored = pickle.loads(pickle.dumps(frames))
    assert restored.indices == [0, 150, 299]
    assert len(pickle.dumps(frames)) < 100_000
    assert [read_number(frame.array) for frame in restored] == [0, 150, 299]


# --- Frame behaves like an image ---------------------------------------------------------------------


def test_frame_works_with_numpy_pil_and_ipython(video: Path) -> None:
    frame = load_video(video, indices=[42])[0]
    array = np.asarray(frame)
    assert array.shape == (HEIGHT, WIDTH, 3) and array.dtype == np.uint8
    assert read_number(array) == 42
    assert np.asarray(frame, dtype=np.float32).dtype == np.float32
    assert frame.crop((0, 0, 64, 32)).size == (64, 32)
    assert frame.resize((160, 120)).size == (160, 120)
    assert frame.convert("L").mode == "L"
    assert frame.getpixel((5, 200)) == tuple(frame.array[200, 5])
    png = frame._repr_png_()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(png))), frame.array)
    with pytest.raises(AttributeError, match="no attribute 'volume'"):
        _ = frame.volume


def test_changing_a_frames_image_or_array_leaves_the_frame_unchanged(video: Path) -> None:
    frame = load_video(video, indices=[7])[0]
    image = frame.image
    image.paste((255, 0, 0), (0, 0, WIDTH, HEIGHT))
    array = frame.array
    array[:] = 0
    assert read_number(frame.array) == 7


def test_frame_from_an_in_memory_image() -> None:
    frame = Frame.from_image(numbered_frame(9), index=120, time=4.0)
    assert (frame.index, frame.time, frame.source) == (120, 4.0, None)
    assert read_number(frame.array) == 9
    assert Frames([frame]).at(120) is frame


# --- bad input ---------------------------------------------------------------------------------------


def test_a_missing_path_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jpg"
    with pytest.raises(FrameLoadError, match=r"not found: .*nowhere\.jpg"):
        load_images([missing])
    with pytest.raises(FrameLoadError, match=r"not found: .*nowhere\.mp4"):
        load_video(tmp_path / "nowhere.mp4")


def test_a_directory_is_refused_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(FrameLoadError, match=r"is a directory.*glob"):
        load_images([tmp_path])


def test_unsupported_extensions_say_what_to_use(tmp_path: Path, video: Path, images: list[Path]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not an image")
    with pytest.raises(FrameLoadError, match=r"unsupported image extension '\.txt'.*notes\.txt"):
        load_images([notes])
    with pytest.raises(FrameLoadError, match=r"clip\.mp4 is a video.*load_video"):
        load_images([video])
    with pytest.raises(FrameLoadError, match=r"view_0\.png is an image.*load_images"):
        load_video(images[0])
    with pytest.raises(FrameLoadError, match=r"unsupported video extension '\.txt'"):
        load_video(notes)


def test_a_corrupt_image_is_refused_at_load_time(tmp_path: Path, images: list[Path]) -> None:
    garbage = tmp_path / "garbage.png"
    garbage.write_bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes())
    with pytest.raises(FrameLoadError, match=r"cannot read image .*garbage\.png"):
        load_images([images[0], garbage])


def test_truncated_jpeg_and_png_are_refused_at_load_time(tmp_path: Path) -> None:
    noise = np.random.default_rng(1).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    for name in ("cut.jpg", "cut.png"):
        whole = tmp_path / f"whole_{name}"
        Image.fromarray(noise).save(whole)
        data = whole.read_bytes()
        cut = tmp_path / name
        cut.write_bytes(data[: len(data) // 2])
        with pytest.raises(FrameLoadError, match=f"cannot read image .*{name}"):
            load_images([cut])
        assert load_images([whole])[0].width == 160


def test_truncated_videos_are_refused(tmp_path: Path) -> None:
    for faststart in (False, True):  # index at the end (lost) or at the start (data missing)
        whole = encode_video(tmp_path / f"whole_{faststart}.mp4", 90, faststart=faststart)
        data = whole.read_bytes()
        cut = tmp_path / f"cut_{faststart}.mp4"
        cut.write_bytes(data[: len(data) // 2])
        with pytest.raises(FrameLoadError, match=f"cannot read video .*cut_{faststart}.mp4"):
            load_video(cut)


def test_empty_and_garbage_videos_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(FrameLoadError, match=r"cannot read video .*empty\.mp4"):
        load_video(empty)
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(np.random.default_rng(2).integers(0, 256, 50_000, dtype=np.uint8).tobytes())
    with pytest.raises(FrameLoadError, match=r"cannot read video .*garbage\.mp4"):
        load_video(garbage)
    no_frames = tmp_path / "no_frames.mp4"
    container = av.open(str(no_frames), "w")
    stream = container.add_stream("libx264", rate=30)
    stream.width, stream.height = 64, 48
    container.start_encoding()
    container.close()
    with pytest.raises(FrameLoadError, match=r"no_frames\.mp4: it contains no video"):
        load_video(no_frames)


def test_selections_that_pick_nothing_are_refused(video: Path) -> None:
    with pytest.raises(FrameLoadError, match="count must be at least 1"):
        load_video(video, count=0)
    with pytest.raises(FrameLoadError, match="fps must be positive"):
        load_video(video, fps=0)
    with pytest.raises(FrameLoadError, match="indices is empty"):
        load_video(video, indices=[])
    with pytest.raises(FrameLoadError, match=r"outside .*clip\.mp4, which has frames 0\.\.299"):
        load_video(video, indices=[10, 300])
    with pytest.raises(FrameLoadError, match="only one of fps, count or indices"):
        load_video(video, fps=1, count=4)


# --- frame specs -------------------------------------------------------------------------------------


def test_load_frames_reads_frame_spec_dicts(video: Path, images: list[Path]) -> None:
    spec = {"kind": "video", "paths": [str(video)], "fps": None, "count": 5, "indices": None}
    assert load_frames(spec).indices == [0, 75, 150, 224, 299]
    spec = {"kind": "images", "paths": [str(p) for p in images], "fps": None, "count": None, "indices": [3, 2, 1, 0]}
    assert load_frames(spec).indices == [3, 2, 1, 0]
    with pytest.raises(FrameLoadError, match="kind must be 'images' or 'video'"):
        load_frames({"kind": "audio", "paths": [str(video)]})
    with pytest.raises(FrameLoadError, match="exactly one path"):
        load_frames({"kind": "video", "paths": [str(video), str(video)]})
    with pytest.raises(FrameLoadError, match="unknown frame spec keys \\['fsp'\\]"):
        load_frames({"kind": "video", "paths": [str(video)], "fsp": 2})


# --- real data ---------------------------------------------------------------------------------------


def test_redwood_colour_frames(test_data: Path) -> None:
    paths = sorted((test_data / "rgbd-redwood" / "color").glob("*.jpg"))
    assert len(paths) == 5
    frames = load_frames(
        {"kind": "images", "paths": [str(p) for p in paths], "fps": None, "count": None, "indices": None}
    )
    assert frames.indices == [0, 1, 2, 3, 4]
    assert all((frame.width, frame.height) == (640, 480) for frame in frames)
    for frame, path in zip(frames, paths, strict=True):
        np.testing.assert_array_equal(frame.array, np.asarray(Image.open(path).convert("RGB")))
    assert frames[3:].at(4).source == str(paths[4].resolve())
    assert "5 files in" in repr(frames) and "rgbd-redwood" in repr(frames)
