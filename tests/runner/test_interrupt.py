"""Ctrl-C never loses a finished episode: a real ``spatialclaw bench`` process gets SIGINT while two
episodes are in flight; the rows of every finished, scored episode are written, ``--resume`` runs only
the rest, and ``export`` has one record per task. Also: export keeps only a run's counted attempt."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

from spatialclaw.cli import main
from spatialclaw.runner import run_benchmark
from spatialclaw.testing.provider_server import ScriptedProvider
from spatialclaw.trajectories.run_dir import RunDir
from tests.bench_runs import bench_command, quiet_run, results_rows

TASKS = 6


def _bench(url: str, run: Path, *extra: str) -> list[str]:
    return bench_command(
        url,
        run,
        "--limit",
        str(TASKS),
        "--seed",
        "3",
        "--interface",
        "no-tools",
        "--workers",
        "2",
        "--model-retries",
        "1",
        "--agent-option",
        "fsync=false",
        "--agent-option",
        "preview_images=1",
        *extra,
    )


def _attempts(run: Path) -> list[str]:
    """The attempt folders that hold an episode log (the runner makes a folder per job up front)."""
    return sorted(str(p.parent.relative_to(run)) for p in (run / "episodes").glob("*/attempt-*/episode.jsonl"))


def test_ctrl_c_keeps_every_finished_episode_and_resume_does_not_rerun_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    gate = threading.Event()
    blocked = threading.Semaphore(0)

    def script(request: dict, index: int) -> str:
        if index >= 2:  # episodes 3 and 4 are in flight when Ctrl-C lands; they finish after it
            blocked.release()
            gate.wait(60)
        return "ANSWER: B"

    with ScriptedProvider(script) as server:
        process = subprocess.Popen(_bench(server.url, run), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(2):  # both workers wait inside a model call
                assert blocked.acquire(timeout=90), process.communicate(timeout=5)
            deadline = time.monotonic() + 30
            while len(results_rows(run)) < 2:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            process.send_signal(signal.SIGINT)
            time.sleep(1.0)  # the driver has taken the interrupt; now the two running episodes finish
            gate.set()
            _out, err = process.communicate(timeout=120)
        finally:
            gate.set()
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, err
        assert "interrupted" in err and "--resume" in err
        rows = results_rows(run)
        assert len(rows) == 4 and len({r["task_id"] for r in rows}) == 4, "the two episodes finished after Ctrl-C"
        assert all(r["status"] == "ok" and r["score"] is not None for r in rows)
        finished = _attempts(run)
        assert len(finished) == 4 and all(p.endswith("attempt-1") for p in finished), "no episode started after"

    with ScriptedProvider(lambda request, index: "ANSWER: B") as again:
        resumed = subprocess.run(_bench(again.url, run, "--resume"), capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        assert again.calls == TASKS - 4, "--resume ran only the tasks without a row"
    assert "ran 2, kept 4" in resumed.stdout
    assert len(results_rows(run)) == TASKS
    assert set(finished) <= set(_attempts(run)) and len(_attempts(run)) == TASKS, "no task ran a second episode"
    assert main(["export", "--format", "openai", "--in", str(run), "--out", str(tmp_path / "data.jsonl")]) == 0
    assert len((tmp_path / "data.jsonl").read_text().splitlines()) == TASKS, "one export record per task"


def test_export_keeps_only_the_attempt_the_run_counts(tmp_path: Path) -> None:
    """A run made before the fix lost a finished task's row; resume ran it again: both attempts finished
    and scored, but the run counts the second; the export has one record per task."""
    run = tmp_path / "run"
    config = {"limit": 3, "seed": 2, "interface": "no-tools", "agent": {"vlm_side_channel": True}}
    with ScriptedProvider(lambda request, index: "ANSWER: B") as server:
        run_benchmark(quiet_run(server.url, run, **config))
        rows = results_rows(run)
        RunDir(run).results.rewrite(rows[1:])  # the first task's row was lost (the old Ctrl-C)
        summary = run_benchmark(quiet_run(server.url, run, resume=True, **config))
    assert summary.ran == 1 and len(_attempts(run)) == 4
    out = tmp_path / "data.jsonl"
    assert main(["export", "--format", "openai", "--in", str(run), "--out", str(out)]) == 0
    records = out.read_text().splitlines()
    assert len(records) == 3, "one record per task: the uncounted attempt-1 is left out"
    from spatialclaw.export import export_episodes

    report = export_episodes("openai", [run], tmp_path / "again.jsonl")
    assert report.found == 4 and report.exported == 3
    assert sum(n for reason, n in report.excluded.items() if "does not count" in reason) == 1
