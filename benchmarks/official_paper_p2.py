"""The paper's answer extraction and scoring for BLINK, CVBench, DSI-Bench, ERQA, MindCube and MMSI-Bench.

The paper's evaluation reads each benchmark's reply with its own rules (``docs/benchmarks.md``, "The paper's
setting", and the notes each spec's docstring cites). Each scorer here takes (reply text, ground truth,
choices, parameter) and returns (score in [0, 1], what it extracted), the signature every metric in
:data:`spatialclaw.benchmarks.official.OFFICIAL_METRICS` has; :data:`PAPER_METRICS_P2` (with
:mod:`~spatialclaw.benchmarks.official_paper_p2_more`) is registered there under the names the specs set in
``task.meta["metric"]``. A structured answer (what ``answer()`` recorded) reaches a scorer rendered by
:func:`~spatialclaw.benchmarks.official.render_structured` with the template given beside each scorer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "blink_extract",
    "blink_paper",
    "cvbench_paper",
    "dsibench_extract",
    "dsibench_paper",
    "erqa_paper",
    "first_labelled_letter",
    "mindcube_paper",
    "mindcube_paper_extract",
    "mmsi_paper",
    "mmsi_paper_extract",
    "option_text_letter",
]


# ------------------------------------------------------------------------------------------- shared steps


def boxed_letters(text: str, letters: str = "A-E") -> list[str]:
    """Every ``\\boxed{X}`` letter (``\\boxed{(B)}`` and ``\\boxed{B.}`` too), in order, upper-cased."""
    found = re.findall(rf"\\boxed\{{\s*\(?\s*([{letters}])\s*\)?\s*\.?\s*\}}", text, flags=re.IGNORECASE)
    return [letter.upper() for letter in found]


def first_labelled_letter(text: str, letters: str = "A-D") -> str | None:
    """The first ``X.``, ``(X)`` or ``X:`` in the text (any case, the letter standing alone), upper-cased."""
    match = re.search(rf"\(([{letters}])\)|(?<![A-Za-z])([{letters}])[.:]", text, flags=re.IGNORECASE)
    if not match:
        return None
    return (match.group(1) or match.group(2)).upper()


def single_letter(text: str, letters: str = "ABCD") -> str | None:
    """The one letter left after deleting everything that is not a letter, when it is one of ``letters``."""
    squeezed = re.sub(r"[^A-Za-z]", "", text)
    return squeezed.upper() if len(squeezed) == 1 and squeezed.upper() in letters else None


def option_text_letter(text: str, choices: Sequence[str] | None) -> str | None:
    """The letter of the option whose text equals the reply (case-insensitive, a trailing period ignored);
    an option may be stored with its label (``"A. red"``) or without."""

    def key(value: str) -> str:
        return value.strip().rstrip(".").strip().lower()

    wanted = key(text)
    if not wanted:
        return None
    for index, option in enumerate(choices or []):
        label = chr(ord("A") + index)
        bare = re.sub(r"^\s*\(?[A-Za-z]\s*[\).:]\s*", "", str(option), count=1)
        if wanted in (key(str(option)), key(bare)):
            return label
    return None


def last_answer_block(reply: str) -> str | None:
    """The content of the last ``<answer>...</answer>`` block, or None."""
    blocks = re.findall(r"<answer>(.*?)</answer>", reply, flags=re.IGNORECASE | re.DOTALL)
    return blocks[-1] if blocks else None


# ----------------------------------------------------------------------------------------------- BLINK


def blink_extract(reply: str) -> str:
    """BLINK's paper extraction, as ``"(X)"``: a bare letter; an already bracketed ``(X)``; the last
    ``\\boxed{X}``; the one ``(X)`` in the text, else the one in the last paragraph; the last ``(X)``; an
    "answer/choice/option (is) X" phrase; a leading letter not followed by a letter; else ``"(Z)"``."""
    text = reply.strip()
    if re.fullmatch(r"[A-E]", text):
        return f"({text})"
    if re.fullmatch(r"\([A-E]\)", text):
        return text
    boxed = boxed_letters(text)
    if boxed:
        return f"({boxed[-1]})"
    bracketed = re.findall(r"\(([A-E])\)", text)
    if len(bracketed) == 1:
        return f"({bracketed[0]})"
    last_paragraph = re.split(r"\n\s*\n", text)[-1]
    in_last = re.findall(r"\(([A-E])\)", last_paragraph)
    if len(in_last) == 1:
        return f"({in_last[0]})"
    if bracketed:
        return f"({bracketed[-1]})"
    phrased = re.findall(r"\b(?i:answer|choice|option)\s*(?:is\s*)?:?\s*\(?([A-E])\b", text)
    if phrased:
        return f"({phrased[-1]})"
    leading = re.match(r"\(?([A-E])(?![A-Za-z])", text)
    if leading:
        return f"({leading.group(1)})"
    return "(Z)"


def blink_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """BLINK: :func:`blink_extract` equals the answer written ``(X)`` (``"B"`` and ``"(B)"`` both read so)."""
    got = blink_extract(reply)
    target = str(gt).strip().strip("()").strip().upper()
    return (1.0 if got == f"({target})" else 0.0), got


# --------------------------------------------------------------------------------------------- CVBench


def cvbench_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """CVBench (cross-video). ``param == "yesno"``: the first whole-word yes/no (any case) in the last
    ``<answer>`` block, else in the reply, equals the answer (any case). Multiple choice, in the last
    ``<answer>`` block or else the reply: ``\\boxed{X}``; the first ``X.``, ``(X)``, ``X:`` or a leading
    ``X`` (any case); a single A-D left after deleting the rest; an option's exact text. Empty is wrong."""
    block = last_answer_block(reply)
    if param == "yesno":
        got = None
        for text in ([block] if block is not None else []) + [reply]:
            match = re.search(r"\b(yes|no)\b", text, flags=re.IGNORECASE)
            if match:
                got = match.group(1).lower()
                break
        return (1.0 if got is not None and got == str(gt).strip().rstrip(".").lower() else 0.0), got
    text = (block if block is not None else reply).strip()
    boxed = boxed_letters(text, "A-D")
    got = boxed[0] if boxed else None
    if got is None:
        labelled = re.search(r"\(([A-D])\)|(?<![A-Za-z])([A-D])[.:]|^([A-D])\b", text, flags=re.IGNORECASE)
        got = next((g.upper() for g in labelled.groups() if g), None) if labelled else None
    got = got or single_letter(text) or option_text_letter(text, choices)
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got


# ------------------------------------------------------------------------------------------- DSI-Bench

_DSI_MARKERS = (
    "final answer",
    "correct answer",
    "answer is",
    "the answer",
    "best answer",
    "best option",
    "correct option",
    "correct choice",
    "answer",
    "option",
)
_DSI_MARKER = re.compile(
    r"(?i:" + "|".join(re.escape(m) for m in _DSI_MARKERS) + r")\s*[:\-=]?\s*(?:\*\*)?\s*\(?\s*([A-D])\b"
)


def dsibench_extract(reply: str) -> str:
    """DSI-Bench's paper extraction: ``\\boxed{X}``; else the letter after the *last* answer marker ("final
    answer", "answer is", "best option", ... then ``:``/``-``/``=``, ``**``, ``(``); else the last letter
    token in the final 400 characters (followed by ``.``, ``)``, ``:``, a newline, ``**`` or the end); else
    the first character when it is A-D; else ``""``."""
    boxed = boxed_letters(reply, "A-D")
    if boxed:
        return boxed[-1]
    marked = [m.group(1) for m in _DSI_MARKER.finditer(reply)]
    if marked:
        return marked[-1]
    tail = reply[-400:]
    tokens = re.findall(r"(?<![A-Za-z])([A-D])(?=\.|\)|:|\n|\*\*|$)", tail)
    if tokens:
        return str(tokens[-1])
    first = reply.strip()[:1]
    return first if first in ("A", "B", "C", "D") else ""


def dsibench_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """DSI-Bench: :func:`dsibench_extract` equals ``GT`` (upper-cased); an empty extraction is wrong."""
    got = dsibench_extract(reply)
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got


# ------------------------------------------------------------------------------------------------ ERQA


def erqa_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ERQA, strictly: the reply with every ``.`` removed, stripped and lower-cased equals the answer stripped
    and lower-cased (``"B"``, ``"b"``, ``"B."`` score; ``"(B)"`` and ``"Answer: B"`` do not); empty is wrong."""
    got = reply.replace(".", "").strip().lower()
    return (1.0 if got and got == str(gt).strip().lower() else 0.0), got


# -------------------------------------------------------------------------------------------- MindCube

_MINDCUBE_PHRASES = (
    r"(?i:my answer is)\s*([A-E])\b",
    r"(?i:the answer is)\s*([A-E])\b",
    r"(?i:answer):\s*([A-E])\b",
    r"\b([A-E])[:.]\s*(?=[A-Z])",
)


def mindcube_paper_extract(text: str) -> str | None:
    """MindCube's paper extraction: ``\\boxed{X}``; the last ``X.``; inside an ``<Answer>``/``<answer>`` tag
    the last ``X.``, else its last standalone letter; the last of "my answer is X", "the answer is X",
    "Answer: X", ``X:``/``X.`` before a capital; the last standalone A-E; else None."""
    boxed = boxed_letters(text)
    if boxed:
        return boxed[-1]
    dotted = re.findall(r"\b([A-E])\.", text)
    if dotted:
        return str(dotted[-1])
    tagged = re.search(r"<answer>(.*?)(?:</answer>|$)", text, flags=re.IGNORECASE | re.DOTALL)
    if tagged:
        inside = re.findall(r"\b([A-E])\b", tagged.group(1))
        if inside:
            return str(inside[-1])
    hits = [(m.start(), m.group(1)) for pattern in _MINDCUBE_PHRASES for m in re.finditer(pattern, text)]
    if hits:
        return max(hits)[1]
    standalone = re.findall(r"\b([A-E])\b", text)
    return standalone[-1] if standalone else None


def mindcube_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MindCube: :func:`mindcube_paper_extract` equals ``gt_answer`` (upper-cased) exactly."""
    got = mindcube_paper_extract(reply.strip())
    return (1.0 if got is not None and got == str(gt).strip().upper() else 0.0), got


# ------------------------------------------------------------------------------------------ MMSI-Bench


def mmsi_paper_extract(reply: str) -> str | None:
    """MMSI-Bench's paper extraction: inside ````x```` or ```x``` the first standalone A-D; ``\\boxed{X}``; the
    first ``X.``, ``(X)``, ``X:`` (any case); the first standalone A-D not followed by a space and a
    letter; the single letter left after removing punctuation and spaces."""
    quoted = re.search(r"``(.*?)``|`(.*?)`", reply, flags=re.DOTALL)
    if quoted:
        inside = re.search(r"\b([A-D])\b", quoted.group(1) if quoted.group(1) is not None else quoted.group(2))
        if inside:
            return inside.group(1)
    boxed = boxed_letters(reply, "A-D")
    if boxed:
        return boxed[0]
    labelled = first_labelled_letter(reply)
    if labelled:
        return labelled
    standalone = re.search(r"\b([A-D])\b(?!\s[A-Za-z])", reply)
    if standalone:
        return standalone.group(1)
    squeezed = re.sub(r"[\s\W_]", "", reply)
    return squeezed.upper() if len(squeezed) == 1 and squeezed.isalpha() else None


def mmsi_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Bench: :func:`mmsi_paper_extract` equals the answer, upper-cased."""
    got = mmsi_paper_extract(reply)
    return (1.0 if got is not None and got == str(gt).strip().upper() else 0.0), got
