"""``manual("facing")``: where no tool measures an object's facing honestly, the manual gives the method."""

from __future__ import annotations

import pytest

from spatialclaw.primitives.runtime.manual import manual


def test_the_facing_guide_gives_the_method_and_says_no_tool_measures_it(capsys: pytest.CaptureFixture[str]) -> None:
    manual("facing")
    text = capsys.readouterr().out
    assert text.startswith("== manual('facing') ==\n") and "no tool measures it here" in text
    for method in ("Both eyes", "mirror axis", "backrest", "face the way they move", "180 = towards the camera"):
        assert method in text
    manual()
    assert "Guides (no tool measures these; the method): manual('facing')" in capsys.readouterr().out
