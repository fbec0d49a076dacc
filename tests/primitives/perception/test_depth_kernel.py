"""depth, stereo and reconstruct as the model uses them: in a real kernel, on real frames with absolute
indices; and the examples of docs/depth_and_reconstruction.md, run as written."""

from __future__ import annotations

import pytest

from spatialclaw import Kernel
from tests.doc_examples import code_blocks
from tests.primitives.perception.redwood_clip import redwood_task

pytest.importorskip("transformers")
from tests.tiny_depth_models import save_tiny_depth_anything


def test_depth_and_reconstruct_in_the_kernel(test_data, tmp_path):
    tiny = save_tiny_depth_anything(tmp_path / "tiny-da")
    root = test_data / "rgbd-redwood"
    depth_paths = sorted(str(p) for p in (root / "depth").glob("*.png"))
    task = redwood_task(test_data, "How far did the camera move?", "number")
    code = (
        f"d = depth(frames[1], model={str(tiny)!r})\n"
        "print(d.frame_index, d.depth.shape, d.intrinsics_source)\n"
        f"maps = [np.asarray(Image.open(p)) / 1000.0 for p in {depth_paths!r}]\n"
        "K = np.array([[525.0, 0, 319.5], [0, 525.0, 239.5], [0, 0, 1]])\n"
        "rec = reconstruct(frames, depth=maps, intrinsics=K)\n"
        "print(rec.frame_indices.tolist(), rec.method, rec.metric)\n"
        "print(round(float(np.linalg.norm(rec.camera_center(50) - rec.camera_center(10))), 3))\n"
        "show(rec.bev())\n"
    )
    # the depth maps are not inputs of the task: a sandboxed kernel reads them only when given them
    with Kernel.for_task(task, workdir=tmp_path, readable=depth_paths) as kernel:
        result = kernel.execute(code, timeout=180)
    assert result.ok, result.to_text()
    lines = [line for line in result.stdout.splitlines() if not line.startswith("Loading weights")]
    assert lines[0] == "20 (480, 640) default-fov"
    assert lines[1] == "[10, 20, 30, 40, 50] rgbd True"
    assert abs(float(lines[2]) - 0.098) < 0.005  # trajectory.log: the camera moved 97.9 mm
    assert len(result.images) == 1


def test_stereo_example_of_the_docs_runs_as_written(capsys):
    pytest.importorskip("skimage")
    exec(code_blocks("depth_and_reconstruction.md", "stereo_depth(left, right, ...)", "python")[0], {})
    error = float(capsys.readouterr().out.split()[-1])
    assert error < 0.01


def test_rgbd_example_of_the_docs_runs_as_written(test_data, capsys):
    blocks = code_blocks("depth_and_reconstruction.md", "reconstruct(frames)", "python")
    example = blocks[1].replace('"../shared/data/rgbd-redwood"', repr(str(test_data / "rgbd-redwood")))
    exec(example, {})
    assert "5/5 frames registered, method=rgbd" in capsys.readouterr().out
