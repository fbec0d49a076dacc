"""``--agent-option KEY=VALUE``: command-line text to typed :class:`~spatialclaw.agent.config.AgentConfig` fields.

Each value is converted to the field's declared type, and a value that does not fit is a one-line
:class:`ValueError` naming the field, the expected type and the value given (``max_steps=three`` gives
"max_steps must be an integer, got 'three'"). Integers take ``30``; floats ``2.5``; booleans
``true``/``false`` (also ``1``/``0``, ``yes``/``no``); strings as written; dict fields (``model_params``,
``kernel_options``) and ``limits`` a JSON object, e.g. ``limits={"time_s": 60}``.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

__all__ = ["coerce_agent_option", "parse_agent_options"]

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def _field_types() -> dict[str, Any]:
    from spatialclaw.agent.config import AgentConfig

    return typing.get_type_hints(AgentConfig)


def coerce_agent_option(key: str, value: str) -> Any:
    """``value`` (text) as the type of the AgentConfig field ``key``; ValueError when it is no such field
    or the value does not fit."""
    types = _field_types()
    if key not in types:
        raise ValueError(f"unknown agent option {key!r}; known: {', '.join(sorted(types))}")
    kind = types[key]
    origin = typing.get_origin(kind) or kind
    text = value.strip()
    if kind is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ValueError(f"{key} must be true or false, got {value!r}")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{key} must be an integer, got {value!r}") from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{key} must be a number, got {value!r}") from None
    if kind is str:
        return value
    if origin is dict or dataclasses.is_dataclass(kind):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            raise ValueError(f'{key} must be a JSON object, e.g. {key}={{"name": 1}}, got {value!r}')
        return parsed
    raise ValueError(f"{key} cannot be set from the command line (type {kind})")


def parse_agent_options(items: list[str]) -> dict[str, Any]:
    """``["KEY=VALUE", ...]`` to typed AgentConfig overrides (the last of a repeated key wins)."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--agent-option needs KEY=VALUE, got {item!r}")
        options[key.strip()] = coerce_agent_option(key.strip(), value)
    return options
