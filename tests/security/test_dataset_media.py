"""A dataset names only files inside its own folder, and only regular ones (issue 30, B9 and B3).

A crafted MindCube folder whose records name a private image by absolute path or by ``../..`` put that
image into the model request and the kernel. A local task file naming ``/dev/zero`` or a FIFO as an input
stalled ``bench`` for ever (the host hashed every input before the time limit applied), with no row written,
so ``--resume`` stalled again. Each is now a clear error: the record is named (dataset) or the task ends
with an error row (local tasks) within seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

REPO_ROOT = Path(__file__).resolve().parents[2]
REPLY = "```python\nanswer('A')\n```"


def bench(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    (cwd / "replies.jsonl").write_text(json.dumps(REPLY) + "\n")
    return subprocess.run(
        [sys.executable, "-m", "spatialclaw.cli", "bench", "--model", "scripted:replies=replies.jsonl", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


@pytest.mark.parametrize("how", ["absolute", "dotdot"])
def test_a_dataset_record_cannot_name_a_file_outside_its_folder(tmp_path: Path, how: str) -> None:
    private = tmp_path / "private" / "secret_photo.png"
    private.parent.mkdir()
    Image.new("RGB", (16, 16), (30, 30, 200)).save(private)
    source = tmp_path / "MindCube"
    (source / "other_all_image").mkdir(parents=True)
    Image.new("RGB", (16, 16), (200, 30, 30)).save(source / "other_all_image" / "a.png")
    named = str(private) if how == "absolute" else "../" * 12 + str(private).lstrip("/")
    record = {
        "id": "around_1",
        "question": "Which? A. left B. right",
        "images": ["other_all_image/a.png", named],
        "gt_answer": "A",
        "category": ["around"],
        "type": "x",
    }
    (source / "MindCube_tinybench.jsonl").write_text(json.dumps(record) + "\n")
    done = bench(tmp_path, "--benchmark", "mindcube", "--source", str(source), "--out", "run")
    assert done.returncode != 0, done.stdout + done.stderr
    assert "mindcube: record 0 names media file" in done.stderr and "secret_photo.png" in done.stderr
    assert "which is outside the dataset's folder" in done.stderr
    assert "Traceback" not in done.stderr
    requests = "".join(p.read_text(errors="replace") for p in (tmp_path / "run").rglob("*.jsonl"))
    assert str(private) not in requests  # no task, no request, no kernel was given the private file


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_an_input_that_never_ends_or_never_opens_ends_its_task_with_an_error_row(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(tmp_path / "clip.mp4")
        task = {"task_id": "t-fifo", "question": "How many red boxes?", "video": "clip.mp4", "answer": 3}
    else:
        task = {"task_id": "t-zero", "question": "How many red boxes?", "images": ["/dev/zero"], "answer": 3}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    for resume in ((), ("--resume",)):
        done = bench(tmp_path, "--benchmark", "tasks.jsonl", "--out", "run", "--episode-timeout", "10", *resume)
        assert "is not a regular file" in done.stderr, done.stderr
        [row] = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()][-1:]
        assert row["status"] == "error" and "is not a regular file (a device, FIFO or folder)" in row["error"]
