"""The spatialclaw command line run as its own process, the way a user or a coding agent runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def cli_env(**variables: str) -> dict[str, str]:
    """This process's environment without a default model (each test names its own), plus ``variables``."""
    return {**{k: v for k, v in os.environ.items() if k != "SPATIALCLAW_MODEL"}, **variables}


def spatialclaw(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdin: str | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """``python -m spatialclaw.cli ARGS`` in ``cwd`` with ``env`` as its whole environment (``cli_env()`` by
    default), ``stdin`` as its input; stdout and stderr captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "spatialclaw.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=cli_env() if env is None else env,
        cwd=cwd,
        timeout=timeout,
    )
