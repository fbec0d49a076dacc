"""Shared perception on Ray: a real kernel whose environment names a perception actor runs ``depth`` on the
actor (a tiny random Depth Anything saved with ``save_pretrained``), gets exactly the local result, keeps
the cache in front of the actor, and gets clear errors. The runner end to end: test_perception_run.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spatialclaw import Kernel
from spatialclaw.primitives.perception import remote

pytest.importorskip("transformers")
ray = pytest.importorskip("ray")
from tests.indexed_frames import noise_frame  # noqa: E402
from tests.tiny_depth_models import save_tiny_depth_anything  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance for this module. The shared test machine runs near its memory limit; Ray's OOM
    killer would stop our tiny workers."""
    # Ray reads this setting under exactly this mixed-case name
    previous = os.environ.get("RAY_memory_monitor_refresh_ms")  # noqa: SIM112
    os.environ["RAY_memory_monitor_refresh_ms"] = "0"  # noqa: SIM112
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    if previous is None:
        os.environ.pop("RAY_memory_monitor_refresh_ms", None)
    else:
        os.environ["RAY_memory_monitor_refresh_ms"] = previous  # noqa: SIM112


def _cell(kernel: Kernel, code: str):
    result = kernel.execute(code, timeout=180)
    assert result.ok, result.to_text()
    return result


def test_depth_in_a_kernel_runs_on_the_shared_actor(local_ray, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spatialclaw.primitives.perception.depth import depth
    from spatialclaw.services.perception import start_perception_service

    tiny = save_tiny_depth_anything(tmp_path / "tiny-da")
    rgb = np.random.default_rng(7).integers(0, 256, size=(42, 60, 3), dtype=np.uint8)
    np.save(tmp_path / "frame.npy", rgb)
    service = start_perception_service(actors=1, num_gpus=0, num_cpus=1, models=[str(tiny)])
    try:
        env = {**service.env, "SPATIALCLAW_CACHE": str(tmp_path / "kernel-cache")}
        with Kernel(workdir=tmp_path, env=env) as kernel:  # the files the cells read and write are in the workdir
            call = (
                f"rgb = np.load({str(tmp_path / 'frame.npy')!r})\n"
                f"r = depth(rgb, model={str(tiny)!r})\n"
                "from spatialclaw.primitives.perception import cache\n"
                "print(cache.stats)\n"
            )
            first = _cell(
                kernel,
                call + f"np.savez({str(tmp_path / 'remote.npz')!r}, depth=r.depth, "
                "intrinsics=r.intrinsics, confidence=r.confidence)\nprint(r.intrinsics_source)",
            )
            assert first.stderr == ""  # connecting to Ray adds nothing to what the model reads
            assert first.stdout.split("\n")[:2] == ["{'hits': 0, 'misses': 1}", "default-fov"]
            [after_first] = service.stats()
            assert after_first["calls"] == {"describe:depth": 1, "run:depth": 1}
            assert [kind for kind, _, _ in after_first["models"]] == ["depth"]  # loaded on the actor

            second = _cell(kernel, call)  # same inputs: a cache hit here, the actor is not asked again
            assert second.stdout.strip() == "{'hits': 1, 'misses': 1}"
            assert service.stats()[0]["calls"] == after_first["calls"]
            loaded_here = _cell(
                kernel, "from spatialclaw.primitives.perception import models\nprint(models.loaded_models())"
            )
            assert loaded_here.stdout.strip() == "[]"  # the kernel never loaded the model itself

            missing = kernel.execute(f"depth(rgb, model={str(tmp_path / 'no-such-model')!r})", timeout=60)
            assert missing.error is not None and missing.error.type == "ValueError"  # never looked up on the host
            assert "is not a model this perception service hosts" in missing.error.message

            gone = kernel.execute(
                f"import os\nos.environ['SPATIALCLAW_PERCEPTION'] = 'ray://{service.namespace}/nobody'\n"
                f"depth(rgb, model={str(tiny)!r})",
                timeout=60,
            )
            assert gone.error is not None and gone.error.type == "PerceptionServiceError"
            assert f"no perception actor named 'nobody' in Ray namespace '{service.namespace}'" in gone.error.message
            assert "To fix" in gone.error.message

            service.close()  # the service stops while the kernel still uses it
            stopped = kernel.execute(
                f"os.environ['SPATIALCLAW_PERCEPTION'] = {service.url!r}\ndepth(rgb[::-1], model={str(tiny)!r})",
                timeout=60,
            )
            assert stopped.error is not None and stopped.error.type == "PerceptionServiceError"
            assert (
                "the perception actor 'perception-0'" in stopped.error.message
                and "failed on run('depth')" in stopped.error.message
            )
    finally:
        service.close()

    monkeypatch.setenv("SPATIALCLAW_CACHE", "off")
    monkeypatch.delenv(remote.ENV_VAR, raising=False)
    local = depth(rgb, model=tiny)
    with np.load(tmp_path / "remote.npz") as remote_result:
        # another process (the actor) may use other thread counts: the same model agrees to float32 rounding
        assert np.allclose(remote_result["depth"], local.depth, rtol=1e-5, atol=1e-6, equal_nan=True)
        assert np.array_equal(np.isnan(remote_result["depth"]), np.isnan(local.depth))
        assert np.allclose(remote_result["intrinsics"], local.intrinsics, rtol=1e-5, atol=1e-6)
        assert np.allclose(remote_result["confidence"], local.confidence, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert np.isfinite(local.depth).any()


def test_detect_and_segment_on_the_service_equal_the_local_calls(
    local_ray, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spatialclaw.primitives.perception.detect import detect
    from spatialclaw.primitives.perception.segment import segment
    from spatialclaw.services.perception import start_perception_service
    from tests.tiny_instance_models import build_grounding_dino, build_sam

    gdino, sam = str(build_grounding_dino(tmp_path / "gdino")), str(build_sam(tmp_path / "sam"))
    frame = noise_frame(3, 48, 64, index=12, high=256)

    def calls() -> tuple:
        boxes = detect(frame, ["cup", "table"], model=gdino, threshold=0.0, max_instances=5)
        return (
            boxes,
            segment(frame, box=boxes[:2], model=sam),
            segment(frame, points=[(10, 12), (30, 20)], point_labels=[1, 0], model=sam),
            segment(frame, text="cup", model=sam, text_model="detect", detector=gdino, threshold=0.0),
        )

    service = start_perception_service(actors=2, num_gpus=0, num_cpus=0.5, models=[gdino, sam])
    try:
        monkeypatch.setenv(remote.ENV_VAR, service.url)
        on_service = calls()
        assert sum(actor["calls"].get("run:detect", 0) for actor in service.stats()) == 2
        assert sum(actor["calls"].get("run:sam", 0) for actor in service.stats()) == 3
        assert all(actor["calls"] for actor in service.stats())  # round robin: both actors served
    finally:
        service.close()
    monkeypatch.delenv(remote.ENV_VAR)
    monkeypatch.setenv("SPATIALCLAW_CACHE", "off")
    for remote_found, local_found in zip(on_service, calls(), strict=True):
        assert len(remote_found) == len(local_found) > 0
        for a, b in zip(remote_found, local_found, strict=True):
            assert_same_instance(a, b)
        assert remote_found.backend == local_found.backend


def assert_same_instance(a, b) -> None:
    """The same detection from another process: the actor and this process may run the kernels with other
    thread counts, so float reductions differ in the last bits (0.8939085602760315 vs 0.8939083218574524 was
    seen). Scores agree to rtol 1e-5 and boxes to 1e-3 px, which any real difference (another model, another
    preprocessing, a shifted frame) breaks by orders of magnitude; a mask may differ only in pixels whose
    logit sits on the threshold (at most 0.5 % of the frame)."""
    assert (a.label, a.frame_index) == (b.label, b.frame_index)
    assert a.score == pytest.approx(b.score, rel=1e-5, abs=1e-7)
    assert np.allclose(a.box, b.box, rtol=0, atol=1e-3), (a.box, b.box)
    assert (a.mask is None) == (b.mask is None)
    if a.mask is not None:
        assert a.mask.shape == b.mask.shape
        assert np.count_nonzero(a.mask != b.mask) <= 0.005 * a.mask.size


def test_a_cluster_that_does_not_answer_fails_in_seconds_with_the_fix(tmp_path: Path) -> None:
    code = (
        "import numpy as np\nfrom spatialclaw.primitives.perception.depth import depth\n"
        "try:\n    depth(np.zeros((8, 8, 3), np.uint8))\nexcept Exception as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    env = {**os.environ, remote.ENV_VAR: "ray://gone/perception-0", "RAY_ADDRESS": "127.0.0.1:9"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith(
        "PerceptionServiceError the Ray cluster at '127.0.0.1:9' (RAY_ADDRESS) for the "
        "perception service ray://gone/perception-0 does not answer"
    ), done.stdout + done.stderr
    assert "To fix" in done.stdout


def test_a_service_that_cannot_be_placed_fails_at_once_with_the_fix(local_ray) -> None:
    from spatialclaw.services.perception import start_perception_service

    gpus = ray.cluster_resources().get("GPU", 0.0)
    with pytest.raises(RuntimeError, match=r"need .* GPUs; the Ray cluster has .* lower --perception-gpus"):
        start_perception_service(actors=1, num_gpus=gpus + 1, fail_fast=True)


def test_the_service_variable_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert remote.parse_spec("ray://run-1/perception-0, perception-1") == remote.ServiceSpec(
        "run-1", ("perception-0", "perception-1")
    )
    for bad in ("perception-0", "ray://run-1", "ray:///perception-0", "http://run/a"):
        with pytest.raises(ValueError, match=r"expected 'ray://<namespace>/<actor>"):
            remote.parse_spec(bad)
    monkeypatch.delenv(remote.ENV_VAR, raising=False)
    assert remote.service() is None
    imports = (
        "import sys\nfrom spatialclaw.primitives.perception import depth, detect, segment\nprint('ray' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", imports],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != remote.ENV_VAR},
    )
    assert done.stdout.strip() == "False", done.stderr  # a kernel without a service never imports Ray


def test_perception_actors_need_the_ray_executor(tmp_path: Path) -> None:
    from spatialclaw.runner import RunConfig

    with pytest.raises(ValueError, match="add --executor ray"):
        RunConfig(benchmark="synthetic", model="openai:x", out=tmp_path / "run", perception_actors=1)
