"""A benchmark spec and a primitive written in a folder outside the repository, used by ``bench`` (code and
tool-calls interfaces, ``--include-path`` and ``--list``) and by ``run``, with no file of the package touched."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

BIN = Path(sys.executable).parent / "spatialclaw"

SPEC = """
from spatialclaw.benchmarks.spec import BenchmarkSpec
from spatialclaw.task import FrameSpec, Task


def to_task(record, ctx):
    return Task(
        question=record["question"],
        inputs=[FrameSpec.images([ctx.media(record["image"])])],
        answer_type="number",
        ground_truth=float(record["answer"]),
        task_id=f"grey/{record['id']}",
        benchmark="grey-patches",
        meta={"metric": "mra"},
    )


SPEC = BenchmarkSpec(name="grey-patches", description="how bright is a grey image", to_task=to_task, metric="MRA")
"""

PRIMITIVE = '''
import numpy as np


def mean_brightness(image, channel: int = -1) -> float:
    """Mean brightness of an image, 0 (black) to 255 (white)."""
    array = np.asarray(image, dtype=np.float64)
    return float(array.mean() if channel < 0 else array[..., channel].mean())
'''


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """The user's folder: a spec module, a primitive module, two images and their records."""
    folder = tmp_path / "mine"
    (folder / "specs").mkdir(parents=True)
    (folder / "specs" / "grey.py").write_text(SPEC)
    (folder / "my_tools.py").write_text(PRIMITIVE)
    records = []
    for index, level in enumerate((64, 200)):
        Image.fromarray(np.full((32, 48, 3), level, np.uint8)).save(folder / f"grey{index}.png")
        records.append(
            {"id": index, "question": "How bright is the image (0-255)?", "image": f"grey{index}.png", "answer": level}
        )
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "SPATIALCLAW_BENCHMARK"))}
    return subprocess.run([str(BIN), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _kernel_option(folder: Path) -> str:
    return "kernel_options=" + json.dumps({"primitives": {"mean_brightness": f"{folder}/my_tools.py:mean_brightness"}})


def _episodes(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def _events(run: Path, row: dict) -> str:
    return (run / row["trajectory_dir"] / "episode.jsonl").read_text()


def test_a_spec_file_and_a_primitive_file_run_in_bench_with_the_code_interface(outside: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    cell = "```python\nvalue = mean_brightness(frames[0])\nprint('brightness', value)\nanswer(value)\n```"
    replies.write_text(json.dumps(cell) + "\n" + json.dumps(cell) + "\n")
    done = _cli(
        "bench", "--benchmark", str(outside / "specs" / "grey.py"), "--source", str(outside / "records.jsonl"),
        "--model", f"scripted:replies={replies}", "--out", str(tmp_path / "run"), "--no-progress", "--no-cache",
        "--agent-option", _kernel_option(outside), "--agent-option", "fsync=false",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _episodes(tmp_path / "run")
    assert sorted(r["answer"] for r in rows) == [64.0, 200.0] and all(r["score"] == 1.0 for r in rows), rows
    texts = "".join(p.read_text() for p in (tmp_path / "run" / rows[0]["trajectory_dir"] / "texts").glob("*.txt"))
    assert "Your own primitives" in texts  # the manual the model read lists it, with its first sentence
    assert "`mean_brightness(image, channel: int = -1) -> float`: Mean brightness of an image" in texts


def test_the_tool_calls_interface_imports_the_primitive_with_the_kernels_path(outside: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    call = {"tool_calls": [{"name": "mean_brightness", "arguments": {"image": "$frames[0]"}}]}
    answer = {"tool_calls": [{"name": "answer", "arguments": {"value": 64}}]}
    replies.write_text(json.dumps(call) + "\n" + json.dumps(answer) + "\n")
    done = _cli(
        "bench", "--include-path", str(outside / "specs"), "--benchmark", "grey-patches", "--limit", "1",
        "--source", str(outside / "records.jsonl"), "--interface", "tool-calls", "--no-cache",
        "--model", f"scripted:replies={replies}", "--out", str(tmp_path / "run"), "--no-progress",
        "--agent-option", _kernel_option(outside), "--agent-option", "fsync=false",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = _episodes(tmp_path / "run")
    assert row["end_reason"] == "answered" and row["score"] == 1.0, row
    events = _events(tmp_path / "run", row)
    assert re.search(r'result\\*"?: 64\.0', events.split('"mean_brightness"', 1)[1]), events  # the kernel ran it


def test_list_says_where_an_outside_spec_came_from_and_a_broken_one_names_its_line(
    outside: Path, tmp_path: Path
) -> None:
    done = _cli("bench", "--include-path", str(outside / "specs"), "--list", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert any(
        line.startswith("grey-patches") and f"[from {outside / 'specs' / 'grey.py'}]" in line
        for line in done.stdout.splitlines()
    ), done.stdout
    (outside / "specs" / "broken.py").write_text("import math\n\nSPEC = math.nope\n")
    done = _cli("bench", "--include-path", str(outside / "specs"), "--list", cwd=tmp_path)
    assert done.returncode == 2 and f"{outside / 'specs' / 'broken.py'}, line 3: AttributeError" in done.stderr, (
        done.stderr
    )


def test_run_takes_the_primitive_through_agent_options(outside: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps("```python\nanswer(mean_brightness(frames[0]))\n```") + "\n")
    done = _cli(
        "run", "--model", f"scripted:replies={replies}", "--frames", str(outside / "grey1.png"),
        "--question", "How bright is the image (0-255)?", "--answer-type", "number", "--quiet",
        "--agent-option", _kernel_option(outside), "--out", str(tmp_path / "episode"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "answer: 200.0"


def test_the_single_pass_interface_lists_the_primitive_in_its_manual(outside: Path, tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps("```python\nanswer(mean_brightness(frames[0]))\n```") + "\n")
    done = _cli(
        "bench", "--benchmark", str(outside / "specs" / "grey.py"), "--source", str(outside / "records.jsonl"),
        "--limit", "1", "--interface", "single-pass", "--model", f"scripted:replies={replies}",
        "--out", str(tmp_path / "run"), "--no-progress", "--no-cache",
        "--agent-option", _kernel_option(outside), "--agent-option", "fsync=false",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = _episodes(tmp_path / "run")
    assert row["end_reason"] == "answered" and row["score"] == 1.0, row
    texts = "".join(p.read_text() for p in (tmp_path / "run" / row["trajectory_dir"] / "texts").glob("*.txt"))
    assert "`mean_brightness(image, channel: int = -1) -> float`: Mean brightness of an image" in texts, texts[:3000]
