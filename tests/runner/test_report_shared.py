"""``report`` compares runs on their shared tasks: a tool run of more tasks than its no-tools baseline,
with identical answers on the shared ones, has a tool gain of exactly 0 on those tasks (the user's case
read "+15.7", comparing 30 tasks with 20), says so in a warning, and gives n and seeded bootstrap intervals."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from spatialclaw.runner import run_benchmark
from spatialclaw.runner.report import write_report
from spatialclaw.testing.provider_server import ScriptedProvider
from tests.bench_runs import synthetic_run


def _run(url: str, out: Path, limit: int, interface: str) -> Path:
    run_benchmark(
        synthetic_run(
            url,
            out,
            limit=limit,
            seed=5,
            interface=interface,
            workers=2,
            model_options={"max_attempts": 1},
            agent={"fsync": False, "vlm_side_channel": False, "preview_images": 1},
        )
    )
    return out


@pytest.mark.slow  # about 20 s: kernels for the code run
def test_tool_gain_uses_shared_tasks_and_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedProvider(lambda request, index: "ANSWER: B") as server:  # the same answer to every task
        tools = _run(server.url, tmp_path / "tools", 8, "code")
        base = _run(server.url, tmp_path / "base", 4, "no-tools")
    with caplog.at_level(logging.WARNING):
        files = write_report([tools, base], tmp_path / "report")
    runs = {r["interface"]: r for r in json.loads(files["json"].read_text())["runs"]}
    tool_run, base_run = runs["code"], runs["no-tools"]
    assert tool_run["overall"] != base_run["overall"], "over all their tasks the two runs differ (8 vs 4 tasks)"
    assert tool_run["gain_overall"] == 0.0 and tool_run["gain_n"] == 4
    assert all(gain == 0.0 for gain in tool_run["gain"].values())
    assert tool_run["gain_interval"] == [0.0, 0.0], "identical answers: every paired resample differs by 0"
    warning = "has 8 task(s) with a row and its no-tools baseline"
    assert any(warning in message and "4 shared task(s)" in message for message in caplog.messages)
    markdown = files["markdown"].read_text()
    assert "**Warning:**" in markdown and "compares their 4 shared task(s) only" in markdown
    assert "+0.0 [+0.0, +0.0] | 4 |" in markdown
    low, high = tool_run["interval"]
    assert 0.0 <= low <= tool_run["overall"] <= high <= 1.0 and low < high
    again = write_report([tools, base], tmp_path / "again")  # seeded: the same runs, the same intervals
    assert json.loads(again["json"].read_text())["runs"][0]["interval"] == tool_run["interval"]
    summary = files["summary_csv"].read_text().splitlines()
    assert "overall_ci_low,overall_ci_high,tool_gain_n,tool_gain_ci_low,tool_gain_ci_high" in summary[0]
