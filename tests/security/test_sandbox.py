"""Adversarial cells against the default kernel (``sandbox="auto"``): each probe is what a model-written
cell would try, and each asserts that the attack fails with a clear outcome.

Linux with bubblewrap only (the sandbox's platform); elsewhere the module is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from spatialclaw.kernel.kernel import Kernel
from spatialclaw.kernel.pool import KernelPool
from spatialclaw.kernel.sandbox import ResourceLimits, support
from tests.security.kernel_probes import probe

pytestmark = pytest.mark.skipif(not support().available, reason=f"no kernel sandbox here: {support().missing}")


@pytest.fixture(scope="module")
def kernel():
    with Kernel() as k:
        yield k


def test_the_default_kernel_is_sandboxed(kernel: Kernel) -> None:
    assert kernel.sandbox["mode"] == "auto" and kernel.sandbox["active"] is True
    assert "sandboxed" in repr(kernel)


def test_no_secret_is_readable_anywhere_under_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"sk-probe-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    # the cell searches for the secret's shape, never its text (which would then be in the cell's own memory)
    code = """
import os, re, json
secret = re.compile(rb'sk-probe-[0-9a-f]{32}')
found, pids, regions = [], [], 0
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    pids.append(int(pid))
    for name in ('environ', 'cmdline'):
        try:
            if secret.search(open(f'/proc/{pid}/{name}', 'rb').read()):
                found.append(f'{pid}/{name}')
        except OSError:
            pass
    try:
        maps = open(f'/proc/{pid}/maps').read().splitlines()
        with open(f'/proc/{pid}/mem', 'rb', 0) as mem:
            for line in maps:
                span, perms = line.split()[:2]
                if 'r' not in perms or line.endswith(('[vvar]', '[vsyscall]', '[vvar_vclock]')):
                    continue
                start, end = (int(x, 16) for x in span.split('-'))
                try:
                    mem.seek(start)
                    if secret.search(mem.read(end - start)):
                        found.append(f'{pid}/mem')
                    regions += 1
                except (OSError, ValueError, OverflowError):
                    pass
    except OSError:
        pass
cmdlines = [open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode(errors='replace') for p in pids]
print('PROBE', json.dumps({'found': found, 'pids': pids, 'regions': regions, 'cmdlines': cmdlines}))
"""
    with Kernel() as k:
        report = probe(k, code, timeout=120)
    assert report["found"] == []
    assert report["regions"] > 10, "the probe must actually read the kernel's memory"
    assert max(report["pids"]) < 100, "only the sandbox's own few processes are visible"
    assert not any("pytest" in c for c in report["cmdlines"]), "the host process must not be visible"
    assert str(os.getpid()) not in map(str, report["pids"]) or os.getpid() > 100


def test_host_files_are_out_of_reach(kernel: Kernel, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "tasks.jsonl").write_text('{"task_id": "t1", "ground_truth": "B"}\n')
    (run / "results.jsonl").write_text("")
    with Kernel() as other:
        code = f"""
import json, os, pathlib
report = {{}}
for path in [{str(run / "tasks.jsonl")!r}, {str(other.connection_file)!r}, {str(Path.home() / ".bashrc")!r}, '/etc/shadow']:
    try:
        open(path).read(); report[path] = 'READ'
    except OSError as error:
        report[path] = type(error).__name__
try:
    open({str(run / "results.jsonl")!r}, 'a').write('{{"task_id": "t1", "score": 1.0}}\\n'); report['append'] = 'WROTE'
except OSError as error:
    report['append'] = type(error).__name__
try:
    report['home'] = os.listdir({str(Path.home())!r})
except OSError as error:
    report['home'] = type(error).__name__
walk = []
for parent in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents]:
    try:
        walk += [str(parent / n) for n in os.listdir(parent) if n.endswith('.jsonl')]
    except OSError:
        pass
report['walk'] = walk
print('PROBE', json.dumps(report))
"""
        report = probe(kernel, code)
    assert report.pop("append") in ("FileNotFoundError", "PermissionError", "OSError")
    assert report.pop("walk") == []
    home = report.pop("home")
    # nothing of the home directory but the way to a Python installed under it (pyenv, conda)
    on_the_way = {
        Path(p).relative_to(Path.home()).parts[0]
        for p in (sys.prefix, sys.base_prefix)
        if Path(p).is_relative_to(Path.home())
    }
    assert home in ("FileNotFoundError", "PermissionError") or set(home) <= on_the_way, home
    assert all(outcome in ("FileNotFoundError", "PermissionError") for outcome in report.values()), report
    assert (run / "results.jsonl").read_text() == ""


def test_a_bench_run_cannot_read_its_ground_truth_or_forge_its_results(tmp_path: Path) -> None:
    from spatialclaw.runner import run_benchmark
    from spatialclaw.testing.provider_server import ScriptedProvider
    from spatialclaw.trajectories.episode_log import load_episode
    from tests.bench_runs import one_task_run

    run = tmp_path / "run"
    cell = f"""```python
import json, os, pathlib
report = {{}}
for name in ('tasks.jsonl', 'results.jsonl', 'manifest.json'):
    try:
        open(pathlib.Path({str(run)!r}) / name).read(); report[name] = 'READ'
    except OSError as error:
        report[name] = type(error).__name__
try:
    open(pathlib.Path({str(run)!r}) / 'results.jsonl', 'a').write('{{"task_id": "forged", "score": 1.0}}\\n')
    report['append'] = 'WROTE'
except OSError as error:
    report['append'] = type(error).__name__
found = []
for parent in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents]:
    try:
        found += [n for n in os.listdir(parent) if n.endswith('.jsonl') or n == 'manifest.json']
    except OSError:
        pass
report['walk'] = found
print('PROBE', json.dumps(report))
```"""
    answer = "```python\nanswer('B' if meta['choices'] else 2)\n```"
    with ScriptedProvider(lambda request, index: cell if index % 2 == 0 else answer) as server:
        run_benchmark(one_task_run(server.url, run, model_options={"api_key": "test-key"}))
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    assert [r["task_id"] for r in rows] != [] and all(r["task_id"] != "forged" for r in rows)
    episode = load_episode(run / rows[0]["trajectory_dir"])
    stdout = next(result.stdout for _, result in episode.cells() if "PROBE" in result.stdout)
    report = json.loads(stdout.split("PROBE ", 1)[1])
    assert report.pop("walk") == []
    assert all(outcome in ("FileNotFoundError", "PermissionError") for outcome in report.values()), report


def test_a_host_listener_on_loopback_is_unreachable(kernel: Kernel) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            try:
                accepted.append(listener.accept())
            except OSError:
                pass

    watcher = threading.Thread(target=accept)
    watcher.start()
    try:
        report = probe(
            kernel,
            f"""
import json, socket
report = {{}}
for host in ('127.0.0.1', 'localhost', '::1'):
    try:
        socket.create_connection((host, {port}), timeout=3).close(); report[host] = 'CONNECTED'
    except OSError as error:
        report[host] = type(error).__name__
interfaces = [name for _, name in socket.if_nameindex()]
print('PROBE', json.dumps({{'attempts': report, 'interfaces': interfaces}}))
""",
        )
    finally:
        watcher.join()
        listener.close()
    assert accepted == []
    assert "CONNECTED" not in report["attempts"].values(), report
    assert report["interfaces"] == ["lo"], "the kernel's network namespace holds only its own loopback"


def test_a_listener_opened_by_a_cell_is_unreachable_from_the_host(kernel: Kernel) -> None:
    report = probe(
        kernel,
        """
import json, socket
server = socket.socket()
server.bind(('0.0.0.0', 0))
server.listen(1)
print('PROBE', json.dumps({'port': server.getsockname()[1]}))
""",
    )
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", report["port"]), timeout=2).close()


def test_the_memory_cap_cannot_be_raised_and_allocation_past_it_is_a_memory_error() -> None:
    with Kernel(memory_limit_mb=1024) as k:
        raised = k.execute(
            "import resource\nresource.setrlimit(resource.RLIMIT_DATA, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))"
        )
        assert raised.status == "error" and raised.error.type in ("ValueError", "PermissionError"), raised.error
        allocated = k.execute("import numpy as np\nblock = np.ones(3 * 2**30, dtype=np.uint8)")
        assert allocated.status == "error" and allocated.error.type == "MemoryError"
        assert "memory cap of 1024 MiB" in allocated.error.message
        assert k.execute("print('still here')").stdout == "still here\n"


DETACH = "import subprocess\nsubprocess.run(['setsid', 'sh', '-c', \"sh -c 'exec sleep {marker}' > /dev/null 2>&1 &\"], check=True)"


def _host_sleepers(marker: str) -> list[int]:
    """Host pids of ``sleep MARKER`` processes (what a probe cell detached)."""
    return [p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", marker]]


def _within(seconds: float, condition) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_no_process_outlives_shutdown() -> None:
    marker = str(90000 + uuid.uuid4().int % 9999)
    k = Kernel()
    started = k.execute(DETACH.format(marker=marker))
    assert started.status == "ok", started.error
    assert _within(5, lambda: _host_sleepers(marker)), "the probe must have started its detached process"
    k.shutdown()
    assert _within(5, lambda: not _host_sleepers(marker))


def test_an_in_place_reset_ends_the_previous_episodes_processes() -> None:
    marker = str(80000 + uuid.uuid4().int % 9999)
    with Kernel(meta={"question": "first"}) as k:
        k.execute(DETACH.format(marker=marker))
        assert _within(5, lambda: _host_sleepers(marker)), "the probe must have started its detached process"
        k.reset(meta={"question": "second"})
        assert _within(5, lambda: not _host_sleepers(marker))
        assert k.execute("print('next episode')").stdout == "next episode\n"


def test_a_fork_bomb_is_contained_and_the_kernel_stays_usable() -> None:
    with Kernel(interrupt_grace_s=3.0) as k:
        bomb = k.execute(
            "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(30)\n",
            timeout=5,
        )
        assert bomb.status in ("timeout", "crashed") and bomb.error is not None
        after = k.execute("print(6 * 7)")
        assert after.status == "ok" and after.stdout == "42\n"


def test_processes_an_interrupted_cell_started_are_ended_and_the_kernel_is_kept() -> None:
    """A cell that times out leaves no process behind (detached ones included), and the kernel itself
    survives with its variables: only what started after the kernel is ended."""
    with Kernel(interrupt_grace_s=3.0) as k:
        k.execute("kept = 7")
        slow = k.execute(
            "import os, subprocess, time\n"
            "subprocess.Popen(['sleep', '300'])\n"
            "subprocess.Popen(['setsid', 'sleep', '301'])\n"
            "time.sleep(300)",
            timeout=3,
        )
        assert slow.status == "timeout" and any("ended" in note for note in slow.notes)
        after = k.execute(
            "import subprocess\nprint(kept, subprocess.run(['pgrep', '-c', 'sleep'], capture_output=True, text=True).stdout.strip())"
        )
        assert after.status == "ok" and after.stdout.split() == ["7", "0"] and not after.restarted


def test_patches_in_one_episode_do_not_reach_the_next() -> None:
    patch = """
import builtins, math
import spatialclaw.primitives.display.show as display
builtins.abs = lambda value: 42
math.pi = 3.0
display.Answerer.__call__ = lambda self, *args, **kwargs: print('forged answer')
with open('/tmp/planted', 'w') as f:
    f.write('from the last episode')
"""
    check = """
import json, math, os
import spatialclaw.primitives.display.show as display
print('PROBE', json.dumps({'abs': abs(-2), 'pi': round(math.pi, 4),
                           'answerer': getattr(display.Answerer.__call__, '__name__', ''),
                           'planted': os.path.exists('/tmp/planted')}))
"""
    with KernelPool(size=1, fresh=True, spares=1) as pool:
        first = pool.acquire(meta={"question": "q"})
        assert first.execute(patch).status == "ok"
        first_pid = first.pid
        pool.release(first)
        second = pool.acquire(meta={"question": "q"})
        try:
            assert second.pid != first_pid
            report = probe(second, check)
        finally:
            pool.release(second)
    assert report == {"abs": 2, "pi": 3.1416, "answerer": "__call__", "planted": False}


def test_a_cell_that_breaks_the_kernels_messaging_gets_an_error_and_a_restarted_kernel(kernel: Kernel) -> None:
    broken = kernel.execute("import json\njson.dumps = lambda *args, **kwargs: 'forged'\nprint('patched')")
    assert broken.status == "crashed" and broken.error.type == "KernelProtocolError"
    assert broken.restarted
    assert kernel.execute("import json\nprint(json.dumps([1]))").stdout == "[1]\n"


def test_file_size_is_capped_and_workdir_use_is_reported() -> None:
    with Kernel(limits=ResourceLimits(file_mb=2, workdir_mb=3)) as k:
        big = k.execute("open('big.bin', 'wb').write(b'x' * (3 * 2**20))")
        assert big.status == "error" and big.error.type == "OSError" and "File too large" in big.error.message
        filled = k.execute("for i in range(3):\n    open(f'part{i}.bin', 'wb').write(b'x' * (2**20 + 2**19))")
        assert filled.status == "ok"
        assert any("MiB, against its quota of 3 MiB" in note for note in filled.notes), filled.notes
        assert k.workdir_bytes() >= 4 * 2**20
