"""Model backends behind one provider-neutral interface, chosen by a spec string.

=================================  ==========================================================
``openai:MODEL``                   OpenAI Chat Completions (``OPENAI_API_KEY``; ``OPENAI_BASE_URL``)
``anthropic:MODEL``                Anthropic Messages (``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL``)
``openai-compat:MODEL@URL``        any OpenAI-compatible server: vLLM, SGLang, llama.cpp, Ollama
``hf:REPO_OR_PATH``                a local ``transformers`` VLM, in-process
``replay:TRAJECTORY_DIR``          the model outputs recorded in an episode
=================================  ==========================================================

>>> model = load_model("openai-compat:Qwen/Qwen2.5-VL-7B-Instruct@http://localhost:8000/v1")  # doctest: +SKIP
>>> reply = model.chat([Message.text("user", "Say hi")], max_tokens=20)                   # doctest: +SKIP
"""

from __future__ import annotations

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
    "Model",
    "ModelAuthError",
    "ModelError",
    "ModelRequestError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "RetryPolicy",
    "load_model",
    "parse_spec",
]

BACKENDS = ("openai", "anthropic", "openai-compat", "hf", "replay")


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """``(backend, model, url)`` from a spec string; raises ValueError naming the accepted forms."""
    backend, sep, rest = spec.partition(":")
    if not sep or backend not in BACKENDS or not rest:
        problem = "no model named" if backend in BACKENDS else f"unknown backend {backend!r}" if sep else "no backend: prefix"
        raise ValueError(
            f"cannot read model spec {spec!r} ({problem}); use one of: openai:MODEL, anthropic:MODEL, "
            "openai-compat:MODEL@http://HOST:PORT/v1, hf:REPO_OR_PATH, replay:TRAJECTORY_DIR"
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
    for ``hf:``."""
    backend, model, url = parse_spec(spec)
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
    from spatialclaw.models.replay import ReplayModel

    return ReplayModel(model, **options)
