"""Instance and Detections: pixel conventions, helpers, the printed table the model reads, drawing, pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from spatialclaw.primitives.imaging import png_bytes
from spatialclaw.primitives.perception.instances import Detections, Instance, box_iou, draw_instances, mask_to_box


def square_mask(x0: int, y0: int, size: int, shape=(40, 60)) -> np.ndarray:
    mask = np.zeros(shape, bool)
    mask[y0 : y0 + size, x0 : x0 + size] = True
    return mask


def test_box_uses_pixel_edges_and_centroid_pixel_centres():
    mask = square_mask(10, 5, 10)  # columns 10..19, rows 5..14
    assert mask_to_box(mask) == (10.0, 5.0, 20.0, 15.0)
    masked = Instance("cup", 0.9, (0, 0, 1, 1)).with_mask(mask)
    assert masked.box == (10.0, 5.0, 20.0, 15.0)
    assert masked.centroid == (14.5, 9.5)
    boxed = Instance("cup", 0.9, (10, 5, 20, 15))
    assert boxed.centroid == (14.5, 9.5)  # same point for the same region, with or without a mask
    assert boxed.box_center == (15.0, 10.0)
    assert masked.area == 100.0 and boxed.area == 100.0
    assert (boxed.width, boxed.height) == (10.0, 10.0)


def test_iou_of_masks_and_of_boxes():
    a = Instance("a", 1.0, (0, 0, 10, 10))
    b = Instance("b", 1.0, (5, 0, 15, 10))
    assert box_iou(a.box, b.box) == pytest.approx(50 / 150)
    assert a.iou(b) == pytest.approx(1 / 3)
    am = a.with_mask(square_mask(0, 0, 10))
    bm = b.with_mask(square_mask(5, 0, 10))
    assert am.iou(bm) == pytest.approx(50 / 150)


def test_empty_mask_keeps_the_given_box_and_bad_masks_are_refused():
    kept = Instance("a", 0.5, (1, 2, 3, 4)).with_mask(np.zeros((40, 60), bool))
    assert kept.box == (1.0, 2.0, 3.0, 4.0) and kept.area == 0.0
    with pytest.raises(ValueError, match=r"\(H, W\)"):
        Instance("a", 0.5, (1, 2, 3, 4), mask=np.zeros((2, 40, 60), bool))


def test_detections_sort_filter_and_arrays():
    dets = Detections(
        [
            Instance("cup", 0.4, (0, 0, 5, 5)),
            Instance("chair", 0.9, (10, 10, 30, 30)),
            Instance("Cup", 0.7, (1, 1, 6, 6)),
        ]
    )
    assert dets.labels == ["chair", "Cup", "cup"]
    assert dets.boxes.shape == (3, 4) and dets.scores.tolist() == [0.9, 0.7, 0.4]
    assert dets.masks is None
    assert dets.filter(label="cup").labels == ["Cup", "cup"]
    assert dets.filter(min_score=0.5).labels == ["chair", "Cup"]
    assert dets.best("cup").score == 0.7
    assert isinstance(dets[1:], Detections) and len(dets[1:]) == 2
    with pytest.raises(LookupError, match="found labels"):
        dets.best("table")
    with pytest.raises(IndexError, match="there are 3"):
        dets[5]


def test_printed_table_states_units_frame_and_backend():
    mask = square_mask(10, 5, 10)
    dets = Detections([Instance("cup", 0.875, (0, 0, 1, 1), frame_index=12).with_mask(mask)], backend="sam-vit-base")
    assert repr(dets) == (
        "Detections(1 instances in frame 12 via sam-vit-base; boxes (x0, y0, x1, y1) in pixels, origin top-left):\n"
        "  [0] 'cup' score 0.88 frame 12 box (10, 5, 20, 15) centre (14.5, 9.5) mask 100 px"
    )
    assert repr(Detections([], backend="x")) == "Detections(0 instances via x; try other wording or a lower threshold)"


def test_overlay_draws_over_the_frame_and_show_encodes_it():
    frame = np.full((40, 60, 3), 30, np.uint8)
    dets = Detections([Instance("cup", 0.9, (0, 0, 1, 1)).with_mask(square_mask(10, 5, 10))], frame)
    overlay = dets.array
    assert overlay.shape == (40, 60, 3)
    assert not np.array_equal(overlay[10, 15], frame[10, 15])  # mask tinted
    assert np.array_equal(overlay[35, 55], frame[35, 55])  # far away untouched
    png, width, height = png_bytes(dets)
    assert png.startswith(b"\x89PNG") and (width, height) == (60, 40)
    assert np.array_equal(np.asarray(draw_instances(frame, dets)), overlay)


def test_pickling_drops_the_frame_and_keeps_the_instances():
    frame = np.zeros((40, 60, 3), np.uint8)
    dets = Detections([Instance("cup", 0.9, (1, 2, 3, 4), frame_index=3)], frame, backend="b")
    copy = pickle.loads(pickle.dumps(dets))
    assert copy.labels == ["cup"] and copy.backend == "b" and copy[0].frame_index == 3
    with pytest.raises(ValueError, match="no frame attached"):
        _ = copy.image
    assert copy.attach(frame).array.shape == (40, 60, 3)
