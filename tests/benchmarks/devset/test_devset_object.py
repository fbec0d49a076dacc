"""The dev set's ``object_motion`` class: a real photographed dinosaur walking through real rooms in clips of
6 key frames, some played backwards or mirrored. Its answers are recovered from the images alone (each frame
registered to the room photo by features, the dinosaur found as what differs from the room, its facing
from the side view's silhouette), and ``motion(object=...)`` is read on a few clips in a real kernel."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw import Kernel, jsonl
from spatialclaw.benchmarks.data.local import load_local_tasks
from spatialclaw.benchmarks.devset import object as devset_object
from spatialclaw.benchmarks.devset.object import object_motion
from tests.paths import DATA_ROOT

pytestmark = pytest.mark.skipif(
    not (DATA_ROOT / "multiview-dino").is_dir() or not (DATA_ROOT / "rgbd-redwood").is_dir(),
    reason=f"real data not found at {DATA_ROOT} (set SPATIALCLAW_TEST_DATA)",
)

# Where the head points in each side view once the photo is turned upright (checked by eye on the PNGs).
HEAD = {"dino0003.png": 1, "dino0029.png": -1}  # +1 right, -1 left


def _generate(out: Path, seed: int = 0) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    records = object_motion(DATA_ROOT, out, np.random.default_rng([seed, 5]))
    jsonl.write_atomic(out / "tasks.jsonl", ({**r, "benchmark": "devset"} for r in records))
    return records


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("object_motion")
    return out, _generate(out)


def _clips(records: list[dict[str, Any]]) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    clips: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for record in records:
        clips.setdefault(tuple(record["images"]), []).append(record)
    return clips


def _truth(record: dict[str, Any]) -> str:
    """The answer as words: the option text's first word, or yes / no."""
    if record["choices"] is None:
        return str(record["answer"])
    return str(record["choices"][ord(record["answer"]) - ord("A")].split()[0])


# recovering the ground truth from the images ----------------------------------------------------------
_SIFT = cv2.SIFT_create()


def _features(image: np.ndarray) -> tuple[list[Any], np.ndarray]:
    grey = cv2.cvtColor(cv2.resize(image, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC), cv2.COLOR_RGB2GRAY)
    points, descriptors = _SIFT.detectAndCompute(grey, None)
    return points, descriptors


def _register(frame: np.ndarray, photo: np.ndarray) -> tuple[np.ndarray, int]:
    """Homography from key-frame pixels to photo pixels (SIFT + RANSAC) and its inlier count."""
    (kf, df), (kp, dp) = _features(frame), _features(photo)
    pairs = [m for m, n in cv2.BFMatcher().knnMatch(df, dp, k=2) if m.distance < 0.75 * n.distance]
    if len(pairs) < 8:
        return np.eye(3), 0
    a = np.float32([kf[m.queryIdx].pt for m in pairs]) / 2
    b = np.float32([kp[m.trainIdx].pt for m in pairs]) / 2
    H, inliers = cv2.findHomography(a, b, cv2.RANSAC, 1.5)
    return H, int(inliers.sum())


def _template(view: str) -> tuple[np.ndarray, np.ndarray]:
    """The raw side view turned upright, cropped to where it is not black: (grey, mask)."""
    grey = np.asarray(Image.open(DATA_ROOT / "multiview-dino" / view).convert("L").rotate(90, expand=True))
    mask = cv2.morphologyEx((grey > 40).astype(np.uint8), cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    ys, xs = np.nonzero(mask)
    box = (slice(ys.min(), ys.max() + 1), slice(xs.min(), xs.max() + 1))
    return grey[box].astype(np.float32), mask[box].astype(np.float32)


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / np.sqrt((a * a).sum() * (b * b).sum()))


def _recover(frames: list[np.ndarray], photo: np.ndarray, view: str) -> dict[str, Any]:
    """What the images show: the dinosaur's box per frame, where its base is in the room photo, its size,
    which way its head points and where the camera looks, from the frames, the room photo and the raw view."""
    mirror = np.ascontiguousarray(photo[:, ::-1])
    found = [
        max((_register(f, photo) + (photo,), _register(f, mirror) + (mirror,)), key=lambda r: r[1]) for f in frames
    ]
    grey_template, mask_template = _template(view)
    boxes, base, size, centre, votes = [], [], [], [], 0.0
    for frame, (H, inliers, room) in zip(frames, found, strict=True):
        assert inliers >= 30, f"only {inliers} features tie a key frame to its room photo"
        h, w = frame.shape[:2]
        clean = cv2.warpPerspective(room, H, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
        differs = (np.abs(frame.astype(int) - clean.astype(int)).max(axis=2) > 25).astype(np.uint8)
        differs = cv2.morphologyEx(differs, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        differs = cv2.morphologyEx(differs, cv2.MORPH_CLOSE, np.ones((7, 7), np.uint8))
        _, labels, stats, _ = cv2.connectedComponentsWithStats(differs)
        blob = labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        ys, xs = np.nonzero(blob)
        x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
        boxes.append((x0, y0, x1, y1))
        size.append(float(np.sqrt(blob.sum())))
        for target, image_point in ((base, (xs.mean(), y1)), (centre, ((w - 1) / 2, (h - 1) / 2))):
            p = H @ np.array([*image_point, 1.0])
            target.append(p[:2] / p[2])
        patch = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)[y0:y1, x0:x1].astype(np.float32)
        grey = cv2.resize(grey_template, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA)
        inside = cv2.resize(mask_template, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA) > 0.5
        flipped = inside[:, ::-1]
        votes += _ncc(patch[inside], grey[inside]) - _ncc(patch[flipped], grey[:, ::-1][flipped])
    head = HEAD[view] * (1 if votes > 0 else -1)
    moved = base[-1][0] - base[0][0]  # in the (possibly mirrored) room photo, i.e. as seen in the images
    growth = size[-1] / size[0]
    panned = centre[-1][0] - centre[0][0]
    return {
        "boxes": boxes,
        "mirrored": found[0][2] is mirror,
        "facing": head,
        "room": "right" if moved > 0 else "left",
        "room_px": abs(moved),
        "walking": "forwards" if head * moved > 0 else "backwards",
        "depth": "towards" if growth > 1.15 else "away" if growth < 1 / 1.15 else "none",
        "base_rows": [float(p[1]) for p in base],
        "pan": "yes" if abs(panned) > 8 else "no",
        "pan_sign": float(np.sign(panned)) if abs(panned) > 8 else 0.0,
    }


def _load(out: Path, names: list[str]) -> list[np.ndarray]:
    return [np.asarray(Image.open(out / name).convert("RGB")) for name in names]


def _photo(meta: dict[str, Any]) -> np.ndarray:
    photo = Image.open(DATA_ROOT / meta["source_photo"]).convert("RGB")
    return np.asarray(photo.resize((photo.width // 2, photo.height // 2), Image.Resampling.LANCZOS))


# tests -----------------------------------------------------------------------------------------------------
def test_items_are_six_key_frames_at_benchmark_size(generated):
    out, records = generated
    assert 12 <= len(records) <= 16
    assert len({r["task_id"] for r in records}) == len(records)
    for record in records:
        assert record["category"] == "object_motion" and len(record["images"]) == 6
        for name in record["images"]:
            assert 150 <= Image.open(out / name).size[0] <= 250
        meta = record["meta"]
        assert len(meta["object_box_px"]) == len(meta["camera_pan_deg"]) == 6
        assert {"source_photo", "dino_view", "facing", "reversed", "mirrored"} <= set(meta)
        if record["choices"] is None:
            assert record["answer_type"] == "yes_no" and record["answer"] in ("yes", "no")
        else:
            assert record["answer_type"] == "multiple_choice" and record["answer"] in "AB"


def test_answers_are_balanced_over_every_variant(generated):
    _, records = generated
    by_kind: dict[str, list[str]] = {}
    for record in records:
        by_kind.setdefault(record["task_id"].rsplit("-", 1)[1], []).append(_truth(record))
    assert set(by_kind) == {"walking", "room", "depth", "pan"}
    for kind, answers in by_kind.items():
        assert len(set(answers)) == 2 and answers.count(answers[0]) * 2 == len(answers), (kind, answers)
    variants = {(r["meta"]["reversed"], r["meta"]["mirrored"], r["meta"]["camera"]) for r in records}
    assert {(rev, mir) for rev, mir, _ in variants} == {(False, False), (True, False), (False, True), (True, True)}
    assert {camera for *_, camera in variants} == {"static", "pans to follow the dinosaur"}
    # the point of the class: the dinosaur faces one way and moves the other
    assert any(r["meta"]["walking"] == "backwards" and r["meta"]["mirrored"] for r in records)


def test_generation_is_deterministic_per_seed(generated, tmp_path):
    out, records = generated
    again = _generate(tmp_path / "again")
    assert again == records
    for name in records[0]["images"]:
        assert (
            hashlib.sha256((out / name).read_bytes()).digest()
            == hashlib.sha256((tmp_path / "again" / name).read_bytes()).digest()
        )
    other = _generate(tmp_path / "other", seed=1)
    assert [r["meta"]["object_box_px"] for r in other] != [r["meta"]["object_box_px"] for r in records]


def test_the_local_task_loader_reads_the_items(generated):
    out, records = generated
    tasks = load_local_tasks(out / "tasks.jsonl")
    assert [t.task_id for t in tasks] == [r["task_id"] for r in records]
    for task, record in zip(tasks, records, strict=True):
        assert task.answer_type == record["answer_type"] and task.ground_truth == record["answer"]
        assert len(task.inputs[0].paths) == 6 and task.category == "object_motion"


def test_the_answers_are_what_the_images_show(generated):
    """Every answer, recovered independently from the images: the room photo registered to each frame by
    features, the dinosaur as what differs from it, its facing from the side view's silhouette."""
    out, records = generated
    for names, items in _clips(records).items():
        meta = items[0]["meta"]
        seen = _recover(_load(out, list(names)), _photo(meta), Path(meta["dino_view"]).name)
        assert seen["mirrored"] == meta["mirrored"], names[0]
        assert seen["facing"] == (1 if meta["facing"] == "right" else -1), names[0]
        assert seen["room_px"] > 10, names[0]
        for record in items:
            kind = record["task_id"].rsplit("-", 1)[1]
            assert seen[kind] == _truth(record), (record["task_id"], seen)
        # the stated boxes are where the dinosaur is (the recovered one also holds its contact shadow)
        for (x0, y0, x1, y1), box in zip(seen["boxes"], meta["object_box_px"], strict=True):
            inter = max(0.0, min(x1, box[2]) - max(x0, box[0])) * max(0.0, min(y1, box[3]) - max(y0, box[1]))
            union = (x1 - x0) * (y1 - y0) + (box[2] - box[0]) * (box[3] - box[1]) - inter
            assert inter / union > 0.75, (names[0], (x0, y0, x1, y1), box)
        if meta["depth_motion"] != "none":  # an approaching dinosaur's base moves down the image
            rows = seen["base_rows"]
            assert (rows[-1] > rows[0]) == (meta["depth_motion"] == "towards the camera"), names[0]
        assert seen["pan_sign"] == np.sign(meta["camera_pan_deg"][-1]), names[0]


@pytest.mark.parametrize("number", [1, 3])
def test_a_mirrored_or_reversed_clip_flips_the_answers(number, tmp_path):
    """The same clip made four ways (same random draws): mirroring flips the facing and the sideways
    motion and keeps forwards / backwards; reversing flips the motion, the walk and the depth motion."""
    clip = replace(devset_object._PLAN[number], backwards=False, mirrored=False)
    made = {}
    for backwards in (False, True):
        for mirrored in (False, True):
            variant = replace(clip, backwards=backwards, mirrored=mirrored)
            folder = tmp_path / f"{backwards}-{mirrored}"
            folder.mkdir()
            result = devset_object._clip(DATA_ROOT, variant, number, folder, np.random.default_rng(7))
            made[backwards, mirrored] = (result, _load(folder, result["images"]))
    (plain, frames) = made[False, False]
    (mirror, mirror_frames) = made[False, True]
    (back, back_frames) = made[True, False]
    assert all(np.array_equal(a[:, ::-1], b) for a, b in zip(frames, mirror_frames, strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(frames[::-1], back_frames, strict=True))
    flip = {"left": "right", "right": "left", "forwards": "backwards", "backwards": "forwards"}
    assert mirror["truth"]["room"] == flip[plain["truth"]["room"]]
    assert mirror["meta"]["facing"] == flip[plain["meta"]["facing"]]
    assert mirror["truth"]["walking"] == plain["truth"]["walking"] == "forwards"
    assert back["truth"]["walking"] == made[True, True][0]["truth"]["walking"] == "backwards"
    assert back["truth"]["room"] == flip[plain["truth"]["room"]]
    towards = {"towards the camera": "away from the camera", "away from the camera": "towards the camera"}
    assert back["truth"]["depth"] == towards.get(plain["truth"]["depth"], "none")
    assert mirror["truth"]["pan"] == back["truth"]["pan"] == plain["truth"]["pan"]


def test_motion_reads_the_dinosaur_relative_to_the_room_in_a_real_kernel(generated, tmp_path):
    """``motion(frames, object=<the box per frame>)`` with the clip's field of view: the object's motion
    relative to the background and in its own heading is right on every step, with a static or following
    camera, forwards or backwards, approaching or receding; a following camera is read as a pan."""
    out, records = generated
    clips = [c for c in _clips(records).values() if c[0]["task_id"].split("-")[1] in {"1", "3", "6", "7"}]
    cells = []
    for position, items in enumerate(clips):
        meta = items[0]["meta"]
        heading = 90 if meta["facing"] == "right" else -90
        cells.append(
            f"m = motion(videos[{position}], object={meta['object_box_px']!r}, object_heading_deg={heading}, "
            f"fov_deg={meta['hfov_deg']})\nprint(m)\nrows.append([[s.status, s.kind, s.yaw_deg, s.object.lateral, "
            "s.object.depth_change, s.object.own_forward] for s in m.steps])"
        )
    videos = [[str(out / name) for name in items[0]["images"]] for items in clips]
    with Kernel(videos=videos, workdir=tmp_path / "work") as kernel:
        kernel.execute("rows = []")
        readouts = [kernel.execute(cell) for cell in cells]
        rows = json.loads(kernel.execute("import json; print(json.dumps(rows))").stdout)
    for items, steps, result in zip(clips, rows, readouts, strict=True):
        meta = items[0]["meta"]
        assert result.error is None, result.error
        print(items[0]["task_id"], meta["walking"], meta["moves_in_room"], meta["depth_motion"], meta["camera"])
        print(result.stdout)
        moves = 1 if meta["moves_in_room"] == "right" else -1
        forwards = 1 if meta["walking"] == "forwards" else -1
        pans = np.diff(meta["camera_pan_deg"])
        for (status, kind, yaw, lateral, depth_change, own_forward), pan in zip(steps, pans, strict=True):
            assert status == "measured", result.stdout
            if meta["depth_motion"] == "none":
                assert lateral * moves > 0 and own_forward * forwards > 0, result.stdout
            else:
                assert depth_change * (1 if meta["depth_motion"] == "away from the camera" else -1) > 0, result.stdout
            assert yaw == pytest.approx(pan, abs=0.25), result.stdout  # each step's pan, to a quarter degree
            if abs(pan) > 1:
                assert kind == "rotation", result.stdout
