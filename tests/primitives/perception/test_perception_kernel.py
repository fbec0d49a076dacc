"""detect, segment and track as the model uses them: in a real kernel, on real frames with absolute
indices, printing readable results and showing overlays (tiny random models from local folders)."""

from __future__ import annotations

from spatialclaw import Kernel
from tests.primitives.perception.redwood_clip import redwood_task


def test_detect_segment_track_in_the_kernel(test_data, tiny_detector_and_sam, tmp_path):
    task = redwood_task(test_data, "Where does the cup go?", "text")
    detector, sam = tiny_detector_and_sam["detector"], tiny_detector_and_sam["sam"]
    code = (
        f"dets = detect(frames[2], ['cup', 'table'], model={detector!r}, threshold=0.0, max_instances=3)\n"
        "print(dets)\n"
        f"masks = segment(frames[2], box=dets[0], model={sam!r})\n"
        "print(masks.masks.shape, masks[0].frame_index, masks[0].label == dets[0].label)\n"
        "t = track(frames, boxes=dets[0], method='flow')\n"
        "print(t.frame_indices.tolist(), t.start_index)\n"
        "show(dets, t)\n"
    )
    with Kernel.for_task(task, workdir=tmp_path, readable=[detector, sam]) as kernel:
        result = kernel.execute(code, timeout=180)
    assert result.ok, result.to_text()
    lines = [line for line in result.stdout.splitlines() if not line.startswith("Loading weights")]
    assert lines[0].startswith("Detections(3 instances in frame 30 via gdino; boxes (x0, y0, x1, y1) in pixels")
    assert all(line.startswith(f"  [{i}] ") and "frame 30" in line for i, line in enumerate(lines[1:4]))
    assert lines[4] == "(1, 480, 640) 30 True"
    assert lines[5] == "[10, 20, 30, 40, 50] 30"
    assert [(image.width, image.height) for image in result.images] == [(640, 480), (640, 480)]
