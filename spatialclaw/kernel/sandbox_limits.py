"""The host-side caps of one sandbox: cgroups (pids, memory), an unprivileged uid, a seccomp filter, and
the parent-death signal of the process that starts it.

What holds, by host (:attr:`HostCaps.process_cap` and :attr:`HostCaps.memory_cap` say which):

- processes: a pids cgroup where this host lets us create one (cgroup v1 ``pids``, or a cgroup v2 tree
  with the controller); otherwise RLIMIT_NPROC, which the kernel charges to the *real* uid outside all
  user namespaces and never enforces for root. As root without a pids cgroup the sandbox therefore runs
  as a fresh unprivileged uid (``setpriv``) that no other process uses, so the cap counts exactly its
  own processes. A non-root host's cap is RLIMIT_NPROC above the processes the user already runs.
- memory: a memory cgroup where one can be created (it counts everything the sandbox's processes use:
  private and shared mappings, its ``/tmp`` and ``/dev/shm``); otherwise RLIMIT_DATA, which counts
  private writable mappings only, with ``/tmp`` and ``/dev/shm`` as size-limited tmpfs.
- keys: a seccomp filter makes ``add_key``, ``keyctl`` and ``request_key`` fail with ``EPERM``, so a
  cell reaches neither the host's session keyring nor any other.
"""

from __future__ import annotations

import ctypes
import os
import random
import shlex
import signal
import stat
import struct
import sys
import time
from pathlib import Path

__all__ = ["HostCaps", "die_with_owner", "seccomp_program", "sweep_cgroups", "traversable"]

_V1 = {"pids": "/sys/fs/cgroup/pids", "memory": "/sys/fs/cgroup/memory"}
_V2 = "/sys/fs/cgroup"
_UIDS = (1_500_000_000, 1_900_000_000)  # fresh uids for root's sandboxes: far above any real account's
SECCOMP_FD = 9  # the descriptor bwrap --seccomp reads the filter from


def _own_cgroup(controller: str) -> str:
    """This process's cgroup path in ``controller``'s v1 hierarchy ("" for cgroup v2's)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller == "" and names == "") or (controller and controller in names.split(",")):
            return path or "/"
    return "/"


def _parents(controller: str) -> list[Path]:
    """Where to create a sandbox's cgroup for ``controller``: below this process's own cgroup (a child never
    escapes the accounting its host is under), in the v1 hierarchy and then the v2 one."""
    own = _own_cgroup(controller).lstrip("/")
    parents = [Path(_V1[controller]) / own / "spatialclaw"]
    if Path(_V2, "cgroup.controllers").exists():
        parents.append(Path(_V2) / _own_cgroup("").lstrip("/") / "spatialclaw")
    return parents


def _create(controller: str, name: str, settings: dict[str, str]) -> Path | None:
    """A new cgroup ``name`` with ``settings`` (files of the controller), or None where none can be made. Only
    a real cgroup file system counts: this process's cgroup must be there (a plain directory, say on a
    tmpfs at /sys/fs/cgroup, never passes for one)."""
    for parent in _parents(controller):
        if not (parent.parent / "cgroup.procs").is_file():
            continue
        sweep_cgroups(parent)
        candidate = parent / name
        try:
            parent.mkdir(exist_ok=True)
            if (parent.parent / "cgroup.subtree_control").exists():  # v2: the controller must be enabled
                for level in (parent.parent, parent):
                    if controller not in (level / "cgroup.subtree_control").read_text().split():
                        (level / "cgroup.subtree_control").write_text(f"+{controller}")
            candidate.mkdir()
            if not (candidate / "cgroup.procs").is_file():
                raise OSError(f"{candidate} is not a cgroup")
            for file, value in settings.items():
                (candidate / file).write_text(value)
            return candidate
        except OSError:
            try:
                candidate.rmdir()
            except OSError:
                pass
    return None


def sweep_cgroups(parent: Path, min_age_s: float = 120.0) -> None:
    """Remove empty kernel cgroups left by processes that ended before they could (killed hosts, slow exits);
    young ones are spared, since a kernel being started has not joined its cgroup yet."""
    try:
        entries = [entry for entry in parent.iterdir() if entry.name.startswith("kernel-") and entry.is_dir()]
    except OSError:
        return
    now = time.time()
    for entry in entries:
        try:
            if now - entry.stat().st_mtime > min_age_s and not (entry / "cgroup.procs").read_text().strip():
                entry.rmdir()
        except OSError:
            pass


def _uids_in_use() -> set[int]:
    uids = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                uids.add(os.stat(f"/proc/{entry}").st_uid)
            except OSError:
                pass
    return uids


def _fresh_uid() -> int:
    used = _uids_in_use()
    while True:
        uid = random.randrange(*_UIDS)
        if uid not in used:
            return uid


class HostCaps:
    """The caps of one sandbox that live on the host (see the module docstring); ``remove`` ends them."""

    def __init__(
        self, processes: int, memory_mb: int, name: str, setpriv: str | None = None, uid: int | None = None
    ) -> None:
        self.processes = processes
        self.pids = _create("pids", name, {"pids.max": str(processes)})
        self.memory: Path | None = None
        if memory_mb:
            size = str(memory_mb * 2**20)
            v1 = {"memory.limit_in_bytes": size, "memory.memsw.limit_in_bytes": size}
            self.memory = _create("memory", name, v1) or _create("memory", name, {"memory.max": size})
            if self.memory is not None:
                try:
                    (self.memory / "memory.swap.max").write_text("0")
                except OSError:
                    pass
        self.uid: int | None = None
        self.fds: dict[str, int] = {}
        self._setpriv = setpriv
        if self.pids is None and os.getuid() == 0 and setpriv is not None:  # ``uid``: the same kernel's, again
            self.uid = uid if uid is not None else _fresh_uid()

    @property
    def process_cap(self) -> str:
        """``pids-cgroup``, ``rlimit-nproc (uid N)`` (root's sandbox as a fresh uid), ``rlimit-nproc``, or
        ``none (...)`` when nothing holds."""
        if self.pids is not None:
            return "pids-cgroup"
        if self.uid is not None:
            return f"rlimit-nproc (uid {self.uid})"
        return "none (root is exempt from RLIMIT_NPROC; setpriv missing)" if os.getuid() == 0 else "rlimit-nproc"

    @property
    def memory_cap(self) -> str:
        """``memory-cgroup`` (everything counts) or ``rlimit-data`` (private mappings and the tmpfs sizes)."""
        return "memory-cgroup" if self.memory is not None else "rlimit-data"

    def nproc_limit(self) -> int | None:
        """RLIMIT_NPROC for the sandbox when no cgroup caps it (None when one does, or for root as root)."""
        if self.pids is not None or (os.getuid() == 0 and self.uid is None):
            return None
        if self.uid is not None:
            return self.processes
        return sum(1 for entry in os.listdir("/proc") if entry.isdigit() and _owned(entry)) + self.processes

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` (prlimit ... bwrap ...) started inside the cgroups (a shell joins them, then execs)."""
        steps = [f"echo $$ > {shlex.quote(str(group / 'cgroup.procs'))}" for group in (self.pids, self.memory) if group]
        if not steps:
            return argv
        return ["/bin/sh", "-c", " && ".join([*steps, 'exec "$@"']), "sh", *argv]

    def open_seccomp(self, path: str) -> int:
        """Open the seccomp program for ``bwrap --seccomp`` (in ``fds``: pass it to the process)."""
        self.close_fds()
        self.fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        return self.fds[path]

    def close_fds(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}

    def give(self, *paths: str | Path) -> None:
        """Hand ``paths`` (and the sockets in those that are directories) to the sandbox's uid, when it has
        one of its own, so that it can use them; nothing else changes owner."""
        if self.uid is None:
            return
        for path in paths:
            os.chown(path, self.uid, self.uid, follow_symlinks=False)
            if os.path.isdir(path) and not os.path.islink(path):
                for entry in os.scandir(path):
                    if stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                        os.chown(entry.path, self.uid, self.uid, follow_symlinks=False)

    def remove(self) -> None:
        """Kill what is left in the cgroups and remove them."""
        self.close_fds()
        for attribute in ("pids", "memory"):
            directory = getattr(self, attribute)
            if directory is None:
                continue
            try:
                for pid in (directory / "cgroup.procs").read_text().split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
            except OSError:
                pass
            for _ in range(50):
                try:
                    directory.rmdir()
                    setattr(self, attribute, None)
                    break
                except OSError:
                    time.sleep(0.02)


def _owned(pid: str) -> bool:
    try:
        return os.stat(f"/proc/{pid}").st_uid == os.getuid()
    except OSError:
        return False


def traversable(paths: list[str], system: tuple[str, ...]) -> list[str]:
    """bwrap ``--dir`` (mode 0755) for the ancestors of ``paths`` outside the ``system`` trees: without them
    bwrap creates those directories private to root, and a sandbox with its own uid could not reach below."""
    ancestors: dict[str, None] = {}
    for path in paths:
        for parent in reversed(Path(path).parents):
            text = str(parent)
            if text not in ("/", "/tmp") and not any(text == d or text.startswith(f"{d}/") for d in system):
                ancestors[text] = None
    return [arg for ancestor in ancestors for arg in ("--perms", "0755", "--dir", ancestor)]


# loaded here, never between fork and exec (the loader's lock may be held by another thread then)
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def die_with_owner() -> None:
    """``preexec_fn`` of the process that becomes bwrap: SIGKILL when the thread that started it ends."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:  # the owner died before the prctl
        os._exit(1)


# seccomp, per architecture a process can enter the kernel with here: (audit arch, key-management syscalls
# add_key, request_key, keyctl; clone, unshare; clone3). x32 calls are x86_64's with bit 30 set (masked).
_ARCHES = {
    "x86_64": (0xC000003E, (248, 249, 250), (56, 272), 435),
    "i386": (0x40000003, (286, 287, 288), (120, 310), 435),
    "aarch64": (0xC00000B7, (217, 218, 219), (220, 97), 435),
    "arm": (0x40000028, (309, 310, 311), (120, 337), 435),
}
_CLONE_NEWUSER = 0x10000000


def seccomp_program() -> bytes:
    """A classic-BPF seccomp program for ``bwrap --seccomp``: the key-management syscalls fail with EPERM
    (no keyring of the host's is reachable), so do ``clone``/``unshare`` asking for a new user namespace,
    and ``clone3`` (whose flags a filter cannot read) with ENOSYS, which makes the C library use ``clone``.
    Everything else is allowed."""
    ld_w, alu_and, jeq, ret = 0x20, 0x54, 0x15, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    machine = os.uname().machine if sys.platform.startswith("linux") else "x86_64"
    names = ["x86_64", "i386"] if machine in ("x86_64", "amd64") else ["aarch64", "arm"]
    ops: list[tuple[int, int, int, int]] = []
    for name in names:
        arch, keys, namespaces, clone3 = _ARCHES[name]
        # block layout: 0 ld arch, 1 jeq arch, 2 ld nr, 3 and, 4.. checks, then the returns
        checks = [*keys, clone3, *namespaces]
        first_return = 4 + len(checks)  # index of: ret allow, flags check (3 ops), ret allow, eperm, enosys
        labels = {"allow": first_return, "flags": first_return + 1, "eperm": first_return + 5}
        labels["enosys"] = first_return + 6
        block = [(ld_w, 0, 0, 4), (jeq, 0, 0, arch), (ld_w, 0, 0, 0), (alu_and, 0, 0, 0xBFFFFFFF)]
        for number in checks:
            here = len(block)
            target = "eperm" if number in keys else "enosys" if number == clone3 else "flags"
            block.append((jeq, labels[target] - here - 1, 0, number))
        block.append((ret, 0, 0, allow))
        block += [(ld_w, 0, 0, 16), (alu_and, 0, 0, _CLONE_NEWUSER), (jeq, 0, 1, 0), (ret, 0, 0, allow)]
        block += [(ret, 0, 0, eperm), (ret, 0, 0, enosys)]
        block[1] = (jeq, 0, len(block) - 2, arch)  # another architecture: skip to the next block
        ops += block
    ops.append((ret, 0, 0, allow))
    return b"".join(struct.pack("=HBBI", code, jt, jf, k) for code, jt, jf, k in ops)
