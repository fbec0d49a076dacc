"""The shared learned-model loader: local folders through from_pretrained, per-process reuse, and clear
errors (hub id, local path, HF_HUB_OFFLINE) when weights are missing, answered quickly rather than hanging."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from spatialclaw.primitives.perception import models
from tests.paths import REPO_ROOT
from tests.tiny_depth_models import save_tiny_depth_anything


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return save_tiny_depth_anything(tmp_path_factory.mktemp("tiny-da"))


def test_local_folder_loads_through_from_pretrained_on_the_chosen_device(tiny_folder):
    import torch

    loaded = models.load_model("depth", tiny_folder, device="cpu")
    model, processor = loaded
    assert type(model).__name__ == "DepthAnythingForDepthEstimation"
    assert "DPTImageProcessor" in type(processor).__name__
    assert loaded.device == "cpu" and loaded.dtype == torch.float32
    assert next(model.parameters()).dtype == torch.float32 and not model.training
    assert loaded.source == str(tiny_folder.resolve())


def test_second_load_reuses_the_same_objects_and_clear_forgets_them(tiny_folder):
    first = models.load_model("depth", tiny_folder, device="cpu")
    assert models.load_model("depth", tiny_folder, device="cpu") is first
    models.clear()
    assert models.load_model("depth", tiny_folder, device="cpu") is not first


def test_explicit_dtype_is_applied(tiny_folder):
    import torch

    loaded = models.load_model("depth", tiny_folder, device="cpu", dtype=torch.bfloat16)
    assert next(loaded.model.parameters()).dtype == torch.bfloat16


def test_version_changes_when_the_weights_change(tmp_path):
    folder = save_tiny_depth_anything(tmp_path / "m")
    before = models.model_version(str(folder))
    save_tiny_depth_anything(folder, max_depth=80)
    (folder / "config.json").touch()
    assert models.model_version(str(folder)) != before


def test_models_dir_is_searched_for_hub_ids(tmp_path, monkeypatch):
    save_tiny_depth_anything(tmp_path / "someorg" / "tiny-depth")
    monkeypatch.setenv("SPATIALCLAW_MODELS", str(tmp_path))
    assert models.resolve("someorg/tiny-depth") == str((tmp_path / "someorg" / "tiny-depth").resolve())
    assert models.load_model("depth", "someorg/tiny-depth", device="cpu").model is not None


def test_missing_hub_weights_offline_name_the_hub_id_and_the_ways_to_provide_them(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    started = time.monotonic()
    with pytest.raises(models.MissingWeightsError) as info:
        models.load_model("depth", "nobody/not-a-real-depth-model", device="cpu")
    assert time.monotonic() - started < 60  # a bound against hanging, not a speed claim
    message = str(info.value)
    assert "nobody/not-a-real-depth-model" in message
    assert "HF_HUB_OFFLINE" in message and "local path" in message and "download" in message


def test_unreachable_hub_is_reported_without_the_long_retry_loop(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(models.MissingWeightsError, match="cannot be reached"):
        models.load_model("depth", "nobody/not-a-real-depth-model", device="cpu")


def test_missing_local_folder_is_named(tmp_path):
    with pytest.raises(models.MissingWeightsError, match="does not exist"):
        models.load_model("depth", tmp_path / "absent" / "model", device="cpu")


def test_folder_without_weights_is_reported(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(models.MissingWeightsError, match="does not hold a complete model"):
        models.load_model("depth", tmp_path / "empty", device="cpu")


def test_unknown_kind_lists_the_known_ones(tiny_folder):
    with pytest.raises(ValueError, match="known kinds"):
        models.load_model("teleportation", tiny_folder)


def test_hub_id_loads_from_the_hugging_face_cache_offline_with_its_commit_as_version(tmp_path):
    """A hub id whose snapshot is in $HF_HOME loads with HF_HUB_OFFLINE=1 (fresh process: the hub library
    reads HF_HOME at import)."""
    import os
    import subprocess
    import sys

    snapshot = tmp_path / "hf" / "hub" / "models--someorg--tiny-depth" / "snapshots" / "0123abcd"
    save_tiny_depth_anything(snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0123abcd")
    code = (
        "from spatialclaw.primitives.perception import models\n"
        "print(models.model_version('someorg/tiny-depth'))\n"
        "loaded = models.load_model('depth', 'someorg/tiny-depth', device='cpu')\n"
        "print(type(loaded.model).__name__, loaded.version)\n"
    )
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_HUB_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["0123abcd", "DepthAnythingForDepthEstimation 0123abcd"]
