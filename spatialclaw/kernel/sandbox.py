"""The kernel sandbox: a policy as data, turned into one ``bwrap`` (bubblewrap) command line on Linux.

A :class:`SandboxPolicy` lists what a sandboxed kernel may read (``read_only``), what it may write
(``writable``), whether it has a network (never, today) and its hard resource limits. :func:`launch_argv`
turns it into the command that starts the kernel: resource limits set before exec (soft = hard, so a cell
cannot raise them), a process-count cap, then ``bwrap`` with its own user, PID, IPC, UTS, cgroup and
network namespaces, a private ``/tmp``, a fresh ``/proc`` that shows only the sandbox's processes, and
nothing else of the host filesystem (the root, ``/dev`` and masked paths read-only, ``/tmp`` and ``/dev/shm``
size-limited). The caps that live on the host (cgroups, a fresh uid for root, the seccomp filter) are
:mod:`spatialclaw.kernel.sandbox_limits`. Benchmark code and data are never mounted.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from spatialclaw.kernel.sandbox_limits import SECCOMP_FD, HostCaps, traversable

__all__ = [
    "MODES",
    "HostCaps",
    "ResourceLimits",
    "SandboxPolicy",
    "SandboxSupport",
    "SandboxUnavailable",
    "check_mode",
    "describe",
    "host_caps",
    "launch_argv",
    "masked_paths",
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
# Host packages of this project whose source may live outside site-packages (an editable install). The
# benchmarks (code that regenerates scenes, scores answers, reads ground truth) are never among them, and
# are hidden where they sit inside a mounted tree (a non-editable install): _HIDDEN_PACKAGES.
_PACKAGES = ("spatialclaw", "spatialclaw.primitives", "spatialclaw.prompts")
_HIDDEN_PACKAGES = ("spatialclaw.benchmarks",)


class SandboxUnavailable(RuntimeError):
    """``sandbox="required"`` on a platform (or host) where the kernel sandbox cannot run."""


@dataclass(frozen=True)
class ResourceLimits:
    """Hard limits of a sandboxed kernel, set before exec with soft = hard.

    ``memory_mb``: MiB, 0: none; the whole sandbox's memory (a memory cgroup where the host can create one)
    and always each process's private mappings (RLIMIT_DATA); ``/tmp`` holds at most ``memory_mb`` and
    ``/dev/shm`` a quarter of it. ``processes``: processes and threads of the whole sandbox (a pids cgroup
    where the host can create one, else RLIMIT_NPROC, as a fresh uid when the host runs as root).
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
    ``masked``: paths inside the read-only trees hidden by an empty read-only tmpfs. ``seccomp``: a file
    with the seccomp program (:func:`~spatialclaw.kernel.sandbox_limits.seccomp_program`); None: none.
    ``owned``: the kernel's own directories, handed to its uid where it runs as one of its own.
    """

    read_only: tuple[str, ...]
    writable: tuple[str, ...]
    env: Mapping[str, str]
    chdir: str
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    network: bool = False
    devices: tuple[str, ...] = ()
    masked: tuple[str, ...] = ()
    seccomp: str | None = None
    owned: tuple[str, ...] = ()


@dataclass(frozen=True)
class SandboxSupport:
    """Whether this host can run the sandbox (probed once per process); ``missing`` says why not."""

    available: bool
    missing: str = ""
    bwrap: str | None = None
    prlimit: str | None = None
    setpriv: str | None = None


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
    return SandboxSupport(True, "", bwrap, prlimit, shutil.which("setpriv"))


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
        paths += _package_locations(name)
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.exists(p)]
    hidden = {os.path.abspath(p) for name in _HIDDEN_PACKAGES for p in _package_locations(name)}
    return [p for p in dict.fromkeys(os.path.abspath(p) for p in paths) if p not in hidden]


def _package_locations(name: str) -> list[str]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec is not None else []


def masked_paths(read_only: Iterable[str], hidden: Iterable[str] = ()) -> list[str]:
    """Directories inside the ``read_only`` trees that a sandbox must not see: the benchmark packages (a
    non-editable install puts them inside site-packages) and ``hidden`` (dataset caches)."""
    trees = [os.path.abspath(p) for p in read_only]
    candidates = [p for name in _HIDDEN_PACKAGES for p in _package_locations(name)] + list(hidden)
    return [
        path
        for path in dict.fromkeys(os.path.abspath(p) for p in candidates)
        if os.path.isdir(path) and any(path == tree or path.startswith(tree + os.sep) for tree in trees)
    ]


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


def bwrap_argv(
    policy: SandboxPolicy, bwrap: str = "bwrap", seccomp_fd: int = SECCOMP_FD, uid: int | None = None
) -> list[str]:
    """The ``bwrap`` options for ``policy``, up to and including the ``--`` before the command.

    Order matters (a later mount hides an earlier one): the private ``/tmp`` first, then the read-only
    trees, the masks over parts of them, then the writable directories, which may lie inside ``/tmp``;
    last, the root and ``/dev`` become read-only (bwrap builds them as tmpfs a cell could fill), and so
    does ``/proc``: its global files (``/proc/sys``, ``/proc/sysrq-trigger``) check the uid, not a
    capability, and root's sandbox is uid 0 of the host. Every mount bwrap makes is ``nosuid`` and, but
    for device files, ``nodev``; no capability is kept (``--cap-drop ALL``; bwrap keeps them all for a
    sandbox uid 0).

    With ``uid`` (root's sandbox without a pids cgroup) bwrap, as root, builds the namespaces but no user
    namespace (its single mapping would keep the kernel root outside, exempt from RLIMIT_NPROC), and the
    command runs as ``uid`` (``setpriv``, then without any capability); the seccomp filter then refuses
    new user namespaces, and the directories bwrap creates are made traversable."""
    memory = policy.limits.memory_mb * 2**20
    if uid is None:  # as root the sandbox's uid 0 is the host's: no capability may stay with it
        namespaces = ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    else:
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        namespaces += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    open_ = ["--perms", "1777"] if uid is not None else []
    argv = [
        bwrap,
        *namespaces,
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        *(["--size", str(max(memory // 4, 64 * 2**20))] if memory else []),
        *open_,
        "--tmpfs",
        "/dev/shm",
        *(["--size", str(memory)] if memory else []),
        *open_,
        "--tmpfs",
        "/tmp",
        *open_,
        "--dir",
        "/tmp/home",
    ]
    if policy.network:
        argv.append("--share-net")
    argv += _system_links()
    read_only = list(dict.fromkeys([*system_read_only(), *policy.read_only]))
    if uid is not None:
        argv += traversable([*read_only, *policy.writable, *policy.masked], _SYSTEM_DIRS)
    for path in read_only:
        argv += ["--ro-bind-try", path, path]
    for path in dict.fromkeys(policy.masked):
        argv += ["--perms", "0555", "--size", "4096", "--tmpfs", path, "--remount-ro", path]
    for path in dict.fromkeys(policy.writable):
        argv += ["--bind", path, path]
    for device in policy.devices:
        argv += ["--dev-bind-try", device, device]
    argv += ["--remount-ro", "/proc", "--remount-ro", "/dev", "--remount-ro", "/"]
    if policy.seccomp is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--clearenv"]
    for name, value in policy.env.items():
        argv += ["--setenv", name, value]
    argv += ["--chdir", policy.chdir, "--"]
    if uid is not None:
        setpriv = support().setpriv or "setpriv"
        argv += [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
        argv += ["--bounding-set=-all", "--"]
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


def host_caps(policy: SandboxPolicy, name: str, uid: int | None = None) -> HostCaps:
    """The host-side caps of a sandbox about to start under ``policy`` (cgroups, a fresh uid for root, or
    ``uid``: the one this kernel had before a restart)."""
    return HostCaps(policy.limits.processes, policy.limits.memory_mb, name, support().setpriv, uid)


def launch_argv(policy: SandboxPolicy, command: Iterable[str], caps: HostCaps | None = None) -> list[str]:
    """The full command that runs ``command`` under ``policy``: [cgroup join, seccomp fd], prlimit,
    bwrap, [setpriv], command. With ``caps`` the seccomp program is opened here (``caps.fds``: pass them
    to the process, then ``caps.close_fds()``)."""
    found = support()
    if not found.available or found.bwrap is None or found.prlimit is None:
        raise SandboxUnavailable(f"the kernel sandbox is unavailable: {found.missing}")
    nproc = caps.nproc_limit() if caps is not None else None
    if caps is not None:
        seccomp_fd = caps.open_seccomp(policy.seccomp) if policy.seccomp else SECCOMP_FD
        bwrap = bwrap_argv(policy, found.bwrap, seccomp_fd, caps.uid)
        return caps.wrap([*_rlimit_argv(policy.limits, found.prlimit, nproc), *bwrap, *command])
    argv = [*_rlimit_argv(policy.limits, found.prlimit, nproc), *bwrap_argv(policy, found.bwrap), *command]
    if policy.seccomp is not None:
        return ["/bin/sh", "-c", f'exec {SECCOMP_FD}< "$0" && exec "$@"', policy.seccomp, *argv]
    return argv
