"""The session files the daemon writes besides the trajectory's cells: the trajectory's header and task
events, ``daemon.json`` (with ``kernel.json``, the kernel's connection file) and the rewritten prompt."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from spatialclaw.interactive.session_dir import DAEMON_FILE, PROMPT_FILE

__all__ = ["kernel_details", "rewrite_prompt", "write_daemon_file", "write_header"]


def rewrite_prompt(directory: Path, task: Any, session_id: str, info: dict[str, Any], kernel: Any) -> None:
    """Rewrite the prompt with what the kernel's learned tools reported at start (unavailable ones
    are marked, with the reason) and the kernel's own primitives (yours and installed packages')."""
    from spatialclaw.interactive.session_prompt import build_session_prompt
    from spatialclaw.kernel.own_primitives import primitive_functions

    tools = kernel.tool_status() if hasattr(kernel, "tool_status") else None
    if tools is None:
        return
    prompt = build_session_prompt(
        task,
        session_id,
        directory,
        int(info.get("max_steps") or 0),
        vlm_available=bool(info.get("vlm_model")),
        tools=tools,
        primitives=primitive_functions(kernel),
    )
    (directory / PROMPT_FILE).write_text(prompt, encoding="utf-8")


def kernel_details(directory: Path, kernel: Any) -> dict[str, Any]:
    """The kernel's pid and connection file, copied to ``DIR/kernel.json`` for other Jupyter clients."""
    details: dict[str, Any] = {"kernel_pid": getattr(kernel, "pid", None), "connection_file": None}
    source = getattr(kernel, "connection_file", None)
    if source and Path(source).exists():
        target = directory / "kernel.json"
        target.write_bytes(Path(source).read_bytes())
        os.chmod(target, 0o600)
        details["connection_file"] = str(target)
    return details


def write_daemon_file(directory: Path, socket_path: Path, started: float, kernel: Any) -> None:
    """``DIR/daemon.json``: this process, its socket, when it started and its kernel (replaced atomically)."""
    data = {"pid": os.getpid(), "socket": str(socket_path), "started": started, **kernel_details(directory, kernel)}
    tmp = directory / f".{DAEMON_FILE}.tmp"
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, directory / DAEMON_FILE)


def write_header(
    writer: Any,
    task: Any,
    session_id: str,
    info: dict[str, Any],
    max_steps: int,
    cell_timeout_s: float,
    idle_timeout_s: float,
) -> None:
    """The trajectory's ``header`` event (the session's configuration) and its ``task`` event (with the
    sha256 of every input file)."""
    import hashlib

    from spatialclaw import __version__
    from spatialclaw.interactive.session_prompt import prompt_version
    from spatialclaw.kernel.sandbox import describe
    from spatialclaw.trajectories.episode_log import FORMAT_VERSION, config_hash

    config = {
        "driver": "session",
        "max_steps": max_steps,
        "cell_timeout_s": cell_timeout_s,
        "idle_timeout_s": idle_timeout_s,
        "memory_limit_mb": info.get("memory_limit_mb"),
        "vlm_model": info.get("vlm_model"),
        "sandbox": describe(info.get("sandbox", "auto")),
    }
    writer.write(
        "header",
        format_version=FORMAT_VERSION,
        package_version=__version__,
        prompt_version=prompt_version(),
        model="session",
        config=config,
        config_hash=config_hash(config),
        session=session_id,
    )
    files = {}
    for spec in task.inputs:
        for path in spec.paths:
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            files[path] = digest.hexdigest()
    writer.write("task", task=task.to_dict(), files=files)
