"""A backend in its own environment as a Ray actor of the Ray executor (``bench --executor ray --service``):
the environment made as ``spatialclaw serve --ray`` makes it, the actor running under its interpreter, reached
from sandboxed kernels only through their host's relay, batching concurrent calls, and restarted by Ray when
its process dies while the run goes on."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from spatialclaw.cli import main
from spatialclaw.kernel.sandbox import support
from spatialclaw.primitives.reconstruction.da3 import Da3Backend, MultiViewServiceError
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.services.ray_services import (
    ServiceOption,
    ServiceProxy,
    check_env,
    parse_service_option,
    start_service_actors,
)
from spatialclaw.services.toolshed import ServiceError
from spatialclaw.testing.provider_server import ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from tests.bench_runs import quiet_run

ray = pytest.importorskip("ray")

CELL = """```python
import os, socket
import numpy as np
from spatialclaw.primitives.perception.remote import read_frame, write_frame
from spatialclaw.primitives.reconstruction.da3 import pack, unpack
rng = np.random.default_rng(0)
views = [rng.integers(0, 255, (60, 80, 3), dtype=np.uint8) for _ in range(3)]
rec = reconstruct(views, backend="da3")
with socket.socket(socket.AF_UNIX) as sock:
    sock.connect(os.environ["SPATIALCLAW_MULTIVIEW_SOCKET"])
    write_frame(sock, pack("stats", {}))
    stats = unpack(read_frame(sock))[1]
print("SERVICE", rec.method, bool(rec.registered.all()), stats["pid"], os.environ["SPATIALCLAW_MULTIVIEW_SOCKET"])
answer('B' if meta['choices'] else 2)
```"""


@pytest.fixture(autouse=True)
def _no_ray_oom_killer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared test machine runs near its memory limit; Ray's OOM killer would stop our tiny workers."""
    monkeypatch.setenv("RAY_memory_monitor_refresh_ms", "0")


@pytest.fixture(scope="module")
def da3_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DIR made by `spatialclaw serve da3 --env DIR --stand-in --ray`: numpy, pillow, this Ray version and
    spatialclaw (no dependencies) in DIR/venv, from pip's index; it prints the bench option that uses it."""
    env_dir = tmp_path_factory.mktemp("da3")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["serve", "da3", "--env", str(env_dir), "--stand-in", "--ray"]) == 0
    assert f"--service da3={env_dir},gpus=0,model=stand-in" in printed.getvalue()
    assert not (env_dir / "run" / "service.json").exists()  # prepared, not started: the run starts the actor
    return env_dir


def _views() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 255, (60, 80, 3), dtype=np.uint8) for _ in range(3)]


def test_a_service_option_is_parsed_and_bad_ones_are_named(tmp_path: Path) -> None:
    option = parse_service_option(f"da3={tmp_path}")
    assert option == ServiceOption("da3", tmp_path, gpus=1.0, cpus=1.0, model=None, restarts=3)
    assert option.device == "cuda"
    option = parse_service_option("da3=rel/dir,gpus=0,model=stand-in,restarts=0,cpus=0.5")
    assert option.env == Path("rel/dir").absolute() and option.device == "cpu"
    assert (option.gpus, option.cpus, option.model, option.restarts) == (0.0, 0.5, "stand-in", 0)
    for text, named in [
        ("da3", "NAME=DIR"),
        ("pi3=/x", "no backend named 'pi3'"),
        ("da3=/x,gpu=1", "'gpu=1' is not one of"),
        ("da3=/x,gpus=many", "gpus takes a float, got 'many'"),
        ("da3=/x,restarts=-1", "must be >= 0"),
    ]:
        with pytest.raises(ValueError, match=named) as caught:
            parse_service_option(text)
        assert repr(text) in str(caught.value)  # the message quotes what the user wrote
    with pytest.raises(ValueError, match="add --executor ray"):
        RunConfig(benchmark="synthetic", model="openai:x", out=tmp_path / "run", services=[option])


def test_an_environment_that_cannot_run_the_actor_is_refused_with_the_command_that_fixes_it(tmp_path: Path) -> None:
    missing = ServiceOption("da3", tmp_path / "nowhere", gpus=0)
    with pytest.raises(ServiceError, match=r"no environment at .*nowhere/venv/bin/python") as caught:
        check_env(missing)
    assert f"spatialclaw serve da3 --env {tmp_path / 'nowhere'} --ray" in str(caught.value)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "plain" / "venv")], check=True)
    with pytest.raises(ServiceError, match=f"has Python {sys.version_info[0]}.{sys.version_info[1]} without Ray"):
        check_env(ServiceOption("da3", tmp_path / "plain", gpus=0))


def _service_actor() -> tuple[Any, dict[str, Any]]:
    """The run's da3 actor (the test process is the run's Ray driver) and its stats."""
    (named,) = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"] == "da3"]
    handle = ray.get_actor("da3", namespace=named["namespace"])
    return handle, ray.get(handle.stats.remote())


@pytest.mark.slow
@pytest.mark.skipif(not support().available, reason=f"no kernel sandbox here: {support().missing}")
def test_a_run_reaches_the_service_actor_through_the_relay_and_goes_on_after_it_dies(
    da3_env: Path, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    def script(request: dict[str, Any], index: int) -> str:
        if index == 1:  # the second episode starts: kill the service actor's process
            _, stats = _service_actor()
            seen["first"] = stats
            os.kill(int(stats["pid"]), signal.SIGKILL)
        return CELL

    config = quiet_run(
        "URL",
        tmp_path / "run",
        limit=3,
        seed=1,
        workers=1,
        executor="ray",
        model_options={"api_key": "test-key"},
        agent={"sandbox": "required"},
        services=[ServiceOption("da3", da3_env, gpus=0, model="stand-in")],
    )
    with ScriptedProvider(script) as server:
        config.model = f"openai-compat:scripted@{server.url}"
        summary = run_benchmark(config)
    assert summary.statuses == {"ok": 3}  # the episode after the kill ran as the others did
    assert seen["first"]["python"] == str(da3_env / "venv" / "bin" / "python")  # the service's own interpreter
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    printed = []
    for row in rows:
        (cell,) = load_episode(tmp_path / "run" / row["trajectory_dir"]).of_type("cell")
        (line,) = [ln for ln in cell["result"]["stdout"].splitlines() if ln.startswith("SERVICE")]
        printed.append(line.split())
    pids = {int(words[3]) for words in printed}
    for _, method, registered, _, socket_path in printed:
        assert (method, registered) == ("learned", "True")  # DA3 answered: no fallback to the classical path
        assert socket_path.endswith("/multiview.sock")  # the kernel sees its relay, nothing else
    assert int(seen["first"]["pid"]) in pids and len(pids) == 2  # a new process served the episodes after the kill
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["sessions"][-1]["services"]["da3"]["env"] == str(da3_env)


@pytest.fixture
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_concurrent_calls_meet_in_one_batch_and_a_call_in_flight_survives_a_restart(
    da3_env: Path, local_ray: None
) -> None:
    option = ServiceOption("da3", da3_env, gpus=0, model="stand-in")
    services = start_service_actors([option], batch_window_s=2.0)
    proxy = ServiceProxy("da3", services.handles["da3"])
    try:
        alone = Da3Backend(proxy.path, process_res=56).run(_views())
        results: dict[int, Any] = {}
        threads = [
            threading.Thread(
                target=lambda i=i: results.__setitem__(i, Da3Backend(proxy.path, process_res=56).run(_views()))
            )
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        counts = services.stats()["da3"]
        assert counts["requests"] == 4 and counts["largest_batch"] >= 2
        for batched in results.values():  # batching changes nothing in the answers
            np.testing.assert_allclose(batched.poses, alone.poses, atol=1e-6)
        waiting: dict[str, Any] = {}
        caller = threading.Thread(
            target=lambda: waiting.__setitem__("out", Da3Backend(proxy.path, process_res=56).run(_views()))
        )
        caller.start()
        while services.stats()["da3"]["in_flight"] == 0:  # the request waits in the actor's batch window
            time.sleep(0.05)
        os.kill(int(counts["pid"]), signal.SIGKILL)
        caller.join(120)
        np.testing.assert_allclose(waiting["out"].poses, alone.poses, atol=1e-6)  # retried on the new actor
        assert services.stats()["da3"]["pid"] != counts["pid"]
    finally:
        proxy.close()
        services.close()


@pytest.mark.slow
def test_an_actor_out_of_restarts_gives_the_episode_a_clear_error(da3_env: Path, local_ray: None) -> None:
    services = start_service_actors([ServiceOption("da3", da3_env, gpus=0, model="stand-in", restarts=0)])
    proxy = ServiceProxy("da3", services.handles["da3"])
    try:
        os.kill(int(services.stats()["da3"]["pid"]), signal.SIGKILL)
        with pytest.raises(MultiViewServiceError, match=r"da3 service .* restarts are used up"):
            Da3Backend(proxy.path, process_res=56).run(_views())
    finally:
        proxy.close()
        services.close()
    with pytest.raises(ServiceError, match=r"(?s)could not start.*No module named 'depth_anything_3'"):
        start_service_actors([ServiceOption("da3", da3_env, gpus=0)])  # the real model: not in a stand-in env
    with pytest.raises(ServiceError, match=r"need 1\.0 GPUs; the Ray cluster has 0\.0"):
        start_service_actors([ServiceOption("da3", da3_env)], fail_fast=True)
