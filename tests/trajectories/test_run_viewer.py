"""The run viewer on a real resumed run: its counts and means agree with ``report``, retried attempts
stay apart (latest by default, older ones reachable), error/timeout/partial scores are not "wrong", and a
headless Chromium renders the page and applies a filter."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.runner.report import load_run_report
from spatialclaw.testing.provider_server import ScriptedProvider, bad_request
from spatialclaw.trajectories.run_viewer import load_run_view, run_summary, write_run_page
from tests.bench_runs import quiet_run
from tests.trajectories.headless_chromium import headless_chromium, needs_chromium


def _resumed_run(tmp_path: Path) -> Path:
    """Synthetic, 8 tasks, no-tools: the first session fails some requests (error rows), the resume
    answers them; numeric answers of 3 give partial MRA scores."""
    state = {"fail": True}

    def script(request: dict, index: int):
        if state["fail"] and index % 3 == 0:
            return bad_request("injected failure")
        text = json.dumps(request["messages"])
        return "ANSWER: B" if "Options" in text or "(A)" in text else "ANSWER: 3"

    def config(url: str, resume: bool) -> RunConfig:
        settings = {"limit": 8, "seed": 3, "interface": "no-tools", "agent": {"vlm_side_channel": True}}
        return quiet_run(url, tmp_path / "run", resume=resume, **settings)

    with ScriptedProvider(script) as server:
        first = run_benchmark(config(server.url, False))
        assert first.statuses.get("error"), "the first session has failures to retry"
        state["fail"] = False
        run_benchmark(config(server.url, True))
    return tmp_path / "run"


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _resumed_run(tmp_path_factory.mktemp("viewer"))


def test_viewer_counts_and_means_agree_with_report_on_a_resumed_run(resumed: Path) -> None:
    view = load_run_view(resumed)
    summary = run_summary(view)
    report = load_run_report(resumed)
    assert summary["n"] == report.rows == 8
    assert summary["statuses"] == report.statuses
    assert summary["mean"] == pytest.approx(report.overall)
    assert summary["benchmarks"]["synthetic"]["categories"] == pytest.approx(report.categories)
    retried = [t for t in view.tasks if len(t["attempts"]) > 1]
    assert retried, "the resume retried the failed tasks"
    for task in retried:  # the latest attempt is the row's; the failed one is still there, as an error
        latest = [a for a in task["attempts"] if a["latest"]]
        assert len(latest) == 1 and latest[0]["attempt"] == task["attempt"] == max(
            a["attempt"] for a in task["attempts"]
        )
        assert all(a["status"] == "error" for a in task["attempts"] if not a["latest"])
    partial = [t for t in view.tasks if t["score"] is not None and 0 < t["score"] < 1]
    assert partial, "MRA gives partial scores for the numeric answers"
    page = write_run_page(resumed).read_text()
    shown = json.loads(html.unescape(re.search(r'data-summary="([^"]+)"', page).group(1)))
    assert shown == json.loads(json.dumps(summary))
    assert not re.search(r'(src|href)="(https?:|//)', page), "no external resources"


def test_each_episode_shows_the_exact_messages_sent(resumed: Path) -> None:
    view = load_run_view(resumed)
    task = view.tasks[0]
    call = next(e for e in task["attempts"][-1]["events"] if e["type"] == "model_call")
    parts = [p for m in call["messages"] for p in m["content"]]
    assert any(p["type"] == "text" and task["question"] in p["text"] for p in parts)
    images = [p["sha256"] for p in parts if p["type"] == "image"]
    assert images and all(view.images[sha] for sha in images), "the preview frame is inlined"


def test_view_command_writes_the_run_page(resumed: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["view", str(resumed), "--out", str(tmp_path / "page.html")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "page.html")
    assert "run-data" in (tmp_path / "page.html").read_text()


def _rendered(tmp_path: Path, url: str) -> str:
    """The DOM after the page's script ran, without the script itself."""
    return _chromium(tmp_path, "--dump-dom", url).stdout.split('<script type="application/json"')[0]


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium that lets the page's script run for up to 3 s of virtual time."""
    return headless_chromium(tmp_path, "--virtual-time-budget=3000", *args)


@needs_chromium
def test_headless_chromium_renders_the_run_and_applies_a_filter(resumed: Path, tmp_path: Path) -> None:
    page = write_run_page(resumed, tmp_path / "site")
    view = load_run_view(resumed)
    dom = _rendered(tmp_path, page.as_uri())
    assert len(re.findall(r'<tr class="task"', dom)) == 8, "one row per task, latest attempts only"
    retried = sum(len(t["attempts"]) - 1 for t in view.tasks)
    dom_all = _rendered(tmp_path, page.as_uri() + "#attempts=all")
    assert len(re.findall(r'<tr class="task old"', dom_all)) == retried, "older attempts are reachable"
    category = view.tasks[0]["category"]
    expected = [t for t in view.tasks if t["category"] == category]
    filtered = _rendered(tmp_path, page.as_uri() + f"#category={category}&sort=-score")
    assert re.search(r'<span id="shown-count">(\d+)</span>', filtered).group(1) == str(len(expected))
    scores = [s for s in re.findall(r'<td class="score">([^<]*)</td>', filtered)]
    assert len(scores) == len(expected)
    numbers = [float(s) for s in scores if s != "–"]
    assert numbers == sorted(numbers, reverse=True), "sorted by score, descending"
    mean = sum(t["score"] or 0 for t in expected) / len(expected)
    assert float(re.search(r'<span id="shown-mean">([^<]*)</span>', filtered).group(1)) == pytest.approx(mean, abs=1e-3)
    shot = tmp_path / "run.png"
    run = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri() + "#attempts=all")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    green = (np.abs(pixels - [46, 125, 50]).sum(axis=2) < 30).sum()  # the ok badges
    red = (np.abs(pixels - [198, 40, 40]).sum(axis=2) < 30).sum()  # the older attempts' error badges
    assert green > 200 and red > 50, (green, red)


def test_episode_pages_show_errors_and_partial_scores_as_what_they_are(resumed: Path) -> None:
    from spatialclaw.trajectories.episode_log import load_episode
    from spatialclaw.trajectories.episode_viewer import render_episode

    view = load_run_view(resumed)
    first = sorted((resumed / "episodes").glob("*/attempt-1"))
    errored = [d for d in first if load_episode(d).end["reason"] == "error"]
    assert errored
    page = render_episode(load_episode(errored[0]))
    assert '<span class="badge warn">error</span>' in page and ">wrong<" not in page
    partial = next(t for t in view.tasks if t["score"] is not None and 0 < t["score"] < 1)
    latest = (
        resumed
        / next(
            json.loads(line)
            for line in (resumed / "results.jsonl").read_text().splitlines()
            if json.loads(line)["task_id"] == partial["task_id"]
        )["trajectory_dir"]
    )
    page = render_episode(load_episode(latest))
    assert f"score {partial['score']:.3g}</span>" in page and ">wrong<" not in page
