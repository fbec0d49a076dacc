"""The pages the viewer writes, opened by a real headless Chromium (the tests that need it are skipped
without it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian chromium is not installed (apt-get install -y chromium, or SPATIALCLAW_WITH_CHROMIUM=1 scripts/bootstrap.sh)",
)


def headless_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Chromium run headless and quiet (no sandbox, GPU, network chatter or first-run pages) with its profile
    in ``tmp_path``, then ``args``; its output captured as text."""
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
