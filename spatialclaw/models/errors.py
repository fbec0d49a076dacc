"""Map exceptions of the ``openai`` and ``anthropic`` SDKs onto the retry/fail decision of :mod:`.base`."""

from __future__ import annotations

import json

from spatialclaw.models.base import (
    ModelAuthError,
    ModelError,
    ModelRequestError,
    TransientError,
    parse_retry_after,
)

__all__ = ["classify_sdk_error"]

RETRYABLE_STATUS = {408, 409, 425, 429}


def classify_sdk_error(error: BaseException, what: str) -> BaseException:
    """The exception to raise for an SDK error: a :class:`TransientError` (retry) or a :class:`ModelError`.

    Both SDKs name their classes alike (``APIStatusError`` with ``status_code`` and ``response``,
    ``APITimeoutError``, ``APIConnectionError``), so one mapping serves both.
    """
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        detail = _status_message(error)
        if status in (401, 403):
            return ModelAuthError(
                f"{what}: the provider refused the credentials (HTTP {status}: {detail}). "
                "Check the API key environment variable (OPENAI_API_KEY / ANTHROPIC_API_KEY) and its permissions."
            )
        if status in RETRYABLE_STATUS or status >= 500:
            response = getattr(error, "response", None)
            retry_after = parse_retry_after(getattr(response, "headers", None))
            return TransientError(f"HTTP {status}: {detail}", retry_after=retry_after)
        return ModelRequestError(
            f"{what}: the provider rejected the request (HTTP {status}: {detail}). "
            "This is not retried; check the model name, the parameters and the size of the request."
        )
    name = type(error).__name__
    if name in ("APITimeoutError", "APIConnectionError"):
        cause = error.__cause__ or error.__context__
        return TransientError(f"{name}: {error}" + (f" ({type(cause).__name__}: {cause})" if cause else ""))
    if isinstance(error, json.JSONDecodeError) or name in ("ValidationError", "APIResponseValidationError"):
        return TransientError(f"malformed response body ({name}: {str(error)[:200]})")
    if isinstance(error, ModelError):
        return error
    return error


def _status_message(error: BaseException) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(error, "message", error))
