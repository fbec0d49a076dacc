"""Run mypy over the installed package layout.

The source folders map onto one package through setuptools ``package-dir`` (``primitives/`` is
``spatialclaw.primitives``, ``benchmarks/`` is ``spatialclaw.benchmarks``, ...), which mypy cannot follow. This
script mirrors that layout with symbolic links under ``build/typecheck/`` and runs mypy there with the
settings of ``pyproject.toml``; reported paths are mapped back to the repository's own files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT / "build" / "typecheck"
#: Source folder -> where it sits inside the ``spatialclaw`` package.
MAPPED = {"primitives": "primitives", "prompts": "prompts", "benchmarks": "benchmarks"}


def build_mirror() -> Path:
    """``build/typecheck/spatialclaw`` holding links to every entry of ``spatialclaw/`` plus the mapped folders."""
    package = MIRROR / "spatialclaw"
    if MIRROR.exists():
        shutil.rmtree(MIRROR)
    package.mkdir(parents=True)
    for entry in (ROOT / "spatialclaw").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for folder, name in MAPPED.items():
        (package / name).symlink_to(ROOT / folder)
    return package


def main(argv: list[str]) -> int:
    build_mirror()
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "spatialclaw", *argv]
    result = subprocess.run(command, cwd=MIRROR, capture_output=True, text=True)
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
