"""The keyless ``scripted:`` model specs work wherever a model spec does: ``run``, ``bench`` (every interface),
then ``report``, ``view`` and ``export`` on its runs; and ``scripted:replies=FILE`` replays a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from spatialclaw.chat import Message
from spatialclaw.models import load_model, parse_spec

CLI = [sys.executable, "-m", "spatialclaw.cli"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENAI_")}
    return {**env, "HF_HUB_OFFLINE": "1"}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


def _squares(path: Path, count: int) -> Path:
    image = Image.new("RGB", (160, 96), (200, 200, 200))
    draw = ImageDraw.Draw(image)
    for i in range(count):
        draw.rectangle((10 + 50 * i, 20, 40 + 50 * i, 50), fill=(220, 20, 20))
    image.save(path)
    return path


@pytest.mark.parametrize(("count", "letter"), [(1, "B"), (2, "C")])
def test_run_with_look_and_answer_answers_from_the_tool_result(tmp_path: Path, count: int, letter: str) -> None:
    _squares(tmp_path / "a.png", count)
    question = "How many red squares are there? Options: A. none B. one C. two"
    result = _cli(
        "run", "--model", "scripted:look-and-answer", "--frames", "a.png", "--question", question, "--out", "ep",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"answer: {letter}" in result.stdout and "find_color(frames[0], 'red')" in result.stdout
    events = [json.loads(line) for line in (tmp_path / "ep" / "episode.jsonl").read_text().splitlines()]
    assert events[0]["model"]["spec"] == "scripted:look-and-answer"
    first_cell = next(e for e in events if e["type"] == "cell")
    assert first_cell["result"]["images"], "the first cell showed frame 0"


@pytest.mark.slow
def test_bench_every_interface_then_report_view_export(tmp_path: Path) -> None:
    for interface in ("code", "tool-calls", "single-pass", "no-tools"):
        result = _cli(
            "bench", "--benchmark", "synthetic", "--limit", "2", "--model", "scripted:look-and-answer",
            "--interface", interface, "--out", f"runs/{interface}", "--no-progress", cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "ok 2" in result.stdout + result.stderr
    tool_run = next((tmp_path / "runs" / "tool-calls" / "episodes").iterdir()) / "attempt-1" / "episode.jsonl"
    calls = [json.loads(line).get("tool_call") for line in tool_run.read_text().splitlines()]
    assert [c["name"] for c in calls if c] == ["find_color", "answer"]
    report = _cli("report", *(f"runs/{i}" for i in ("code", "no-tools")), "--out", "rep", cwd=tmp_path)
    assert report.returncode == 0 and (tmp_path / "rep" / "report.md").is_file(), report.stderr
    view = _cli("view", "runs/code", cwd=tmp_path)
    assert view.returncode == 0 and (tmp_path / "runs" / "code" / "index.html").is_file(), view.stderr
    export = _cli("export", "--in", "runs/code", "--format", "openai", "--out", "sft.jsonl", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    assert len((tmp_path / "sft.jsonl").read_text().splitlines()) == 2


def test_replies_file_jsonl_with_tool_calls_and_plain_lines(tmp_path: Path) -> None:
    jsonl = tmp_path / "replies.jsonl"
    jsonl.write_text(
        json.dumps("```python\nprint(1)\n```")
        + "\n"
        + json.dumps({"text": "", "tool_calls": [{"name": "answer", "arguments": {"value": 2}}]})
        + "\n"
    )
    model = load_model(f"scripted:replies={jsonl}")
    assert model.spec == f"scripted:replies={jsonl}"
    ask = [Message.text("user", "hi")]
    assert model.chat(ask).text == "```python\nprint(1)\n```"
    second = model.chat(ask)
    assert [(c.name, c.arguments) for c in second.tool_calls] == [("answer", {"value": 2})]
    assert second.cost_usd == 0.0
    plain = tmp_path / "replies.txt"
    plain.write_text("```python\\nanswer('A')\\n```\n")
    assert load_model(f"scripted:replies={plain}").chat(ask).text == "```python\nanswer('A')\n```"


def test_scripted_spec_errors_name_the_forms(tmp_path: Path) -> None:
    assert parse_spec("scripted:look-and-answer") == ("scripted", "look-and-answer", None)
    with pytest.raises(ValueError, match="scripted:look-and-answer"):
        load_model("scripted:no-such-policy")
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_model(f"scripted:replies={tmp_path / 'missing.jsonl'}")
    with pytest.raises(ValueError, match="scripted:replies=FILE"):
        parse_spec("scriptd:x")
    _squares(tmp_path / "x.png", 1)
    result = _cli(
        "run", "--model", "scripted:nope", "--frames", "x.png", "--question", "q?", "--out", "o", cwd=tmp_path
    )
    assert result.returncode == 2 and "scripted:look-and-answer" in result.stderr


def test_bench_limit_zero_is_refused_not_run_in_full(tmp_path: Path) -> None:
    result = _cli(
        "bench", "--benchmark", "synthetic", "--limit", "0", "--model", "scripted:look-and-answer", "--out", "r",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2 and "--limit must be at least 1" in result.stderr
    assert not (tmp_path / "r").exists()
