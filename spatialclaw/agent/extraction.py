"""Find the one Python cell in a model's reply.

Real replies are messy: prose around the code, a ``<think>`` section (sometimes without its opening
tag, when a server strips it), several code blocks, or a fence left open because the reply hit the
token limit. The rules, in order:

1. Reasoning is removed: ``<think>...</think>`` (also ``<thinking>``, ``<reasoning>``) and anything
   before a lone closing tag; an opening tag that is never closed swallows the rest of the reply.
2. The first fenced block tagged ``python``/``py``/``python3``/``ipython`` is the cell; if no block is
   tagged, the first untagged block that parses as Python is.
3. A closing fence glued to the end of the last code line still closes the block; a fence still
   open at the end of the reply (a truncated reply) runs to the end.
4. With no fence at all, the whole remaining text is the cell if it parses as Python and contains a
   call or an assignment (a bare ``answer("B")``), so that prose is never executed.

Other blocks are not run; :attr:`Extraction.ignored_blocks` counts them so the observation can say so.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["Extraction", "extract_cell", "strip_reasoning"]

_PYTHON_TAGS = {"python", "py", "python3", "ipython", "ipython3"}
_REASONING_TAGS = ("think", "thinking", "reasoning")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+-]*)[^\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class Extraction:
    """The cell found in a reply (``code`` is None when there is none), the reply without its
    reasoning (``visible``), and the number of other code blocks that were not run."""

    code: str | None
    visible: str
    ignored_blocks: int = 0
    truncated: bool = False

    @property
    def found(self) -> bool:
        return self.code is not None and bool(self.code.strip())


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>``-style sections (see rule 1 of the module docstring)."""
    for tag in _REASONING_TAGS:
        text = re.sub(rf"<{tag}>.*?</{tag}>", "", text, flags=re.DOTALL | re.IGNORECASE)
        close = re.search(rf"</{tag}>", text, flags=re.IGNORECASE)
        if close:  # the server stripped the opening tag: everything before the close is reasoning
            text = text[close.end() :]
        opened = re.search(rf"<{tag}>", text, flags=re.IGNORECASE)
        if opened:  # never closed: the reply ended while still reasoning
            text = text[: opened.start()]
    return text.strip()


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """``(tag, body, closed)`` for each fenced block, in order."""
    blocks: list[tuple[str, str, bool]] = []
    position = 0
    while True:
        opening = _FENCE.search(text, position)
        if opening is None:
            return blocks
        fence, tag = opening.group(1), opening.group(2).lower()
        body_start = opening.end() + 1
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE).search(
            text, body_start
        )
        if closing is None:  # a fence glued to the end of the last code line: "print(x)```"
            closing = re.compile(rf"{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE).search(
                text, body_start
            )
        if closing is None:
            blocks.append((tag, text[body_start:], False))
            return blocks
        blocks.append((tag, text[body_start : closing.start()], True))
        position = closing.end()


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _looks_like_code(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(
        isinstance(node, (ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom))
        for node in ast.walk(tree)
    )


def extract_cell(reply: str) -> Extraction:
    """Apply the rules of the module docstring to one reply."""
    visible = strip_reasoning(reply)
    blocks = _blocks(visible)
    tagged = [b for b in blocks if b[0] in _PYTHON_TAGS]
    candidates = tagged or [b for b in blocks if not b[0] and (_parses(b[1]) or not b[2])]
    if candidates:
        _tag, body, closed = candidates[0]
        ignored = len(candidates) - 1
        return Extraction(code=body.strip("\n") or None, visible=visible, ignored_blocks=ignored, truncated=not closed)
    if not blocks and _looks_like_code(visible):
        return Extraction(code=visible, visible=visible)
    return Extraction(code=None, visible=visible)
