"""Model backends behind one provider-neutral interface, chosen by a spec string.

=================================  ==========================================================
``openai:MODEL``                   OpenAI Chat Completions (``OPENAI_API_KEY``; ``OPENAI_BASE_URL``)
``anthropic:MODEL``                Anthropic Messages (``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL``)
``openai-compat:MODEL@URL``        any OpenAI-compatible server: vLLM, SGLang, llama.cpp, Ollama
                                   (a key only when named: ``api_key_env=NAME`` or
                                   ``SPATIALCLAW_COMPAT_API_KEY``; never ``OPENAI_API_KEY``)
``hf:REPO_OR_PATH``                a local ``transformers`` VLM, in-process
``replay:TRAJECTORY_DIR``          the model outputs recorded in an episode
``scripted:look-and-answer``       a keyless policy: looks, runs a tool, answers from its result
``scripted:solve-synthetic``       a keyless policy that measures the synthetic scenes, most answers right
``scripted:replies=FILE``          recorded replies, one per line or JSON Lines (no key, no network)
=================================  ==========================================================

>>> model = load_model("openai-compat:Qwen/Qwen2.5-VL-7B-Instruct@http://localhost:8000/v1")  # doctest: +SKIP
>>> reply = model.chat([Message.text("user", "Say hi")], max_tokens=20)                   # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

from spatialclaw.models.base import (
    Model,
    ModelAuthError,
    ModelError,
    ModelRequestError,
    ModelTimeoutError,
    ModelUnavailableError,
    RetryPolicy,
)

__all__ = [
    "COMPAT_KEY_ENV",
    "Model",
    "ModelAuthError",
    "ModelError",
    "ModelRequestError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "RetryPolicy",
    "limit_model",
    "load_model",
    "parse_spec",
]

BACKENDS = ("openai", "anthropic", "openai-compat", "hf", "replay", "scripted")
COMPAT_KEY_ENV = "SPATIALCLAW_COMPAT_API_KEY"
"""The environment variable whose key ``openai-compat:`` endpoints get when no other key is named."""


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """``(backend, model, url)`` from a spec string; raises ValueError naming the accepted forms."""
    backend, sep, rest = spec.partition(":")
    if not sep or backend not in BACKENDS or not rest:
        problem = (
            "no model named" if backend in BACKENDS else f"unknown backend {backend!r}" if sep else "no backend: prefix"
        )
        raise ValueError(
            f"cannot read model spec {spec!r} ({problem}); use one of: openai:MODEL, anthropic:MODEL, "
            "openai-compat:MODEL@http://HOST:PORT/v1, hf:REPO_OR_PATH, replay:TRAJECTORY_DIR, "
            "scripted:look-and-answer, scripted:solve-synthetic, scripted:replies=FILE (no key)"
        )
    if backend == "openai-compat":
        model, at, url = rest.rpartition("@")
        if not at or not model or not url.startswith(("http://", "https://")):
            raise ValueError(
                f"cannot read model spec {spec!r}: openai-compat needs MODEL@URL, "
                "e.g. openai-compat:Qwen/Qwen2.5-VL-7B-Instruct@http://localhost:8000/v1"
            )
        return backend, model, url
    return backend, rest, None


def load_model(spec: str, **options: Any) -> Model:
    """Build the backend for ``spec``. ``options`` go to the backend's constructor: ``api_key``,
    ``base_url``, ``timeout_s``, ``retry`` (:class:`RetryPolicy`), ``prices`` (see
    :mod:`spatialclaw.models.pricing`), and default call parameters such as ``max_tokens``,
    ``temperature``, ``reasoning_effort``, ``thinking_budget`` or ``extra_body``; ``device``/``dtype``
    for ``hf:``.

    ``api_key_env=NAME`` reads the key from the environment variable ``NAME`` (which must be set);
    for ``openai-compat:``, ``api_key_env=None`` means no key at all. Without ``api_key`` or
    ``api_key_env``, ``openai-compat:`` uses ``$SPATIALCLAW_COMPAT_API_KEY`` when set and otherwise
    sends no ``Authorization`` header: ``OPENAI_API_KEY`` never goes to an arbitrary URL."""
    backend, model, url = parse_spec(spec)
    if "api_key_env" in options:
        options["api_key"] = _named_key(spec, options.pop("api_key_env"), allow_none=backend == "openai-compat")
    elif backend == "openai-compat" and "api_key" not in options:
        options["api_key"] = os.environ.get(COMPAT_KEY_ENV) or None
    if backend == "openai":
        from spatialclaw.models.openai import OpenAIModel

        return OpenAIModel(model, **options)
    if backend == "openai-compat":
        from spatialclaw.models.openai import OpenAIModel

        return OpenAIModel(model, base_url=url, compatible=True, **options)
    if backend == "anthropic":
        from spatialclaw.models.anthropic import AnthropicModel

        return AnthropicModel(model, **options)
    if backend == "hf":
        from spatialclaw.models.hf import HFModel

        return HFModel(model, **options)
    if backend == "scripted":
        from spatialclaw.models.scripted_policy import scripted_model

        return scripted_model(model)
    from spatialclaw.models.replay import ReplayModel

    return ReplayModel(model, **options)


def limit_model(model: Model, limits: dict[str, Any]) -> Model:
    """``model`` with its provider's limit (``limits``: provider -> :class:`~spatialclaw.models.throttle.ProviderLimit`)
    in force, shared with every other model of the process under the same limit; a model whose provider has
    none, or that sends no HTTP requests, is left as it is."""
    from spatialclaw.models.base import SDKModel
    from spatialclaw.models.throttle import throttle_for

    provider = parse_spec(model.spec)[0] if model.spec else None
    if isinstance(model, SDKModel) and provider in limits:
        model.throttle = throttle_for(provider, limits[provider])
    return model


def _named_key(spec: str, variable: str | None, allow_none: bool) -> str | None:
    """The key in environment variable ``variable`` (``None``: no key, where the backend allows it)."""
    if variable is None and allow_none:
        return None
    if not isinstance(variable, str) or not variable:
        raise ModelAuthError(f"{spec}: api_key_env must name an environment variable, got {variable!r}")
    from spatialclaw.kernel.environment import is_secret

    if not is_secret(variable):
        raise ModelAuthError(
            f"{spec}: api_key_env={variable!r} does not look like a secret's name, so kernels would inherit it; "
            "keep the key in a variable named like *_API_KEY or *_TOKEN"
        )
    key = os.environ.get(variable)
    if not key:
        raise ModelAuthError(
            f"{spec}: api_key_env names ${variable}, which is not set; export it or name another variable"
        )
    return key
