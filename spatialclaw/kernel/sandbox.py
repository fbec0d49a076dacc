"""The kernel sandbox: a policy as data, turned into one ``bwrap`` (bubblewrap) command line on Linux.

A :class:`SandboxPolicy` lists what a sandboxed kernel may read (``read_only``), what it may write
(``writable``), whether it has a network (never, today) and its hard resource limits. :func:`launch_argv`
turns it into the command that starts the kernel: resource limits set before exec (soft = hard, so a cell
cannot raise them), a process-count cap, then ``bwrap`` with its own user, PID, IPC, UTS, cgroup and
network namespaces, a private ``/tmp``, a fresh ``/proc`` that shows only the sandbox's processes, and
nothing else of the host filesystem. Nothing outside this module knows which mechanism is used.

Modes (``Kernel(sandbox=...)``): ``"auto"`` uses the sandbox where the platform supports it and otherwise
says once, in the log, what is not isolated; ``"required"`` refuses to start without it
(:class:`SandboxUnavailable` names what is missing); ``"off"`` runs the kernel as a plain child process.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MODES",
    "ProcessCap",
    "ResourceLimits",
    "SandboxPolicy",
    "SandboxSupport",
    "SandboxUnavailable",
    "check_mode",
    "describe",
    "launch_argv",
    "support",
    "use_sandbox",
]

log = logging.getLogger(__name__)

MODES = ("auto", "required", "off")

# Parts of /etc a Python process with NumPy, OpenCV, matplotlib and torch needs; the rest (shadow, ssh,
# machine-id, credentials some tools keep there) stays out.
_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "fonts",
    "localtime",
    "timezone",
    "passwd",
    "group",
    "nsswitch.conf",
    "mime.types",
    "ssl",
    "ca-certificates",
    "matplotlibrc",
    "os-release",
)
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
# Host packages of this project whose source may live outside site-packages (an editable install).
_PACKAGES = ("spatialclaw", "spatialclaw.primitives", "spatialclaw.prompts", "spatialclaw.benchmarks")


class SandboxUnavailable(RuntimeError):
    """``sandbox="required"`` on a platform (or host) where the kernel sandbox cannot run."""


@dataclass(frozen=True)
class ResourceLimits:
    """Hard limits of a sandboxed kernel, set before exec with soft = hard.

    ``memory_mb``: data segment and private mappings (RLIMIT_DATA), MiB; 0: none. ``processes``: processes
    and threads of the whole sandbox (a pids cgroup where the host can create one, else RLIMIT_NPROC).
    ``open_files``: file descriptors per process. ``file_mb``: the largest file a cell can write, MiB
    (RLIMIT_FSIZE; a write past it fails with ``OSError: File too large``). ``cpu_s``: CPU seconds over the
    kernel's life (RLIMIT_CPU), 0: none. ``workdir_mb``: the workdir's quota, MiB; a cell that leaves more
    there gets a note saying so with its result (reported, not enforced beyond ``file_mb`` per file); 0: none.
    """

    memory_mb: int = 0
    processes: int = 512
    open_files: int = 1024
    file_mb: int = 2048
    cpu_s: int = 0
    workdir_mb: int = 4096


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed kernel may reach. Paths are host paths and appear at the same path inside.

    ``read_only``: files and directories visible read-only (besides the system: :func:`system_read_only`).
    ``writable``: directories visible read-write (the workdir, the snapshot and channel directories).
    ``network``: False gives the kernel an empty network namespace (only its own loopback). ``env``: the
    kernel's environment. ``chdir``: its working directory. ``devices``: device nodes passed through (GPUs).
    """

    read_only: tuple[str, ...]
    writable: tuple[str, ...]
    env: Mapping[str, str]
    chdir: str
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    network: bool = False
    devices: tuple[str, ...] = ()


@dataclass(frozen=True)
class SandboxSupport:
    """Whether this host can run the sandbox (probed once per process); ``missing`` says why not."""

    available: bool
    missing: str = ""
    bwrap: str | None = None
    prlimit: str | None = None


_support: SandboxSupport | None = None
_support_lock = threading.Lock()
_warned = False


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``auto``, ``required``, ``off``; ``ValueError`` naming them otherwise."""
    if mode not in MODES:
        raise ValueError(f"sandbox must be one of {', '.join(MODES)}; got {mode!r}")
    return mode


def support() -> SandboxSupport:
    """Probe once per process: Linux, ``bwrap`` and ``prlimit`` on PATH, and user namespaces that work."""
    global _support
    with _support_lock:
        if _support is None:
            _support = _probe()
        return _support


def _probe() -> SandboxSupport:
    if not sys.platform.startswith("linux"):
        return SandboxSupport(False, f"the kernel sandbox uses Linux namespaces; this is {sys.platform}")
    bwrap, prlimit = shutil.which("bwrap"), shutil.which("prlimit")
    if bwrap is None:
        return SandboxSupport(
            False, "bubblewrap is not installed (apt-get install bubblewrap, or dnf install bubblewrap)"
        )
    if prlimit is None:
        return SandboxSupport(False, "prlimit (util-linux) is not installed", bwrap)
    try:
        trial = subprocess.run(
            [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxSupport(False, f"bwrap could not run ({error})", bwrap, prlimit)
    if trial.returncode != 0:
        reason = trial.stderr.strip().splitlines()[-1] if trial.stderr.strip() else f"exit code {trial.returncode}"
        return SandboxSupport(
            False,
            f"bwrap cannot create namespaces here ({reason}); user namespaces may be "
            "disabled (sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces)",
            bwrap,
            prlimit,
        )
    return SandboxSupport(True, "", bwrap, prlimit)


def use_sandbox(mode: str) -> bool:
    """Whether a kernel started in ``mode`` runs sandboxed. ``required`` raises :class:`SandboxUnavailable`
    when it cannot; ``auto`` logs once per process what is not isolated and runs unsandboxed."""
    global _warned
    if check_mode(mode) == "off":
        return False
    found = support()
    if found.available:
        return True
    if mode == "required":
        raise SandboxUnavailable(
            f"sandbox='required' but the kernel sandbox is unavailable: {found.missing}. "
            "Install it, or pass sandbox='auto' / --sandbox auto to run without isolation"
        )
    if not _warned:
        _warned = True
        log.warning(
            "kernel sandbox unavailable (%s): model-written cells run as this user, with its files, "
            "network, processes and environment (secrets are still removed); see docs/security.md",
            found.missing,
        )
    return False


def describe(mode: str) -> dict[str, object]:
    """What trajectories and manifests record: ``{"mode", "active", "mechanism", "missing"}``."""
    active = check_mode(mode) != "off" and support().available
    record: dict[str, object] = {"mode": mode, "active": active, "mechanism": "bubblewrap" if active else None}
    if mode != "off" and not active:
        record["missing"] = support().missing
    return record


def system_read_only() -> list[str]:
    """Host paths every kernel needs read-only: the system's programs and libraries, parts of ``/etc``, the
    Python installation and virtualenv, and this project's packages (also from an editable install)."""
    paths = [p for p in _SYSTEM_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    paths += [f"/etc/{name}" for name in _ETC if os.path.exists(f"/etc/{name}")]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        paths.append(os.path.realpath(prefix))
        paths.append(prefix)
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        paths += list(spec.submodule_search_locations or []) if spec is not None else []
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.exists(p)]
    return list(dict.fromkeys(os.path.abspath(p) for p in paths))


def gpu_devices() -> list[str]:
    """NVIDIA device nodes to pass through (``/dev/nvidia*``); empty without a GPU. Untested on GPU hosts:
    the driver's libraries come with ``/usr``, which is always visible."""
    try:
        return sorted(f"/dev/{name}" for name in os.listdir("/dev") if name.startswith("nvidia"))
    except OSError:
        return []


def _system_links() -> list[str]:
    """Merged-/usr systems: ``/bin``, ``/lib``... are symlinks into ``/usr``; recreate them inside."""
    argv: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
    return argv


def bwrap_argv(policy: SandboxPolicy, bwrap: str = "bwrap") -> list[str]:
    """The ``bwrap`` options for ``policy``, up to and including the ``--`` before the command.

    Order matters (a later mount hides an earlier one): the private ``/tmp`` first, then the read-only
    trees, then the writable directories, which may lie inside ``/tmp``."""
    argv = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--dir",
        "/tmp/home",
    ]
    if policy.network:
        argv.append("--share-net")
    argv += _system_links()
    for path in dict.fromkeys([*system_read_only(), *policy.read_only]):
        argv += ["--ro-bind-try", path, path]
    for path in dict.fromkeys(policy.writable):
        argv += ["--bind", path, path]
    for device in policy.devices:
        argv += ["--dev-bind-try", device, device]
    argv += ["--clearenv"]
    for name, value in policy.env.items():
        argv += ["--setenv", name, value]
    argv += ["--chdir", policy.chdir, "--"]
    return argv


def _rlimit_argv(limits: ResourceLimits, prlimit: str, nproc: int | None) -> list[str]:
    argv = [prlimit, f"--nofile={limits.open_files}:{limits.open_files}"]
    if limits.memory_mb:
        data = limits.memory_mb * 2**20
        argv.append(f"--data={data}:{data}")
    if limits.file_mb:
        size = limits.file_mb * 2**20
        argv.append(f"--fsize={size}:{size}")
    if limits.cpu_s:
        argv.append(f"--cpu={limits.cpu_s}:{limits.cpu_s}")
    if nproc is not None:
        argv.append(f"--nproc={nproc}:{nproc}")
    return [*argv, "--"]


class ProcessCap:
    """A cap on the number of processes and threads of one sandbox.

    Where this host lets us create a pids cgroup (cgroup v1 ``pids`` or a writable v2 hierarchy) the cap is
    exact; otherwise it is RLIMIT_NPROC above the processes this user already runs (the kernel counts it per
    real user, and does not enforce it at all for root, whose sandbox then has no process cap:
    :attr:`mechanism` says which)."""

    _ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")

    def __init__(self, limit: int, name: str) -> None:
        self.limit = limit
        self.directory: Path | None = None
        for root in self._ROOTS:
            _sweep(Path(root) / "spatialclaw")
            candidate = Path(root) / "spatialclaw" / name
            try:
                candidate.mkdir(parents=True, exist_ok=False)
                (candidate / "pids.max").write_text(str(limit))
            except OSError:
                try:
                    candidate.rmdir()
                except OSError:
                    pass
                continue
            self.directory = candidate
            break

    @property
    def mechanism(self) -> str:
        if self.directory is not None:
            return "pids-cgroup"
        return "none (root is exempt from RLIMIT_NPROC)" if os.getuid() == 0 else "rlimit-nproc"

    def nproc_limit(self) -> int | None:
        """RLIMIT_NPROC for the sandbox when no cgroup caps it (None when one does, or for root)."""
        if self.directory is not None or os.getuid() == 0:
            return None
        return _user_processes() + self.limit

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the cgroup (the shell joins it, then execs; children inherit it)."""
        if self.directory is None:
            return argv
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.directory / "cgroup.procs"), *argv]

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (kill them first)."""
        directory = self.directory
        if directory is None:
            return
        try:
            for pid in (directory / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
        except OSError:
            pass
        for _ in range(50):
            try:
                directory.rmdir()
                self.directory = None
                return
            except OSError:
                time.sleep(0.02)


def _sweep(parent: Path, min_age_s: float = 120.0) -> None:
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


def _user_processes() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    return count


def launch_argv(policy: SandboxPolicy, command: Iterable[str], cap: ProcessCap | None = None) -> list[str]:
    """The full command that runs ``command`` under ``policy``: [cgroup join], prlimit, bwrap, command."""
    found = support()
    if not found.available or found.bwrap is None or found.prlimit is None:
        raise SandboxUnavailable(f"the kernel sandbox is unavailable: {found.missing}")
    nproc = cap.nproc_limit() if cap is not None else None
    argv = [*_rlimit_argv(policy.limits, found.prlimit, nproc), *bwrap_argv(policy, found.bwrap), *command]
    return cap.wrap(argv) if cap is not None else argv
