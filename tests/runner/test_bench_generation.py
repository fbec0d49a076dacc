"""``bench --temperature / --max-tokens / --model-option``: sent with every model call, recorded in the
manifest, temperature 0 by default, kept by a resume, and a resume that changes them is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spatialclaw.cli import main
from spatialclaw.testing.provider_server import ScriptedProvider


def _bench(url: str, out: Path, *extra: str) -> int:
    return main(
        [
            "bench",
            "--benchmark",
            "synthetic",
            "--limit",
            "2",
            "--interface",
            "no-tools",
            "--model",
            f"openai-compat:scripted@{url}",
            "--out",
            str(out),
            "--model-retries",
            "1",
            "--no-progress",
            "--agent-option",
            "fsync=false",
            *extra,
        ]
    )


def _generation(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())["config"]["generation"]


def test_generation_flags_reach_every_call_and_the_manifest(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with ScriptedProvider(lambda request, index: "ANSWER: B") as server:
        assert _bench(server.url, tmp_path / "default") == 0
        assert [r.get("temperature") for r in server.requests] == [0.0, 0.0], "documented default: temperature 0"
        assert all("max_tokens" not in r for r in server.requests)
        assert _generation(tmp_path / "default") == {"temperature": 0.0}
        del server.requests[:]
        flags = ("--temperature", "0.7", "--max-tokens", "64", "--model-option", "seed=7")
        assert _bench(server.url, tmp_path / "set", *flags) == 0
        assert [(r["temperature"], r["max_tokens"], r["seed"]) for r in server.requests] == [(0.7, 64, 7)] * 2
        assert _generation(tmp_path / "set") == {"temperature": 0.7, "max_tokens": 64, "seed": 7}
        capsys.readouterr()
        assert _bench(server.url, tmp_path / "set", "--resume", "--temperature", "0.2") == 2
        assert "configuration differs in generation" in capsys.readouterr().err
        assert _bench(server.url, tmp_path / "set", "--resume", "--limit", "3") == 0  # keeps the run's settings
        assert (server.requests[-1]["temperature"], server.requests[-1]["max_tokens"]) == (0.7, 64)
