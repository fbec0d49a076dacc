"""The full prompt of a step-by-step session: the agent's system prompt (conventions, the generated
manual of the kernel namespace, answer rules) with a "How to reply" section that says how to run cells
in the session (``prompts/session.md``), followed by the task (``prompts/task.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.task import Task

__all__ = ["build_session_prompt", "prompt_version", "session_ref"]


def prompt_version() -> str:
    """The prompt set's version (recorded in the session trajectory's header)."""
    from spatialclaw.agent import prompting

    return prompting.prompt_version()


def session_ref(session_id: str, directory: str | Path) -> str:
    """How a shell command names the session: its id, plus ``--root ROOT`` when it lives outside the
    default root (``$SPATIALCLAW_SESSIONS`` or ``~/.spatialclaw/sessions``), so a copied command works."""
    import shlex

    from spatialclaw.interactive.session_dir import sessions_root

    root = Path(directory).parent
    if root.resolve() == sessions_root().resolve():
        return session_id
    return f"{session_id} --root {shlex.quote(str(root))}"


def build_session_prompt(
    task: Task,
    session_id: str,
    directory: str | Path,
    max_steps: int,
    vlm_available: bool,
    tools: dict[str, Any] | None = None,
    api_detail: str = "core",
) -> str:
    """The markdown prompt written to ``SESSION_DIR/prompt.md`` for whoever drives session ``session_id``;
    ``tools`` is the kernel's report of which learned tools can run (see ``Kernel.tool_status``)."""
    from spatialclaw.agent import prompting
    from spatialclaw.agent.kernel_docs import api_section
    from spatialclaw.primitives.runtime.conventions import CONVENTIONS

    if not vlm_available:  # listed as unavailable, its methods left out of the manual
        reason = "not available in this session (it was started without `--vlm-model`)"
        tools = {**(tools or {}), "vlm": {"available": False, "reason": reason}}
    how_to = prompting.render(
        "session.md", session_id=session_id, session_ref=session_ref(session_id, directory), directory=str(directory)
    ).strip()
    system = prompting.render(
        "system.md",
        step_format=how_to,
        conventions=CONVENTIONS,
        api=api_section(api_detail, tools),
        answer_rules=prompting.task_answer_rules(task),
        max_steps=max_steps,
    )
    return f"{system.strip()}\n\n## Your task\n\n{prompting.task_prompt(task).strip()}\n"
