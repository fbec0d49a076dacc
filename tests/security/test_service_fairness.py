"""A shared backend service is fair to every kernel and gets none of the host's secrets (issue 30, B10).

One kernel sent ``process_res=5000`` to the DA3 service (cost grows with its square): the stand-in was busy
17 s and another kernel's ordinary request waited 12 s behind it. Requests are now bounded (``process_res``,
image count, processed pixels) and each kernel's relay keeps one request at the service at a time, so a
kernel flooding it from several threads delays another by one bounded request at most. The service process
was started with the host's whole environment (API keys included); it now gets the kernels' allow list.
"""

from __future__ import annotations

import ast
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from spatialclaw import Kernel
from spatialclaw.primitives.reconstruction.da3 import SOCKET_ENV_VAR
from spatialclaw.primitives.reconstruction.da3_service import Da3Server, StandInDA3

CALL = """
import numpy as np, time
from spatialclaw.primitives.reconstruction.da3 import Da3Backend
def call(res, size=64, count=1):
    started = time.monotonic()
    try:
        Da3Backend(process_res=res).call({{'images': [np.zeros((size, size, 3), np.uint8)] * count, 'process_res': res}})
        return 'ok', round(time.monotonic() - started, 2)
    except Exception as error:
        return str(error)[:240], round(time.monotonic() - started, 2)
{body}
"""
FLOOD = """
import threading
flood = [threading.Thread(target=lambda: [call(1022, 1022, 15) for _ in range(6)], daemon=True) for _ in range(4)]
print(call(5000))
for t in flood: t.start()
"""


@pytest.mark.slow
def test_one_kernel_cannot_monopolise_the_shared_service(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    server = Da3Server(str(folder / "service.sock"), StandInDA3())
    try:
        env = {SOCKET_ENV_VAR: str(folder / "service.sock")}
        with Kernel(env=env, memory_limit_mb=2048) as a, Kernel(env=env, memory_limit_mb=2048) as b:
            flood = a.execute(CALL.format(body=FLOOD), timeout=120)
            assert flood.ok, flood.to_text()
            refused, seconds = ast.literal_eval(flood.stdout.strip().splitlines()[0])
            assert "process_res must be a whole number of pixels from 14 to 1022" in refused and seconds < 2
            time.sleep(1.0)  # kernel A's four threads are at the service
            ordinary = b.execute(CALL.format(body="print(call(504))"), timeout=120)
            assert ordinary.ok, ordinary.to_text()
            status, waited = ast.literal_eval(ordinary.stdout.strip())
    finally:
        server.close()
    assert status == "ok", status
    print("kernel B waited", waited)
    # one of A's bounded requests at most (about 1.5 s here) ahead of B's, never A's whole queue
    assert waited < 6.0, waited


def test_the_service_process_gets_no_api_key_or_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spatialclaw.services.toolshed import start_service, stop_service

    python = tmp_path / "env" / "venv" / "bin" / "python"  # the service's environment: this interpreter
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-PLANTED-service")
    monkeypatch.setenv("SPATIALCLAW_DB_DSN", "postgresql://u:PLANTED-dsn@db/x")
    monkeypatch.setenv("HF_ENDPOINT", "https://alice:PLANTED-basic@hf-mirror.example")
    start_service("da3", tmp_path / "env", model="stand-in", timeout_s=60)
    try:
        import json

        pid = json.loads((tmp_path / "env" / "run" / "service.json").read_text())["pid"]
        environ = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    finally:
        stop_service(tmp_path / "env")
    assert "PLANTED" not in environ, [v for v in environ.split("\0") if "PLANTED" in v]
    assert "HF_ENDPOINT=https://hf-mirror.example" in environ.split("\0")
    assert os.environ["PATH"] in environ  # what a service needs still passes
