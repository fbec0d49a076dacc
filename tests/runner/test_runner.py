"""The benchmark runner end to end: the CLI as a subprocess, a scripted model over the local test server,
SIGKILL half-way, resume; plus the no-tools baseline, rescoring, reports and the results store."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.runner.report import write_report
from spatialclaw.runner.rescore import rescore_run
from spatialclaw.testing.provider_server import ScriptedProvider, bad_request, delayed
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.results import ResultsStore
from spatialclaw.trajectories.run_dir import RunDir
from tests.bench_runs import QUIET_AGENT_OPTIONS, bench_command, quiet_run, results_rows, synthetic_run

ANSWER_CELL = "```python\nanswer('B' if meta['choices'] else 2)\n```"


def _bench(run: Path, url: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    options = ("--limit", "12", "--seed", "5", "--workers", "2", "--model-retries", "1", *QUIET_AGENT_OPTIONS, *extra)
    command = bench_command(url, run, *options)
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def test_sigkill_half_way_then_resume_runs_every_task_exactly_once(tmp_path: Path) -> None:
    run = tmp_path / "run"
    state = {"inject": True}
    injected: list[int] = []

    def script(request: dict, index: int):
        if state["inject"] and index % 4 == 1:
            injected.append(index)
            return bad_request("injected failure")
        return delayed(0.4, ANSWER_CELL)

    with ScriptedProvider(script) as server:
        first = _bench(run, server.url)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (run / "results.jsonl").exists() and len(results_rows(run)) >= 5:
                break
            if first.poll() is not None:
                pytest.fail(f"the run ended before it could be killed: {first.communicate()}")
            time.sleep(0.05)
        else:
            pytest.fail("the run made no progress")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        assert first.returncode == -signal.SIGKILL
        before = {r["task_id"]: r for r in results_rows(run)}
        assert 5 <= len(before) < 12, "the kill must land half-way"
        failed = {tid for tid, r in before.items() if r["status"] == "error"}
        assert failed and injected, "errors were injected on purpose"
        assert all("injected failure" in before[tid]["error"] for tid in failed)

        state["inject"] = False
        second = _bench(run, server.url, "--resume")
        _out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err

    tasks = RunDir(run).tasks()
    rows = results_rows(run)
    assert len(rows) == 12 and sorted(r["task_id"] for r in rows) == sorted(t.task_id for t in tasks)  # exactly once
    assert all(r["status"] == "ok" for r in rows)
    after = {r["task_id"]: r for r in rows}
    for tid in failed:  # retried: a new attempt in a new directory
        assert after[tid]["attempt"] >= 2
        assert (run / before[tid]["trajectory_dir"]).is_dir()
    for tid, row in before.items():  # finished rows were kept, not run again
        if row["status"] == "ok":
            assert after[tid] == row
    by_id = {t.task_id: t for t in tasks}
    for row in rows:
        task = by_id[row["task_id"]]
        expected = score_answer(row["answer"], task.ground_truth, task.answer_type, task.choices, task.meta["metric"])
        assert row["score"] == expected.value
        episode = load_episode(run / row["trajectory_dir"])
        assert episode.complete and episode.answer == row["answer"] and episode.score == row["score"]
    # Episodes cut by the kill stay on disk, incomplete, beside the attempt that finished them.
    attempts = sorted((run / "episodes").glob("*/attempt-*"))
    assert len(attempts) >= 12 + len(failed)
    manifest = RunDir(run).manifest()
    assert manifest["spatialclaw_version"] and "commit" in manifest["git"] and len(manifest["config_hash"]) == 16
    assert len(manifest["resumed"]) == 1


def _six_tasks(url: str, out: Path, **settings) -> RunConfig:
    """A quiet run of six synthetic tasks (seed 2, two workers, two preview images) with a test API key."""
    settings = {"seed": 2, "workers": 2, **settings}
    return quiet_run(url, out, limit=6, model_options={"api_key": "test-key"}, agent={"preview_images": 2}, **settings)


def _run(tmp_path: Path, name: str, url: str, **overrides) -> Path:
    config = _six_tasks(url, tmp_path / name, **overrides)
    run_benchmark(config)
    return config.out


def test_no_tools_baseline_report_and_tool_gain(tmp_path: Path) -> None:
    def script(request: dict, index: int) -> str:
        text = json.dumps(request["messages"])
        if "You cannot run code" in text:
            return "The boxes look close.\nANSWER: A" if "Options" in text else "ANSWER: 1"
        return ANSWER_CELL

    with ScriptedProvider(script) as server:
        tools = _run(tmp_path, "tools", server.url)
        base = _run(tmp_path, "base", server.url, baseline="no-tools")
        baseline_requests = [r for r in server.requests if "You cannot run code" in json.dumps(r["messages"])]
    assert len(baseline_requests) == 6
    # The baseline sees the frames: image parts go with the question.
    assert all(
        any(p.get("type") == "image_url" for m in r["messages"] if isinstance(m["content"], list) for p in m["content"])
        for r in baseline_requests
    )
    for row in results_rows(base):
        episode = load_episode(base / row["trajectory_dir"])
        assert not episode.of_type("cell") and len(episode.of_type("model_call")) == 1
        assert row["status"] == "ok" and row["answer"] in ("A", 1.0)

    files = write_report([tools, base], tmp_path / "report")
    report = json.loads(files["json"].read_text())
    by_baseline = {r["baseline"]: r for r in report["runs"]}
    tool_run, base_run = by_baseline[None], by_baseline["no-tools"]
    assert tool_run["gain_overall"] == pytest.approx(tool_run["overall"] - base_run["overall"])
    for category, gain in tool_run["gain"].items():
        assert gain == pytest.approx(tool_run["categories"][category] - base_run["categories"][category])
    with open(files["categories_csv"]) as f:
        lines = list(csv.DictReader(f))
    assert {line["category"] for line in lines} == set(tool_run["categories"])
    markdown = files["markdown"].read_text()
    assert "tool gain" in markdown and "## synthetic: per category" in markdown
    assert files["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The mean over questions matches the rows (synthetic aggregates micro).
    rows = results_rows(tools)
    assert tool_run["overall"] == pytest.approx(sum(r["score"] for r in rows) / len(rows))
    cli = subprocess.run(
        [sys.executable, "-m", "spatialclaw.cli", "report", str(tools), str(base), "--out", str(tmp_path / "cli")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0 and "## synthetic: per category" in cli.stdout
    assert (tmp_path / "cli" / "chart.png").exists() and (tmp_path / "cli" / "summary.csv").exists()


def test_a_request_that_times_out_gives_a_timeout_row_and_resume_retries_it(tmp_path: Path) -> None:
    state = {"slow": True}

    def script(request: dict, index: int):
        return delayed(5.0, "ANSWER: B") if state["slow"] else "ANSWER: B"

    with ScriptedProvider(script) as server:
        options = {"max_attempts": 1, "api_key": "test-key", "timeout_s": 1.0}
        agent = {"fsync": False, "preview_images": 1}
        config = synthetic_run(
            server.url, tmp_path / "r", limit=2, workers=2, baseline="no-tools", model_options=options, agent=agent
        )
        first = run_benchmark(config)
        assert first.statuses == {"timeout": 2}
        assert all("timed out" in r["error"] for r in results_rows(tmp_path / "r"))
        state["slow"] = False
        second = run_benchmark(dataclasses.replace(config, resume=True))
    assert second.statuses == {"ok": 2} and [r["attempt"] for r in results_rows(tmp_path / "r")] == [2, 2]


def test_existing_run_needs_resume_and_the_same_configuration(tmp_path: Path) -> None:
    with ScriptedProvider(lambda request, index: "ANSWER: B") as server:
        run = _run(tmp_path, "run", server.url, baseline="no-tools")
        with pytest.raises(FileExistsError, match="--resume"):
            _run(tmp_path, "run", server.url, baseline="no-tools")
        with pytest.raises(ValueError, match="differs in seed"):
            run_benchmark(_six_tasks(server.url, run, seed=3, workers=1, baseline="no-tools", resume=True))
        calls = server.calls
        summary = run_benchmark(_six_tasks(server.url, run, baseline="no-tools", resume=True))
        assert summary.ran == 0 and summary.kept == 6 and server.calls == calls  # nothing left to do


def test_rescore_recomputes_scores_without_a_model(tmp_path: Path) -> None:
    with ScriptedProvider(lambda request, index: "ANSWER: B") as server:
        run = _run(tmp_path, "run", server.url, baseline="no-tools")
    store = ResultsStore(run / "results.jsonl")
    rows = list(store.load().values())
    truth = [r["score"] for r in rows]
    for row in rows:
        row["score"] = 0.5
    store.rewrite(rows)
    aggregate, changed = rescore_run(run)
    assert changed == len(rows)
    assert [r["score"] for r in store.load().values()] == truth
    assert aggregate.overall == pytest.approx(sum(truth) / len(truth))
    result = subprocess.run(
        [sys.executable, "-m", "spatialclaw.cli", "rescore", str(run)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and "0 score(s) changed" in result.stdout


def test_results_store_skips_a_torn_line_and_keeps_the_last_row(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.jsonl")
    store.append({"task_id": "a", "status": "error"})
    store.append({"task_id": "b", "status": "ok"})
    store.append({"task_id": "a", "status": "ok"})
    with open(store.path, "a") as f:
        f.write('{"task_id": "c", "sta')  # a crash mid-write
    store.append({"task_id": "a", "repeat": 1, "status": "budget"})  # another repeat of a: its own row
    rows = store.load()
    assert list(rows) == [("a", 0), ("b", 0), ("a", 1)] and rows[("a", 0)]["status"] == "ok"
    (tmp_path / "bad.jsonl").write_text(
        '{"task_id": "a", "status": "ok"}\nnot json\n{"task_id": "b", "status": "ok"}\n'
    )
    rows, problems = ResultsStore(tmp_path / "bad.jsonl").read()  # a bad line is named; the others still count
    assert list(rows) == [("a", 0), ("b", 0)] and problems == [
        f"{tmp_path / 'bad.jsonl'}: line 2 unreadable (not JSON: Expecting value)"
    ]


def test_run_directory_episode_attempts_never_collide(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    first, second = run_dir.episode_dir("vsi-bench/12"), run_dir.episode_dir("vsi-bench/12")
    assert first != second and first.parent == second.parent and {first.name, second.name} == {"attempt-1", "attempt-2"}
    assert "/" not in first.parent.name


def test_bench_cli_reports_bad_setup_clearly(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "spatialclaw.cli",
            "bench",
            "--benchmark",
            "nope",
            "--model",
            "openai:x",
            "--out",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "unknown benchmark 'nope'" in result.stderr
    assert not (tmp_path / "r").exists()
