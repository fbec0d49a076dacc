"""``bench --repeats K`` through the real CLI against the scripted provider server: K episodes per task, one
row each keyed by (task, repeat), a resume runs only the missing repeats, the report scores each task by
the mean over its repeats and says K, and an export keeps one counted attempt per (task, repeat)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.testing.provider_server import ScriptedProvider


def tasks_file(tmp_path: Path, count: int = 2) -> Path:
    """A local JSONL benchmark of ``count`` yes/no tasks (ground truth ``yes``), one real PNG each."""
    lines = []
    for i in range(count):
        Image.new("RGB", (32, 24), (40 * i, 90, 200)).save(tmp_path / f"frame{i}.png")
        lines.append(
            json.dumps(
                {"task_id": f"t{i}", "question": f"Is scene {i} blue? (yes/no)", "images": [f"frame{i}.png"]}
                | {"answer": "yes", "answer_type": "yes_no", "category": "colour"}
            )
        )
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def bench(url: str, tasks: Path, out: Path, *extra: str) -> int:
    return main(
        ["bench", "--benchmark", str(tasks), "--interface", "no-tools", "--model", f"openai-compat:scripted@{url}"]
        + ["--out", str(out), "--model-retries", "1", "--no-progress", "--agent-option", "fsync=false", *extra]
    )


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]


def question(request: dict) -> str:
    """The task's question in a Chat Completions request (its first text part)."""
    content = request["messages"][-1]["content"]
    text = content if isinstance(content, str) else next(p["text"] for p in content if p["type"] == "text")
    return next(line for line in text.splitlines() if "scene" in line)


def first_call_right() -> tuple[Counter[str], object]:
    """A script that answers each question right ("yes") the first time it is asked and wrong after."""
    seen: Counter[str] = Counter()

    def script(request: dict, index: int) -> str:
        seen[question(request)] += 1
        return "ANSWER: yes" if seen[question(request)] == 1 else "ANSWER: no"

    return seen, script


def test_k_repeats_give_k_rows_and_k_request_streams_per_task(tmp_path: Path) -> None:
    tasks, run = tasks_file(tmp_path), tmp_path / "run"
    seen, script = first_call_right()
    with ScriptedProvider(script) as server:  # type: ignore[arg-type]
        assert bench(server.url, tasks, run, "--repeats", "3") == 0
        assert server.calls == 6
    assert sorted(seen.values()) == [3, 3], "each task's three repeats asked the model separately"
    got = rows(run)
    assert sorted((r["task_id"], r["repeat"]) for r in got) == [(t, k) for t in ("t0", "t1") for k in range(3)]
    assert len({r["trajectory_dir"] for r in got}) == 6, "each repeat is its own episode"
    answers = {(r["task_id"], r["repeat"]): r["answer"] for r in got}
    assert [answers[("t0", k)] for k in range(3)] == ["yes", "no", "no"], "repeats never share an answer"
    assert json.loads((run / "manifest.json").read_text())["config"]["repeats"] == 3

    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())["runs"][0]
    assert report["repeats"] == 3 and report["rows"] == 6
    assert report["overall"] == pytest.approx(1 / 3), "each task: the mean of right, wrong, wrong"
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "mean of 3 repeats" in markdown

    assert main(["export", "--format", "openai", "--in", str(run), "--out", str(tmp_path / "sft.jsonl")]) == 0
    assert len((tmp_path / "sft.jsonl").read_text().splitlines()) == 6, "one record per (task, repeat)"


def test_resume_runs_only_the_missing_repeats(tmp_path: Path) -> None:
    tasks, run = tasks_file(tmp_path), tmp_path / "run"
    with ScriptedProvider(lambda request, index: "ANSWER: yes") as server:
        assert bench(server.url, tasks, run, "--repeats", "3", "--no-cache") == 0
    kept = [r for r in rows(run) if (r["task_id"], r["repeat"]) != ("t1", 2)]  # as if killed before this row
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    with ScriptedProvider(lambda request, index: "ANSWER: no") as again:
        assert bench(again.url, tasks, run, "--resume", "--no-cache") == 0  # K comes from the run
        assert again.calls == 1, "only the missing repeat ran"
    got = {(r["task_id"], r["repeat"]): r for r in rows(run)}
    assert len(got) == 6 and got[("t1", 2)]["answer"] == "no" and got[("t1", 1)]["answer"] == "yes"
    assert main(["export", "--format", "openai", "--in", str(run), "--out", str(tmp_path / "sft.jsonl")]) == 0
    assert len((tmp_path / "sft.jsonl").read_text().splitlines()) == 6, "the lost repeat's first attempt is not counted"


def test_a_resume_with_another_k_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    tasks, run = tasks_file(tmp_path), tmp_path / "run"
    with ScriptedProvider(lambda request, index: "ANSWER: yes") as server:
        assert bench(server.url, tasks, run, "--repeats", "2") == 0
        capsys.readouterr()
        assert bench(server.url, tasks, run, "--resume", "--repeats", "1") == 2
        assert "configuration differs in repeats" in capsys.readouterr().err
        assert bench(server.url, tasks, tmp_path / "zero", "--repeats", "0") == 2
        assert "--repeats must be at least 1" in capsys.readouterr().err
