"""Fenced code blocks from the user docs, so tests can run the examples exactly as written."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def code_blocks(document: str, section: str, language: str) -> list[str]:
    """The ``language`` blocks of the ``## section`` of ``docs/document``, in order."""
    text = (DOCS / document).read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, flags=re.DOTALL | re.MULTILINE)
    if match is None:
        raise AssertionError(f"docs/{document} has no section '## {section}'")
    blocks = re.findall(rf"^```{language}\n(.*?)^```", match.group(1), flags=re.DOTALL | re.MULTILINE)
    if not blocks:
        raise AssertionError(f"docs/{document}, section {section!r}, has no {language} block")
    return blocks
