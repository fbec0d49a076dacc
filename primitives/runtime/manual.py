"""``manual(name)``: the full documentation of a namespace entry, on demand inside the kernel.

The system prompt carries a short form of the manual (one line per entry); a cell calls
``manual("reconstruct")``, ``manual("geom.distance")`` or ``manual("DepthResult")`` for the whole
docstring and signature, or ``manual()`` for the list of names.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, cast

__all__ = ["manual"]

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
    "motion.result",
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


def _signature(obj: Any, name: str) -> str:
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return name


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
    (signs of angles, frames, indices; also ``manual("conventions")``)."""
    from spatialclaw.primitives.runtime.conventions import CONVENTIONS

    shell_ns = _namespace()
    if name is None or name == "conventions":
        print(f"Conventions (every tool):\n{CONVENTIONS}")
    if name is None:
        names = sorted(n for n in shell_ns if not n.startswith("_"))
        print("Kernel names (manual('name') for one): " + ", ".join(names))
    if name is None or name == "conventions":
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
