"""segment(): SAM masks for point and box prompts, and text -> masks (SAM 3, or detector boxes -> SAM), on
tiny random models loaded from local folders with ``from_pretrained`` (structure, caching, errors)."""

from __future__ import annotations

import numpy as np
import pytest

from spatialclaw.primitives.perception import cache
from spatialclaw.primitives.perception.detect import detect
from spatialclaw.primitives.perception.models import MissingWeightsError, clear
from spatialclaw.primitives.perception.segment import segment
from tests.indexed_frames import IndexedFrame, noise_frame

H, W = 72, 100


@pytest.fixture
def frame() -> IndexedFrame:
    return noise_frame(1, H, W, index=40)


def assert_full_resolution_masks(found, count):
    assert len(found) == count
    assert found.masks is not None and found.masks.shape == (count, H, W) and found.masks.dtype == bool
    for item in found:
        assert item.frame_index == 40
        assert 0.0 <= item.score <= 1.0
        if item.mask.any():
            ys, xs = np.nonzero(item.mask)
            assert item.box == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)


def test_points_give_one_mask_at_frame_resolution(tiny_detector_and_sam, frame):
    found = segment(frame, points=[(30, 20), (35, 25)], model=tiny_detector_and_sam["sam"], label="mug")
    assert_full_resolution_masks(found, 1)
    assert found[0].label == "mug"


def test_each_box_gives_one_instance_and_instance_labels_carry_over(tiny_detector_and_sam, frame):
    found = segment(frame, box=[(5, 5, 40, 30), (50, 20, 95, 70)], model=tiny_detector_and_sam["sam"])
    assert_full_resolution_masks(found, 2)
    assert found.labels == ["object", "object"]
    boxes = detect(frame, ["red chair", "cup"], model=tiny_detector_and_sam["detector"], threshold=0.0)[:3]
    from_instances = segment(frame, box=boxes, model=tiny_detector_and_sam["sam"])
    assert_full_resolution_masks(from_instances, 3)
    assert sorted(from_instances.labels) == sorted(boxes.labels)


def test_points_combine_with_one_box(tiny_detector_and_sam, frame):
    found = segment(
        frame, points=[(20, 15), (60, 60)], point_labels=[1, 0], box=(5, 5, 40, 30), model=tiny_detector_and_sam["sam"]
    )
    assert_full_resolution_masks(found, 1)


def test_second_call_is_a_cache_hit(tiny_detector_and_sam, frame):
    first = segment(frame, box=(5, 5, 40, 30), model=tiny_detector_and_sam["sam"])
    hits = cache.stats["hits"]
    second = segment(frame, box=(5, 5, 40, 30), model=tiny_detector_and_sam["sam"])
    assert cache.stats["hits"] == hits + 1
    np.testing.assert_array_equal(first.masks, second.masks)
    segment(frame, box=(6, 5, 40, 30), model=tiny_detector_and_sam["sam"])
    assert cache.stats["hits"] == hits + 1  # another box is another computation


def test_text_through_detector_boxes_then_sam_masks(tiny_detector_and_sam, frame):
    found = segment(
        frame,
        text=["red chair", "cup"],
        text_model="detect",
        detector=tiny_detector_and_sam["detector"],
        model=tiny_detector_and_sam["sam"],
        threshold=0.0,
    )
    boxes = detect(frame, ["red chair", "cup"], model=tiny_detector_and_sam["detector"], threshold=0.0)
    assert_full_resolution_masks(found, len(boxes))
    assert sorted(found.labels) == sorted(boxes.labels)
    assert sorted(found.scores) == pytest.approx(sorted(boxes.scores))  # detection confidence is kept
    assert "gdino boxes + sam masks" in found.backend


def test_text_falls_back_to_detector_when_sam3_weights_are_missing_and_says_so(
    tiny_detector_and_sam, frame, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("SPATIALCLAW_DETECT_MODEL", tiny_detector_and_sam["detector"])
    monkeypatch.setenv("SPATIALCLAW_SEGMENT_MODEL", tiny_detector_and_sam["sam"])
    monkeypatch.delenv("SPATIALCLAW_SEGMENT_TEXT_MODEL", raising=False)
    found = segment(frame, text="cup", threshold=0.0)
    assert len(found) > 0 and found.masks.shape[1:] == (H, W)
    assert "SAM 3 unavailable" in found.backend and "SAM 3 unavailable" in repr(found)


def test_explicitly_requested_sam3_without_weights_raises_with_the_hub_id(frame, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    clear()
    with pytest.raises(MissingWeightsError, match="facebook/sam3"):
        segment(frame, text="cup", text_model="sam3")


def test_missing_sam_weights_name_the_hub_id(frame, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("SPATIALCLAW_SEGMENT_MODEL", raising=False)
    clear()
    with pytest.raises(MissingWeightsError, match="facebook/sam-vit-base"):
        segment(frame, points=[(10, 10)])


@pytest.mark.parametrize(
    "kwargs, problem",
    [
        ({}, "needs a prompt"),
        ({"text": "cup", "points": [(1, 1)]}, "not both"),
        ({"text": "  "}, "empty"),
        ({"points": [(W + 5, 3)]}, "outside"),
        ({"points": [(3, 3, 3)]}, r"\(x, y\)"),
        ({"box": (40, 5, 10, 30)}, "reversed"),
        ({"box": (1, 2, 3)}, "4 finite numbers"),
        ({"points": [(3, 3)], "point_labels": [1, 1]}, "each of the 1 points"),
        ({"points": [(3, 3)], "point_labels": [0]}, "at least one point"),
        ({"points": [(3, 3)], "box": [(0, 0, 9, 9), (1, 1, 8, 8)]}, "one box"),
    ],
)
def test_bad_prompts_are_refused_before_any_model_loads(frame, kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        segment(frame, model="/nonexistent/sam", **kwargs)


@pytest.fixture(scope="module")
def tiny_sam3(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.tiny_instance_models import build_sam3

    return str(build_sam3(tmp_path_factory.mktemp("sam3") / "sam3"))


def test_text_with_sam3_gives_one_masked_instance_per_object_at_frame_resolution(tiny_sam3, frame):
    found = segment(frame, text=["red chair", "cup"], text_model=tiny_sam3, threshold=0.0)
    assert len(found) == 2 * 10  # every query of the tiny model, for each of the two labels
    assert found.masks.shape == (20, H, W) and found.masks.dtype == bool
    assert set(found.labels) == {"red chair", "cup"}
    assert all(item.frame_index == 40 and 0.0 <= item.score <= 1.0 for item in found)
    assert found.backend == "sam3"
    hits = cache.stats["hits"]
    segment(frame, text=["red chair", "cup"], text_model=tiny_sam3, threshold=0.0)
    assert cache.stats["hits"] == hits + 1
