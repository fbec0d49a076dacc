"""Your own primitives, from your module or an installed package, the same way for every interface.

A primitive is named ``{"name": TARGET}`` where TARGET is ``package.module:function`` (importable in the
environment, or from a folder on the kernel's ``env={"PYTHONPATH": ...}``) or ``path/to/file.py:function``
(the file's folder is put on the kernel's ``PYTHONPATH`` and made readable to a sandboxed kernel).
Installed packages register theirs under the entry-point group ``spatialclaw.primitives``
(``mean_brightness = "my_package.tools:mean_brightness"``); every kernel binds them.

The host imports a primitive (for the tool-calls interface's schema and the code interface's manual) with
the kernel's module path, so what the kernel can import the host describes.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

__all__ = [
    "ENTRY_POINT_GROUP",
    "OwnPrimitives",
    "absolute_file_targets",
    "import_primitive",
    "installed_primitives",
    "primitive_functions",
    "resolve_primitives",
]

ENTRY_POINT_GROUP = "spatialclaw.primitives"
_IMPORT_LOCK = threading.Lock()


@dataclass(frozen=True)
class OwnPrimitives:
    """Primitives ready for a kernel: ``targets`` ``{"name": "module:function"}``, ``path`` the folders
    their modules are imported from (prepended to the kernel's ``PYTHONPATH``, readable in its sandbox)."""

    targets: dict[str, str]
    path: tuple[str, ...]


def installed_primitives() -> dict[str, str]:
    """The primitives installed packages register (entry-point group ``spatialclaw.primitives``)."""
    return {point.name: point.value for point in entry_points(group=ENTRY_POINT_GROUP)}


def resolve_primitives(primitives: Mapping[str, str] | None, env: Mapping[str, str] | None = None) -> OwnPrimitives:
    """The installed primitives plus ``primitives`` (which win), file targets turned into module targets,
    with the folders to import them from: each file's folder, then the ``PYTHONPATH`` of ``env`` (else this
    process's, which the kernel inherits; an installed package on it keeps working beside a file target).
    ``FileNotFoundError`` names a file target that does not exist."""
    targets: dict[str, str] = {}
    folders: list[str] = []
    for name, target in absolute_file_targets({**installed_primitives(), **(primitives or {})}).items():
        where, sep, attribute = target.rpartition(":")
        if sep and where.endswith(".py"):
            folders.append(str(Path(where).parent))
            target = f"{Path(where).stem}:{attribute}"
        targets[name] = target
    # then the kernel's PYTHONPATH as it would be without the file folders: env's, else this process's
    inherited = (env or {}).get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    folders += [p for p in inherited.split(os.pathsep) if p]
    return OwnPrimitives(targets, tuple(dict.fromkeys(folders)))


def absolute_file_targets(primitives: Mapping[str, str]) -> dict[str, str]:
    """``primitives`` with each file target's path made absolute (against the current folder), for a kernel
    started elsewhere; ``FileNotFoundError`` names a file target that does not exist."""
    absolute = {}
    for name, target in primitives.items():
        where, sep, attribute = str(target).rpartition(":")
        if sep and where.endswith(".py"):
            file = Path(where).expanduser().resolve()
            if not file.is_file():
                raise FileNotFoundError(f"primitive {name!r}: {where} does not exist")
            target = f"{file}:{attribute}"
        absolute[name] = str(target)
    return absolute


def import_primitive(module: str, attribute: str, path: Iterable[str] = ()) -> Any:
    """``module.attribute`` imported as the kernel imports it: with ``path`` ahead of ``sys.path``.
    ``ImportError`` says which folders were searched."""
    folders = [p for p in path if p not in sys.path]
    with _IMPORT_LOCK:
        sys.path[:0] = folders
        try:
            loaded = importlib.import_module(module)
        except ImportError as error:
            raise ImportError(
                f"your primitive module {module!r} cannot be imported ({error}); searched "
                f"{', '.join(folders) or 'the environment'} and sys.path: put its folder on the kernel's "
                "PYTHONPATH or name it as path/to/file.py:function"
            ) from error
        finally:
            for folder in folders:
                sys.path.remove(folder)
    try:
        return getattr(loaded, attribute)
    except AttributeError:
        raise ImportError(f"your primitive module {module!r} has no {attribute!r}") from None


def primitive_functions(kernel: Any) -> dict[str, Any]:
    """The functions of ``kernel``'s own primitives by name, imported here as the kernel imports them."""
    targets = getattr(kernel, "primitives", None) or {}
    path = getattr(kernel, "primitive_path", ())
    found = {}
    for name, target in targets.items():
        module, _, attribute = target.partition(":")
        found[name] = import_primitive(module, attribute, path)
    return found
