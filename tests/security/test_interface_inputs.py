"""Every interface checks its inputs before anything reads them (issue 30, B3 for the other interfaces).

The code interface refused an input that is ``/dev/zero`` or a FIFO before the host read it (fab534a); the
``no-tools``, ``single-pass`` and ``tool-calls`` interfaces still opened it for their preview frames or their
kernel first, so a FIFO named by a task stalled ``bench`` for ever with no row. All four now run the same
check (:func:`spatialclaw.agent.task_inputs.checked_inputs`) and end the task with an error row.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.security.test_dataset_media import bench


@pytest.mark.parametrize("interface", ["no-tools", "single-pass", "tool-calls"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_an_input_that_never_ends_or_never_opens_is_an_error_row_in_every_interface(
    tmp_path: Path, interface: str, kind: str
) -> None:
    if kind == "fifo":
        os.mkfifo(tmp_path / "clip.mp4")
        task = {"task_id": "t-fifo", "question": "How many red boxes?", "video": "clip.mp4", "answer": 3}
    else:
        task = {"task_id": "t-zero", "question": "How many red boxes?", "images": ["/dev/zero"], "answer": 3}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    args = ("--benchmark", "tasks.jsonl", "--out", "run", "--episode-timeout", "10", "--interface", interface)
    try:
        done = bench(tmp_path, *args, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"bench --interface {interface} did not end within 60 s on a {kind} input")
    [row] = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "error", done.stderr
    assert "is not a regular file (a device, FIFO or folder)" in row["error"]
