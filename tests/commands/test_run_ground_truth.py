"""``run --ground-truth``: a single run is scored on the host and the score recorded, so it exports like a
benchmark episode (verl, ``--correct-only``); the kernel never sees the truth."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.export import export_episodes
from spatialclaw.testing import ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.episodes import EpisodeFilter


def _cell(code: str) -> str:
    return f"```python\n{code}\n```"


def _frame(tmp_path: Path) -> Path:
    path = tmp_path / "frame.png"
    Image.new("RGB", (64, 48), (200, 40, 40)).save(path)
    return path


def _run(tmp_path: Path, script: list[str], *args: str) -> int:
    with ScriptedProvider(script) as server:
        return main(
            [
                "run",
                "--model",
                f"openai-compat:scripted@{server.url}",
                "--frames",
                str(_frame(tmp_path)),
                "--max-steps",
                "3",
                *args,
            ]
        )


def test_ground_truth_is_scored_recorded_and_hidden_from_the_kernel(tmp_path, capsys):
    script = [_cell("print(repr(meta))"), _cell("answer('A')")]
    code = _run(
        tmp_path,
        script,
        "--question",
        "Left or right?",
        "--choices",
        "left",
        "right",
        "--ground-truth",
        "A",
        "--out",
        str(tmp_path / "ep"),
    )
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "answer: A"
    assert [line for line in lines if line.startswith("score: ")] == ["score: 1 (choice; ground truth 'A')"]
    episode = load_episode(tmp_path / "ep")
    assert episode.task["ground_truth"] == "A" and episode.score == 1.0
    printed_meta = episode.cells()[0][1].stdout
    assert "'ground_truth'" not in printed_meta and "'A'" not in printed_meta  # no such key (paths may say it)

    kept = export_episodes(
        "verl", [tmp_path / "ep"], tmp_path / "rl.parquet", episode_filter=EpisodeFilter(correct_only=True)
    )
    assert kept.exported == 1, "a scored single run is a verl task and passes --correct-only"


def test_numeric_ground_truth_scores_by_the_benchmark_metric(tmp_path, capsys):
    code = _run(
        tmp_path,
        [_cell("answer(2.0)")],
        "--question",
        "How many metres away is it?",
        "--answer-type",
        "number",
        "--ground-truth",
        "4",
        "--out",
        str(tmp_path / "ep"),
    )
    assert code == 0
    episode = load_episode(tmp_path / "ep")
    assert episode.task["ground_truth"] == 4.0 and episode.score == pytest.approx(0.1, abs=1e-6)


def test_bad_ground_truth_is_a_one_line_error(tmp_path, capsys):
    code = _run(
        tmp_path,
        [_cell("answer(2.0)")],
        "--question",
        "How far?",
        "--answer-type",
        "number",
        "--ground-truth",
        "four",
        "--out",
        str(tmp_path / "ep"),
    )
    assert code == 2
    assert "--ground-truth 'four' is not a number" in capsys.readouterr().err
    assert not (tmp_path / "ep").exists()
