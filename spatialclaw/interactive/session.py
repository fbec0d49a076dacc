"""Step-by-step sessions: a persistent spatial kernel that any harness drives one cell at a time.

A session is a directory under :func:`~spatialclaw.interactive.session_dir.sessions_root` (``$SPATIALCLAW_SESSIONS`` or
``~/.spatialclaw/sessions``) and a small daemon process (:mod:`spatialclaw.interactive.daemon`) that owns
one :class:`spatialclaw.Kernel` and serves requests over a Unix socket. The daemon outlives the command
that started it, so separate shell commands (``spatialclaw session exec``), an MCP server or a Python
program can all drive the same kernel. The daemon is the only writer of the session's trajectory.

The session directory and its files are :mod:`spatialclaw.interactive.session_dir`; the client handle and the
wire protocol are :mod:`spatialclaw.interactive.session_client`; this module starts and lists sessions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from spatialclaw.interactive.session_client import Session, positive_number
from spatialclaw.interactive.session_dir import (
    LOG_FILE,
    PROMPT_FILE,
    SESSION_FILE,
    SessionError,
    check_session_id,
    is_session_directory,
    new_session_id,
    resolve_root,
    socket_path_for,
    write_private,
)
from spatialclaw.task import Task

__all__ = ["DEFAULT_VLM_TOKENS", "list_sessions", "start_session"]

DEFAULT_VLM_TOKENS = 200_000
"""The tokens a session's ``vlm.*`` calls may spend in all unless ``vlm_max_tokens`` says otherwise: a client
(an MCP tool call) may choose the model, billed to the operator's key, so a session is never unbounded by default."""


def _check_sandbox(mode: str) -> None:
    """A valid sandbox mode, and for ``required`` a sandbox this machine has (before anything starts)."""
    from spatialclaw.kernel.sandbox import check_mode, support

    try:
        check_mode(mode)
    except ValueError as exc:
        raise SessionError(f"{exc} (--sandbox)") from None
    if mode == "required" and not support().available:
        raise SessionError(
            f"--sandbox required, but the kernel sandbox is unavailable here: {support().missing}; "
            "install it or use --sandbox auto"
        )


def list_sessions(root: str | Path | None = None) -> list[Session]:
    """All sessions under the root, oldest first."""
    base = resolve_root(root)
    if not base.is_dir():
        return []
    return [Session(p) for p in sorted(base.iterdir()) if is_session_directory(p)]


def start_session(
    task: Task,
    *,
    root: str | Path | None = None,
    session_id: str | None = None,
    max_steps: int = 30,
    cell_timeout_s: float = 120.0,
    idle_timeout_s: float = 6 * 3600.0,
    memory_limit_mb: int | None = None,
    vlm_model: str | None = None,
    vlm_api_key_env: str | None = None,
    vlm_max_tokens: int | None = DEFAULT_VLM_TOKENS,
    vlm_max_cost_usd: float | None = None,
    sandbox: str = "auto",
    start_timeout_s: float = 180.0,
    primitives: Mapping[str, str] | None = None,
) -> Session:
    """Create a session directory, write its prompt and start its daemon; returns when the kernel is ready.

    ``max_steps`` is the step budget stated in the prompt and enforced by the daemon (``answer`` is
    always allowed); ``cell_timeout_s`` is the default per-cell limit in seconds; the daemon closes itself (writing
    the trajectory's ``end`` event with reason ``idle``) after ``idle_timeout_s`` seconds without a
    request, so a forgotten session does not hold a kernel forever. ``vlm_model`` (a model spec) is
    what the kernel's ``vlm.ask``/``vlm.locate`` consult; without it they raise a clear error. Its
    credentials come from this process's environment and stay in the daemon: ``openai:``/``anthropic:``
    use their usual key for their usual endpoint; an ``openai-compat:`` URL gets a key only from the
    environment variable named by ``vlm_api_key_env`` (never ``OPENAI_API_KEY``, and not
    ``$SPATIALCLAW_COMPAT_API_KEY`` implicitly, since a client may have chosen the URL). Those calls spend at
    most ``vlm_max_tokens`` tokens (prompt plus completion, :data:`DEFAULT_VLM_TOKENS` unless given; None: no
    limit) and ``vlm_max_cost_usd`` US dollars (a model with a known price) over the whole session; a call that
    does not fit is refused and the cell's ``vlm.ask`` raises the reason.
    ``sandbox`` (``auto``, ``required``, ``off``) is the kernel's isolation (:class:`spatialclaw.Kernel`):
    sandboxed, a cell sees its frames and its workdir but no session directory (its own or another's).
    Limits must be positive and finite (a one-line :class:`SessionError` otherwise). ``primitives``: your own
    functions bound in the kernel and listed in the prompt, ``{"name": "path/to/file.py:function"}`` or
    ``{"name": "package.module:function"}`` (:class:`spatialclaw.Kernel`); a missing file is named here.
    """
    max_steps = int(positive_number("max_steps (--max-steps)", max_steps, integer=True))
    cell_timeout_s = positive_number("cell_timeout_s (--cell-timeout, seconds)", cell_timeout_s)
    idle_timeout_s = positive_number("idle_timeout_s (--idle-timeout, seconds)", idle_timeout_s)
    start_timeout_s = positive_number("start_timeout_s (seconds)", start_timeout_s)
    if vlm_max_tokens is not None:
        vlm_max_tokens = int(positive_number("vlm_max_tokens (--vlm-max-tokens)", vlm_max_tokens, integer=True))
    if vlm_max_cost_usd is not None:
        vlm_max_cost_usd = positive_number("vlm_max_cost_usd (--vlm-max-cost, USD)", vlm_max_cost_usd)
    if memory_limit_mb is not None:
        try:
            memory_limit_mb = int(
                positive_number("memory_limit_mb (--memory-limit-mb, MiB)", memory_limit_mb, integer=True)
            )
        except SessionError as exc:
            raise SessionError(
                f"{exc} (for no cap at all, leave it out and set SPATIALCLAW_KERNEL_MEMORY_MB=0)"
            ) from None
    if session_id is not None:
        check_session_id(session_id)
    _check_sandbox(sandbox)
    from spatialclaw.kernel.own_primitives import absolute_file_targets

    primitives = absolute_file_targets(primitives or {})  # the daemon starts elsewhere: files by absolute path
    if not task.inputs:
        raise SessionError("a session needs frames: give --frames IMAGE... or --video PATH")
    for spec in task.inputs:
        missing = [p for p in spec.paths if not Path(p).exists()]
        if missing:
            raise SessionError(f"input file(s) not found: {', '.join(missing)}")
    base = resolve_root(root)
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    session_id = session_id or new_session_id()
    directory = base / session_id
    try:
        directory.mkdir(mode=0o700)
        os.chmod(directory, 0o700)  # whatever the umask: other users see nothing of a session
    except FileExistsError:
        raise SessionError(f"session {session_id!r} already exists in {base}; choose another id") from None

    from spatialclaw.interactive.session_prompt import build_session_prompt

    prompt = build_session_prompt(task, session_id, directory, max_steps, vlm_available=bool(vlm_model))
    write_private(directory / PROMPT_FILE, prompt)
    info = {
        "id": session_id,
        "created": time.time(),
        "task": task.to_dict(),
        "max_steps": int(max_steps),
        "cell_timeout_s": float(cell_timeout_s),
        "idle_timeout_s": float(idle_timeout_s),
        "memory_limit_mb": memory_limit_mb,
        "vlm_model": vlm_model,
        "vlm_api_key_env": vlm_api_key_env,
        "vlm_limits": {"tokens": vlm_max_tokens, "cost_usd": vlm_max_cost_usd},
        "sandbox": sandbox,
        "primitives": primitives,
        "socket": str(socket_path_for(directory)),
    }
    write_private(directory / SESSION_FILE, json.dumps(info, indent=2, default=str))

    try:
        launcher = subprocess.run(
            [
                sys.executable,
                "-m",
                "spatialclaw.interactive.daemon",
                str(directory),
                "--start-timeout",
                str(start_timeout_s),
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=start_timeout_s + 15.0,
        )
    except subprocess.TimeoutExpired:
        raise SessionError(
            f"session {session_id} did not become ready within {start_timeout_s} s; see {directory / LOG_FILE}"
        ) from None
    if launcher.returncode != 0:
        detail = (launcher.stderr or launcher.stdout).strip()
        raise SessionError(
            f"session {session_id} failed to start: {detail or 'no message'}; see {directory / LOG_FILE}"
        )
    return Session(directory)
