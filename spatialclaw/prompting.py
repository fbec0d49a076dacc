"""Prompt assembly: the templates in ``prompts/`` filled with the task and with an API manual that is
generated from the actual signatures and docstrings of the kernel namespace (so it cannot drift).

Templates use :class:`string.Template` placeholders (``$name``; ``$$`` is a literal dollar). The prompt
set's identity is :func:`prompt_version`: the ``VERSION`` in ``prompts/__init__.py`` plus a hash of the
templates' text, recorded in every trajectory header.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import logging
import string
from importlib import resources
from typing import Any

from spatialclaw.task import Task

__all__ = [
    "NAMESPACE_DOCS",
    "answer_rules",
    "api_section",
    "fallback_prompt",
    "prompt_version",
    "render",
    "system_prompt",
    "task_prompt",
    "template",
]

log = logging.getLogger(__name__)
_P = "spatialclaw.primitives"

# (name in the kernel, module, attribute, how it is bound) for the entries whose documentation is not
# the object the namespace holds: instances built lazily, the ``answer`` callable, the ``frames`` type.
# Every other entry (lazily imported functions and modules) is found in the namespace itself, so a
# primitive added there is documented without touching this file.
NAMESPACE_DOCS: list[tuple[str, str, str, str]] = [
    ("frames", f"{_P}.frames", "Frames", "instance"),
    ("meta", f"{_P}.namespace", "Meta", "instance"),
    ("show", f"{_P}.display", "show", "function"),
    ("answer", f"{_P}.display", "Answerer.__call__", "function"),
    ("vlm", f"{_P}.vlm", "VLMClient", "instance"),
    ("scene", f"{_P}.scene", "Scene", "instance"),
]

_LIBRARIES = (
    "`videos`: a list with one `Frames` per input when the task has several videos or image sets "
    "(`frames` is `videos[0]`).\n"
    "`np` (NumPy), `scipy`, `plt` (matplotlib.pyplot; `plt.show()` attaches the figure like `show`), "
    "`Image` (PIL.Image) are imported. Other installed packages (cv2, skimage, open3d) can be imported."
)


# templates -----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _template_text(name: str) -> str:
    try:
        return resources.files("spatialclaw.prompts").joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"prompt template {name!r} is missing from spatialclaw/prompts; reinstall spatialclaw") from None


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
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".md", ".txt")):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
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


# the API manual ------------------------------------------------------------------------------------
def _annotation(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return ""
    if isinstance(value, str):
        return value
    return getattr(value, "__qualname__", None) or str(value).replace("typing.", "")


def _signature(obj: Any, name: str) -> str:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return f"{name}(...)"
    parts: list[str] = []
    saw_keyword_only = False
    for parameter in signature.parameters.values():
        if parameter.name == "self":
            continue
        text = parameter.name
        if parameter.kind is parameter.VAR_POSITIONAL:
            text, saw_keyword_only = "*" + text, True
        elif parameter.kind is parameter.VAR_KEYWORD:
            text = "**" + text
        elif parameter.kind is parameter.KEYWORD_ONLY and not saw_keyword_only:
            parts.append("*")
            saw_keyword_only = True
        annotation = _annotation(parameter.annotation)
        if annotation:
            text += f": {annotation}"
        if parameter.default is not parameter.empty:
            text += f" = {parameter.default!r}"
        parts.append(text)
    returns = _annotation(signature.return_annotation)
    return f"{name}({', '.join(parts)})" + (f" -> {returns}" if returns and returns != "None" else "")


def _doc(obj: Any, brief: bool = False) -> str:
    """The docstring; with ``brief``, only its first paragraph (the summary)."""
    text = inspect.getdoc(obj) or "(no description)"
    return text.split("\n\n", 1)[0] if brief else text


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


def _public_members(cls: type) -> list[tuple[str, Any]]:
    members = []
    for attr, value in cls.__dict__.items():
        if attr.startswith("_") and not (attr in ("__call__", "__getitem__") and getattr(value, "__doc__", None)):
            continue
        if callable(value) or isinstance(value, (property, staticmethod, classmethod)):
            members.append((attr, value))
    return members


def _document_class(cls: type, shown_name: str, referenced: dict[str, type], brief: bool = False) -> str:
    lines = [_doc(cls, brief)]
    for attr, member in _public_members(cls):
        if isinstance(member, property):
            lines.append(f"- `.{attr}`: {_doc(member).splitlines()[0] if member.__doc__ else 'attribute'}")
            continue
        function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
        call = _signature(function, f"{shown_name}" if attr == "__call__" else f"{shown_name}.{attr}")
        _collect_returns(function, referenced)
        lines.append(f"- `{call}`\n{_indent(_doc(function, brief))}")
    return "\n".join(lines)


def _collect_returns(function: Any, referenced: dict[str, type]) -> None:
    """Remember primitives classes named in ``function``'s return annotation, to document them too."""
    annotation = getattr(function, "__annotations__", {}).get("return")
    if not isinstance(annotation, str):
        annotation = getattr(annotation, "__name__", "")
    namespace = getattr(function, "__globals__", {})
    for token in _identifiers(annotation):
        value = namespace.get(token)
        if inspect.isclass(value) and value.__module__.startswith(_P):
            referenced.setdefault(value.__name__, value)


def _identifiers(text: str) -> list[str]:
    import re

    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text or "")


def _resolve(module: Any, attribute: str) -> Any:
    value = module
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def _namespace_entries() -> list[tuple[str, str, str, str]]:
    """What to document, in the namespace's order: :data:`NAMESPACE_DOCS` where it says, else what the
    namespace of :func:`spatialclaw.primitives.namespace.build_namespace` holds (lazy functions and
    primitives modules); entries of the table missing from the namespace come last."""
    from spatialclaw.primitives.lazy import LazyCallable, LazyModule
    from spatialclaw.primitives.namespace import build_namespace

    table = {entry[0]: entry for entry in NAMESPACE_DOCS}
    entries = []
    for name, value in build_namespace().items():
        if name in table:
            entries.append(table.pop(name))
        elif isinstance(value, LazyCallable):
            entries.append((name, value._module, value._attribute, "function"))
        elif isinstance(value, LazyModule) and object.__getattribute__(value, "_lazy_name").startswith(_P):
            entries.append((name, object.__getattribute__(value, "_lazy_name"), "", "module"))
    return entries + list(table.values())


@functools.lru_cache(maxsize=2)
def api_section(detail: str = "full") -> str:
    """The manual of the kernel namespace, generated from the primitives' signatures and docstrings.

    ``detail="full"`` gives whole docstrings (about 45,000 characters); ``"brief"`` gives every signature
    with only the first paragraph of its docstring (less than half of that), for models with small
    context windows: they can still call ``help(name)`` in a cell for the rest.

    Entries whose module cannot be imported in this installation are listed as unavailable (with a
    logged warning), so the model is never told about a tool that is not there.
    """
    if detail not in ("full", "brief"):
        raise ValueError(f"detail must be 'full' or 'brief', got {detail!r}")
    brief = detail == "brief"
    blocks: list[str] = []
    missing: list[str] = []
    referenced: dict[str, type] = {}
    documented: set[str] = set()
    for name, module_name, attribute, binding in _namespace_entries():
        try:
            module = importlib.import_module(module_name)
            obj = module if binding == "module" else _resolve(module, attribute)
        except Exception as error:  # a primitive not installed or broken: say so, do not crash the agent
            log.warning("kernel API docs: %s unavailable (%s: %s)", name, type(error).__name__, error)
            missing.append(name)
            continue
        if binding == "function":
            _collect_returns(obj, referenced)
            blocks.append(f"### `{_signature(obj, name)}`\n{_doc(obj, brief)}")
        elif binding == "instance":
            documented.add(obj.__name__)
            blocks.append(f"### `{name}` ({obj.__name__})\n{_document_class(obj, name, referenced, brief)}")
        else:
            blocks.append(_document_module(obj, name, referenced, documented, brief))
    if "Frames" in documented:
        try:
            frame_class = importlib.import_module(f"{_P}.frames").Frame
            referenced.setdefault("Frame", frame_class)
        except (ImportError, AttributeError):
            pass
    blocks.append(_LIBRARIES)
    extra = [cls for key, cls in sorted(referenced.items()) if key not in documented]
    if extra:
        blocks.append("### Result types\n" + "\n\n".join(f"#### `{cls.__name__}`\n{_document_class(cls, cls.__name__, {}, brief)}" for cls in extra))
    if missing:
        blocks.append("Not available in this installation (do not call): " + ", ".join(f"`{m}`" for m in missing) + ".")
    return "\n\n".join(blocks)


def _document_module(module: Any, name: str, referenced: dict[str, type], documented: set[str], brief: bool = False) -> str:
    summary = _doc(module, brief)
    lines = [f"### `{name}` (module)\n{summary}"]
    for attr in getattr(module, "__all__", []):
        value = getattr(module, attr, None)
        if value is None:
            continue
        if inspect.isclass(value):
            documented.add(value.__name__)
            lines.append(f"#### `{name}.{attr}`\n{_document_class(value, attr, referenced, brief)}")
        elif callable(value):
            _collect_returns(value, referenced)
            lines.append(f"#### `{_signature(value, f'{name}.{attr}')}`\n{_doc(value, brief)}")
    return "\n\n".join(lines)


# prompts -------------------------------------------------------------------------------------------
def system_prompt(max_steps: int, api_detail: str = "full") -> str:
    """The system prompt: step format, conventions, the generated API manual (``api_detail``: ``"full"``
    or ``"brief"``, see :func:`api_section`), answer rules."""
    return render(
        "system.md",
        step_format=_template_text("step_format.md").strip(),
        api=api_section(api_detail),
        answer_rules=answer_rules(None),
        max_steps=max_steps,
    )


def choices_text(task: Task) -> str:
    if not task.choices:
        return ""
    return "Options:\n" + "\n".join(f"{chr(ord('A') + i)}. {choice}" for i, choice in enumerate(task.choices))


def inputs_text(task: Task) -> str:
    """One line per input: kind, how many files, sampling; the kernel names them ``frames``/``videos``."""
    lines = []
    for number, spec in enumerate(task.inputs):
        where = "`frames`" if number == 0 else f"`videos[{number}]`"
        if spec.kind == "video":
            sampling = f", sampled at {spec.fps} fps" if spec.fps else (f", {spec.count} frames sampled evenly" if spec.count else ", every frame")
            lines.append(f"Input {number + 1} ({where}): a video{sampling}.")
        else:
            lines.append(f"Input {number + 1} ({where}): {len(spec.paths)} image(s).")
    return "\n".join(lines)


def inferred_text(task: Task) -> str:
    """What was read from the question as written (:mod:`spatialclaw.question`), one line each."""
    if not task.inferred:
        return ""
    return "Read from the question as written: " + "; ".join(task.inferred) + "."


def task_prompt(task: Task, preview: str = "") -> str:
    """The first user message's text (images, if any, follow it as separate parts)."""
    return render(
        "task.md",
        question=task.question,
        choices=choices_text(task),
        inferred=inferred_text(task),
        answer_type=task.answer_type.replace("_", " "),
        answer_rules=" ".join(answer_rules(task.answer_type).split()),
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
    return render(
        "fallback.md",
        spent=spent,
        question=task.question,
        choices=choices_text(task),
        answer_hint=hints.get(task.answer_type, "a short answer"),
    )
