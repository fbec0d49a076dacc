"""The ``spatialclaw`` command line. Each subcommand lives in its own module under
:mod:`spatialclaw.commands` and exposes ``register(subparsers)``; this file only assembles them.

Errors: a problem with the user's input or setup (a missing or unreadable file, a bad value, a model that
cannot be reached or refuses the key, ...) ends the command with a one-line ``spatialclaw COMMAND: ...``
message on stderr and exit code 2; anything else is a bug and prints its traceback with a request to report
it (exit code 1). A missing optional dependency names the extra that installs it
(:mod:`spatialclaw.extras`, exit code 2). ``--debug`` (or ``SPATIALCLAW_DEBUG=1``) shows tracebacks for every error, logged ones too.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import pkgutil
import sys
import traceback

from spatialclaw import __version__, commands

#: Exception classes (module, name) that describe bad input or setup rather than a bug, besides
#: ``OSError`` and ``ValueError``. Looked up only in modules already imported: an exception can only be
#: an instance of a class whose module has been loaded, and the CLI stays fast to start.
USER_ERRORS = (
    ("spatialclaw.models.base", "ModelError"),
    ("spatialclaw.kernel.errors", "PreloadError"),
    ("spatialclaw.kernel.process", "KernelStartError"),
    ("spatialclaw.interactive.session_dir", "SessionError"),
    ("spatialclaw.primitives.perception.models", "MissingWeightsError"),
    ("spatialclaw.primitives.perception.models", "MissingDependencyError"),
    ("spatialclaw.benchmarks.spec", "DatasetUnavailable"),
)

#: What to do about an operating-system error on a path, by errno.
OS_ERROR_HINTS = {
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a folder on that path is a file; choose another path",
    errno.EEXIST: "something is already in the way there; choose another path",
    errno.EISDIR: "it is a folder; give a file",
    errno.EACCES: "no permission; choose a path you can read and write",
    errno.ENOSPC: "the disk is full; free some space",
}

BUG_REPORT = "this is a bug in spatialclaw; please report it with the traceback above"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spatialclaw",
        description="Spatial reasoning with vision-language models, with code as the action interface.",
    )
    parser.add_argument("--version", action="version", version=f"spatialclaw {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors (also: SPATIALCLAW_DEBUG=1)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(subparsers)
    return parser


def is_user_error(error: BaseException) -> bool:
    """Whether ``error`` describes bad input or setup (shown as a message) rather than a bug."""
    types: list[type] = [OSError, ValueError]
    for module, name in USER_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type):
            types.append(cls)
    return isinstance(error, tuple(types))


def describe_error(error: BaseException) -> str:
    """One line for the user: our own messages as they are; an operating-system error on a path as
    ``what: path (what to do)``."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        hint = OS_ERROR_HINTS.get(error.errno or 0)
        return f"{error.strerror}: {error.filename}" + (f" ({hint})" if hint else "")
    return str(error) or type(error).__name__


class LogFormatter(logging.Formatter):
    """Log records as their message. An attached exception that describes bad input or setup becomes one
    ``Type: message`` line unless ``debug``; any other keeps its traceback, with a request to report it."""

    def __init__(self, debug: bool) -> None:
        super().__init__("%(message)s")
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        error = record.exc_info[1] if record.exc_info else None
        if error is None or self.debug:
            return super().format(record)
        from spatialclaw.extras import install_hint

        hint = install_hint(error)
        if hint is not None:
            return f"{record.getMessage()}: {hint}"
        if is_user_error(error):
            return f"{record.getMessage()}: {type(error).__name__}: {describe_error(error)}"
        return f"{super().format(record)}\n{BUG_REPORT}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug or os.environ.get("SPATIALCLAW_DEBUG", "") not in ("", "0")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogFormatter(debug))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])  # no-op where logging is already set up
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    prefix = f"spatialclaw {args.command}"
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        from spatialclaw.extras import install_hint

        hint = install_hint(error)
        if hint is not None:  # a missing optional dependency: say which extra installs it
            if debug:
                traceback.print_exc()
            print(f"{prefix}: {hint}", file=sys.stderr)
            return 2
        if not is_user_error(error):
            traceback.print_exc()
            print(f"{prefix}: unexpected {type(error).__name__}: {BUG_REPORT}", file=sys.stderr)
            return 1
        if debug:
            traceback.print_exc()
        print(f"{prefix}: {describe_error(error)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
