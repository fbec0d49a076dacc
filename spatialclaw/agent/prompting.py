"""Prompt assembly: the templates in ``prompts/`` filled with the task and with an API manual that is
generated from the actual signatures and docstrings of the kernel namespace (so it cannot drift; see
:mod:`spatialclaw.agent.kernel_docs`).

Templates use :class:`string.Template` placeholders (``$name``; ``$$`` is a literal dollar). The prompt
set's identity is :func:`prompt_version`: the ``VERSION`` in ``prompts/__init__.py`` plus a hash of the
templates' text (``prompts/benchmarks/`` included), recorded in every trajectory header. A task whose
benchmark has an answer-format instruction (``meta["instruction"]``, a file in ``prompts/benchmarks/``) gets it
after the question (:func:`question_text`), as the paper's setting has it.
"""

from __future__ import annotations

import functools
import hashlib
import string
from importlib import resources
from typing import Any

from spatialclaw.agent.kernel_docs import api_section
from spatialclaw.agent.question_frames import frame_notes
from spatialclaw.task import Task

__all__ = [
    "answer_rules",
    "answer_rules_key",
    "fallback_prompt",
    "prompt_version",
    "question_text",
    "render",
    "system_prompt",
    "task_answer_rules",
    "task_prompt",
    "template",
]


# templates -----------------------------------------------------------------------------------------
@functools.cache
def _template_text(name: str) -> str:
    try:
        return resources.files("spatialclaw.prompts").joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"prompt template {name!r} is missing from spatialclaw/prompts; reinstall spatialclaw"
        ) from None


def template(name: str) -> string.Template:
    """The template ``prompts/NAME`` (``name`` with its extension, e.g. ``"system.md"``)."""
    return string.Template(_template_text(name))


def render(name: str, **values: Any) -> str:
    """Fill ``prompts/NAME``; a placeholder without a value is an error naming it."""
    try:
        return template(name).substitute(**values).strip() + "\n"
    except KeyError as error:
        raise KeyError(f"prompt template {name!r} needs a value for ${error.args[0]}") from None


@functools.lru_cache(maxsize=1)
def prompt_version() -> str:
    """``VERSION+hash``: the prompts package's VERSION and the first 8 hex digits of a hash of every template."""
    from spatialclaw.prompts import VERSION

    folder = resources.files("spatialclaw.prompts")
    digest = hashlib.sha256()
    entries = [(e.name, e) for e in folder.iterdir()]
    sub = folder.joinpath("benchmarks")
    if sub.is_dir():
        entries += [(f"benchmarks/{e.name}", e) for e in sub.iterdir()]
    for name, entry in sorted(entries, key=lambda pair: pair[0]):
        if name.endswith((".md", ".txt")):
            digest.update(name.encode() + b"\0" + entry.read_bytes())
    return f"{VERSION}+{digest.hexdigest()[:8]}"


def answer_rules(answer_type: str | None = None) -> str:
    """The answer rules for one answer type, or all of them (headed by type) when ``None``."""
    sections: dict[str, str] = {}
    current = None
    for line in _template_text("answer_rules.md").splitlines():
        if line.startswith("[") and line.rstrip().endswith("]"):
            current = line.strip()[1:-1]
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    if answer_type is None:
        return "\n".join(f"{kind.replace('_', ' ')}: {text.strip()}" for kind, text in sections.items())
    if answer_type not in sections:
        raise ValueError(f"no answer rules for answer type {answer_type!r}; known: {', '.join(sections)}")
    return sections[answer_type].strip()


# prompts -------------------------------------------------------------------------------------------
def system_prompt(
    max_steps: int,
    api_detail: str = "core",
    tools: dict[str, Any] | None = None,
    answer_type: str | None = None,
    primitives: dict[str, Any] | None = None,
) -> str:
    """The system prompt: step format, conventions, the generated API manual (``api_detail``: ``"core"``,
    ``"brief"`` or ``"full"``, see :func:`api_section`; ``tools``: the kernel's report of which learned
    tools can run), answer rules (only ``answer_type``'s when the episode's type is known, else all;
    ``answer_type`` may name any section of the rules, see :func:`answer_rules_key`; ``primitives``: your
    own functions the kernel binds, by name, listed in the manual).
    ``spatialclaw.agent.prompting.system_prompt(30)`` is the prompt the agent sends by default."""
    from spatialclaw.primitives.runtime.conventions import CONVENTIONS

    return render(
        "system.md",
        step_format=_template_text("step_format.md").strip(),
        conventions=CONVENTIONS,
        api=api_section(api_detail, tools, primitives),
        answer_rules=answer_rules(answer_type),
        max_steps=max_steps,
    )


def choices_text(task: Task) -> str:
    """The ``Options:`` block, or nothing when there are no choices or the question already shows them
    (``meta["options_in_question"]``: benchmarks whose published question carries its options verbatim)."""
    if not task.choices or task.meta.get("options_in_question"):
        return ""
    labels = task.option_labels or [chr(ord("A") + i) for i in range(len(task.choices))]
    return "Options:\n" + "\n".join(f"{label}. {choice}" for label, choice in zip(labels, task.choices, strict=True))


def answer_rules_key(task: Task) -> str:
    """Which section of the answer rules ``task`` follows: ``numbered_choice`` when its options are
    numbered (``task.option_labels``), ``allowed_text`` when a text answer must be one of
    ``task.allowed_answers``, else its answer type."""
    if task.option_labels and task.choices:
        return "numbered_choice"
    if task.allowed_answers and task.answer_type == "text":
        return "allowed_text"
    return task.answer_type


def task_answer_rules(task: Task) -> str:
    """The answer rules for ``task`` (:func:`answer_rules_key`), naming its allowed answers when it has them;
    for a task scored as its benchmark's reference scores it (``meta["scoring"] == "reference"``), followed by
    ``prompts/answer_as_given.md``: ``answer()`` records the value as given and the benchmark's reader scores it."""
    key = answer_rules_key(task)
    rules = answer_rules(key)
    if key == "allowed_text" and task.allowed_answers:
        rules += f" Allowed: {', '.join(task.allowed_answers)}."
    if task.meta.get("scoring") == "reference":
        rules += "\n" + _template_text("answer_as_given.md").strip()
    return rules


def _index_list(indices: list[Any], limit: int = 12) -> str:
    shown = ", ".join(str(i) for i in indices[:limit])
    return shown + (f", ... ({len(indices)} in all)" if len(indices) > limit else "")


def inputs_text(task: Task) -> str:
    """One line per input, named by where the kernel holds it (``frames`` is ``videos[0]``): the file,
    how it is sampled, and the source frame indices when they were given; then which loaded frames the
    frames and times the question names are (:func:`spatialclaw.agent.question_frames.frame_notes`)."""
    import os

    lines = []
    several = len(task.inputs) > 1
    for number, spec in enumerate(task.inputs):
        where = f"`videos[{number}]`" + (" = `frames`" if number == 0 else "") if several else "`frames`"
        if spec.kind == "video":
            if spec.indices:
                sampling = f", source frames {_index_list(spec.indices)}"
            elif spec.fps:
                sampling = f", sampled at {spec.fps:g} fps"
            else:
                sampling = f", {spec.count} frames sampled evenly" if spec.count else ", every frame"
            lines.append(f"Input {number + 1} ({where}): the video {os.path.basename(spec.paths[0])}{sampling}.")
        else:
            names = ", ".join(os.path.basename(p) for p in spec.paths[:3]) + (", ..." if len(spec.paths) > 3 else "")
            indices = f"; source frame indices {_index_list(spec.indices)}" if spec.indices else ""
            if spec.times:
                indices += "; times " + _index_list([f"{t:g} s" for t in spec.times])
            lines.append(f"Input {number + 1} ({where}): {len(spec.paths)} image(s) ({names}){indices}.")
    named = frame_notes(task)
    if named:
        lines.append("Frames the question names: " + " ".join(named))
    return "\n".join(lines)


def inferred_text(task: Task) -> str:
    """What was read from the question as written (:mod:`spatialclaw.agent.question`), one line each."""
    if not task.inferred:
        return ""
    return "Read from the question as written: " + "; ".join(task.inferred) + "."


def question_text(task: Task) -> str:
    """The question, then (after a blank line) its benchmark's instruction when the task names one."""
    name = task.meta.get("instruction")
    if not name:
        return task.question
    try:
        instruction = _template_text(f"benchmarks/{name}").strip()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"task {task.task_id!r} names the instruction prompts/benchmarks/{name}, which is missing"
        ) from None
    return f"{task.question}\n\n{instruction}" if instruction else task.question


def task_prompt(task: Task, preview: str = "") -> str:
    """The first user message's text (images, if any, follow it as separate parts)."""
    return render(
        "task.md",
        question=question_text(task),
        choices=choices_text(task),
        inferred=inferred_text(task),
        answer_type=task.answer_type.replace("_", " "),
        answer_rules=" ".join(task_answer_rules(task).split()),
        inputs=inputs_text(task),
        preview=preview,
    )


def fallback_prompt(task: Task, spent: str) -> str:
    """The request for a direct answer once a limit is reached; ``spent`` says which, as the start of a
    sentence (``"You have used all 30 steps"``)."""
    hints = {
        "multiple_choice": "the letter of one option, e.g. ANSWER: B",
        "number": "a plain number, e.g. ANSWER: 2.5",
        "yes_no": "yes or no",
        "text": "a few words",
    }
    hint = hints.get(task.answer_type, "a short answer")
    if task.option_labels and task.choices:
        hint = f"the number of one option, e.g. ANSWER: {task.option_labels[-1]}"
    elif task.allowed_answers and task.answer_type == "text":
        hint = f"one of {', '.join(task.allowed_answers)}, e.g. ANSWER: {task.allowed_answers[0]}"
    return render("fallback.md", spent=spent, question=task.question, choices=choices_text(task), answer_hint=hint)
