"""Benchmark specs from outside the package: a spec file, folders of spec modules, installed packages.

- a file: ``load_benchmark("path/to/my_bench.py")`` (``bench --benchmark path/to/my_bench.py``) imports
  the file and runs the one :class:`~spatialclaw.benchmarks.spec.BenchmarkSpec` it defines (``SPEC``, or
  ``SPECS`` holding one);
- folders: every ``*.py`` module (not starting with ``_``) of each folder on ``SPATIALCLAW_BENCHMARK_PATH``
  (``os.pathsep``-separated; ``bench --include-path DIR`` adds to it) contributes its ``SPEC`` / ``SPECS``
  under their names;
- installed packages: each entry point of the group ``spatialclaw.benchmarks`` names a spec, a list of
  specs, or a module with ``SPEC`` / ``SPECS``::

      [project.entry-points."spatialclaw.benchmarks"]
      my-bench = "my_package.bench:SPEC"

A file that fails to import raises :class:`SpecImportError` naming the file and the line.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from spatialclaw.benchmarks.spec import BenchmarkSpec

__all__ = ["ENTRY_POINT_GROUP", "PATH_ENV", "SpecImportError", "external_specs", "include_path", "specs_in_file"]

PATH_ENV = "SPATIALCLAW_BENCHMARK_PATH"
ENTRY_POINT_GROUP = "spatialclaw.benchmarks"


class SpecImportError(ValueError):
    """A benchmark spec file or entry point could not be loaded; the message names the file and line."""


def include_path(folder: str | Path) -> None:
    """Add ``folder`` to ``SPATIALCLAW_BENCHMARK_PATH`` (so worker processes started later see it too)."""
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        raise FileNotFoundError(f"--include-path {folder}: no such folder")
    current = [p for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
    if str(path) not in current:
        os.environ[PATH_ENV] = os.pathsep.join([str(path), *current])


def specs_in_file(path: str | Path) -> list[BenchmarkSpec]:
    """The specs ``path`` defines (its ``SPEC`` or ``SPECS``); :class:`SpecImportError` naming the file and
    line when it cannot be imported, or when it defines none."""
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise FileNotFoundError(f"benchmark spec file {path} does not exist")
    return _specs_of(_import_file(file), str(file))


def external_specs() -> dict[str, tuple[BenchmarkSpec, str]]:
    """Every spec from outside the package by name, with where it came from (``entry point NAME (DIST)``
    or the module's file), entry points first, then the folders of ``SPATIALCLAW_BENCHMARK_PATH`` in order
    (a later one of the same name is ignored)."""
    found: dict[str, tuple[BenchmarkSpec, str]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {point.name}" + (f" ({point.dist.name})" if point.dist is not None else "")
        try:
            loaded = point.load()
        except Exception as exc:  # whatever the package raises on import: said with the entry point's name
            raise SpecImportError(f"{where} = {point.value!r} could not be loaded: {_where_failed(exc)}") from exc
        for spec in _specs_of(loaded, where):
            found.setdefault(spec.name, (spec, where))
    for folder in [p for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]:
        for file in sorted(Path(folder).glob("*.py")):
            if not file.name.startswith("_"):
                for spec in specs_in_file(file):
                    found.setdefault(spec.name, (spec, str(file)))
    return found


def _import_file(file: Path) -> ModuleType:
    name = f"spatialclaw_user_benchmark_{abs(hash(str(file)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise SpecImportError(f"{file}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's code: any error, reported with its file and line
        del sys.modules[name]
        raise SpecImportError(f"benchmark spec file {_where_failed(exc, file)}") from exc
    return module


def _where_failed(exc: BaseException, file: Path | None = None) -> str:
    """``FILE, line N: Type: message`` for the deepest frame in ``file`` (else the deepest frame)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}, line {exc.lineno}: SyntaxError: {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if file is not None and Path(f.filename) == file] or frames
    at = f"{mine[-1].filename}, line {mine[-1].lineno}: " if mine else (f"{file}: " if file else "")
    return f"{at}{type(exc).__name__}: {exc}"


def _specs_of(loaded: Any, where: str) -> list[BenchmarkSpec]:
    if isinstance(loaded, BenchmarkSpec):
        return [loaded]
    if isinstance(loaded, ModuleType):
        value = getattr(loaded, "SPECS", None) or getattr(loaded, "SPEC", None)
        if value is None:
            raise SpecImportError(f"{where} defines no SPEC (a BenchmarkSpec) or SPECS")
        return _specs_of(value, where)
    items: Iterable[Any] = (
        loaded.values() if isinstance(loaded, dict) else loaded if isinstance(loaded, (list, tuple)) else [loaded]
    )
    specs = list(items)
    wrong = [type(s).__name__ for s in specs if not isinstance(s, BenchmarkSpec)]
    if wrong or not specs:
        raise SpecImportError(f"{where}: SPEC/SPECS must hold BenchmarkSpec objects, got {', '.join(wrong) or 'none'}")
    return specs
