"""Shared perception on Ray, end to end: ``run_benchmark`` with perception actors, and the docs example run as
written. Slow (each starts its own local Ray instance); kept apart from test_perception_service.py, whose
module-wide Ray instance would otherwise be joined here with too few CPUs for the run's actors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spatialclaw.primitives.perception import remote

pytest.importorskip("transformers")
pytest.importorskip("ray")
from tests.bench_runs import synthetic_run
from tests.tiny_depth_models import save_tiny_depth_anything


@pytest.mark.slow
def test_bench_with_perception_actors_runs_every_episode_on_the_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spatialclaw.runner import run_benchmark
    from spatialclaw.testing.provider_server import ScriptedProvider
    from spatialclaw.trajectories.episode_log import load_episode

    monkeypatch.setenv("RAY_memory_monitor_refresh_ms", "0")
    tiny = save_tiny_depth_anything(tmp_path / "tiny-da")
    cell = (
        "```python\n"
        f"d = depth(frames[0], model={str(tiny)!r})\n"
        "from spatialclaw.primitives.perception import remote\n"
        "print(d.depth.shape, sorted(remote.service().stats()[0]['calls']))\n"
        "answer('B' if meta['choices'] else 2)\n```"
    )
    with ScriptedProvider(lambda request, index: cell) as server:
        config = synthetic_run(
            server.url,
            tmp_path / "run",
            limit=2,
            seed=1,
            workers=2,
            executor="ray",
            perception_actors=1,
            perception_gpus=0,
            model_options={"max_attempts": 1, "api_key": "test-key"},
            agent={"fsync": False, "vlm_side_channel": False, "preview_images": 1},
        )
        summary = run_benchmark(config)
    assert summary.statuses == {"ok": 2}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["perception"] == {"where": "ray-actors", "actors": 1, "gpus_per_actor": 0}
    for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines():
        episode = load_episode(tmp_path / "run" / json.loads(line)["trajectory_dir"])
        [step] = episode.of_type("cell")
        shape, calls = step["result"]["stdout"].strip().split(") ")
        assert shape == "(480, 640" and calls == "['describe:depth', 'run:depth']"


@pytest.mark.slow
def test_the_docs_example_runs_as_written(tmp_path: Path) -> None:
    from tests.doc_examples import code_blocks

    tiny = save_tiny_depth_anything(tmp_path / "tiny-da")
    [example] = code_blocks("benchmarks.md", "Shared perception on Ray", "python")
    assert "model='depth-anything-indoor'" in example
    example = example.replace("model='depth-anything-indoor'", f"model={str(tiny)!r}")
    env = {**os.environ, "RAY_memory_monitor_refresh_ms": "0"}
    env.pop(remote.ENV_VAR, None)
    done = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-2:] == ["(240, 320) default-fov", "{'describe:depth': 1, 'run:depth': 1}"]
