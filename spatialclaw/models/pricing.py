"""Cost of a model call in US dollars, from a price table that users can override.

Prices are US dollars per million tokens: ``input`` (prompt), ``output`` (completion, reasoning
included) and ``cached_input`` (prompt tokens served from the provider's cache). A model id matches the
longest table key that it starts with (``gpt-4o-2024-08-06`` uses ``gpt-4o``). Models not in the table
(local servers, ``hf:``) cost ``None``, not zero, so that unknown is never reported as free.

Override, in increasing precedence: a JSON file named by ``$SPATIALCLAW_PRICES``
(``{"model-prefix": {"input": 1.0, "output": 2.0, "cached_input": 0.5}}``), :func:`set_price`, or
``load_model(spec, prices={...})`` for one model. The built-in figures are list prices published by the
providers (checked 2025); check your provider's current page before trusting a bill to them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from spatialclaw.chat import Usage

__all__ = ["Price", "cost_usd", "price_for", "set_price"]


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None


BUILTIN: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "o1": Price(15.00, 60.00, 7.50),
    "o3": Price(2.00, 8.00, 0.50),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "claude-opus-4": Price(15.00, 75.00, 1.50),
    "claude-opus-4-5": Price(5.00, 25.00, 0.50),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30),
}

_overrides: dict[str, Price] = {}


def set_price(model_prefix: str, input: float, output: float, cached_input: float | None = None) -> None:
    """Set the price (US dollars per million tokens) of every model id starting with ``model_prefix``."""
    _overrides[model_prefix] = Price(input, output, cached_input)


def _from_env() -> dict[str, Price]:
    path = os.environ.get("SPATIALCLAW_PRICES")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text())
        return {key: Price(float(v["input"]), float(v["output"]), v.get("cached_input")) for key, v in data.items()}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"$SPATIALCLAW_PRICES={path} is not a readable price table ({error}); expected JSON like "
            '{"my-model": {"input": 1.0, "output": 2.0, "cached_input": 0.5}} in US dollars per million tokens'
        ) from None


def price_for(model: str, extra: dict[str, Price] | None = None) -> Price | None:
    """The price of ``model`` (longest matching prefix), or None when no table knows it."""
    table = {**BUILTIN, **_from_env(), **_overrides, **(extra or {})}
    matches = [key for key in table if model == key or model.startswith(key + "-") or model.startswith(key + "@")]
    if not matches:
        return None
    return table[max(matches, key=len)]


def cost_usd(model: str, usage: Usage, extra: dict[str, Price] | None = None) -> float | None:
    """US dollars for one call's ``usage``; None when the model has no known price."""
    price = price_for(model, extra)
    if price is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    cached_rate = price.cached_input if price.cached_input is not None else price.input
    dollars = (
        (usage.prompt_tokens - cached) * price.input + cached * cached_rate + usage.completion_tokens * price.output
    )
    return dollars / 1_000_000
