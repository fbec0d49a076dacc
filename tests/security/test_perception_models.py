"""A cell names only the perception models the operator allowed (issue 30, B11).

The perception relay checks the service, method and kind of a cell's request and passed the model id on;
the Ray actor (outside the sandbox) resolved it as a host path: ``describe("depth", HOST_DIR)`` hashed a
folder the sandbox cannot see (an existence and change oracle for any host directory, and a way to tie up
the shared actor or make it load a folder the cell wrote). The actors now load only the ids of
``allowed_models`` and refuse any other before looking anything up.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spatialclaw import Kernel

ray = pytest.importorskip("ray")

PROBE = """
from spatialclaw.primitives.perception import remote
for model in {models!r}:
    try:
        print(model, 'ok', remote.service().call('describe', 'depth', model))
    except Exception as error:
        print(model, type(error).__name__, str(error)[:300].replace(chr(10), ' '))
"""


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    previous = os.environ.get("RAY_memory_monitor_refresh_ms")  # noqa: SIM112
    os.environ["RAY_memory_monitor_refresh_ms"] = "0"  # noqa: SIM112  # the shared machine runs near its limit
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    if previous is None:
        os.environ.pop("RAY_memory_monitor_refresh_ms", None)
    else:
        os.environ["RAY_memory_monitor_refresh_ms"] = previous  # noqa: SIM112


@pytest.mark.slow
def test_a_cell_cannot_make_the_perception_actor_walk_or_load_host_paths(local_ray: Any, tmp_path: Path) -> None:
    from spatialclaw.primitives.perception.depth import DEFAULT_MODEL
    from spatialclaw.services.perception import start_perception_service

    host_dir = tmp_path / "hostdir"  # invisible in the sandbox
    host_dir.mkdir()
    (host_dir / "config.json").write_text("{}")
    probes = [str(host_dir), str(tmp_path / "nothere"), "/usr/lib", DEFAULT_MODEL]
    service = start_perception_service(actors=1, num_gpus=0, num_cpus=1)
    try:
        with Kernel(env=service.env, memory_limit_mb=2048) as kernel:
            result = kernel.execute(PROBE.format(models=probes), timeout=120)
    finally:
        service.close()
    assert result.ok, result.to_text()
    lines = dict(line.split(" ", 1) for line in result.stdout.strip().splitlines())
    for path in probes[:3]:
        assert lines[path].startswith("ValueError"), lines
        assert "is not a model this perception service hosts" in lines[path]
    # the operator's default is still looked up (its weights are not on this machine: no refusal by name)
    assert "is not a model this perception service hosts" not in lines[DEFAULT_MODEL], lines
