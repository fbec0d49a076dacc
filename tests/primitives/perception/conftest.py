"""Fixtures of the perception tests: tiny random models saved in local folders, built once per module."""

from __future__ import annotations

import pytest

from tests.tiny_instance_models import build_grounding_dino, build_sam


@pytest.fixture(scope="module")
def tiny_detector_and_sam(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The folders of a tiny random Grounding DINO (``"detector"``) and SAM (``"sam"``)."""
    root = tmp_path_factory.mktemp("detector-and-sam")
    return {"detector": str(build_grounding_dino(root / "gdino")), "sam": str(build_sam(root / "sam"))}
