"""The ``spatialclaw`` command line. Each subcommand lives in its own module under
:mod:`spatialclaw.commands` and exposes ``register(subparsers)``; this file only assembles them."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from spatialclaw import __version__, commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spatialclaw",
        description="Spatial reasoning with vision-language models, with code as the action interface.",
    )
    parser.add_argument("--version", action="version", version=f"spatialclaw {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
