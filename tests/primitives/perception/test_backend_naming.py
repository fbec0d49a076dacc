"""Every learned result says which backend answered, and the prompt's tool list and ``manual()`` name the backend
that will answer here and what it is good for (tiny random models saved and loaded through from_pretrained)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spatialclaw import Kernel
from spatialclaw.agent import kernel_docs
from spatialclaw.primitives.frames.frame import Frame
from spatialclaw.primitives.frames.sources import ArraySource
from spatialclaw.primitives.perception.availability import tool_status
from spatialclaw.primitives.perception.depth import depth
from spatialclaw.primitives.perception.models import clear
from spatialclaw.primitives.reconstruction.reconstruct import reconstruct
from tests.tiny_depth_models import save_tiny_depth_anything, save_tiny_depth_pro
from tests.tiny_instance_models import build_sam3


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        "pro": save_tiny_depth_pro(root / "pro"),
        "anything": save_tiny_depth_anything(root / "anything"),
        "sam3": build_sam3(root / "sam3"),
    }


@pytest.fixture
def here(models, tmp_path, monkeypatch):
    """No network, an empty Hugging Face cache; Depth Pro and SAM 3 are the configured local models."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("SPATIALCLAW_DETECT_MODEL", "SPATIALCLAW_SEGMENT_TEXT_MODEL", "SPATIALCLAW_MODELS"):
        monkeypatch.delenv(name, raising=False)
    for name in ("SPATIALCLAW_PERCEPTION", "SPATIALCLAW_PERCEPTION_SOCKET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPATIALCLAW_DEPTH_MODEL", str(models["pro"]))
    monkeypatch.setenv("SPATIALCLAW_SAM3_MODEL", str(models["sam3"]))
    clear()
    return models


def frame(index: int, width: int = 83, height: int = 61) -> Frame:
    rgb = np.random.default_rng(index).integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    return Frame(ArraySource(rgb), index)


def test_a_depth_result_names_its_backend_family_by_the_checkpoints_config(models):
    pro = depth(frame(1), model=models["pro"], device="cpu")
    anything = depth(frame(1), model=models["anything"], device="cpu")
    assert pro.backend == "depth-pro" and "backend=depth-pro" in repr(pro)
    assert anything.backend == "depth-anything" and "backend=depth-anything" in repr(anything)
    assert pro.model == str(models["pro"])  # the exact checkpoint stays next to the family


def test_a_classical_reconstruction_says_no_model_answered(test_data):
    folder = test_data / "multiview-temple"
    names = sorted(p.name for p in folder.glob("*.png"))[:4]
    rec = reconstruct([folder / n for n in names], depth=None)
    assert rec.backend == f"classical {rec.method}" and f"backend=classical {rec.method}" in repr(rec)


def test_the_report_and_the_prompt_name_each_backend_and_what_it_is_good_for(here):
    report = tool_status()
    assert report["depth"].available and report["depth"].backend == "depth-pro"
    assert "focal length" in report["depth"].note and str(here["pro"]) in report["depth"].note
    assert report["detect"].backend == "sam3" and report["reconstruct"].backend == "classical + depth-pro"
    prompt = kernel_docs.api_section(tools={name: item.to_dict() for name, item in report.items()})
    assert "- `depth` (backend depth-pro): answered by" in prompt
    assert "- `detect` (backend sam3): answered by" in prompt and "every matching instance" in prompt


@pytest.mark.slow
def test_manual_in_the_kernel_names_the_backend_that_answers_here(here):
    with Kernel(readable=[here["pro"].parent]) as kernel:  # the sandbox sees the model folders
        on_depth = kernel.execute("manual('depth')")
        on_detect = kernel.execute("manual('detect')")
        on_geometry = kernel.execute("manual('geom.distance')")
        answered = kernel.execute("import numpy as np\nprint(detect(np.zeros((40, 50, 3), np.uint8), 'cup').backend)")
    assert on_depth.error is None and "Here: backend depth-pro: answered by" in on_depth.stdout
    assert "focal length" in on_depth.stdout
    assert "Here: backend sam3: answered by" in on_detect.stdout
    assert "Here:" not in on_geometry.stdout  # classical names carry no backend line
    assert answered.error is None and answered.stdout.strip() == "sam3"
