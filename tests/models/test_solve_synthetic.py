"""``scripted:solve-synthetic`` measures the synthetic scenes with the kernel's tools: its cells call
``find_color`` and the geometry tools, and its answers are the values those cells printed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "spatialclaw"


def _bench(tmp_path: Path, limit: int, workers: int) -> list[dict]:
    env = {**os.environ, "SPATIALCLAW_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [str(BIN), "bench", "--benchmark", "synthetic", "--limit", str(limit), "--model", "scripted:solve-synthetic",
         "--out", str(tmp_path / "run"), "--workers", str(workers), "--no-progress", "--agent-option", "fsync=false"],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]


def test_its_answers_are_what_its_tool_cells_printed(tmp_path: Path) -> None:
    rows = _bench(tmp_path, limit=2, workers=1)  # a distance and a size question
    for row in rows:
        events = [json.loads(line) for line in (tmp_path / "run" / row["trajectory_dir"] / "episode.jsonl").open()]
        cells = [e for e in events if e.get("code")]
        assert "find_color(frame, colour)" in cells[0]["code"] and "geom.oriented_box" in cells[0]["code"]
        printed = json.dumps(cells[0])
        [value] = re.findall(r"result: ([0-9.]+)", printed)  # printed by the kernel, not by the policy
        assert float(value) == row["answer"], printed
        assert f"answer({row['answer']!r})" in cells[1]["code"]
    assert all(row["score"] == 1.0 for row in rows), rows  # both are measured within 5 %


@pytest.mark.slow
def test_it_answers_more_than_half_of_twenty_synthetic_tasks_right(tmp_path: Path) -> None:
    rows = _bench(tmp_path, limit=20, workers=2)
    right = sum(row["score"] >= 1.0 for row in rows)
    assert right >= 10, [(row["task_id"], row["answer"], row["ground_truth"]) for row in rows]
