"""Fixtures of the attack tests: the input a session under attack is started on."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image


@pytest.fixture
def green_frame(tmp_path: Path) -> Path:
    """A 32 x 24 plain green PNG, ``frames/0.png`` in the test's folder."""
    path = tmp_path / "frames" / "0.png"
    path.parent.mkdir()
    Image.new("RGB", (32, 24), (0, 200, 0)).save(path)
    return path
