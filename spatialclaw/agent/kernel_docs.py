"""The kernel's API manual for the system prompt, generated from the actual signatures and docstrings of
the kernel namespace (so it cannot drift): :func:`api_section` in three tiers (``core``, ``brief``, ``full``).

The entries come from :func:`_namespace_entries` (the namespace of
:func:`spatialclaw.primitives.runtime.namespace.build_namespace`, with :data:`NAMESPACE_DOCS` for the entries
whose documentation is not the object the namespace holds).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import logging
import re
from typing import Any

from spatialclaw.primitives.runtime.manual import parameter_choices

__all__ = ["API_DETAILS", "NAMESPACE_DOCS", "api_section"]

log = logging.getLogger(__name__)
_P = "spatialclaw.primitives"

# (name in the kernel, module, attribute, how it is bound) for the entries whose documentation is not
# the object the namespace holds: instances built lazily, the ``answer`` callable, the ``frames`` type.
# Every other entry (lazily imported functions and modules) is found in the namespace itself, so a
# primitive added there is documented without touching this file.
NAMESPACE_DOCS: list[tuple[str, str, str, str]] = [
    ("frames", f"{_P}.frames.frame", "Frames", "instance"),
    ("meta", f"{_P}.runtime.namespace", "Meta", "instance"),
    ("show", f"{_P}.display.show", "show", "function"),
    ("answer", f"{_P}.display.show", "Answerer.__call__", "function"),
    ("vlm", f"{_P}.perception.vlm", "VLMClient", "instance"),
    ("scene", f"{_P}.scene.memory", "Scene", "instance"),
]

_LIBRARIES = (
    "`videos`: a list with one `Frames` per input when the task has several videos or image sets "
    "(`frames` is `videos[0]`).\n"
    "`np` (NumPy), `scipy`, `plt` (matplotlib.pyplot; `plt.show()` attaches the figure like `show`), "
    "`Image` (PIL.Image) are imported. Other installed packages (cv2, skimage, open3d) can be imported."
)


# the API manual ------------------------------------------------------------------------------------
def _annotation(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return ""
    if isinstance(value, str):
        return value
    return getattr(value, "__qualname__", None) or str(value).replace("typing.", "")


#: Characters of parameters a short signature shows before "...": the rest is one ``manual(...)`` away.
SHORT_PARAMETERS = 72


def _shortened(parts: list[str]) -> list[str]:
    """Keep the required parameters, those with a fixed set of values and the first defaults within
    ``SHORT_PARAMETERS`` characters; the rest become one ``...``."""
    if len(", ".join(parts)) <= SHORT_PARAMETERS:
        return parts
    kept: list[str] = []
    dropped = False
    for part in parts:
        essential = "=" not in part or ": " in part or part in ("*",) or part.startswith("*")
        if essential or len(", ".join([*kept, part])) <= SHORT_PARAMETERS:
            kept.append(part)
        else:
            dropped = True
    if dropped:
        kept.append("...")
    while kept and kept[-2:-1] == ["*"]:  # a bare * before the ellipsis says nothing
        kept.pop(-2)
    return kept


def _signature(obj: Any, name: str, annotations: bool = True) -> str:
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
        choices = parameter_choices(obj, parameter)
        if choices is not None:  # a fixed set of values, the default first: ``contrast: None|'auto'``
            text += f": {'|'.join(map(repr, choices))}"
            parts.append(
                text + (f" = {parameter.default!r}" if annotations and parameter.default is not parameter.empty else "")
            )
            continue
        annotation = _annotation(parameter.annotation) if annotations else ""
        if annotation:
            text += f": {annotation}"
        if parameter.default is not parameter.empty:
            text += f" = {parameter.default!r}" if annotation else f"={parameter.default!r}"
        parts.append(text)
    if not annotations:
        parts = _shortened(parts)
    returns = _annotation(signature.return_annotation)
    if not annotations and returns and returns != "None":  # the short form keeps the result type's name
        returns = _identifiers(returns)[0] if _identifiers(returns) and returns[0].isupper() else returns
    return f"{name}({', '.join(parts)})" + (f" -> {returns}" if returns and returns != "None" else "")


def _doc(obj: Any, brief: bool = False) -> str:
    """The docstring; with ``brief``, only its first paragraph (the summary)."""
    text = inspect.getdoc(obj) or "(no description)"
    return text.split("\n\n", 1)[0] if brief else text


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


def _public_members(cls: type) -> list[tuple[str, Any]]:
    """The class's own public members, then those of its bases defined in this package (mixins such as the
    scene's views and compass methods), each name once."""
    members: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for klass in (k for k in cls.__mro__ if k is cls or k.__module__.startswith("spatialclaw")):
        for attr, value in klass.__dict__.items():
            if attr in seen:
                continue
            if attr.startswith("_") and not (attr in ("__call__", "__getitem__") and getattr(value, "__doc__", None)):
                continue
            if callable(value) or isinstance(value, (property, staticmethod, classmethod)):
                seen.add(attr)
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
        annotation = str(getattr(annotation, "__name__", ""))
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
    namespace of :func:`spatialclaw.primitives.runtime.namespace.build_namespace` holds (lazy functions and
    primitives modules); entries of the table missing from the namespace come last."""
    from spatialclaw.primitives.runtime.lazy import LazyCallable, LazyModule
    from spatialclaw.primitives.runtime.namespace import build_namespace

    table = {entry[0]: entry for entry in NAMESPACE_DOCS}
    entries = []
    for name, value in build_namespace(check_tools=False).items():
        if name in table:
            entries.append(table.pop(name))
        elif isinstance(value, LazyCallable):
            entries.append((name, value._module, value._attribute, "function"))
        elif isinstance(value, LazyModule) and object.__getattribute__(value, "_lazy_name").startswith(_P):
            entries.append((name, object.__getattribute__(value, "_lazy_name"), "", "module"))
    return entries + list(table.values())


API_DETAILS = ("core", "brief", "full")


def _first_sentence(obj: Any, limit: int | None = None) -> str:
    """The first sentence of a docstring, on one line, cut after a whole word at ``limit`` characters
    (default ``ENTRY_CHARS``)."""
    limit = limit or ENTRY_CHARS
    text = " ".join(_doc(obj, brief=True).split())
    match = re.match(r"(.+?[.!?])(?:\s|$)", text)
    sentence = match.group(1) if match else text
    return sentence if len(sentence) <= limit else _cut_at_word(sentence, limit)


ENTRY_CHARS = 150
"""The longest first sentence an entry of the short manual shows; a longer one is cut after a whole word."""


def _cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters after its last whole word, never inside a ``code``
    span, ending in " …"."""
    cut = text[: limit - 2]
    if not text[limit - 2 : limit - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    cut = cut.rstrip(" ,;:(")
    if cut.count("``") % 2:  # an unclosed ``code`` span: end before it
        cut = cut[: cut.rfind("``")].rstrip(" ,;:(")
    elif cut.count("`") % 2:
        cut = cut[: cut.rfind("`")].rstrip(" ,;:(")
    return cut + " …"


def _core_class(cls: type, shown_name: str, limit: int) -> list[str]:
    lines = []
    for attr, member in _public_members(cls):
        if isinstance(member, property):
            lines.append(
                f"  - `{shown_name}.{attr}`: {_first_sentence(member, limit) if member.__doc__ else 'attribute'}"
            )
            continue
        function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
        call = _signature(function, shown_name if attr == "__call__" else f"{shown_name}.{attr}", annotations=False)
        lines.append(f"  - `{call}`: {_first_sentence(function, limit)}")
    return lines


def _down(tools: dict[str, Any] | None) -> set[str]:
    """Names the kernel reported as unavailable (their members are not listed: they cannot be called)."""
    return {
        n for n, v in (tools or {}).items() if not (v if isinstance(v, dict) else v.to_dict()).get("available", True)
    }


def _core_section(
    entries: list[tuple[str, Any, str]], down: frozenset[str] = frozenset(), limit: int | None = None
) -> str:
    """One line per namespace entry (signature + first sentence), members of modules and instances
    indented under them; result types named, their docs one ``manual(...)`` away."""
    lines = [
        "Every name below is defined in the kernel. This is the short form: `manual('name')` (e.g. "
        "`manual('reconstruct')`, `manual('geom.distance')`, `manual('DepthResult')`) or `help(name)` in a "
        "cell prints the full documentation with units, frames and examples; read it before relying on details. "
        "`p: 'a'|'b'`: the only values p takes, default first."
    ]
    referenced: dict[str, type] = {}
    documented: set[str] = set()
    for name, obj, binding in entries:
        if binding == "function":
            _collect_returns(obj, referenced)
            lines.append(f"- `{_signature(obj, name, annotations=False)}`: {_first_sentence(obj, limit)}")
        elif binding == "instance" and name in down:
            documented.add(obj.__name__)
            lines.append(f"- `{name}` ({obj.__name__}): UNAVAILABLE here, do not call (see below)")
        elif binding == "instance":
            documented.add(obj.__name__)
            lines.append(f"- `{name}` ({obj.__name__}): {_first_sentence(obj, limit)}")
            lines.extend(_core_class(obj, name, limit or ENTRY_CHARS))
            for _, member in _public_members(obj):
                function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                if not isinstance(member, property):
                    _collect_returns(function, referenced)
        else:
            lines.append(f"- `{name}` (module): {_first_sentence(obj, limit)}")
            for attr in getattr(obj, "__all__", []):
                value = getattr(obj, attr, None)
                if inspect.isclass(value):
                    documented.add(value.__name__)
                    lines.append(f"  - `{name}.{attr}` (class): {_first_sentence(value, limit)}")
                elif callable(value):
                    _collect_returns(value, referenced)
                    lines.append(
                        f"  - `{_signature(value, f'{name}.{attr}', annotations=False)}`: "
                        f"{_first_sentence(value, limit)}"
                    )
    from spatialclaw.primitives.runtime import namespace as kernel_namespace

    named = set(getattr(kernel_namespace, "RESULT_TYPES", {}))  # result classes that are kernel names too
    extra = sorted(key for key in set(referenced) | named if key not in documented)
    if extra:
        lines.append(
            "Result types (attributes and methods: `manual('TypeName')`): " + ", ".join(f"`{k}`" for k in extra) + "."
        )
    return "\n".join(lines)


def _unavailable_text(tools: dict[str, Any] | None) -> str:
    """Lines for learned tools that cannot run here (and partial ones), as the kernel reported them."""
    if not tools:
        return ""
    lines = []
    for name, status in sorted(tools.items()):
        status = status if isinstance(status, dict) else status.to_dict()
        if not status.get("available", True):
            lines.append(f"- `{name}` is UNAVAILABLE here (calling it fails at once): {status.get('reason')}")
        elif status.get("note"):
            backend = f" (backend {status['backend']})" if status.get("backend") else ""
            lines.append(f"- `{name}`{backend}: {status['note']}")
    return ("Learned tools in this installation:\n" + "\n".join(lines)) if lines else ""


def api_section(
    detail: str = "core",
    tools: dict[str, Any] | None = None,
    primitives: dict[str, Any] | None = None,
    entry_chars: int = 0,
) -> str:
    """The manual of the kernel namespace, generated from the primitives' signatures and docstrings.

    ``detail="core"`` (the default) lists every entry of the namespace with its signature and one line
    (under 12,000 characters); the kernel's ``manual(name)`` and ``help(name)`` give the rest on demand.
    ``"brief"`` gives every signature with the first paragraph of its docstring; ``"full"`` whole
    docstrings (about 45,000 characters). ``tools`` is what the kernel reported at start (see
    :func:`spatialclaw.primitives.perception.availability.tool_status`): learned tools that cannot run are listed as
    unavailable with the reason.

    Entries whose module cannot be imported in this installation are listed as unavailable (with a
    logged warning), so the model is never told about a tool that is not there. ``primitives``: your own
    functions the kernel binds, by name (:mod:`spatialclaw.kernel.own_primitives`), listed after the rest.
    ``entry_chars``: the longest line of a ``"core"`` entry's text (0: ``ENTRY_CHARS``), cut after a word.
    """
    if detail not in API_DETAILS:
        raise ValueError(f"detail must be one of {', '.join(API_DETAILS)}, got {detail!r}")
    key = (
        None
        if tools is None
        else json.dumps({k: (v if isinstance(v, dict) else v.to_dict()) for k, v in tools.items()}, sort_keys=True)
    )
    return _api_section(detail, key, entry_chars or ENTRY_CHARS) + _own_section(detail, primitives or {})


def _own_section(detail: str, primitives: dict[str, Any]) -> str:
    """Your own primitives, each with its signature and (by ``detail``) its first sentence or docstring."""
    if not primitives:
        return ""
    lines = ["", "Your own primitives (bound in the kernel):"]
    for name, function in primitives.items():
        text = _first_sentence(function) if detail == "core" else _doc(function, brief=detail == "brief")
        lines.append(f"- `{_signature(function, name)}`: {text}")
    return "\n".join(lines)


@functools.lru_cache(maxsize=8)
def _api_section(detail: str, tools_key: str | None, entry_chars: int = 0) -> str:
    """:func:`api_section` for a hashable tool report (its JSON), cached per detail and report."""
    tools = json.loads(tools_key) if tools_key else None
    brief = detail == "brief"
    blocks: list[str] = []
    missing: list[str] = []
    referenced: dict[str, type] = {}
    documented: set[str] = set()
    resolved: list[tuple[str, Any, str]] = []
    for name, module_name, attribute, binding in _namespace_entries():
        try:
            module = importlib.import_module(module_name)
            obj = module if binding == "module" else _resolve(module, attribute)
        except Exception as error:  # a primitive not installed or broken: say so, do not crash the agent
            log.warning("kernel API docs: %s unavailable (%s: %s)", name, type(error).__name__, error)
            missing.append(name)
            continue
        resolved.append((name, obj, binding))
    unavailable = _unavailable_text(tools)
    if detail == "core":
        blocks = [_core_section(resolved, frozenset(_down(tools)), entry_chars or ENTRY_CHARS), _LIBRARIES]
        if unavailable:
            blocks.append(unavailable)
        if missing:
            blocks.append(
                "Not available in this installation (do not call): " + ", ".join(f"`{m}`" for m in missing) + "."
            )
        return "\n\n".join(blocks)
    for name, obj, binding in resolved:
        if binding == "function":
            _collect_returns(obj, referenced)
            blocks.append(f"### `{_signature(obj, name)}`\n{_doc(obj, brief)}")
        elif binding == "instance" and name in _down(tools):
            documented.add(obj.__name__)
            blocks.append(f"### `{name}` ({obj.__name__})\nUNAVAILABLE here, do not call (see below).")
        elif binding == "instance":
            documented.add(obj.__name__)
            blocks.append(f"### `{name}` ({obj.__name__})\n{_document_class(obj, name, referenced, brief)}")
        else:
            blocks.append(_document_module(obj, name, referenced, documented, brief))
    if "Frames" in documented:
        try:
            frame_class = importlib.import_module(f"{_P}.frames.frame").Frame
            referenced.setdefault("Frame", frame_class)
        except (ImportError, AttributeError):
            pass
    blocks.append(_LIBRARIES)
    extra = [cls for key, cls in sorted(referenced.items()) if key not in documented]
    if extra:
        blocks.append(
            "### Result types\n"
            + "\n\n".join(f"#### `{cls.__name__}`\n{_document_class(cls, cls.__name__, {}, brief)}" for cls in extra)
        )
    if unavailable:
        blocks.append(unavailable)
    if missing:
        blocks.append("Not available in this installation (do not call): " + ", ".join(f"`{m}`" for m in missing) + ".")
    return "\n\n".join(blocks)


api_section.cache_clear = _api_section.cache_clear  # type: ignore[attr-defined]


def _document_module(
    module: Any, name: str, referenced: dict[str, type], documented: set[str], brief: bool = False
) -> str:
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
