"""What one sandboxed kernel needs on the host: its private directories, its staged inputs, its policy.

Layout (a fresh ``spatialclaw-sandbox-*`` directory, mode 0700, removed at shutdown)::

    connection/   kernel.json and kernel.log                  read-only inside
    channels/     the ipc sockets, vlm.sock, perception.sock   writable inside (sockets are created there)
    inputs/       the episode's frames, linked in per episode   read-only inside
    work/         the kernel's workdir, unless the caller gives one (mounted where it is)   writable inside
    snapshot/     the kernel's snapshots                       writable inside

Paths are the same inside and outside. A cell can open the folders it writes to others, never this 0700
directory above them (it is not mounted), so no other local user reaches what a cell leaves there (a set-uid
program, a Unix-socket listener).

A kernel may be started before its episode is known (a spare): its mounts are fixed at start, so each
episode's input files are hard-linked (or copied, across file systems) into ``inputs/`` and the frame
specs the kernel loads point there. Only those files are visible, never their neighbours (a benchmark's
annotation file next to its images stays out). Each staged spec carries the user's paths as
``display_paths``: the kernel opens the staged files and names the user's (in ``frames``, ``meta.sources``
and errors), so nothing it prints depends on where its sandbox lives.

The directory records its owner (``owner.json``: pid and start time of the host process). A host killed
before it could clean up leaves it behind: the next kernel started on this machine removes every such
directory whose owner is gone, and first kills what still runs from it.

Model caches are visible read-only, dataset caches never: of the Hugging Face hub only the ``models--*``
entries are bound, and ``HF_DATASETS_CACHE`` (and the hub's ``datasets--*``) are masked wherever they sit
inside something visible.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spatialclaw.kernel.sandbox import ResourceLimits, SandboxPolicy, gpu_devices, masked_paths, system_read_only
from spatialclaw.kernel.sandbox_limits import seccomp_program

__all__ = ["SandboxDirs", "sandbox_environment", "staging_base", "sweep_sandbox_dirs"]

#: Inside the sandbox: the home directory (on its private /tmp) and the perception cache, one per process.
HOME = "/tmp/home"
PRIVATE_CACHE = "/tmp/spatialclaw-cache"
PREFIX = "spatialclaw-sandbox-"
OWNER = "owner.json"
#: a directory without an owner record (an older version, or one being created) is left alone this long
UNRECORDED_AGE_S = 24 * 3600.0


def _model_caches(env: Mapping[str, str]) -> dict[str, str]:
    """Read-only model weight caches to pass through, by the variable that names them inside: the
    Hugging Face hub cache (never ``HF_HOME`` itself, which holds the token) and torch's hub."""
    home = Path.home()
    hub = env.get("HF_HUB_CACHE") or (
        str(Path(env["HF_HOME"]) / "hub") if env.get("HF_HOME") else str(home / ".cache" / "huggingface" / "hub")
    )
    torch_home = env.get("TORCH_HOME") or str(home / ".cache" / "torch")
    return {name: path for name, path in (("HF_HUB_CACHE", hub), ("TORCH_HOME", torch_home)) if os.path.isdir(path)}


def _dataset_caches(env: Mapping[str, str], hub: str | None) -> list[str]:
    """Dataset caches a sandbox must never see (masked where something visible holds them)."""
    home = Path.home()
    hf_home = env.get("HF_HOME") or str(home / ".cache" / "huggingface")
    paths = [env.get("HF_DATASETS_CACHE") or str(Path(hf_home) / "datasets")]
    if hub is not None:
        paths += [str(entry) for entry in _entries(hub) if not entry.name.startswith("models--")]
    return paths


def _entries(directory: str) -> list[Path]:
    try:
        return sorted(entry for entry in Path(directory).iterdir() if entry.is_dir())
    except OSError:
        return []


def sandbox_environment(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The kernel's environment inside the sandbox (``env`` is already free of secrets) and the model caches
    to bind read-only (the hub's ``models--*`` entries, torch's hub). The perception cache is private to the
    process (a shared writable cache would let one episode plant results for the next) unless
    ``SPATIALCLAW_CACHE=off``."""
    inside = dict(env)
    caches = _model_caches(env)
    inside.update(caches)
    inside.pop("HF_DATASETS_CACHE", None)
    inside.update(
        {
            "HOME": HOME,
            "USER": "sandbox",
            "LOGNAME": "sandbox",
            "TMPDIR": "/tmp",
            "HF_HUB_OFFLINE": "1",
            "IPYTHONDIR": f"{HOME}/.ipython",
            "SPATIALCLAW_SANDBOXED": "1",
        }
    )
    if str(env.get("SPATIALCLAW_CACHE", "")).lower() not in {"off", "0", "none", "false"}:
        inside["SPATIALCLAW_CACHE"] = PRIVATE_CACHE
    for name in (
        "JPY_PARENT_PID",
        "XDG_RUNTIME_DIR",
        "DBUS_SESSION_BUS_ADDRESS",
        "SSH_AUTH_SOCK",
        "DISPLAY",
        "PWD",
        "OLDPWD",
    ):
        inside.pop(name, None)
    hub = caches.get("HF_HUB_CACHE")
    bound = [str(entry) for entry in _entries(hub) if entry.name.startswith("models--")] if hub else []
    bound += [path for name, path in caches.items() if name != "HF_HUB_CACHE"]
    return inside, bound


class SandboxDirs:
    """The private host directories of one sandboxed kernel (see the module docstring)."""

    def __init__(self) -> None:
        sweep_sandbox_dirs()
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX))
        (self.root / OWNER).write_text(json.dumps({"pid": os.getpid(), "start": _start_time(os.getpid())}))
        self.connection = self.root / "connection"
        self.channels = self.root / "channels"
        self.inputs = self.root / "inputs"
        for directory in (self.connection, self.channels, self.inputs):
            directory.mkdir(mode=0o700)
        self.seccomp = self.root / "seccomp.bpf"
        self.seccomp.write_bytes(seccomp_program())
        self._episodes = 0

    def private(self, name: str) -> Path:
        """A new folder ``name`` for the kernel's own use (its workdir, its snapshots), mode 0700, inside
        this directory: the kernel may open the folder itself to others, never the one above it, so nothing
        it leaves there (a set-uid program, a Unix-socket listener) reaches another local user."""
        folder = self.root / name
        folder.mkdir(mode=0o700)
        return folder

    def policy(
        self,
        env: Mapping[str, str],
        workdir: Path,
        writable: list[Path],
        limits: ResourceLimits,
        readable: list[Path] | None = None,
    ) -> SandboxPolicy:
        """The policy of this kernel: its directories, ``workdir`` and ``writable`` (the snapshot directory),
        and ``readable`` host paths (model folders, datasets) read-only, with ``$SPATIALCLAW_MODELS``."""
        inside, caches = sandbox_environment(env)
        # Each readable path is visible where the caller names it and where its links lead (a dataset
        # reached through a symlinked folder is opened by either name).
        extra = list(
            dict.fromkeys(form for p in readable or [] for form in (os.path.abspath(p), str(Path(p).resolve())))
        )
        if env.get("SPATIALCLAW_MODELS") and os.path.isdir(env["SPATIALCLAW_MODELS"]):
            extra.append(env["SPATIALCLAW_MODELS"])
        read_only = (str(self.connection), str(self.inputs), *caches, *extra)
        hub = _model_caches(env).get("HF_HUB_CACHE")
        return SandboxPolicy(
            read_only=read_only,
            writable=(str(self.channels), str(workdir), *(str(p) for p in writable)),
            env=inside,
            chdir=str(workdir),
            limits=limits,
            devices=tuple(gpu_devices()),
            masked=tuple(masked_paths([*system_read_only(), *read_only], _dataset_caches(env, hub))),
            seccomp=str(self.seccomp),
            owned=(str(self.connection), str(self.inputs), str(self.channels), str(workdir), *map(str, writable)),
        )

    def stage(self, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Link the files of ``specs`` (frame spec dicts) into ``inputs/`` and return the specs pointing there,
        each with ``display_paths``: the paths as given, which the kernel shows instead of the staged ones.
        Files of the previous episode are removed first. A missing file stays as given (loading reports it)."""
        for entry in self.inputs.iterdir():
            shutil.rmtree(entry, ignore_errors=True)
        self._episodes += 1
        staged = []
        for index, spec in enumerate(specs):
            paths = [str(p) for p in spec.get("paths", [])]
            base = staging_base(paths)
            target_dir = self.inputs / f"{self._episodes}-{index}"
            moved = []
            for path in paths:
                if not os.path.isfile(path):
                    moved.append(path)
                    continue
                target = target_dir / os.path.relpath(os.path.abspath(path), base)
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    _link_or_copy(os.path.abspath(path), target)
                moved.append(str(target))
            display = spec.get("display_paths") or [os.path.abspath(p) for p in paths]
            staged.append({**spec, "paths": moved, "display_paths": list(display)})
        return staged

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def staging_base(paths: list[str]) -> str:
    """The folder that :meth:`SandboxDirs.stage` keeps the layout below: an input's files are linked at
    ``inputs/E-I/<path relative to it>`` (E the episode, I the input's position); ``""`` when none exists."""
    existing = [os.path.abspath(p) for p in paths if os.path.isfile(p)]
    return os.path.commonpath([os.path.dirname(p) for p in existing]) if existing else ""


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def _owner_alive(root: Path) -> bool:
    try:
        owner = json.loads((root / OWNER).read_text())
    except FileNotFoundError:
        return time.time() - root.stat().st_mtime < UNRECORDED_AGE_S
    except (OSError, ValueError):
        return True  # unreadable: not ours to judge
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int):
        return False
    return owner["pid"] > 0 and _start_time(owner["pid"]) == owner.get("start")


def sweep_sandbox_dirs(parent: str | None = None) -> list[Path]:
    """Remove this user's sandbox directories whose owner process is gone, after killing every process that
    still runs from one (a kernel its host could not take down). Returns the directories removed."""
    stale = []
    for root in Path(parent or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            if root.is_dir() and not root.is_symlink() and root.stat().st_uid == os.getuid() and not _owner_alive(root):
                stale.append(root)
        except OSError:
            continue
    if not stale:
        return []
    marks = [os.fsencode(f"{root}{os.sep}") for root in stale]
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if any(mark in cmdline for mark in marks):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
    for root in stale:
        shutil.rmtree(root, ignore_errors=True)
    return stale


def _link_or_copy(source: str, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or a file this user may not hard-link (fs.protected_hardlinks)
        shutil.copyfile(source, target)
