"""Run mypy over the installed package layout.

The source folders map onto one package through setuptools ``package-dir`` (``primitives/`` is
``spatialclaw.primitives``, ``benchmarks/`` is ``spatialclaw.benchmarks``, ...), which mypy cannot follow. This
script mirrors that layout with symbolic links in a fresh folder under ``build/`` and runs mypy there with the
settings of ``pyproject.toml``; reported paths are mapped back to the repository's own files. Extra arguments go
to mypy.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Source folder -> where it sits inside the ``spatialclaw`` package.
MAPPED = {"primitives": "primitives", "prompts": "prompts", "benchmarks": "benchmarks"}


def build_mirror(mirror: Path) -> None:
    """``MIRROR/spatialclaw`` holding links to every entry of ``spatialclaw/`` plus the mapped folders."""
    package = mirror / "spatialclaw"
    package.mkdir(parents=True)
    for entry in (ROOT / "spatialclaw").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for folder, name in MAPPED.items():
        (package / name).symlink_to(ROOT / folder)


def main(argv: list[str]) -> int:
    (ROOT / "build").mkdir(exist_ok=True)
    mirror = Path(tempfile.mkdtemp(prefix="typecheck-", dir=ROOT / "build"))
    try:
        build_mirror(mirror)
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "spatialclaw"]
        result = subprocess.run([*command, *argv], cwd=mirror, capture_output=True, text=True)
    finally:
        shutil.rmtree(mirror, ignore_errors=True)
    prefixes = {f"spatialclaw/{name}/": f"{folder}/" for folder, name in MAPPED.items()}
    for line in (result.stdout + result.stderr).splitlines():
        for mirrored, real in prefixes.items():
            if line.startswith(mirrored):
                line = real + line[len(mirrored) :]
                break
        print(line)
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
