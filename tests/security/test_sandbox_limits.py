"""The sandbox's own limits and mounts, attacked from a cell: what decides a score is never visible, memory is
counted whole, the process cap holds even for root, the host's keys and environment stay out, and no kernel
or directory outlives the host that started it.

Linux with bubblewrap only (the sandbox's platform); elsewhere the module is skipped with the reason.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from spatialclaw.kernel import sandbox_limits
from spatialclaw.kernel.environment import is_secret
from spatialclaw.kernel.kernel import Kernel
from spatialclaw.kernel.sandbox import ResourceLimits, support
from tests.security.kernel_probes import probe

pytestmark = pytest.mark.skipif(not support().available, reason=f"no kernel sandbox here: {support().missing}")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def capped():
    with Kernel(memory_limit_mb=512) as k:
        yield k


def test_a_cell_cannot_regenerate_the_synthetic_benchmarks_ground_truth(capped: Kernel) -> None:
    from spatialclaw.benchmarks.synthetic import generate

    truth = [task.ground_truth for task in generate(6, seed=0)]
    assert len(truth) == 6
    report = probe(
        capped,
        f"""
import importlib, json, runpy
report = {{}}
try:
    from spatialclaw.benchmarks.synthetic import generate
    report['answers'] = [t.ground_truth for t in generate(6, seed=0, out_dir='/tmp/regenerated')]
except Exception as error:
    report['import'] = type(error).__name__
try:
    report['source'] = len(open({str(ROOT / "benchmarks" / "synthetic.py")!r}).read())
except OSError as error:
    report['source'] = type(error).__name__
report['spec'] = importlib.util.find_spec('spatialclaw.benchmarks') is not None
print('PROBE', json.dumps(report))
""",
    )
    assert "answers" not in report and report["import"] == "ModuleNotFoundError"
    assert report["source"] in ("FileNotFoundError", "PermissionError") and report["spec"] is False


def test_hub_dataset_caches_are_hidden_and_model_weights_stay_readable(tmp_path: Path, monkeypatch) -> None:
    hub = tmp_path / "hf" / "hub"
    (hub / "models--org--net" / "snapshots" / "a").mkdir(parents=True)
    (hub / "models--org--net" / "snapshots" / "a" / "config.json").write_text("{}")
    (hub / "datasets--org--bench").mkdir(parents=True)
    (hub / "datasets--org--bench" / "answers.jsonl").write_text('{"answer": "B"}\n')
    datasets = tmp_path / "hf" / "datasets"
    (datasets / "org___bench").mkdir(parents=True)
    (datasets / "org___bench" / "answers.arrow").write_text("ground truth")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(datasets))
    # even a caller who makes the whole Hugging Face home readable does not expose its datasets
    with Kernel(readable=[tmp_path / "hf"]) as k:
        report = probe(
            k,
            f"""
import json, os
def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as error:
        return type(error).__name__
print('PROBE', json.dumps({{'hub': listing({str(hub)!r}), 'bench': listing({str(hub / "datasets--org--bench")!r}),
    'datasets': listing({str(datasets / "org___bench")!r}), 'env': os.environ.get('HF_DATASETS_CACHE'),
    'model': open({str(hub / "models--org--net" / "snapshots" / "a" / "config.json")!r}).read()}}))
""",
        )
    assert report["model"] == "{}"
    assert report["bench"] in ([], "FileNotFoundError") and report["datasets"] in ([], "FileNotFoundError")
    assert report["env"] is None


def test_memory_written_to_tmp_dev_shm_or_the_root_is_held_by_the_cap(capped: Kernel) -> None:
    for path in ("/tmp/fill", "/dev/shm/fill", "/fill"):
        filled = capped.execute(
            f"with open({path!r}, 'wb') as f:\n    for _ in range(10):\n        f.write(b'x' * 100 * 2**20)",
            timeout=60,
        )
        assert filled.status in ("error", "crashed"), (path, filled.status, filled.stdout)
        capped.execute(f"import os\nif os.path.exists({path!r}): os.remove({path!r})")
        assert capped.execute("print(6 * 7)").stdout == "42\n"


def test_a_shared_anonymous_mapping_is_held_by_the_cap(capped: Kernel) -> None:
    if capped.sandbox.get("memory_cap") == "rlimit-data":
        pytest.skip(f"no memory cgroup on this host ({capped.sandbox['memory_cap']}): see docs/security.md")
    mapped = capped.execute(
        "import mmap\nm = mmap.mmap(-1, 1024 * 2**20)\nfor i in range(1024):\n    m[i * 2**20:(i + 1) * 2**20] = b'x' * 2**20",
        timeout=60,
    )
    assert mapped.status == "crashed" and "memory" in mapped.error.message
    assert capped.execute("print(6 * 7)").stdout == "42\n"


FORKS = """
import json, os, time
children = []
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print('PROBE', json.dumps({'forks': len(children)}))
"""


@pytest.mark.parametrize("host", ["as it is", "without a pids cgroup"])
def test_200_forks_stop_at_a_cap_of_64_and_the_status_says_how(host: str, monkeypatch, tmp_path: Path) -> None:
    if host == "without a pids cgroup":
        if os.getuid() != 0:
            pytest.skip("a user's cap without a cgroup is RLIMIT_NPROC above its other processes")
        monkeypatch.setattr(sandbox_limits, "_V1", {"pids": str(tmp_path / "none"), "memory": str(tmp_path / "none")})
        monkeypatch.setattr(sandbox_limits, "_V2", str(tmp_path / "none"))
    with Kernel(limits=ResourceLimits(processes=64)) as k:
        cap = k.sandbox["process_cap"]
        assert cap == "pids-cgroup" or cap.startswith("rlimit-nproc"), cap
        report = probe(k, FORKS)
        assert report["forks"] < 64
        if host == "without a pids cgroup":
            assert k.execute("import os\nprint(os.getuid())").stdout.strip() != "0"


KEYCTL, ADD_KEY = {"x86_64": (250, 248), "aarch64": (219, 217)}.get(os.uname().machine, (None, None))


@pytest.mark.skipif(KEYCTL is None, reason="keyring syscall numbers for this machine are not in the test")
def test_the_hosts_session_keyring_is_unreachable(capped: Kernel) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    payload = f"host-secret-{uuid.uuid4().hex}".encode()
    key = libc.syscall(ADD_KEY, b"user", b"spatialclaw-probe", payload, len(payload), ctypes.c_int(-3))
    if key < 0:
        pytest.skip(f"cannot add a key here (errno {ctypes.get_errno()})")
    try:
        report = probe(
            capped,
            f"""
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
def read(serial):
    buffer = ctypes.create_string_buffer(4096)
    size = libc.syscall({KEYCTL}, 11, ctypes.c_int(serial), buffer, 4096)
    return buffer.raw[:size].hex() if size >= 0 else -ctypes.get_errno()
session = libc.syscall({KEYCTL}, 0, ctypes.c_int(-3), 0)
print('PROBE', json.dumps({{'session': session, 'keyring': read(-3), 'key': read({key})}}))
""",
        )
    finally:
        libc.syscall(KEYCTL, 3, ctypes.c_int(key))  # KEYCTL_REVOKE
    assert payload.hex() not in json.dumps(report)
    assert report["session"] < 0 and isinstance(report["key"], int)


def test_only_allowed_variables_reach_the_kernel(capped: Kernel, monkeypatch) -> None:
    leaked = {
        "KAGGLE_KEY": "kaggle-secret",
        "DATABASE_URL": "postgres://user:hunter2@db/prod",
        "MYSQL_PWD": "hunter2",
        "GITHUB_PAT": "ghp_secret",
        "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/secret",
        "STRIPE_KEY": "sk_live_secret",
    }
    for name, value in leaked.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    with Kernel() as k:
        report = probe(k, "import json, os\nprint('PROBE', json.dumps(dict(os.environ)))")
    assert not set(leaked) & set(report), sorted(set(leaked) & set(report))
    assert not any(value in json.dumps(report) for value in leaked.values())
    assert report["OMP_NUM_THREADS"] == "3" and "PATH" in report
    assert is_secret("my_api_key") and is_secret("MYSQL_PWD") and not is_secret("PATH")


HOST = """
import sys, time
from spatialclaw.kernel.kernel import Kernel
k = Kernel()
print(k.pid, k._sandbox.dirs.root, flush=True)
time.sleep(300)
"""


def _runs_from(root: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"]) if any(root in part for part in p.info["cmdline"] or [])]


def test_a_sigkilled_host_leaves_no_kernel_and_no_directory_after_the_next_start() -> None:
    host = subprocess.Popen([sys.executable, "-c", HOST], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pid, root = host.stdout.readline().split()
        assert psutil.pid_exists(int(pid)) and Path(root).is_dir()
        host.send_signal(signal.SIGKILL)
        host.wait(10)
        deadline = time.monotonic() + 5
        while _runs_from(root) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _runs_from(root), "the kernel must die with its host"
        with Kernel(sandbox="required"):
            assert not Path(root).exists()
    finally:
        host.kill()


def test_a_kernel_whose_owner_is_gone_is_ended_by_the_next_start() -> None:
    orphan = Kernel()
    try:
        root = orphan._sandbox.dirs.root
        dead = subprocess.Popen(["true"])
        dead.wait()
        (root / "owner.json").write_text(json.dumps({"pid": dead.pid, "start": 1}))  # its owner is gone
        assert _runs_from(str(root))
        with Kernel():
            assert not root.exists()
            deadline = time.monotonic() + 5
            while _runs_from(str(root)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _runs_from(str(root))
    finally:
        orphan.shutdown()
