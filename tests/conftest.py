"""Shared fixtures: where the real measured test data lives, and a per-test cache directory."""

from __future__ import annotations

import os
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
