"""SAM 3 behind detect and segment(text=...): a tiny random SAM 3 saved with ``save_pretrained`` and loaded
through the production ``from_pretrained`` path; units (pixels, xyxy boxes of the original frame), frames,
dtype, caching, the one place the backend is chosen, and the errors when weights or packages are missing."""

from __future__ import annotations

import numpy as np
import pytest

from spatialclaw.primitives.perception import cache
from spatialclaw.primitives.perception.availability import tool_status
from spatialclaw.primitives.perception.backends import sam3_problem, text_backend
from spatialclaw.primitives.perception.detect import detect, detector_id
from spatialclaw.primitives.perception.models import MissingWeightsError, clear, load_model
from spatialclaw.primitives.perception.sam3 import Sam3Inputs, load_sam3, sam3_instances
from spatialclaw.primitives.perception.segment import segment, text_segmenter_id
from tests.indexed_frames import IndexedFrame, noise_frame
from tests.tiny_instance_models import build_sam3

H, W = 72, 100  # not square, so that x/y or width/height mix-ups show


@pytest.fixture(scope="module")
def tiny_sam3(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build_sam3(tmp_path_factory.mktemp("sam3") / "sam3"))


@pytest.fixture
def frame() -> IndexedFrame:
    return noise_frame(3, H, W, index=12)


@pytest.fixture
def no_hub(tmp_path, monkeypatch):
    """No network, an empty Hugging Face cache and no configured models."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("SPATIALCLAW_SAM3_MODEL", "SPATIALCLAW_DETECT_MODEL", "SPATIALCLAW_SEGMENT_TEXT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SPATIALCLAW_MODELS", raising=False)
    clear()


def test_detect_with_sam3_gives_boxes_masks_and_scores_in_original_pixels(tiny_sam3, frame):
    found = detect(frame, ["red chair", "cup"], model=tiny_sam3, threshold=0.0, nms_iou=1.0)
    assert len(found) == 2 * 10  # every query of the tiny model (10), for each label
    assert set(found.labels) == {"red chair", "cup"} and found.backend == "sam3"
    assert list(found.scores) == sorted(found.scores, reverse=True) and all(0.0 <= s <= 1.0 for s in found.scores)
    for item in found:
        x0, y0, x1, y1 = item.box
        assert 0 <= x0 <= x1 <= W and 0 <= y0 <= y1 <= H
        assert item.mask is not None and item.mask.shape == (H, W) and item.mask.dtype == bool
        assert item.frame_index == 12


def test_boxes_are_the_models_normalised_xyxy_scaled_by_width_and_height(tiny_sam3, frame):
    """Units: SAM 3 predicts (x0, y0, x1, y1) in [0, 1]; detect reports them x by W and y by H."""
    import torch

    loaded = load_sam3(tiny_sam3, device="cpu")
    inputs = loaded.processor
    with torch.inference_mode():
        out = loaded.model(pixel_values=inputs.image(frame.array), **inputs.text("cup"))
    scores = (out.pred_logits.sigmoid() * out.presence_logits.sigmoid())[0]
    best = int(scores.argmax())
    expected = (out.pred_boxes[0, best] * torch.tensor([W, H, W, H])).clamp(min=0).tolist()
    expected = [min(expected[0], W), min(expected[1], H), min(expected[2], W), min(expected[3], H)]
    top = detect(frame, "cup", model=tiny_sam3, threshold=0.0)[0]
    assert top.box == pytest.approx(expected, abs=1e-3)
    assert top.score == pytest.approx(float(scores[best]), abs=1e-5)


def test_inputs_follow_the_checkpoints_preprocessor_config(tiny_sam3, frame):
    inputs = Sam3Inputs.from_pretrained(tiny_sam3, local_files_only=True)
    pixels = inputs.image(frame.array)
    assert tuple(pixels.shape) == (1, 3, 112, 112) and str(pixels.dtype) == "torch.float32"
    assert float(pixels.min()) >= -1.0 and float(pixels.max()) <= 1.0  # mean = std = 0.5 on [0, 1]
    tokens = inputs.text("red chair")
    assert tuple(tokens["input_ids"].shape) == (1, 32) and int(tokens["attention_mask"].sum()) < 32


def test_segment_text_with_sam3_masks_at_frame_resolution_boxes_tight_and_cached(tiny_sam3, frame):
    found = segment(frame, text="cup", text_model=tiny_sam3, threshold=0.0)
    assert len(found) > 0 and found.backend == "sam3"
    assert found.masks is not None and found.masks.shape == (len(found), H, W)
    for item in found:
        assert item.frame_index == 12
        if item.mask.any():
            ys, xs = np.nonzero(item.mask)
            assert item.box == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    hits = cache.stats["hits"]
    again = segment(frame, text="cup", text_model=tiny_sam3, threshold=0.0)
    assert cache.stats["hits"] == hits + 1 and list(again.scores) == list(found.scores)


def test_a_half_precision_model_gives_float_scores_and_bool_masks(tiny_sam3, frame):
    import torch

    loaded = load_model(
        "sam3", tiny_sam3, device="cpu", dtype=torch.bfloat16, model_class="Sam3Model", processor_class=Sam3Inputs
    )
    assert loaded.model.dtype == torch.bfloat16
    found = sam3_instances(loaded, frame.array, ["cup"], threshold=0.0)
    assert len(found) == 10 and all(isinstance(item.score, float) for item in found)
    assert all(item.mask is not None and item.mask.shape == (H, W) for item in found)


def test_sam3_is_the_default_wherever_its_weights_are_and_the_report_says_so(tiny_sam3, frame, no_hub, monkeypatch):
    monkeypatch.setenv("SPATIALCLAW_SAM3_MODEL", tiny_sam3)
    assert sam3_problem() is None and text_backend() == tiny_sam3
    assert detector_id() == tiny_sam3 and detector_id("sam3") == tiny_sam3 and text_segmenter_id() == tiny_sam3
    assert detect(frame, "cup", threshold=0.0).backend == "sam3"
    assert segment(frame, text="cup", threshold=0.0).backend == "sam3"
    report = tool_status()
    assert report["detect"].available and report["detect"].backend == "sam3"
    assert "SAM 3" in report["detect"].note and "mask" in report["detect"].note
    # SAM ViT-B (point/box prompts) is missing here, but text prompts work through SAM 3
    assert report["segment"].available and report["segment"].backend == "sam3"
    assert "point/box prompts unavailable" in report["segment"].note


def test_without_sam3_weights_the_fallbacks_are_chosen_and_the_reason_reported(no_hub):
    assert "facebook/sam3" in (sam3_problem() or "") and text_backend() == "fallback"
    assert detector_id() == "IDEA-Research/grounding-dino-tiny" and text_segmenter_id() == "detect"
    report = tool_status()
    assert report["detect"].backend == "grounding-dino" and report["segment"].backend == "detect+sam"
    assert not report["detect"].available  # nor are Grounding DINO's weights here
    assert "hf download" in report["detect"].reason


def test_a_transformers_without_sam3_falls_back_and_says_to_upgrade(no_hub, monkeypatch, tiny_sam3):
    import transformers

    monkeypatch.setenv("SPATIALCLAW_SAM3_MODEL", tiny_sam3)
    monkeypatch.setattr(transformers, "Sam3Model", None)  # as an older transformers has it: absent
    assert "no SAM 3" in (sam3_problem() or "") and text_backend() == "fallback"


def test_explicit_sam3_without_weights_names_the_hub_id_and_the_command(frame, no_hub):
    with pytest.raises(MissingWeightsError, match="facebook/sam3") as error:
        detect(frame, "cup", model="sam3")
    assert "hf download facebook/sam3" in str(error.value) and "SPATIALCLAW_MODELS" in str(error.value)


def test_a_folder_that_is_not_sam3_is_refused_by_name(tmp_path):
    from tests.tiny_instance_models import build_sam

    folder = build_sam(tmp_path / "sam")
    with pytest.raises(ValueError, match="not a SAM 3 checkpoint"):
        load_sam3(str(folder), device="cpu")
