"""The dev set's six-key-frame clip classes (camera_vertical, orbit_clip, frame_number): their answers are
recovered from the images they wrote and from the calibration read here on its own, and a question that
names frame numbers reaches the kernel with those numbers."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw import jsonl
from spatialclaw.benchmarks.data.local import load_local_tasks
from spatialclaw.benchmarks.devset import evaluate
from spatialclaw.benchmarks.devset.clips import camera_vertical, frame_number
from spatialclaw.benchmarks.devset.orbit import orbit_clip
from tests.paths import DATA_ROOT

pytestmark = pytest.mark.skipif(
    not (DATA_ROOT / "rgbd-redwood").is_dir(), reason=f"real data not found at {DATA_ROOT} (set SPATIALCLAW_TEST_DATA)"
)
BUILDERS = (camera_vertical, orbit_clip, frame_number)
SIZES = {"camera_vertical": (8, 10), "orbit_clip": (6, 8), "frame_number": (6, 8)}


def build(out: Path, seed: int = 0) -> list[dict]:
    records = []
    for number, builder in enumerate(BUILDERS):
        records += builder(DATA_ROOT, out, np.random.default_rng([seed, number]))
    return records


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("clips")
    records = build(out)
    path = out / "tasks.jsonl"
    jsonl.write_atomic(path, ({**record, "benchmark": "devset"} for record in records))
    return path, records


def image_names(record: dict) -> list[str]:
    return record["images"] if "images" in record else record["inputs"][0]["paths"]


def gray(folder: Path, name: str) -> np.ndarray:
    return np.array(Image.open(folder / name).convert("L"))


def matches(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SIFT matches (pixels of a and b) found at twice the size, ratio test 0.75."""
    sift = cv2.SIFT_create()
    ka, da = sift.detectAndCompute(cv2.resize(a, None, fx=2, fy=2), None)
    kb, db = sift.detectAndCompute(cv2.resize(b, None, fx=2, fy=2), None)
    good = [m for m, n in cv2.BFMatcher().knnMatch(da, db, k=2) if m.distance < 0.75 * n.distance]
    return np.float32([ka[m.queryIdx].pt for m in good]) / 2, np.float32([kb[m.trainIdx].pt for m in good]) / 2


def later_axis(a: np.ndarray, b: np.ndarray, hfov_deg: float) -> np.ndarray:
    """The optical axis of image b's camera in image a's camera (unit vector), from a homography between
    the two images and the stated horizontal field of view (a pure rotation: p_a = K R K^-1 p_b)."""
    h, w = a.shape
    f = w / 2 / math.tan(math.radians(hfov_deg / 2))
    K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
    pa, pb = matches(a, b)
    H, _ = cv2.findHomography(pa, pb, cv2.RANSAC, 1.5)
    axis = np.linalg.inv(K) @ np.linalg.inv(H) @ K @ [0, 0, 1.0]
    return axis / np.linalg.norm(axis) * np.sign(axis[2])


def elevation_deg(axis: np.ndarray) -> float:
    return math.degrees(math.asin(-axis[1]))


def azimuth_deg(axis: np.ndarray) -> float:
    return math.degrees(math.atan2(axis[0], axis[2]))


def test_every_item_is_six_key_frames_at_benchmark_size(generated):
    path, records = generated
    assert len({r["task_id"] for r in records}) == len(records)
    for category, (low, high) in SIZES.items():
        items = [r for r in records if r["category"] == category]
        assert low <= len(items) <= high, category
    for record in records:
        names = image_names(record)
        assert len(names) == 6, record["task_id"]
        for name in names:
            assert 150 <= Image.open(path.parent / name).size[0] <= 250
        assert record["meta"]["source"]
        if "choices" in record:
            assert record["answer"] in [chr(65 + i) for i in range(len(record["choices"]))]
        else:
            assert record["answer_type"] == "number" and record["metric"] == "mra"
            assert isinstance(record["answer"], float)


@pytest.mark.slow  # generation runs again; the default run keeps one build per file
def test_generation_is_deterministic(generated, tmp_path):
    path, records = generated
    assert build(tmp_path) == records
    for record in records:
        for name in image_names(record):
            assert (tmp_path / name).read_bytes() == (path.parent / name).read_bytes()
    (tmp_path / "other").mkdir()
    other = frame_number(DATA_ROOT, tmp_path / "other", np.random.default_rng([1, 2]))
    assert [r["answer"] for r in other] != [r["answer"] for r in records if r["category"] == "frame_number"]


def test_tilts_are_what_the_images_show(generated):
    """The signed tilt recovered from the first and last key frames (features + homography at the stated
    field of view) is the answer within 0.3 degrees, with the pan mixed in."""
    path, records = generated
    items = [r for r in records if r["category"] == "camera_vertical" and "choices" not in r]
    assert {np.sign(r["answer"]) for r in items} == {-1.0, 1.0}
    for record in items:
        names = image_names(record)
        axis = later_axis(gray(path.parent, names[0]), gray(path.parent, names[-1]), record["meta"]["hfov_deg"])
        assert elevation_deg(axis) == pytest.approx(record["answer"], abs=0.3), record["task_id"]
        assert abs(record["meta"]["pan_deg"]) >= 1.0


def test_vertical_choices_are_what_the_images_show(generated):
    """Up or down from where the scene goes (it goes down in the image when the camera goes up, whether
    it tilts or moves); tilt or move from the homography between the first and last key frames: a tilt's is
    K R K^-1 (K^-1 H K has equal singular values), a vertical move of 15-30 cm shears it measurably."""
    path, records = generated
    items = [r for r in records if r["category"] == "camera_vertical" and "choices" in r]
    assert {r["choices"][ord(r["answer"]) - 65] for r in items} == {
        "tilted up",
        "tilted down",
        "moved up",
        "moved down",
    }
    for record in items:
        label = record["choices"][ord(record["answer"]) - 65]
        a, b = (gray(path.parent, name) for name in (image_names(record)[0], image_names(record)[-1]))
        pa, pb = matches(a, b)
        assert (np.median(pb[:, 1] - pa[:, 1]) > 0) == label.endswith("up"), record["task_id"]
        H, _ = cv2.findHomography(pa, pb, cv2.RANSAC, 1.0)
        h, w = a.shape
        f = w / 2 / math.tan(math.radians(record["meta"]["hfov_deg"] / 2))
        K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
        singular = np.linalg.svd(np.linalg.inv(K) @ H @ K, compute_uv=False)
        if label.startswith("tilted"):
            assert singular[0] / singular[2] < 1.035, record["task_id"]
        else:
            assert singular[0] / singular[2] > 1.05, record["task_id"]
            assert 0.15 <= abs(record["meta"]["lift_m"]) <= 0.3


def read_calibration(folder: Path) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """K, R, t per image from the Middlebury ``*_par.txt`` (projection K [R t])."""
    [table] = folder.glob("*_par.txt")
    cameras = {}
    for line in table.read_text().splitlines()[1:]:
        p = line.split()
        if len(p) == 22:
            numbers = np.array(p[1:], float)
            cameras[p[0]] = (numbers[:9].reshape(3, 3), numbers[9:18].reshape(3, 3), numbers[18:])
    return cameras


def test_orbit_answers_follow_the_calibration(generated):
    """Read here from the calibration: the camera's travel along its own x axis (the photo is turned 90
    degrees counter-clockwise, so its x axis is the calibration's y) and the angle between the first and last
    viewing directions. The images are the turned photos, and the object's up (world +y) is up in them."""
    path, records = generated
    items = [r for r in records if r["category"] == "orbit_clip"]
    assert {r["meta"]["reversed"] for r in items} == {True, False}
    assert {r["meta"]["source"] for r in items} == {"multiview-temple", "multiview-dino"}
    directions = [r for r in items if "choices" in r]
    assert {r["answer"] for r in directions} == {"A", "B"}
    for record in items:
        folder = DATA_ROOT / record["meta"]["source"]
        cameras = read_calibration(folder)
        views = record["meta"]["views"]
        _, R0, t0 = cameras[views[0]]
        _, R5, t5 = cameras[views[-1]]
        if "choices" in record:
            travel = R0[1] @ ((-R5.T @ t5) - (-R0.T @ t0))
            assert record["choices"][ord(record["answer"]) - 65].endswith("right" if travel > 0 else "left")
        else:
            angle = math.degrees(math.acos(np.clip(R0[2] @ R5[2], -1, 1)))
            assert record["answer"] == pytest.approx(angle, abs=0.01)
        for name, view in zip(record["images"], views, strict=True):
            shown = np.array(Image.open(path.parent / name).convert("RGB"), float)
            photo = Image.open(folder / view).convert("RGB")
            size = shown.shape[1::-1]
            ccw = np.array(photo.rotate(90, expand=True).resize(size, Image.Resampling.LANCZOS), float)
            cw = np.array(photo.rotate(-90, expand=True).resize(size, Image.Resampling.LANCZOS), float)
            assert np.abs(shown - ccw).mean() < 2 < np.abs(shown - cw).mean()
        # world +y through the camera: a point above another projects higher in the turned photo
        K, R, t = cameras[views[0]]
        below, above = (K @ (R @ np.array([0.0, y, 0.0]) + t) for y in (0.0, 0.08))
        assert above[0] / above[2] > below[0] / below[2]  # + calibration x = up after the turn


def test_frame_number_answers_follow_the_motion_table_and_the_images(generated):
    path, records = generated
    items = [r for r in records if r["category"] == "frame_number"]
    assert {r["task_id"].rsplit("-", 1)[1] for r in items} == {"direction", "pan", "tilt"}
    for record in items:
        meta = record["meta"]
        keys = record["inputs"][0]["indices"]
        assert keys == meta["key_frames"] and keys == sorted(keys) and len(keys) == 6
        assert keys[0] >= 0 and keys[-1] <= 31
        assert ", ".join(str(k) for k in keys[:-1]) + f" and {keys[-1]}" in record["question"]
        pan, tilt = np.array(meta["pan_deg"]), np.array(meta["tilt_deg"])
        assert len(pan) == len(tilt) == 32 and pan[0] == tilt[0] == 0
        a, b = meta["asked_frames"]
        assert f"between frame {a} and frame {b}" in record["question"].lower()
        if "choices" in record:
            # one steady motion between the asked frames, by the table: which one is the answer
            steps = np.stack([np.diff(pan[a : b + 1]), np.diff(tilt[a : b + 1])])
            moving = np.flatnonzero(np.abs(steps).sum(axis=1))
            assert len(moving) == 1 and len(set(np.sign(steps[moving[0]]))) == 1, record["task_id"]
            sign = np.sign(steps[moving[0]][0])
            expected = (["panned left", "panned right"] if moving[0] == 0 else ["tilted down", "tilted up"])[
                int(sign > 0)
            ]
            assert record["choices"][ord(record["answer"]) - 65] == expected
            # and the images agree: two key frames inside the asked span turn that way
            inside = [k for k in keys if a <= k <= b]
            axis = later_axis(
                gray(path.parent, record["inputs"][0]["paths"][keys.index(inside[0])]),
                gray(path.parent, record["inputs"][0]["paths"][keys.index(inside[-1])]),
                meta["hfov_deg"],
            )
            measured = azimuth_deg(axis) if moving[0] == 0 else elevation_deg(axis)
            assert np.sign(measured) == sign and abs(measured) > 1.0, record["task_id"]
        else:
            table = pan if meta["asked_axis"] == "pan" else tilt
            assert record["answer"] == pytest.approx(table[b] - table[a], abs=0.01)
            assert abs(record["answer"]) >= 3
            assert a in keys and b in keys
            axis = later_axis(
                gray(path.parent, record["inputs"][0]["paths"][keys.index(a)]),
                gray(path.parent, record["inputs"][0]["paths"][keys.index(b)]),
                meta["hfov_deg"],
            )
            measured = azimuth_deg(axis) if meta["asked_axis"] == "pan" else elevation_deg(axis)
            assert measured == pytest.approx(record["answer"], abs=0.3), record["task_id"]


def test_the_key_frames_reach_the_kernel_with_their_frame_numbers(generated, tmp_path):
    """load_local_tasks reads the written file; the prepared questions show each image's frame number and
    the session command passes them with --indices; run as printed, the kernel's frames carry them."""
    path, records = generated
    tasks = {t.task_id: t for t in load_local_tasks(path)}
    assert set(tasks) == {r["task_id"] for r in records}
    record = next(r for r in records if r["task_id"].startswith("frame_number-") and "choices" in r)
    keys = record["inputs"][0]["indices"]
    task = tasks[record["task_id"]]
    assert task.inputs[0].indices == keys and task.category == "frame_number"

    questions = evaluate.prepare(path, tmp_path / "eval").read_text()
    block = questions.split(f"## {task.task_id}\n")[1].split("\n## ")[0]
    for name, key in zip(record["inputs"][0]["paths"], keys, strict=True):
        assert f"{path.parent / name}  (frame {key})" in block
    command = evaluate.session_command(task, tmp_path / "eval" / "sessions")
    assert f"--indices {' '.join(map(str, keys))}" in command
    assert command in block
    orbit = evaluate.session_command(tasks["orbit_clip-0-direction"], tmp_path)
    assert "--indices" not in orbit

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    started = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=300)
    assert started.returncode == 0, started.stderr
    root = ["--root", str(tmp_path / "eval" / "sessions")]
    try:
        ran = subprocess.run(
            ["spatialclaw", "session", "exec", *root, task.task_id, "--code", "-"],
            input="print('indices', [f.index for f in frames])",
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        subprocess.run(
            ["spatialclaw", "session", "close", *root, task.task_id], env=env, capture_output=True, timeout=120
        )
    assert ran.returncode == 0, ran.stderr
    assert f"indices {keys}" in ran.stdout
