"""docs/benchmarks.md's per-benchmark tables are the text the specs render (so the doc cannot drift from them)."""

from __future__ import annotations

import pytest

from spatialclaw.benchmarks.names import PAPER_NAMES
from spatialclaw.benchmarks.paper_tables import BEGIN, END, main, paper_tables, replace_block
from tests.paths import REPO_ROOT


def test_the_doc_holds_the_tables_the_specs_render() -> None:
    doc = (REPO_ROOT / "docs" / "benchmarks.md").read_text()
    assert paper_tables() in doc, "run: python -m spatialclaw.benchmarks.paper_tables --write docs/benchmarks.md"
    assert replace_block(doc) == doc


def test_one_table_per_paper_benchmark_with_its_settings() -> None:
    text = paper_tables()
    assert [line.removeprefix("#### ") for line in text.splitlines() if line.startswith("#### ")] == list(PAPER_NAMES)
    assert "| source | `Dongyh35/CVBench` in `ROOT/CVBench` |" in text
    assert "videos at 1 fps (ffmpeg's count); 32 key frames shown per input" in text
    assert "64 key frames shown per input" in text  # mmsivideo


def test_the_block_is_replaced_between_its_markers(tmp_path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(f"# title\n\n{BEGIN}\nold\n{END}\n\ntail\n")
    assert main(["--write", str(doc)]) == 0
    assert doc.read_text() == f"# title\n\n{paper_tables()}\n\ntail\n"
    with pytest.raises(ValueError, match="no generated-tables block"):
        replace_block("# no markers\n")
