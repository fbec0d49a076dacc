"""A run directory is private to its owner (issue 30, notes).

``bench`` created ``RUN/`` 0755 and its files 0644 under the usual umask, so any local user could read
``tasks.jsonl`` (the ground truth), ``results.jsonl`` and the response cache (the model's replies). ``RUN/`` and
every folder in it are now 0700 and the files the run writes 0600, whatever the umask; the report files
(``report.md`` and its CSV, JSON and chart), written to be shared, stay readable inside the private folder.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from PIL import Image

from tests.security.test_dataset_media import bench

SHARED = {"report.md", "summary.csv", "categories.csv", "report.json", "chart.png"}


def test_a_run_directory_and_what_it_holds_are_private_whatever_the_umask(tmp_path: Path) -> None:
    Image.new("RGB", (32, 32), (200, 30, 30)).save(tmp_path / "red.png")
    task = {"task_id": "t1", "question": "Which colour? A. red B. blue", "images": ["red.png"], "answer": "A"}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    (tmp_path / "bench.toml").write_text('interface = "code"\n')
    previous = os.umask(0o022)  # an ordinary user's umask: world-readable unless made private
    try:
        done = bench(tmp_path, "--benchmark", "tasks.jsonl", "--out", "run", "--config", "bench.toml")
    finally:
        os.umask(previous)
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "run"
    found = {p.relative_to(run).as_posix(): stat.S_IMODE(os.lstat(p).st_mode) for p in [run, *run.rglob("*")]}
    assert {"tasks.jsonl", "results.jsonl", "manifest.json", "config.toml"} <= set(found), sorted(found)
    assert any(name.startswith("cache/") for name in found), sorted(found)  # the response cache's entries
    assert any(name.endswith("episode.jsonl") for name in found), sorted(found)
    wrong = {
        name: oct(mode)
        for name, mode in found.items()
        if name.split("/")[-1] not in SHARED and mode != (0o700 if (run / name).is_dir() else 0o600)
    }
    assert not wrong, wrong
