"""The distribution ships every package: pyproject's explicit package list matches the source tree."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base)
            if "__pycache__" in relative.parts:
                continue
            found.add(".".join([name, *relative.parts]) if relative.parts else name)
    assert found == listed, (
        f"missing from pyproject: {sorted(found - listed)}; listed but absent: {sorted(listed - found)}"
    )
