"""Backends in their own environments (``spatialclaw serve``): created, started, reached from a sandboxed
kernel only through its host's relay, batched across concurrent callers, and restarted when they die."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from spatialclaw.kernel.channels import ServiceRelay
from spatialclaw.kernel.kernel import Kernel
from spatialclaw.kernel.sandbox import support
from spatialclaw.primitives.perception.remote import read_frame, write_frame
from spatialclaw.primitives.reconstruction.da3 import SOCKET_ENV_VAR, Da3Backend, pack, unpack
from spatialclaw.primitives.reconstruction.da3_service import Da3Server, StandInDA3
from spatialclaw.services.toolshed import create_env, start_service, stop_service

CELL = """
import numpy as np, os
rng = np.random.default_rng(0)
views = [rng.integers(0, 255, (60, 80, 3), dtype=np.uint8) for _ in range(3)]
rec = reconstruct(views, backend="da3")
print(rec.method, bool(rec.registered.all()), os.path.exists(SERVICE), os.environ["SPATIALCLAW_MULTIVIEW_SOCKET"])
"""


def _pid(env_dir: Path) -> int:
    return int(json.loads((env_dir / "run" / "service.json").read_text())["pid"])


@pytest.mark.slow
@pytest.mark.skipif(not support().available, reason=f"no kernel sandbox here: {support().missing}")
def test_a_service_in_its_own_environment_serves_a_sandboxed_kernel_and_comes_back(tmp_path: Path) -> None:
    env_dir = tmp_path / "da3"
    python = create_env("da3", env_dir, stand_in=True)  # numpy + pillow + spatialclaw --no-deps, from pip's index
    assert (env_dir / "venv" / "pyvenv.cfg").read_text().count("include-system-site-packages = false") == 1
    assert not (python.parent.parent / "lib" / "python3.11" / "site-packages" / "torch").exists()
    sock = start_service("da3", env_dir, model="stand-in")
    assert (env_dir / "run").stat().st_mode & 0o777 == 0o700
    try:
        with Kernel(sandbox="required", env={SOCKET_ENV_VAR: str(sock)}) as kernel:
            first = kernel.execute(f"SERVICE = {str(sock)!r}\n" + CELL, timeout=120)
            assert first.error is None, first.error
            method, registered, sees_service, inside = first.stdout.split()
            assert (method, registered) == ("learned", "True")
            assert sees_service == "False" and inside.endswith("/multiview.sock")  # only the relay is visible
            old = _pid(env_dir)
            os.kill(old, signal.SIGKILL)
            time.sleep(0.2)
            second = kernel.execute(CELL, timeout=120)  # the host starts it again; the episode sees no error
            assert second.error is None, second.error
            assert second.stdout.split()[:2] == ["learned", "True"]
            assert _pid(env_dir) != old
    finally:
        stop_service(env_dir)


def test_concurrent_requests_are_answered_in_one_batch(tmp_path: Path) -> None:
    server = Da3Server(str(tmp_path / "s.sock"), StandInDA3(), batch_window_s=0.2)
    rng = np.random.default_rng(1)
    scenes = [[rng.integers(0, 255, (40, 50, 3), dtype=np.uint8) for _ in range(2)] for _ in range(4)]
    alone = [Da3Backend(server.path, process_res=56).run(scene) for scene in scenes]
    results: dict[int, object] = {}
    threads = [
        threading.Thread(
            target=lambda i=i: results.__setitem__(i, Da3Backend(server.path, process_res=56).run(scenes[i]))
        )
        for i in range(4)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert server.counts["largest_batch"] >= 2 and server.counts["requests"] == 8
    finally:
        server.close()
    for i, single in enumerate(alone):  # batching changes nothing in the answers
        batched = results[i]
        np.testing.assert_allclose(batched.depth[1], single.depth[1], rtol=1e-5)  # type: ignore[attr-defined]
        np.testing.assert_allclose(batched.poses, single.poses, atol=1e-6)  # type: ignore[attr-defined]


def _ask(path: Path, payload: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(path))
        write_frame(sock, payload)
        return unpack(read_frame(sock))[1]  # type: ignore[no-any-return]


def test_the_relay_passes_run_and_stats_only_and_names_a_dead_service(tmp_path: Path) -> None:
    server = Da3Server(str(tmp_path / "s.sock"), StandInDA3())
    relay = ServiceRelay(tmp_path / "relay.sock", server.path)
    try:
        assert _ask(relay.path, pack("stats", {}))["requests"] == 0
        refused = _ask(relay.path, pack("shutdown", {}))
        assert not refused["ok"] and "not 'shutdown'" in str(refused["error"])
    finally:
        server.close()
    dead = _ask(relay.path, pack("run", {"images": []}))  # no service and no record to restart it from
    relay.close()
    assert not dead["ok"] and "not started by spatialclaw serve" in str(dead["error"])
