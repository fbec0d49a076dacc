"""`spatialclaw doctor`: one row per backend with its package, weights, device and state, from what is
really on this machine (a tiny model saved with save_pretrained, a live DA3 service socket)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spatialclaw.cli import main
from spatialclaw.commands.doctor import backends
from spatialclaw.primitives.perception.depth import DEFAULT_MODEL
from spatialclaw.primitives.reconstruction.da3_service import Da3Server
from tests.tiny_depth_models import save_tiny_depth_anything


@pytest.fixture
def env(tmp_path, monkeypatch):
    save_tiny_depth_anything(tmp_path / "models" / DEFAULT_MODEL)
    monkeypatch.setenv("SPATIALCLAW_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("SPATIALCLAW_DETECT_MODEL", str(tmp_path / "no-such-detector"))
    for name in (
        "SPATIALCLAW_DEPTH_MODEL",
        "SPATIALCLAW_DEVICE",
        "SPATIALCLAW_PERCEPTION",
        "SPATIALCLAW_MULTIVIEW_SOCKET",
    ):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def rows() -> dict[str, object]:
    return {row.name: row for row in backends()}


def test_each_backend_reports_package_weights_and_state(env):
    table = rows()
    depth = table["depth (default)"]
    assert depth.ready and depth.weights == "ok" and depth.model == DEFAULT_MODEL and depth.state == "ready"
    detector = table["detector"]
    assert not detector.ready and detector.weights == "missing" and "no-such-detector" in detector.state
    assert table["sfm / rgbd"].ready and table["sfm / rgbd"].weights == "none needed"
    assert not table["da3"].ready and "SPATIALCLAW_MULTIVIEW_SOCKET" in table["da3"].state


def test_da3_row_follows_the_service(env, monkeypatch):
    sock = str(env / "da3.sock")
    monkeypatch.setenv("SPATIALCLAW_MULTIVIEW_SOCKET", sock)
    server = Da3Server(sock, object())
    try:
        assert rows()["da3"].ready
    finally:
        server.close()
    row = rows()["da3"]
    assert not row.ready and "does not answer" in row.state


@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has an NVIDIA GPU")
def test_a_cuda_request_without_a_gpu_marks_the_learned_backends(env, monkeypatch):
    monkeypatch.setenv("SPATIALCLAW_DEVICE", "cuda")
    depth = rows()["depth (default)"]
    assert not depth.ready and depth.device == "cuda" and "no NVIDIA GPU" in depth.state
    assert rows()["stereo sgbm"].ready


def test_the_command_prints_the_table_and_json(env, capsys):
    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0].split()
    assert header == ["backend", "tool", "model", "package", "weights", "device", "state"]
    assert "depth (default)" in text and "backends ready" in text.splitlines()[-1]
    assert main(["doctor", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {row["name"] for row in data} >= {"depth (default)", "depth-pro", "da3", "sfm / rgbd"}
    assert next(row for row in data if row["name"] == "depth (default)")["ready"] is True
