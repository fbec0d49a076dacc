"""``manual(name)``: the full documentation of a namespace entry, on demand inside the kernel.

The system prompt carries a short form of the manual (one line per entry); a cell calls
``manual("reconstruct")``, ``manual("geom.distance")`` or ``manual("DepthResult")`` for the whole
docstring and signature, or ``manual()`` for the list of names.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import typing
from typing import Any, cast

__all__ = ["manual", "parameter_choices"]

_P = "spatialclaw.primitives"
# result and helper types a model meets in return values, found by name
_TYPE_MODULES = (
    "perception.depth",
    "reconstruction.result",
    "perception.instances",
    "perception.track_result",
    "scene.memory",
    "scene.objects",
    "scene.readouts",
    "frames.frame",
    "reconstruction.stereo",
    "display.look",
    "display.color",
    "geometry.plane",
    "geometry.box",
    "geometry.relate",
    "geometry.rectify",
    "geometry.tilt",
    "geometry.wall",
    "display.color_box",
    "motion.result",
    "motion.regions",
    "motion.headings",
    "motion.change_map",
    "geometry.plane_measure",
    "perception.vlm",
    "runtime.namespace",
    "display.show",
)


def _target(entry: Any) -> Any:
    """The object behind a lazy namespace entry (its module, function or instance type)."""
    from spatialclaw.primitives.runtime.lazy import LazyCallable, LazyInstance, LazyModule

    if isinstance(entry, (LazyCallable, LazyModule)):
        return entry._load()
    if isinstance(entry, LazyInstance):
        return type(entry._load())
    tool = getattr(entry, "_tool", None)  # an unavailable learned tool stands in front of the real one
    return tool._load() if tool is not None and hasattr(tool, "_load") else entry


def _literal_values(annotation: Any) -> list[Any] | None:
    """The values a ``Literal[...]`` annotation (an object or its text, ``| None`` included) allows."""
    if isinstance(annotation, str):
        match = re.search(r"Literal\[(.*?)\]", annotation)
        if match is None:
            return None
        try:
            values = list(ast.literal_eval(f"[{match.group(1)}]"))
        except (ValueError, SyntaxError):
            return None
        rest = annotation[: match.start()] + annotation[match.end() :]
        return values + [None] if re.search(r"\bNone\b|Optional", rest) and None not in values else values
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    values = [value for arg in typing.get_args(annotation) for value in (_literal_values(arg) or [])]
    if values and type(None) in typing.get_args(annotation) and None not in values:
        values.append(None)
    return values or None


_QUOTED = r"(?:\"([\w.\- ]{1,24})\"|(?<![\w'])'([\w.\- ]{1,24})'(?![\w']))"


def _documented_values(doc: str, name: str) -> list[Any]:
    """Values a docstring states for parameter ``name``: its entry (``name: "a" (...), "b" or None``; the
    first sentence and the sentences that begin with a quoted value) and mentions like ``name="a"``."""
    values: list[Any] = [a or b for a, b in re.findall(rf"\b{re.escape(name)}\s*=\s*{_QUOTED}", doc)]
    entry = re.search(rf"(?:^|\s)(?:``)?{re.escape(name)}(?:``)?(?:\s*\([^)\n]*\))?:\s", doc, re.MULTILINE)
    if entry is not None:
        text = re.split(r"\n\s*\n|\n\s*(?:``)?\w+(?:``)?(?:\s*\([^)\n]*\))?:\s", doc[entry.end() :])[0]
        sentences = re.split(r"(?<=[.!?])\s+", text)
        kept = " ".join([sentences[0]] + [s for s in sentences[1:] if re.match(rf"(?:``)?{_QUOTED}", s)])
        values += [a or b for a, b in re.findall(_QUOTED, kept)]
        values += [None] if re.search(r"\bNone\b", kept) else []
    return list(dict.fromkeys(values))


def parameter_choices(function: Any, parameter: inspect.Parameter) -> list[Any] | None:
    """The fixed set of values ``parameter`` of ``function`` takes, its default first, or None when it is
    not a fixed set: from a ``Literal[...]`` annotation, else (for a text parameter whose default is text or
    None) from the values its docstring names when there are 2 to 6 of them and the default is one."""
    default = None if parameter.default is parameter.empty else parameter.default
    values = _literal_values(parameter.annotation)
    if values is None:
        annotation = parameter.annotation
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
        if text not in ("str", "str | None", "Optional[str]") or not isinstance(default, (str, type(None))):
            return None
        values = _documented_values(inspect.getdoc(function) or "", parameter.name)
        if not 2 <= len(values) <= 6 or default not in values:
            return None
    if parameter.default is not parameter.empty and default in values:
        values = [default] + [value for value in values if value != default]
    return values


class _Shown:
    """An annotation shown as its text (``str | None``, not ``'str | None'``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _signature(obj: Any, name: str) -> str:
    """``name(params) -> returns``; a parameter with a fixed set of values shows them, the default first:
    ``contrast: None|'auto' = None``."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    parameters = []
    for parameter in signature.parameters.values():
        choices = parameter_choices(obj, parameter)
        if choices is not None:
            parameter = parameter.replace(annotation=_Shown("|".join(map(repr, choices))))
        elif isinstance(parameter.annotation, str):
            parameter = parameter.replace(annotation=_Shown(parameter.annotation))
        parameters.append(parameter)
    returns = signature.return_annotation
    shown = signature.replace(
        parameters=parameters, return_annotation=_Shown(returns) if isinstance(returns, str) else returns
    )
    return f"{name}{shown}"


# A module's or class's entry longer than this lists its members by signature and summary instead, so
# it fits one observation whole (a cut manual hides the members after the cut).
FULL_ENTRY_LIMIT = 5000


def _summary(text: str) -> str:
    return text.split("\n\n", 1)[0]


def _members(obj: Any, name: str) -> list[tuple[str, str]]:
    """(heading, docstring) for each documented member of a module or class."""
    members: list[tuple[str, str]] = []
    if inspect.ismodule(obj):
        for attr in getattr(obj, "__all__", []):
            value = getattr(obj, attr, None)
            if callable(value):
                members.append((_signature(value, f"{name}.{attr}"), inspect.getdoc(value) or ""))
        return members
    for attr, member in vars(obj).items():
        if attr.startswith("_") and attr != "__call__":
            continue
        if isinstance(member, property):
            members.append((f".{attr}", inspect.getdoc(member) or "attribute"))
        elif callable(member) or isinstance(member, (staticmethod, classmethod)):
            function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
            members.append(
                (_signature(function, name if attr == "__call__" else f"{name}.{attr}"), inspect.getdoc(function) or "")
            )
    return members


def _describe(obj: Any, name: str) -> str:
    doc = inspect.getdoc(obj) or "(no description)"
    if inspect.ismodule(obj) or inspect.isclass(obj):
        head = f"{name} ({'module' if inspect.ismodule(obj) else obj.__name__})\n{doc}"
        members = _members(obj, name)
        full = "\n".join([head] + [f"\n{heading}\n{text}" for heading, text in members])
        if len(full) <= FULL_ENTRY_LIMIT:
            return full
        short = [f"\n{heading}\n    {_summary(text)}" for heading, text in members]
        return "\n".join([head] + short + [f"\n(members in short form; manual('{name}.NAME') prints one in full)"])
    if not inspect.isroutine(obj) and callable(obj):
        obj = type(obj).__call__
    return f"{_signature(obj, name)}\n{doc}"


def _find_type(name: str) -> Any:
    for module_name in _TYPE_MODULES:
        try:
            module = importlib.import_module(f"{_P}.{module_name}")
        except Exception:
            continue
        value = getattr(module, name, None)
        if inspect.isclass(value):
            return value
    return None


def manual(name: str | None = None) -> None:
    """Print the full documentation of a kernel name: a tool (``manual("depth")``), a module member
    (``manual("geom.distance")``), a method (``manual("scene.add")``) or a result type
    (``manual("DepthResult")``); ``manual()`` lists every name after the conventions every tool follows
    (signs of angles, frames, indices; also ``manual("conventions")``) and the guides for what no tool
    measures (``manual("facing")``: which way an object faces)."""
    from spatialclaw.primitives.runtime.conventions import CONVENTIONS
    from spatialclaw.primitives.runtime.guides import GUIDES

    shell_ns = _namespace()
    if name is None or name == "conventions":
        print(f"Conventions (every tool):\n{CONVENTIONS}")
    if name is None:
        names = sorted(n for n in shell_ns if not n.startswith("_"))
        print("Kernel names (manual('name') for one): " + ", ".join(names))
        print("Guides (no tool measures these; the method): " + ", ".join(f"manual({g!r})" for g in GUIDES))
    if name is None or name == "conventions":
        return
    if name in GUIDES:
        print(f"== manual({name!r}) ==\n{GUIDES[name]}")
        return
    head, _, rest = str(name).partition(".")
    if head in shell_ns:
        obj = _target(shell_ns[head])
        for part in [p for p in rest.split(".") if p]:
            obj = getattr(obj, part, None)
            if obj is None:
                raise AttributeError(f"{head} has no {rest!r}; manual({head!r}) lists what it has")
        print(f"== manual({name!r}) ==\n{_here(head) if not rest else ''}{_describe(obj, name)}")
        return
    found = _find_type(name)
    if found is None:
        raise NameError(f"no kernel name or result type {name!r}; manual() lists the names")
    print(f"== manual({name!r}) ==\n{_describe(found, name)}")


def _here(name: str) -> str:
    """A line naming the backend that answers the learned tool ``name`` here and what it is good for (or why
    it cannot run), from the report the kernel made at start; "" for other names."""
    from spatialclaw.primitives.perception.availability import last_report

    status = (last_report() or {}).get(name)
    if not status:
        return ""
    if not status["available"]:
        return f"UNAVAILABLE here: {status['reason']}\n"
    backend = f"backend {status['backend']}: " if status["backend"] else ""
    return f"Here: {backend}{status['note'] or 'available'}\n" if backend or status["note"] else ""


def _namespace() -> dict[str, Any]:
    """The live namespace of the shell this runs in (the kernel's, or a notebook's)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        return cast(dict[str, Any], shell.user_ns)
    from spatialclaw.primitives.runtime.namespace import build_namespace

    return build_namespace(check_tools=False)
