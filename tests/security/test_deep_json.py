"""A dataset's records nested too deeply for Python's JSON parser are a clear error (issue 30, notes).

A 200,000-deep list on a line of MindCube's records ended ``bench`` with a ``RecursionError`` traceback
("this is a bug"); the local task loader already reported the same line cleanly. Every dataset reader now
parses through :func:`spatialclaw.jsonl.loads`, so the error names the file and the line.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from tests.security.test_dataset_media import bench

DEPTH = 200_000


def test_a_deeply_nested_mindcube_record_names_its_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "MindCube"
    (source / "other_all_image").mkdir(parents=True)
    Image.new("RGB", (16, 16), (200, 30, 30)).save(source / "other_all_image" / "a.png")
    good = {"id": "around_1", "question": "Which? A. left B. right", "images": ["other_all_image/a.png"]}
    records = source / "MindCube_tinybench.jsonl"
    records.write_text(json.dumps({**good, "gt_answer": "A"}) + "\n" + "[" * DEPTH + "]" * DEPTH + "\n")
    done = bench(tmp_path, "--benchmark", "mindcube", "--source", str(source), "--out", "run")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr, done.stderr[-2000:]
    assert f"mindcube: {records} line 2 is not valid JSON (not JSON: nested too deeply)" in done.stderr
