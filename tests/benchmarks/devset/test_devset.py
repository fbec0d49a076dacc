"""The model-in-the-loop dev set: its ground truth is checked against the images it wrote, and the
harness scores a real session from the host's own record."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from spatialclaw.benchmarks.devset import build, evaluate
from tests.paths import DATA_ROOT

pytestmark = pytest.mark.skipif(
    not (DATA_ROOT / "rgbd-redwood").is_dir(), reason=f"real data not found at {DATA_ROOT} (set SPATIALCLAW_TEST_DATA)"
)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    os.environ.setdefault("SPATIALCLAW_TEST_DATA", str(DATA_ROOT))
    path = build.generate(tmp_path_factory.mktemp("devset"))
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def test_every_class_is_present_at_benchmark_size(generated):
    path, records = generated
    assert {r["category"] for r in records} == set(build.CLASSES)
    for record in records:
        for name in record.get("images") or record["inputs"][0]["paths"]:
            width, _ = Image.open(path.parent / name).size
            assert 150 <= width <= 250


@pytest.mark.slow  # generation runs again; the default run keeps one build per file
def test_generation_is_deterministic(generated, tmp_path):
    _, records = generated
    again = [json.loads(line) for line in build.generate(tmp_path).read_text().splitlines()]
    assert [(r["task_id"], r["answer"]) for r in again] == [(r["task_id"], r["answer"]) for r in records]


def test_turn_angles_are_what_the_images_show(generated):
    """The pan and tilt recovered from the two key frames (features + homography, the stated field of
    view) match the ground truth within half a degree: the generator's answers describe its images."""
    path, records = generated
    for record in (r for r in records if r["category"] == "camera_turn" and r["task_id"].endswith("-pan")):
        a, b = (np.array(Image.open(path.parent / n).convert("L")) for n in record["images"])
        h, w = a.shape
        f = w / 2 / math.tan(math.radians(record["meta"]["truth"]["hfov_deg"] / 2))
        K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
        sift = cv2.SIFT_create()
        ka, da = sift.detectAndCompute(cv2.resize(a, None, fx=2, fy=2), None)
        kb, db = sift.detectAndCompute(cv2.resize(b, None, fx=2, fy=2), None)
        matches = [m for m, n in cv2.BFMatcher().knnMatch(da, db, k=2) if m.distance < 0.75 * n.distance]
        pa = np.float32([ka[m.queryIdx].pt for m in matches]) / 2
        pb = np.float32([kb[m.trainIdx].pt for m in matches]) / 2
        H, _ = cv2.findHomography(pa, pb, cv2.RANSAC, 1.5)
        # p_b = H p_a and p_a = K R_rel K^-1 p_b, R_rel = the second camera's axes in the first's frame.
        axis = np.linalg.inv(K) @ np.linalg.inv(H) @ K @ [0, 0, 1.0]
        pan = math.degrees(math.atan2(axis[0], axis[2]))
        tilt = math.degrees(math.atan2(-axis[1], axis[2]))
        assert pan == pytest.approx(record["meta"]["truth"]["pan_deg"], abs=0.5), record["task_id"]
        assert tilt == pytest.approx(record["meta"]["truth"]["tilt_deg"], abs=0.5), record["task_id"]


def test_perspective_answers_are_unambiguous(generated):
    _, records = generated
    items = [r for r in records if r["category"] == "perspective"]
    assert items and all(
        25 <= r["meta"]["truth"]["angle_deg"] <= 65 or 115 <= r["meta"]["truth"]["angle_deg"] <= 155 for r in items
    )
    assert len({r["answer"] for r in items}) >= 3
    # markers sit on the floor found in the depth; the floor's up is close to the camera's -y (tilts of
    # these photos: about 2 to 30 degrees)
    for r in items:
        up = np.array(r["meta"]["truth"]["floor_up_camera"])
        assert np.degrees(np.arccos(-up[1])) < 35


@pytest.mark.slow
def test_the_docs_dev_set_commands_run_as_written(tmp_path):
    from tests.doc_examples import code_blocks

    [block] = code_blocks("benchmarks.md", "The model-in-the-loop dev set", "bash")
    env = {
        **os.environ,
        "SPATIALCLAW_TEST_DATA": str(DATA_ROOT),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300
    )
    questions = (tmp_path / "eval" / "questions.md").read_text()
    assert questions.count("## ") == len((tmp_path / "dev" / "tasks.jsonl").read_text().splitlines())


def test_the_harness_scores_a_real_session_from_its_trajectory(generated, tmp_path):
    path, records = generated
    tasks = tmp_path / "tasks.jsonl"
    record = next(r for r in records if r["task_id"] == "camera_translate-0")
    record = {**record, "images": [str(path.parent / n) for n in record["images"]]}
    tasks.write_text(json.dumps(record) + "\n")
    eval_dir = tmp_path / "eval"
    assert "session start" in evaluate.prepare(tasks, eval_dir).read_text()
    assert (
        record["answer"]
        not in evaluate.prepare(tasks, eval_dir).read_text().split("kernel condition")[0].split("(answer")[1]
    )

    from spatialclaw.interactive.session import start_session

    task = next(iter(evaluate.load_local_tasks(tasks)))
    session = start_session(task, root=eval_dir / "sessions", session_id=task.task_id)
    try:
        session.execute(f"answer({record['answer']!r})")
    finally:
        session.close()
    looking = tmp_path / "looking.jsonl"
    looking.write_text(json.dumps({"task_id": task.task_id, "answer": "A" if record["answer"] != "A" else "B"}) + "\n")
    scores = evaluate.score(tasks, eval_dir, looking)
    table = scores["camera_translate"]
    assert table["kernel"] == 1.0 and table["looking"] == 0.0 and table["gain"] == 1.0 and table["steps"] == 1.0
    assert scores["all"] == table


def test_how_an_answer_was_made_never_reaches_a_kernel(generated):
    from spatialclaw.benchmarks.data.local import load_local_tasks

    path, records = generated
    tasks = {t.task_id: t for t in load_local_tasks(path)}
    for record in records:
        task = tasks[record["task_id"]]
        assert task.meta["truth"] == record["meta"]["truth"]  # the host keeps it (scoring, audits)
        seen = json.dumps(task.kernel_meta())
        assert "truth" not in task.kernel_meta() and str(record["meta"]["truth"]) not in seen
