"""Test helpers that run real servers in-process (no network): see :mod:`spatialclaw.testing.provider_server`."""

from spatialclaw.testing.provider_server import (
    Fault,
    Reply,
    ScriptedProvider,
    bad_request,
    delayed,
    dropped,
    malformed,
    rate_limited,
    server_error,
    unauthorized,
)

__all__ = [
    "Fault",
    "Reply",
    "ScriptedProvider",
    "bad_request",
    "delayed",
    "dropped",
    "malformed",
    "rate_limited",
    "server_error",
    "unauthorized",
]
