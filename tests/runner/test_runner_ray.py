"""The Ray executor on a local Ray instance: same run directory format; cancelled episodes become timeouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.testing.provider_server import ScriptedProvider, delayed
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.run_dir import RunDir
from tests.bench_runs import quiet_run

pytest.importorskip("ray")

ANSWER_CELL = "```python\nanswer('B' if meta['choices'] else 2)\n```"


@pytest.fixture(autouse=True)
def _no_ray_oom_killer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared test machine runs near its memory limit; Ray's OOM killer would stop our tiny workers."""
    monkeypatch.setenv("RAY_memory_monitor_refresh_ms", "0")


def _config(url: str, out: Path, **overrides) -> RunConfig:
    settings = {"limit": 3, **overrides}
    return quiet_run(url, out, seed=1, workers=2, executor="ray", model_options={"api_key": "test-key"}, **settings)


def test_ray_executor_writes_the_same_run_directory(tmp_path: Path) -> None:
    with ScriptedProvider(lambda request, index: ANSWER_CELL) as server:
        summary = run_benchmark(_config(server.url, tmp_path / "run"))
    assert summary.statuses == {"ok": 3} and summary.ran == 3
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == sorted(t.task_id for t in RunDir(tmp_path / "run").tasks())
    for row in rows:
        assert row["trajectory_dir"].startswith("episodes/") and row["trajectory_dir"].endswith("attempt-1")
        episode = load_episode(tmp_path / "run" / row["trajectory_dir"])
        assert episode.complete and len(episode.of_type("cell")) == 1 and episode.score == row["score"]


@pytest.mark.slow
def test_ray_episode_timeout_cancels_then_resume_retries(tmp_path: Path) -> None:
    state = {"slow": True}

    def script(request: dict, index: int):
        return delayed(60.0, ANSWER_CELL) if state["slow"] else ANSWER_CELL

    with ScriptedProvider(script) as server:
        first = run_benchmark(_config(server.url, tmp_path / "run", episode_timeout_s=3.0, limit=2))
        assert first.statuses == {"timeout": 2}
        state["slow"] = False
        second = run_benchmark(_config(server.url, tmp_path / "run", resume=True, limit=2))
    assert second.ran == 2 and second.statuses == {"ok": 2}
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["attempt"] == 2 for r in rows)
