"""Compare the running interpreter's installed packages with ``requirements/lock.txt``.

``python scripts/check_env.py`` exits 1, naming each difference, when a locked package is missing or at another
version, or when a package the lock does not name is installed (the project itself and pip excepted).
``--report`` prints the differences and exits 0: the newest-versions mode uses it to show how far today's
releases are from the lock.
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata
from pathlib import Path

LOCK = Path(__file__).resolve().parents[1] / "requirements" / "lock.txt"
#: Installed but never locked: the installer itself and the project under test.
UNLOCKED = {"pip", "spatialclaw"}


def canonical(name: str) -> str:
    """A distribution name in PEP 503 normal form (``Open3D`` -> ``open3d``, ``jupyter_client`` -> ``jupyter-client``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock: Path) -> dict[str, str]:
    """``{canonical name: version}`` for each ``name==version`` line of a hashed requirements file."""
    pins: dict[str, str] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", line)
        if match:
            pins[canonical(match.group(1))] = match.group(2)
    if not pins:
        raise SystemExit(f"{lock}: no 'name==version' lines; regenerate it with: bash scripts/lock.sh")
    return pins


def installed() -> dict[str, str]:
    """``{canonical name: version}`` of every distribution the running interpreter sees."""
    return {canonical(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}


def differences(pins: dict[str, str], have: dict[str, str]) -> list[str]:
    """One line per locked package that is missing or differs, and per installed package the lock lacks."""
    lines = [
        f"{name}: locked {version}, installed {have.get(name, 'nothing')}"
        for name, version in sorted(pins.items())
        if have.get(name) != version
    ]
    lines += [f"{name}: installed {have[name]}, not in the lock" for name in sorted(set(have) - set(pins) - UNLOCKED)]
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=LOCK, help="the hashed requirements file (default: %(default)s)")
    parser.add_argument("--report", action="store_true", help="print the differences and exit 0")
    args = parser.parse_args(argv)
    if not args.lock.is_file():
        raise SystemExit(f"{args.lock}: no such lock file; create it with: bash scripts/lock.sh")
    found = differences(locked(args.lock), installed())
    if args.report:
        print(f"[env] {len(found)} differences from {args.lock.name}" + "".join(f"\n  {line}" for line in found))
        return 0
    if found:
        print(f"[env] the environment differs from {args.lock}:", *found, sep="\n  ", file=sys.stderr)
        print("[env] reinstall it with: rm .venv/.spatialclaw-installed && bash scripts/bootstrap.sh", file=sys.stderr)
        return 1
    print(f"[env] {sys.prefix} holds exactly the {len(locked(args.lock))} locked packages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
