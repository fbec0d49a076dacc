"""detect(): open-vocabulary detection through transformers, on tiny random Grounding DINO and OWLv2 models
loaded from local folders with ``from_pretrained`` (structure, caching and errors; not accuracy)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from spatialclaw.primitives.perception import cache
from spatialclaw.primitives.perception.detect import detect, detector_id
from spatialclaw.primitives.perception.instances import Detections
from spatialclaw.primitives.perception.models import MissingWeightsError, clear
from tests.indexed_frames import IndexedFrame, noise_frame
from tests.tiny_instance_models import build_grounding_dino, build_owlv2


@pytest.fixture(scope="module")
def tiny_detectors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("detectors")
    return {"grounding-dino": str(build_grounding_dino(root / "gdino")), "owlv2": str(build_owlv2(root / "owlv2"))}


@pytest.fixture
def frame() -> IndexedFrame:
    return noise_frame(0, 90, 130, index=17)


@pytest.mark.parametrize("family", ["grounding-dino", "owlv2"])
def test_boxes_are_in_original_pixels_with_query_labels_and_absolute_frame_index(tiny_detectors, frame, family):
    found = detect(frame, ["red chair", "cup"], model=tiny_detectors[family], threshold=0.0)
    assert isinstance(found, Detections)
    assert len(found) > 0
    boxes = found.boxes
    assert boxes.shape == (len(found), 4) and boxes.dtype == np.float64
    assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= 130).all()
    assert (boxes[:, 1] >= 0).all() and (boxes[:, 3] <= 90).all()
    assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()
    assert set(found.labels) <= {"red chair", "cup"}
    assert all(item.frame_index == 17 and item.mask is None for item in found)
    assert list(found.scores) == sorted(found.scores, reverse=True)
    assert ((found.scores >= 0) & (found.scores <= 1)).all()


def test_owlv2_labels_are_exactly_the_query_labels(tiny_detectors, frame):
    found = detect(frame, ["red chair", "cup"], model=tiny_detectors["owlv2"], threshold=0.0, nms_iou=1.0)
    assert set(found.labels) == {"red chair", "cup"}


def test_threshold_and_max_instances_limit_the_result(tiny_detectors, frame):
    everything = detect(frame, "chair", model=tiny_detectors["grounding-dino"], threshold=0.0, max_instances=100)
    middle = float(np.median(everything.scores))
    confident = detect(frame, "chair", model=tiny_detectors["grounding-dino"], threshold=middle)
    assert 0 < len(confident) < len(everything)
    assert (confident.scores > middle).all()
    assert len(detect(frame, "chair", model=tiny_detectors["grounding-dino"], threshold=0.0, max_instances=2)) == 2


def test_same_label_boxes_overlapping_more_than_nms_iou_are_merged(tiny_detectors, frame):
    found = detect(frame, "cup", model=tiny_detectors["owlv2"], threshold=0.0, nms_iou=0.3, max_instances=500)
    for i in range(len(found)):
        for j in range(i + 1, len(found)):
            assert found[i].iou(found[j]) <= 0.3 + 1e-9


def test_second_call_is_a_cache_hit_with_identical_result(tiny_detectors, frame):
    first = detect(frame, "cup", model=tiny_detectors["grounding-dino"], threshold=0.0)
    hits, misses = cache.stats["hits"], cache.stats["misses"]
    second = detect(frame, "cup", model=tiny_detectors["grounding-dino"], threshold=0.0)
    assert cache.stats["hits"] == hits + 1 and cache.stats["misses"] == misses
    np.testing.assert_array_equal(first.boxes, second.boxes)
    assert first.labels == second.labels
    other = IndexedFrame(frame.array.copy(), index=99)
    other.array[0, 0] += 1  # one changed pixel is a different computation
    third = detect(other, "cup", model=tiny_detectors["grounding-dino"], threshold=0.0)
    assert cache.stats["misses"] == misses + 1
    assert all(item.frame_index == 99 for item in third)


def test_accepts_pil_images_and_returns_drawable_detections(tiny_detectors, frame):
    found = detect(Image.fromarray(frame.array), "cup", model=tiny_detectors["owlv2"], threshold=0.0)
    assert all(item.frame_index is None for item in found)
    overlay = found.image
    assert overlay.size == (130, 90)
    assert not np.array_equal(np.asarray(overlay), frame.array)  # boxes were drawn


def test_missing_local_folder_names_the_problem(frame, tmp_path):
    with pytest.raises(MissingWeightsError, match="does not exist"):
        detect(frame, "cup", model=str(tmp_path / "no-such-model"))


def test_missing_hub_weights_offline_names_the_hub_id_and_how_to_get_them(frame, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("SPATIALCLAW_MODELS", str(tmp_path / "models"))
    clear()
    with pytest.raises(MissingWeightsError) as error:
        detect(frame, "cup", model="owlv2")
    message = str(error.value)
    assert "google/owlv2-base-patch16-ensemble" in message and "HF_HUB_OFFLINE" in message
    assert "download" in message


def test_model_choice_comes_from_argument_then_environment_then_default(monkeypatch):
    monkeypatch.delenv("SPATIALCLAW_DETECT_MODEL", raising=False)
    assert detector_id() == "IDEA-Research/grounding-dino-tiny"
    monkeypatch.setenv("SPATIALCLAW_DETECT_MODEL", "owlv2")
    assert detector_id() == "google/owlv2-base-patch16-ensemble"
    assert detector_id("/some/folder") == "/some/folder"


@pytest.mark.parametrize("text, problem", [("", "empty"), ([], "empty"), (["chair", " "], "empty"), (3, "label")])
def test_bad_text_is_refused_with_an_example(frame, text, problem):
    with pytest.raises(ValueError, match=problem):
        detect(frame, text, model="unused")


def test_a_list_of_frames_is_refused(frame):
    with pytest.raises(ValueError, match="ONE frame"):
        detect([frame, frame], "cup", model="unused")
