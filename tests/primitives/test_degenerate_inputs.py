"""Property tests of the geometry and motion tools on the degenerate inputs a model really sends: identical
frames, black or one-colour frames, letterboxed frames, 64-px frames, two unrelated photos, a handful of
matches, NaN/inf depth, one frame, a long static clip. Whatever Hypothesis draws, each tool returns a readout
whose status says what it could not measure, or refuses with its own documented error (ValueError,
ReconstructionError) that says what to pass; never a library's traceback, and never a confident number the
input cannot support (a turn between identical frames, a motion between black ones)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from spatialclaw.primitives.geometry.geom import camera_tilt
from spatialclaw.primitives.motion.estimate import motion
from spatialclaw.primitives.perception.track import track
from spatialclaw.primitives.reconstruction.reconstruct import reconstruct
from spatialclaw.primitives.reconstruction.result import ReconstructionError
from spatialclaw.primitives.scene.memory import Scene
from tests.virtual_camera import redwood_frame

FAST = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SIZES = st.sampled_from([(64, 48), (96, 64), (160, 120)])  # (width, height) pixels


@pytest.fixture(scope="module")
def photos(test_data) -> list[np.ndarray]:
    """Two unrelated real photos: a Redwood room and a Middlebury temple view."""
    room = redwood_frame(test_data, 0)[0]
    temple = np.asarray(Image.open(sorted((test_data / "multiview-temple").glob("*.png"))[0]).convert("RGB"))
    return [room, temple]


def _fit(rgb: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    return np.asarray(Image.fromarray(rgb).resize(size, Image.BILINEAR))


def _plain(size: tuple[int, int], colour: tuple[int, int, int]) -> np.ndarray:
    return np.full((size[1], size[0], 3), colour, np.uint8)


def _dots(size: tuple[int, int], count: int, seed: int) -> np.ndarray:
    """A grey frame with ``count`` small dark squares: a handful of features at most."""
    rng = np.random.default_rng(seed)
    frame = _plain(size, (128, 128, 128))
    for x, y in rng.integers(4, np.array(size) - 8, (count, 2)):
        frame[y : y + 4, x : x + 4] = 20
    return frame


def _letterbox(rgb: np.ndarray, bar: int) -> np.ndarray:
    framed = rgb.copy()
    framed[:bar], framed[-bar:] = 0, 0
    return framed


def _unmeasured(step: Any) -> bool:
    """The step claims no motion it cannot support: unknown, static, or a turn without a confident number."""
    return step.status == "unknown" or step.kind == "static"


KINDS = ["identical photo", "black", "one colour", "letterboxed identical", "few dots", "unrelated photos"]


def _pair(kind: str, photos: list[np.ndarray], size: tuple[int, int], seed: int) -> list[np.ndarray]:
    colour = tuple(int(v) for v in np.random.default_rng(seed).integers(0, 256, 3))
    if kind == "identical photo":
        frame = _fit(photos[seed % 2], size)
        return [frame, frame.copy()]
    if kind == "black":
        return [_plain(size, (0, 0, 0))] * 2
    if kind == "one colour":
        return [_plain(size, colour), _plain(size, colour)]  # type: ignore[arg-type]
    if kind == "letterboxed identical":
        frame = _letterbox(_fit(photos[0], size), max(2, size[1] // 8))
        return [frame, frame.copy()]
    if kind == "few dots":
        return [_dots(size, 1 + seed % 4, seed), _dots(size, 1 + seed % 4, seed + 1)]
    return [_fit(photos[0], size), _fit(photos[1], size)]


@FAST
@given(kind=st.sampled_from(KINDS), size=SIZES, seed=st.integers(0, 1000), fov=st.sampled_from([None, 60.0]))
def test_motion_on_degenerate_pairs_measures_nothing_it_cannot(photos, kind, size, seed, fov):
    result = motion(_pair(kind, photos, size, seed), fov_deg=fov)
    (step,) = result.steps
    text = str(result)
    assert "frames 0->1" in text
    if kind in ("black", "one colour", "few dots"):
        assert step.status == "unknown" and step.reason, text  # nothing to match: no motion is claimed
    elif kind == "unrelated photos":
        assert step.status == "unknown" or step.confidence < 0.5, text
    else:  # the same picture twice: no motion, whatever is measurable
        assert _unmeasured(step) or (step.rotation_deg is not None and step.rotation_deg < 0.5), text
        assert step.kind != "translation", text


@FAST
@given(kind=st.sampled_from(["static photo", "black"]), count=st.integers(2, 12), size=SIZES)
def test_motion_over_a_static_clip_says_it_does_not_move(photos, kind, count, size):
    frame = _fit(photos[0], size) if kind == "static photo" else _plain(size, (0, 0, 0))
    result = motion([frame] * count)
    assert len(result.steps) == count - 1
    assert all(step.kind in ("static", "unknown") for step in result.steps), result
    assert "turns" not in str(result).split("\n")[0] or kind == "black"


def test_motion_names_its_limits_for_one_frame_and_for_too_many():
    frame = _plain((64, 48), (90, 90, 90))
    with pytest.raises(ValueError, match="at least two frames"):
        motion([frame])
    with pytest.raises(ValueError, match="subsample"):
        motion([frame] * 100)


@FAST
@given(
    kind=st.sampled_from(["identical photo", "black", "few dots", "unrelated photos"]),
    size=SIZES,
    seed=st.integers(0, 1000),
)
def test_reconstruct_without_depth_registers_nothing_it_cannot(photos, kind, size, seed):
    frames = _pair(kind, photos, size, seed)
    try:
        rec = reconstruct(frames, depth=None)
    except ReconstructionError as error:
        assert "frames" in str(error)  # says which frames and why
        return
    assert len(rec.frame_status) == 2 and str(rec)
    if kind in ("black", "few dots"):
        assert rec.registered.sum() <= 1 or rec.method in ("rotation", "single-frame"), rec


@FAST
@given(
    bad=st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -1.0]),
    share=st.sampled_from([0.3, 1.0]),
    size=SIZES,
    seed=st.integers(0, 1000),
)
def test_reconstruct_with_nan_or_inf_depth_keeps_only_what_is_finite(photos, bad, share, size, seed):
    frame = _fit(photos[0], size)
    rng = np.random.default_rng(seed)
    depth = np.full(frame.shape[:2], 2.0)
    depth[rng.random(depth.shape) < share] = bad
    K = np.array([[size[0], 0, (size[0] - 1) / 2], [0, size[0], (size[1] - 1) / 2], [0, 0, 1.0]])
    try:
        rec = reconstruct([frame, frame.copy()], depth=[depth, depth.copy()], intrinsics=K)
    except (ReconstructionError, ValueError) as error:
        assert str(error)
        return
    assert np.all(np.isfinite(rec.points)), "a point from a depth that was not finite"
    assert str(rec)
    registered = rec.poses[rec.registered]
    assert np.all(np.isfinite(registered))
    if rec.registered.all():  # the same frame twice: the camera did not move
        assert np.linalg.norm(rec.poses[1][:3, 3] - rec.poses[0][:3, 3]) < 0.05


def test_reconstruct_of_one_frame_is_its_own_world(photos):
    rec = reconstruct([_fit(photos[0], (96, 64))], depth=None)
    assert rec.method == "single-frame" and rec.registered.tolist() == [True]


@FAST
@given(
    kind=st.sampled_from(["black", "one colour", "letterboxed photo", "photo", "few dots"]),
    size=SIZES,
    seed=st.integers(0, 1000),
)
def test_camera_tilt_states_a_tilt_with_its_sigma_or_says_what_to_pass(photos, kind, size, seed):
    frame = {
        "black": _plain(size, (0, 0, 0)),
        "one colour": _plain(size, (200, 30, 30)),
        "letterboxed photo": _letterbox(_fit(photos[seed % 2], size), max(2, size[1] // 8)),
        "photo": _fit(photos[seed % 2], size),
        "few dots": _dots(size, 1 + seed % 4, seed),
    }[kind]
    try:
        tilt = camera_tilt(frame)
    except ValueError as error:
        assert "pitch_deg" in str(error)  # says what to pass instead
        return
    assert kind not in ("black", "one colour", "few dots"), f"a tilt from {kind}: {tilt}"
    assert math.isfinite(tilt.pitch_deg) and math.isfinite(tilt.pitch_sigma_deg) and tilt.pitch_sigma_deg > 0


@FAST
@given(kind=st.sampled_from(["black", "identical photo", "few dots"]), size=SIZES, seed=st.integers(0, 1000))
def test_flow_tracking_on_degenerate_frames_keeps_a_box_or_says_it_lost_it(photos, kind, size, seed):
    frames = _pair(kind, photos, size, seed) * 2
    box = (size[0] // 4, size[1] // 4, size[0] // 2, size[1] // 2)
    followed = track(frames, boxes=box, method="flow")
    assert not isinstance(followed, list)
    assert len(followed.instances) == 4 and str(followed)
    for instance in followed.instances:
        assert instance is not None and np.all(np.isfinite(instance.box))
        if kind == "identical photo" and instance.score > 0:  # nothing moved: neither may the box
            assert np.allclose(instance.box, box, atol=1.0)


@FAST
@given(kind=st.sampled_from(["black", "few dots", "unrelated photos", "identical photo"]), seed=st.integers(0, 1000))
def test_link_views_without_matches_gives_no_heading(photos, kind, seed):
    frames = _pair(kind, photos, (160, 120), seed)
    scene = Scene()
    K = np.array([[140.0, 0, 79.5], [0, 140.0, 59.5], [0, 0, 1]])
    scene.add_view(0, K=K, image_size=(160, 120))
    scene.add_view(1, K=K, image_size=(160, 120))
    readout = str(scene.link_views(_Frame(frames[0], 0), _Frame(frames[1], 1)))
    if kind != "identical photo":
        assert "No reliable matches" in readout, readout


class _Frame:
    """A frame with its absolute index, as ``frames[i]`` gives it."""

    def __init__(self, array: np.ndarray, index: int) -> None:
        self.array, self.index = array, index

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.array


@pytest.mark.slow
def test_a_hundred_frames_of_a_static_camera_read_as_static_in_the_sample_motion_allows(photos):
    frames = [_fit(photos[0], (160, 120))] * 100
    with pytest.raises(ValueError, match="subsample"):
        motion(frames)
    result = motion(frames[::2][:64])
    assert all(step.kind == "static" for step in result.steps), result
    rec = reconstruct(frames[:64], depth=None)
    assert rec.method == "rotation" and rec.registered.all()
