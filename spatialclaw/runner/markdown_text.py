"""Text from a dataset or a results file made inert in the reports' markdown (``report.md``).

A category, a benchmark or model label, a warning or an unreadable line's message can come from a
downloaded dataset or a tampered ``results.jsonl``; :func:`md` makes it one table cell or one line of plain
text: HTML special characters become entities (no tag for renderers that allow raw HTML), ``|`` is
escaped (no extra column), and every line break ``str.splitlines`` knows becomes a space (no forged row or
heading).
"""

from __future__ import annotations

import html
import re

__all__ = ["md"]

_BREAKS = re.compile(r"[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")


def md(value: object) -> str:
    """``value`` as text that stays inside one markdown table cell or line, with no markup of its own."""
    text = html.escape(str(value), quote=False)
    return _BREAKS.sub(" ", text).replace("|", "\\|")
