"""Runs you can trust: one process per run (the lock), what a resume may change (retries, workers,
endpoint, a larger limit, recorded per session), and typed ``--agent-option`` values."""

from __future__ import annotations

import os
import platform
import subprocess
import threading
import time
from pathlib import Path

import pytest

from spatialclaw.cli import main
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.runner.lock import RunLock, RunLockedError
from spatialclaw.runner.options import parse_agent_options
from spatialclaw.testing.provider_server import ScriptedProvider
from spatialclaw.trajectories.run_dir import RunDir
from tests.bench_runs import bench_command, results_rows, synthetic_run

FAST = {"fsync": False, "vlm_side_channel": False, "preview_images": 1}


def test_a_second_process_on_a_locked_run_is_told_who_holds_it(tmp_path: Path) -> None:
    with RunLock(tmp_path / "run"):
        with pytest.raises(RunLockedError) as held:
            RunLock(tmp_path / "run").acquire()
        assert held.value.holder["pid"] == os.getpid() and held.value.holder["host"] == platform.node()
        assert f"pid {os.getpid()} on host {platform.node()}" in str(held.value)
    with RunLock(tmp_path / "run"):  # released: the next one gets it
        pass


def test_two_concurrent_resumes_run_every_task_exactly_once(tmp_path: Path) -> None:
    run = tmp_path / "run"

    def bench() -> subprocess.Popen:
        options = ("--limit", "6", "--seed", "1", "--interface", "no-tools", "--resume", "--model-retries", "1")
        agent = ("--agent-option", "fsync=false", "--agent-option", "preview_images=1")
        command = bench_command(server.url, run, *options, *agent)
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    gate = threading.Event()  # the first run's model calls wait until the second process has tried its resume

    def script(request: dict, index: int) -> str:
        gate.wait(120)
        return "ANSWER: B"

    with ScriptedProvider(script) as server:
        first = bench()
        deadline = time.monotonic() + 60
        while server.calls == 0:  # the first run holds the lock and is running its episodes
            assert time.monotonic() < deadline and first.poll() is None, first.communicate()
            time.sleep(0.05)
        second = bench()
        _second_out, second_err = second.communicate(timeout=120)
        gate.set()
        _first_out, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err
    assert second.returncode == 2 and f"in use by pid {first.pid} on host {platform.node()}" in second_err
    assert len(second_err.strip().splitlines()) == 1, "one line, no traceback"
    rows = results_rows(run)
    assert sorted(r["task_id"] for r in rows) == sorted(t.task_id for t in RunDir(run).tasks()) and len(rows) == 6
    assert server.calls == 6, "no task ran twice"


def test_a_resume_may_change_retries_workers_endpoint_and_grow_the_limit(tmp_path: Path) -> None:
    def config(url: str, **overrides) -> RunConfig:
        base = dict(limit=3, seed=4, interface="no-tools", model_options={"max_attempts": 1}, agent=FAST)
        return synthetic_run(url, tmp_path / "run", **{**base, **overrides})

    with ScriptedProvider(["ANSWER: B"] * 3) as first_server:
        run_benchmark(config(first_server.url))
        first_url = first_server.url
    with ScriptedProvider(
        lambda request, index: "ANSWER: B"
    ) as moved:  # the server moved, more retries, more workers, more tasks
        summary = run_benchmark(config(moved.url, resume=True, limit=5, workers=2, model_options={"max_attempts": 3}))
        moved_url = moved.url
    assert summary.ran == 2 and summary.kept == 3
    manifest = RunDir(tmp_path / "run").manifest()
    assert manifest["task_count"] == 5 and manifest["config"]["limit"] == 5
    sessions = manifest["sessions"]
    assert [s["kind"] for s in sessions] == ["created", "resumed"]
    assert [(s["workers"], s["model_retries"], s["limit"]) for s in sessions] == [(1, 1, 3), (2, 3, 5)]
    assert sessions[0]["model"].endswith(first_url) and sessions[1]["model"].endswith(moved_url)
    assert all(s["pid"] == os.getpid() for s in sessions)
    rows = results_rows(tmp_path / "run")
    assert len(rows) == 5 and len({r["task_id"] for r in rows}) == 5
    assert sorted(r["session"] for r in rows) == [1, 1, 1, 2, 2], "each row names the session that ran it"
    with pytest.raises(ValueError, match="can only grow"):
        run_benchmark(config(moved_url, resume=True, limit=2))
    with pytest.raises(ValueError, match="differs in seed"):
        run_benchmark(config(moved_url, resume=True, seed=9))


def test_agent_options_are_typed_by_the_config_fields() -> None:
    assert parse_agent_options(
        [
            "max_steps=7",
            "fsync=false",
            "cell_timeout_s=2.5",
            "api_detail=brief",
            'limits={"time_s": 60}',
            'model_params={"temperature": 0}',
        ]
    ) == {
        "max_steps": 7,
        "fsync": False,
        "cell_timeout_s": 2.5,
        "api_detail": "brief",
        "limits": {"time_s": 60},
        "model_params": {"temperature": 0},
    }
    for item, message in [
        ("max_steps=three", "max_steps must be an integer, got 'three'"),
        ("fsync=maybe", "fsync must be true or false, got 'maybe'"),
        ("cell_timeout_s=soon", "cell_timeout_s must be a number, got 'soon'"),
        ("model_params=7", "model_params must be a JSON object"),
        ("no_such=1", "unknown agent option 'no_such'"),
        ("max_steps", "--agent-option needs KEY=VALUE"),
    ]:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("{", r"\{")):
            parse_agent_options([item])


def test_bench_says_in_one_line_which_agent_option_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(
        [
            "bench",
            "--benchmark",
            "synthetic",
            "--model",
            "openai-compat:m@http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "run"),
            "--agent-option",
            "max_steps=three",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == "spatialclaw bench: max_steps must be an integer, got 'three'"
    assert not (tmp_path / "run").exists(), "nothing was written"
