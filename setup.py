"""Package discovery for setuptools: every folder with an ``__init__.py`` under the source folders that
pyproject.toml's ``[tool.setuptools] package-dir`` maps into ``spatialclaw`` ships, so a new subpackage
(``benchmarks/scoring``, ...) is in the wheel without being listed anywhere. Everything else is in
pyproject.toml."""

from __future__ import annotations

from pathlib import Path

import tomllib
from setuptools import setup

ROOT = Path(__file__).resolve().parent


def packages() -> list[str]:
    """The packages under each mapped folder, named as installed (``primitives/display`` is
    ``spatialclaw.primitives.display``)."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    found = set()
    for name, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            parts = init.parent.relative_to(base).parts
            if "__pycache__" not in parts:
                found.add(".".join([name, *parts]))
    return sorted(found)


setup(packages=packages())
