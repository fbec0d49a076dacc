"""Shared fixtures: where the real measured test data lives, a per-test cache directory, and a sessions folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_data_root() -> Path:
    """``$SPATIALCLAW_TEST_DATA`` or ``../shared/data`` beside the checkout."""
    return Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def test_data() -> Path:
    """The real-data folder; tests using it are skipped (with the reason) when it is absent."""
    root = test_data_root()
    if not root.is_dir():
        pytest.skip(f"real test data not found at {root}; set SPATIALCLAW_TEST_DATA to the shared data folder")
    return root


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own perception cache, so cache hits are never carried between tests."""
    monkeypatch.setenv("SPATIALCLAW_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def sessions_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """This environment with a sessions folder of the test's own and no kernel memory limit; every session
    still open at the end is closed, so a failed test leaves no daemon running."""
    env = dict(os.environ)
    env["SPATIALCLAW_SESSIONS"] = str(tmp_path / "sessions")
    env["SPATIALCLAW_KERNEL_MEMORY_MB"] = "0"
    yield env
    from spatialclaw.interactive.session import list_sessions
    from spatialclaw.interactive.session_dir import SessionError

    for session in list_sessions(tmp_path / "sessions"):  # a failed test leaves no daemon running
        try:
            session.close()
        except SessionError:
            pass
