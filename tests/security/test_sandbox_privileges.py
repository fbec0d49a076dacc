"""A kernel started by root is as powerless as one started by a user (issue 30, attacks B2, B1, B12).

Each runner (this process's user, which is root in CI, and a fresh unprivileged uid) starts
``Kernel(sandbox="required")`` in a child process (:mod:`privilege_attacks`), whose cells try to keep
capabilities, open global sysctls for writing (never writing them), plant a set-uid copy of ``id`` in the
workdir and open a listener there. Meanwhile this process, as another local user (uid 65534), tries to run the
planted program and to reach the listener. Both must fail for both runners, and ``Kernel.sandbox["holds"]``
must say that each guarantee holds.

Acting as other users needs root: as a non-root user only the in-kernel checks run (the rest is skipped, with
the reason). The unprivileged runner must reach the interpreter and this checkout; where a folder above them
is closed to other users (``/root`` for a pyenv Python, a clone under ``/root``), it runs in a private mount
namespace where that folder is an empty tmpfs with just those paths bound back read-only.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spatialclaw.kernel.sandbox import support
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.skipif(not support().available, reason=f"no kernel sandbox here: {support().missing}")

ATTACKS = Path(__file__).with_name("privilege_attacks.py")
OTHER_USER = 65534  # nobody: the local user the planted program and the listener are offered to
RUNNERS = ["this user", "a fresh unprivileged uid"]


def _fresh_uid() -> int:
    """A uid no process uses and no account names."""
    used = {os.stat(f"/proc/{entry}").st_uid for entry in os.listdir("/proc") if entry.isdigit()}
    while True:
        uid = random.randrange(1_200_000_000, 1_400_000_000)
        if uid not in used:
            return uid


def _reachable_command(uid: int) -> list[str]:
    """The command that runs :mod:`privilege_attacks` as ``uid``; a private mount namespace opens the
    folders that close the interpreter or this checkout to other users (skips when that cannot be done)."""
    needed = sorted({Path(os.path.realpath(p)) for p in (sys.executable, sys.prefix, sys.base_prefix, REPO_ROOT)})
    covers: dict[Path, list[Path]] = {}
    for path in needed:
        if not os.stat(path).st_mode & 0o005:
            pytest.skip(f"{path} itself is closed to other users (mode {stat.S_IMODE(os.stat(path).st_mode):o})")
        closed = [a for a in reversed(path.parents) if not os.stat(a).st_mode & 0o001]
        if closed:
            covers.setdefault(closed[0], []).append(path)
    command = [sys.executable, str(ATTACKS)]
    if not covers:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip(f"{', '.join(map(str, covers))} is closed to other users and setpriv is missing")
    mounts = []
    for cover, paths in covers.items():
        mounts += ["--tmpfs", str(cover)]
        for path in paths:  # bwrap would make the folders between private to root
            between = [a for a in reversed(path.parents) if a.is_relative_to(cover) and a != cover]
            mounts += [
                *(arg for a in between for arg in ("--perms", "0755", "--dir", str(a))),
                "--ro-bind",
                str(path),
                str(path),
            ]
    drop = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return [support().bwrap or "bwrap", "--dev-bind", "/", "/", *mounts, "--die-with-parent", "--", *drop, *command]


def _as_other_user(action: Callable[[], None]) -> tuple[int, str]:
    """Run ``action`` in a child process that is uid/gid 65534 with no groups; returns its exit code (the
    errno of an ``OSError``, 0 when it succeeded) and what it wrote on stdout."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            os.close(read)
            os.dup2(write, 1)
            os.setgroups([])
            os.setresgid(OTHER_USER, OTHER_USER, OTHER_USER)
            os.setresuid(OTHER_USER, OTHER_USER, OTHER_USER)
            action()
        except OSError as error:
            code = error.errno or 255
        except BaseException:
            code = 255
        os._exit(code)
    os.close(write)
    with os.fdopen(read) as output:
        text = output.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), text


def _connect_and_push(path: str) -> None:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(5)
        client.connect(path)
        os.write(1, client.recv(200))
        client.sendall(b"data pushed in by uid 65534")


@pytest.fixture(scope="module", params=RUNNERS)
def attacked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The attacks of one runner: what the cells saw, what uid 65534 got, what reached the listener."""
    is_root = os.getuid() == 0
    if request.param != "this user" and not is_root:
        pytest.skip("starting a kernel as another uid needs root (CI runs as root)")
    uid = os.getuid() if request.param == "this user" else _fresh_uid()
    home = Path(tempfile.mkdtemp(prefix="spatialclaw-runner-"))
    os.chown(home, uid, uid)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    if uid == os.getuid():
        command, switch = [sys.executable, str(ATTACKS)], {}
    else:
        command = _reachable_command(uid)
        wrapped = command[0] != sys.executable
        switch = {} if wrapped else {"user": uid, "group": uid, "extra_groups": []}
    child = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=home,
        env=env,
        **switch,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        line = child.stdout.readline()
        if not line.startswith("ATTACKS "):
            child.kill()
            raise AssertionError(
                f"the runner failed: {line}{child.stdout.read()}{child.stderr.read() if child.stderr else ''}"
            )
        found: dict[str, Any] = {"runner_uid": uid, **json.loads(line[len("ATTACKS ") :])}
        if is_root:
            planted = found["planted"]
            found["other_user_ran"] = _as_other_user(lambda: os.execv(planted, [planted]))
            found["host_mode"] = os.stat(planted).st_mode
            found["other_user_connected"] = _as_other_user(lambda: _connect_and_push(found["socket"]))
        child.stdin.write("go on\n")
        child.stdin.flush()
        after = child.stdout.readline()
        assert after.startswith("AFTER "), after + (child.stderr.read() if child.stderr else "")
        found.update(json.loads(after[len("AFTER ") :]))
        child.wait(timeout=60)
        yield found
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        shutil.rmtree(home, ignore_errors=True)


def test_a_cell_keeps_no_capability_and_cannot_open_global_sysctls_for_writing(attacked: dict[str, Any]) -> None:
    """B2: as root with a pids cgroup the kernel ran as uid 0 with CapEff 000001fffeffffff, and a cell opened
    (and could write) /proc/sys/kernel/core_pattern. Now no capability is left and every open for writing
    fails (read-only /proc: EROFS; or plain permissions: EACCES)."""
    caps = attacked["caps"]
    assert {name: int(caps[name], 16) for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == dict.fromkeys(
        ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), 0
    ), caps
    opened = {path: outcome for path, outcome in attacked["opened"].items() if outcome != "ENOENT"}
    assert "/proc/sys/kernel/core_pattern" in opened
    assert set(opened.values()) <= {"EROFS", "EACCES", "EPERM"}, opened


def test_every_writable_mount_is_nosuid_and_nodev(attacked: dict[str, Any]) -> None:
    """The workdir, snapshot and channel folders, /tmp and /dev/shm: nothing set-uid runs from them and no
    device node made there opens a device (the sandbox's own /dev/pts and passed-through device files aside)."""
    for mount in attacked["writable_mounts"]:
        point, options = mount.split(" ")
        assert "nosuid" in options.split(","), mount
        if not point.startswith("/dev/"):
            assert "nodev" in options.split(","), mount


def test_the_kernel_reports_what_holds(attacked: dict[str, Any]) -> None:
    assert attacked["sandbox"]["holds"] == {
        "capabilities_dropped": True,
        "proc_read_only": True,
        "nosuid_nodev": True,
        "private_workdir": True,
    }, attacked["sandbox"]


def test_a_set_uid_program_planted_in_the_workdir_is_no_use_to_another_user(attacked: dict[str, Any]) -> None:
    """B1: the cell opened its workdir (mode 0755) and left a set-uid copy of ``id`` there; uid 65534 ran it
    as the runner (``euid=0(root)``). Now the workdir sits in a folder private to the runner, which the cell
    cannot reach: running it fails with EACCES, whatever the cell did to the workdir itself."""
    assert attacked["cwd"] == attacked["workdir"]
    if "other_user_ran" not in attacked:
        pytest.skip("acting as another local user needs root")
    code, output = attacked["other_user_ran"]
    assert "euid=" not in output and "uid=" not in output, output
    assert code == errno.EACCES, (code, output, oct(attacked["host_mode"]))


def test_a_listener_in_the_workdir_is_unreachable_by_another_user(attacked: dict[str, Any]) -> None:
    """B12: uid 65534 connected to a cell's ``backdoor.sock`` (mode 0777, in its opened workdir), read its
    greeting and pushed data the next cell read. Now the connect fails with EACCES and nothing arrives."""
    if "other_user_connected" not in attacked:
        pytest.skip("acting as another local user needs root")
    code, output = attacked["other_user_connected"]
    assert (code, output) == (errno.EACCES, ""), (code, output)
    assert attacked["received"] is None


def test_required_refuses_a_workdir_other_users_can_reach(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A workdir the caller gives is mounted where it is: directly in /tmp nothing above it is private, so a
    set-uid program or a listener a cell left there would be open to every local user. ``required`` refuses
    it, naming it; ``auto`` runs and reports it."""
    from spatialclaw import Kernel
    from spatialclaw.kernel.sandbox import SandboxUnavailable

    workdir = Path(tempfile.mkdtemp(prefix="spatialclaw-open-workdir-", dir="/tmp"))
    try:
        with pytest.raises(SandboxUnavailable, match=f"{workdir} can be reached by other local users"):
            Kernel(workdir=workdir, sandbox="required")
        with Kernel(workdir=workdir) as kernel:
            assert kernel.sandbox["holds"]["private_workdir"] is False
            assert kernel.sandbox["holds"]["capabilities_dropped"] is True
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
