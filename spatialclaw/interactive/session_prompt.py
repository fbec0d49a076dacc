"""The full prompt of a step-by-step session: the agent's system prompt (conventions, the generated
manual of the kernel namespace, answer rules) with a "How to reply" section that says how to run cells
in the session (``prompts/session.md``), followed by the task (``prompts/task.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spatialclaw.task import Task

__all__ = ["MAX_PROMPT_CHARS", "build_session_prompt", "prompt_version", "session_ref"]

MAX_PROMPT_CHARS = 16_000
"""The longest session prompt built while the manual's entries can still be shortened (characters)."""
ENTRY_LIMITS = (150, 120, 100, 80, 60)
"""The lengths the manual's one-line entries are cut to (after a whole word), tried in turn."""


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
    primitives: dict[str, Any] | None = None,
) -> str:
    """The markdown prompt written to ``SESSION_DIR/prompt.md`` for whoever drives session ``session_id``;
    ``tools`` is the kernel's report of which learned tools can run (see ``Kernel.tool_status``);
    ``primitives`` the kernel's own functions by name, listed after the built-in ones. With the
    ``"core"`` manual it stays within ``MAX_PROMPT_CHARS``: the manual's one-line entries are cut shorter
    (after a whole word, ending " …") until it fits."""
    from spatialclaw.agent import prompting
    from spatialclaw.agent.kernel_docs import api_section
    from spatialclaw.primitives.runtime.conventions import CONVENTIONS

    if not vlm_available:  # listed as unavailable, its methods left out of the manual
        reason = "not available in this session (it was started without `--vlm-model`)"
        tools = {**(tools or {}), "vlm": {"available": False, "reason": reason}}
    how_to = prompting.render(
        "session.md", session_id=session_id, session_ref=session_ref(session_id, directory), directory=str(directory)
    ).strip()
    task_part = f"\n\n## Your task\n\n{prompting.task_prompt(task).strip()}\n"
    prompt = ""
    for entry_chars in ENTRY_LIMITS:  # the manual's one-line entries shortened until the prompt fits
        system = prompting.render(
            "system.md",
            step_format=how_to,
            conventions=CONVENTIONS,
            api=api_section(api_detail, tools, primitives, entry_chars=entry_chars),
            answer_rules=prompting.task_answer_rules(task),
            max_steps=max_steps,
        )
        prompt = system.strip() + task_part
        if len(prompt) <= MAX_PROMPT_CHARS or api_detail != "core":
            break
    return prompt
