"""The environment a kernel process starts with: the host's, minus every secret.

API keys live in the host process only; ``vlm.*`` calls from the kernel are routed back to the host.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["is_secret", "kernel_environment"]

_SECRET = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|AUTH)", re.IGNORECASE)
_SECRET_PREFIXES = (
    "AWS_",
    "AZURE_",
    "GOOGLE_APPLICATION",
    "OPENAI_",
    "ANTHROPIC_",
    "GEMINI_",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
)
_NOT_SECRET = frozenset({"RAY_AUTH_MODE"})  # settings whose names look like credentials but hold none


def is_secret(name: str) -> bool:
    """True for variables that hold credentials (``*_API_KEY``, ``*TOKEN*``, ``AWS_*``, provider prefixes...)."""
    if name.upper() in _NOT_SECRET:
        return False
    return bool(_SECRET.search(name)) or name.upper().startswith(_SECRET_PREFIXES)


def kernel_environment(extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: this process's environment) without secrets, plus ``extra``.

    Sets the matplotlib backend that turns ``plt.show()`` into observation images.
    """
    env = {k: v for k, v in (base if base is not None else os.environ).items() if not is_secret(k)}
    env["MPLBACKEND"] = "module://spatialclaw.primitives.display.mpl_backend"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.pop("JPY_PARENT_PID", None)
    # ipykernel stops capturing C-level (file descriptor) output when it believes it runs under pytest;
    # the kernel is never a test process itself, and that output belongs in the observation.
    env.pop("PYTEST_CURRENT_TEST", None)
    if extra:
        env.update({k: v for k, v in extra.items() if not is_secret(k)})
    return env
