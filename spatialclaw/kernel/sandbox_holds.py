"""What holds in a running sandbox, read from the host: capabilities, read-only ``/proc``, ``nosuid``/``nodev``
writable mounts and a private workdir.

Read once the kernel is ready, before any cell has run, from ``/proc/<pid>`` of the kernel's own process on
the host (its status and mount table) and from the host's folders, never from what the kernel says:

- ``capabilities_dropped``: every capability set of the kernel process is empty (a kernel started by root
  with a pids cgroup runs as uid 0 in its user namespace: without ``--cap-drop ALL`` it kept them all).
- ``proc_read_only``: ``/proc`` and every mount below it are read-only, so ``/proc/sys`` (global sysctls
  such as ``kernel.core_pattern``, whose permission check compares the uid with the host's root) and
  ``/proc/sysrq-trigger`` cannot be opened for writing.
- ``nosuid_nodev``: every writable mount is ``nosuid`` and, but for device files passed through on purpose
  and the sandbox's own ``/dev/pts``, ``nodev``.
- ``private_workdir``: each writable folder (workdir, snapshots, channels) lies below a folder of this user
  closed to everyone else (mode ``0700``) that the cell cannot reach: whatever the cell does to the folders
  it owns (opening them to all, set-uid files, Unix-socket listeners), no other local user gets in.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["HOLDS", "failures", "private_below", "sandbox_holds"]

HOLDS = ("capabilities_dropped", "proc_read_only", "nosuid_nodev", "private_workdir")
_CAPABILITY_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
_DEVICE_FILESYSTEMS = {"devtmpfs", "devpts"}
_WHAT_FAILED = {
    "capabilities_dropped": "the kernel kept capabilities (or its process could not be read on the host)",
    "proc_read_only": "/proc (with /proc/sys) is writable",
    "nosuid_nodev": "a writable mount allows set-uid programs or device nodes",
}


def _kernel_pid(launcher: int) -> int | None:
    """The host pid of the ``python -m ipykernel_launcher`` process started below ``launcher``, breadth first
    through ``/proc/<pid>/task/<tid>/children`` (Linux's ``CONFIG_PROC_CHILDREN``, on in the common
    distributions; without it nothing is found, and no capability or mount is claimed to hold)."""
    queue = [launcher]
    while queue:
        pid = queue.pop(0)
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[1:3] == [b"-m", b"ipykernel_launcher"]:
                return pid
            for task in Path(f"/proc/{pid}/task").iterdir():
                queue += [int(child) for child in (task / "children").read_text().split()]
        except OSError:  # ended meanwhile
            continue
    return None


def _capabilities_dropped(pid: int) -> bool:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return False
    sets = dict(line.split(":", 1) for line in lines if line.startswith("Cap"))
    return all(name in sets and int(sets[name], 16) == 0 for name in _CAPABILITY_SETS)


def _mounts(pid: int) -> list[tuple[str, set[str], str]]:
    """``(mount point, per-mount options, file system type)`` of each mount the process sees."""
    try:
        lines = Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
    except OSError:
        return []
    mounts = []
    for line in lines:
        fields = line.split()
        dash = fields.index("-")
        mounts.append((fields[4], set(fields[5].split(",")), fields[dash + 1]))
    return mounts


def private_below(path: str | Path, writable: Iterable[str | Path] = ()) -> bool:
    """Whether a folder above ``path`` is this user's, closed to group and others (no ACL can open it with a
    zero mask), and outside the ``writable`` folders (which a sandboxed cell could change)."""
    reachable = [os.path.abspath(p) for p in writable]
    for parent in Path(os.path.abspath(path)).parents:
        text = str(parent)
        if any(text == w or text.startswith(w.rstrip(os.sep) + os.sep) for w in reachable):
            continue
        try:
            info = os.lstat(parent)
        except OSError:
            return False
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
            return True
    return False


def sandbox_holds(launcher: int | None, writable: Iterable[str | Path]) -> dict[str, bool]:
    """Which guarantees hold for the sandbox whose launching process is ``launcher`` (see the module)."""
    folders = [str(p) for p in writable]
    kernel = _kernel_pid(launcher) if launcher is not None else None
    mounts = _mounts(kernel) if kernel is not None else []
    proc = [options for point, options, _ in mounts if point == "/proc" or point.startswith("/proc/")]
    rw = [(point, options, kind) for point, options, kind in mounts if "rw" in options]
    return {
        "capabilities_dropped": kernel is not None and _capabilities_dropped(kernel),
        "proc_read_only": bool(proc) and all("ro" in options for options in proc),
        "nosuid_nodev": bool(mounts)
        and all("nosuid" in options and ("nodev" in options or kind in _DEVICE_FILESYSTEMS) for _, options, kind in rw),
        "private_workdir": all(private_below(folder, folders) for folder in folders),
    }


def failures(holds: dict[str, bool], writable: Iterable[str | Path]) -> list[str]:
    """What does not hold, in words (naming the folders that are not private)."""
    folders = [str(p) for p in writable]
    found = [_WHAT_FAILED[name] for name in HOLDS if not holds.get(name) and name != "private_workdir"]
    if not holds.get("private_workdir"):
        exposed = [folder for folder in folders if not private_below(folder, folders)]
        found.append(
            f"{', '.join(exposed)} can be reached by other local users (no folder above it is yours with mode 0700): "
            "give the kernel a workdir inside such a folder, or none (it then makes its own)"
        )
    return found
