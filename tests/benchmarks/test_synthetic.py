"""The synthetic benchmark: deterministic by seed, answers that match the scene, images that match the geometry."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw.benchmarks.registry import load_benchmark
from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.benchmarks.synthetic import CATEGORIES, COLOURS, Box, Camera, _quadrant, generate, render, scene_for


def _digest(tasks: list) -> list[str]:
    return [hashlib.sha256(Path(p).read_bytes()).hexdigest() for t in tasks for p in t.inputs[0].paths]


def test_same_seed_same_tasks_and_pixels(tmp_path: Path) -> None:
    a = generate(12, seed=7, out_dir=tmp_path / "a")
    b = generate(12, seed=7, out_dir=tmp_path / "b")
    assert [t.to_dict() | {"inputs": None} for t in a] == [t.to_dict() | {"inputs": None} for t in b]
    assert _digest(a) == _digest(b)
    c = generate(12, seed=8, out_dir=tmp_path / "c")
    assert [t.ground_truth for t in a] != [t.ground_truth for t in c]


def test_every_category_and_scoring(tmp_path: Path) -> None:
    tasks = generate(len(CATEGORIES), seed=1, out_dir=tmp_path)
    assert [t.category for t in tasks] == list(CATEGORIES)
    for task in tasks:
        assert task.meta["camera"]["intrinsics"][0][0] == 500.0
        assert "scene" not in task.meta  # nothing in meta gives the answer away
        score = score_answer(
            str(task.ground_truth), task.ground_truth, task.answer_type, task.choices, task.meta["metric"]
        )
        assert score.value == 1.0
        frames = len(task.inputs[0].paths)
        assert frames == (2 if task.category.startswith("camera") else 1)


def test_answers_match_the_scene_geometry() -> None:
    for index in range(24):
        spec = scene_for(3, index)
        boxes = spec["scenes"][0]
        if spec["category"] == "distance":
            a, b = boxes[0], boxes[1]
            assert spec["answer"] == pytest.approx(math.dist(a.centre, b.centre), abs=1e-3)
            assert a.colour in spec["question"] and b.colour in spec["question"]
        elif spec["category"] == "size":
            assert spec["answer"] == pytest.approx(boxes[0].size[2] * 100)
            assert boxes[0].centre[2] == pytest.approx(boxes[0].size[2] / 2)  # standing on the floor
        elif spec["category"] == "count":
            colour = spec["extra"]["colour"]
            assert spec["answer"] == sum(b.colour == colour for b in boxes)
        elif spec["category"].startswith("camera"):
            first, second = spec["cameras"]
            moved = np.subtract(second.position, first.position)
            assert np.linalg.norm(moved) == pytest.approx(
                spec["answer"] if spec["category"] == "camera_distance" else spec["extra"]["distance_m"]
            )


def test_direction_quadrants_golden() -> None:
    observer = Box("red", (0.0, 0.0, 0.5), (1, 1, 1))
    facing = Box("blue", (0.0, 5.0, 0.5), (1, 1, 1))  # facing +Y: +X is to the right
    assert _quadrant(observer, facing, Box("g", (-2.0, 3.0, 0.5), (1, 1, 1))) == "front-left"
    assert _quadrant(observer, facing, Box("g", (2.0, 3.0, 0.5), (1, 1, 1))) == "front-right"
    assert _quadrant(observer, facing, Box("g", (-2.0, -3.0, 0.5), (1, 1, 1))) == "back-left"
    assert _quadrant(observer, facing, Box("g", (2.0, -3.0, 0.5), (1, 1, 1))) == "back-right"
    assert _quadrant(observer, facing, Box("g", (0.1, 3.0, 0.5), (1, 1, 1))) is None  # too close to a boundary


def test_rendered_box_lies_where_the_camera_projects_it() -> None:
    camera = Camera()
    box = Box("red", (0.5, 4.0, 0.4), (0.6, 0.6, 0.8), yaw=0.3)
    pixels = np.asarray(render([box], camera)).astype(int)
    reddish = (pixels[..., 0] > 80) & (pixels[..., 0] > pixels[..., 1] * 2.5) & (pixels[..., 0] > pixels[..., 2] * 2.5)
    ys, xs = np.nonzero(reddish)
    assert len(xs) > 500
    corners_px, depth = camera.project(box.corners())
    assert np.all(depth > 0)
    assert xs.min() >= corners_px[:, 0].min() - 2 and xs.max() <= corners_px[:, 0].max() + 2
    assert ys.min() >= corners_px[:, 1].min() - 2 and ys.max() <= corners_px[:, 1].max() + 2
    # And the projected centre of the box's top face is drawn in the box's colour.
    top = box.corners()[4:].mean(axis=0)
    u, v = camera.project(top[None])[0][0]
    assert reddish[int(round(v)), int(round(u))]


def test_camera_projection_conventions() -> None:
    camera = Camera(pitch_deg=0.0)
    px, depth = camera.project(np.array([[0.0, 5.0, 1.5], [1.0, 5.0, 1.5], [0.0, 5.0, 0.5]]))
    assert depth.tolist() == pytest.approx([5.0, 5.0, 5.0])
    assert px[0].tolist() == pytest.approx([320.0, 240.0])  # straight ahead: principal point
    assert px[1, 0] > 320.0  # +X is to the right
    assert px[2, 1] > 240.0  # lower in the world is lower in the image (y down)


def test_camera_motion_frames_differ_and_colours_are_named(tmp_path: Path) -> None:
    tasks = generate(6, seed=2, out_dir=tmp_path)
    motion = next(t for t in tasks if t.category == "camera_direction")
    first, second = (np.asarray(Image.open(p)) for p in motion.inputs[0].paths)
    assert first.shape == (480, 640, 3) and np.abs(first.astype(int) - second.astype(int)).sum() > 0
    assert any(colour in tasks[0].question for colour in COLOURS)


def test_registry_limit_and_seed(tmp_path: Path) -> None:
    loaded = load_benchmark("synthetic", limit=5, seed=4, source=tmp_path)
    assert loaded.name == "synthetic" and len(loaded.tasks) == 5
    assert loaded.tasks[0].task_id == "synthetic/4-0000-distance"
    with pytest.raises(ValueError, match="unknown benchmark"):
        load_benchmark("no-such-bench")
