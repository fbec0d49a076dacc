"""Where the suite's files are, for a test in any folder: the repository root, the committed fixtures and the
real measured test data."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
TESTS = REPO_ROOT / "tests"
FIXTURES = TESTS / "fixtures"
#: ``$SPATIALCLAW_TEST_DATA`` or ``../shared/data`` beside the checkout.
DATA_ROOT = Path(os.environ.get("SPATIALCLAW_TEST_DATA", REPO_ROOT.parent / "shared" / "data"))
