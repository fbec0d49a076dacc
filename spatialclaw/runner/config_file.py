"""The run configuration file: ``bench --config FILE`` (TOML) read as options, and a run's options written back.

The file's keys are the long flags of ``spatialclaw bench`` without their dashes (``max-steps`` or
``max_steps``), its values what the flag takes: a string or number, ``true``/``false`` for a switch
(``no-cache = true``), a list for a repeatable flag (``agent-option = ["preview_images=4"]``), or a table
for the repeatable ``NAME=VALUE`` flags (``[max-concurrency]`` ``openai = 4``, ``[rate-limit]``
``openai = "60/min"``, ``[model-option]`` ``top_p = 0.9``). :func:`config_argv` turns it into the command
line it stands for, so the command's own checks apply to it alike; flags on the command line override the
file (a repeatable flag adds to its list). :func:`effective_options` is every option a command ran with,
and :func:`to_toml` writes it as ``RUN/config.toml``, a file ``--config`` reads back.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import tomllib

__all__ = ["CONFIG_NAME", "config_argv", "effective_options", "read_config", "to_toml"]

CONFIG_NAME = "config.toml"
"""The effective configuration of a run's latest session: ``RUN/config.toml``."""

_NOT_OPTIONS = ("help", "list", "config")


def read_config(path: str | Path) -> dict[str, Any]:
    """The TOML file at ``path``; ValueError naming it (and the line) when it is not TOML."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not a TOML file: {error}") from None


def _flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The parser's options by long flag without dashes (``max-steps``), but ``--help``, ``--list``, ``--config``."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        long = [o for o in action.option_strings if o.startswith("--")]
        if long and action.dest not in _NOT_OPTIONS:
            found[long[0][2:]] = action
    return found


def _scalar(key: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{key} takes a string or a number, got {value!r}")
    return str(value)


def config_argv(data: dict[str, Any], parser: argparse.ArgumentParser, path: str | Path) -> list[str]:
    """The command-line arguments the configuration ``data`` (read from ``path``) stands for."""
    flags = _flags(parser)
    argv: list[str] = []
    for raw, value in data.items():
        key = raw.replace("_", "-")
        action = flags.get(key)
        if action is None:
            raise ValueError(
                f"{path}: unknown key {raw!r}; the keys are the long flags of the command: {', '.join(sorted(flags))}"
            )
        flag = f"--{key}"
        if action.nargs == 0:  # a switch
            if not isinstance(value, bool):
                raise ValueError(f"{path}: {raw} is a switch; write {raw} = true or false, got {value!r}")
            argv += [flag] if value else []
        elif isinstance(action, argparse._AppendAction):
            if isinstance(value, dict):
                items = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items()]
            else:
                items = [_scalar(f"{path}: {raw}", v) for v in (value if isinstance(value, list) else [value])]
            for item in items:
                argv += [flag, item]
        else:
            argv += [flag, _scalar(f"{path}: {raw}", value)]
    return argv


def effective_options(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """Every option of ``parser`` as ``args`` holds it, keyed like a config file (unset ones left out)."""
    options: dict[str, Any] = {}
    for key, action in _flags(parser).items():
        value = getattr(args, action.dest, None)
        if value is None or value == []:
            continue
        options[key] = list(value) if isinstance(value, list) else value
    return options


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML has no {value}")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # a TOML basic string: JSON's escapes are TOML's


def to_toml(options: dict[str, Any]) -> str:
    """``options`` (from :func:`effective_options`) as a TOML file that ``--config`` reads back."""
    lines = ["# The options this run's latest session ran with; `spatialclaw bench --config THIS_FILE` repeats them."]
    lines += [f"{key} = {_toml_value(value)}" for key, value in options.items()]
    return "\n".join(lines) + "\n"
