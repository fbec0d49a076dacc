"""The CPU image definition (``Dockerfile``) stays the bootstrap's: the files it copies exist, it installs the
same Debian packages and runs the same two pip installs (the hash-checked lock, then the project), with the
same PyTorch CPU index. Docker itself cannot run here; this checks the definition against the script."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
BOOTSTRAP = (ROOT / "scripts" / "bootstrap.sh").read_text()


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    lines = [line for line in DOCKERFILE.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [(m[1].upper(), m[2].strip()) for m in re.finditer(r"^(\w+)\s+(.*)$", joined, flags=re.MULTILINE)]


def test_every_file_the_image_copies_or_runs_exists():
    steps = _instructions()
    copied = [args.split()[0] for kind, args in steps if kind == "COPY" and args.split()[0] != "."]
    assert copied == ["requirements/lock.txt"]
    run = " ".join(args for kind, args in steps if kind == "RUN")
    for path in [*copied, *re.findall(r"\b(scripts/\S+\.py)", run)]:
        assert (ROOT / path).is_file(), path
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and "build" in ignored  # the host's environment never enters the image


def test_the_image_installs_what_bootstrap_installs_the_same_way():
    run = " ".join(args for kind, args in _instructions() if kind == "RUN")
    debian = set(re.findall(r"need_apt\+=\(([\w.-]+)\)", BOOTSTRAP)) - {"chromium"}  # chromium: viewer tests only
    installed = set(re.search(r"apt-get install (.*?)(?:&&|$)", run)[1].split())
    assert debian <= installed, debian - installed
    for command in ("--require-hashes --no-deps -r requirements/lock.txt", "--no-deps --no-build-isolation -e ."):
        assert command in BOOTSTRAP and command in run, command
    torch_index = re.search(r"SPATIALCLAW_TORCH_INDEX:-(\S+?)\}", BOOTSTRAP)[1]
    assert f"--extra-index-url {torch_index}" in run
    python = re.match(r"python:(\d+\.\d+)", next(args for kind, args in _instructions() if kind == "FROM"))[1]
    assert "CPython " + python in (ROOT / "CONTRIBUTING.md").read_text()  # the interpreter the lock is for


def test_the_image_runs_the_demo_and_the_tests():
    steps = _instructions()
    assert ("RUN", "spatialclaw demo --out /tmp/demo") in steps
    assert steps[-1][0] == "CMD" and "pytest" in steps[-1][1]
