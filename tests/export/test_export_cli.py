"""``spatialclaw export`` on the command line: filters, summaries and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

from spatialclaw.cli import main
from spatialclaw.trajectories.synthetic import write_synthetic_episode


def test_cli_exports_with_filters_and_prints_a_summary(tmp_path, capsys):
    write_synthetic_episode(tmp_path / "run" / "good", steps=2, seed=1)
    write_synthetic_episode(tmp_path / "run" / "bad", steps=2, seed=2, correct=False)
    out = tmp_path / "sft.jsonl"
    code = main(["export", "--format", "openai", "--in", str(tmp_path / "run"), "--out", str(out), "--correct-only"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "exported 1 of 2" in printed and "1 incorrect" in printed
    assert len(out.read_text().splitlines()) == 1
    assert json.loads(out.read_text())["messages"][-1]["content"].startswith("Step 1")


def test_cli_errors_name_the_problem(tmp_path, capsys):
    assert (
        main(["export", "--format", "openai", "--in", str(tmp_path / "missing"), "--out", str(tmp_path / "x.jsonl")])
        == 2
    )
    assert "does not exist" in capsys.readouterr().err
    write_synthetic_episode(tmp_path / "run" / "bad", steps=2, correct=False)
    code = main(
        [
            "export",
            "--format",
            "openai",
            "--in",
            str(tmp_path / "run"),
            "--out",
            str(tmp_path / "x.jsonl"),
            "--correct-only",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "no episode passed the filters (1 found)" in err
    assert "incorrect: 1" in err and "benchmarks seen: synthetic (1)" in err
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.jsonl.partial").exists()


def test_console_script_entry_point_runs_export(tmp_path):
    write_synthetic_episode(tmp_path / "ep", steps=2)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "spatialclaw.cli",
            "export",
            "--format",
            "ipynb",
            "--in",
            str(tmp_path / "ep"),
            "--out",
            str(tmp_path / "nb"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "nb" / "ep.ipynb").is_file()
