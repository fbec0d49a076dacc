"""The paper's multiple-choice scoring for PAI-Bench, PerceptionComp, SPAR-Bench, SpatialTree-Bench, SPBench,
Video-MME(-v2), ViewSpatial-Bench, VSI-Bench (debiased) and VSTI-Bench: letter extraction from free text.

Written from the facts gathered on the paper's setting (its loaders and scoring), not from its code: each
function reads the option letter from a reply the way the paper's evaluation does, then compares it with the
ground truth. A structured answer (``answer("B")``) reaches these functions as the bare letter ``"B"``
(see :func:`~spatialclaw.benchmarks.official.render_structured`), which every chain here reads as B.
Each scorer: (reply text, ground truth, choices, parameter) -> (score in [0, 1], what was extracted).
The numeric scorers are in :mod:`spatialclaw.benchmarks.official_paper_p3_numeric`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from spatialclaw.benchmarks.official_common import option_text, vsi_fuzzy

__all__ = [
    "boxed_letter",
    "marked_letter",
    "mmsi_chain_letter",
    "pai_paper_choice",
    "perceptioncomp_paper_choice",
    "spar_paper_letter",
    "spar_paper_mca",
    "spatialtree_paper_letter",
    "videomme_base_letter",
    "videomme_paper_choice",
    "videommev2_paper_choice",
    "viewspatial_paper_choice",
    "viewspatial_paper_letter",
    "vsi_paper_letter",
    "vsi_paper_mca",
]


def _letters(choices: Sequence[str] | None, default: str = "ABCD") -> str:
    """The option letters a question offers: A.. up to its number of options, else ``default``."""
    return "".join(chr(ord("A") + i) for i in range(len(choices))) if choices else default


def boxed_letter(text: str, letters: str) -> str | None:
    """The letter in the last ``\\boxed{X}`` (parentheses or a period around X allowed), as a capital."""
    found = re.findall(rf"\\boxed\{{\s*\(?\s*([{letters}])\s*\)?\s*\.?\s*\}}", text, flags=re.IGNORECASE)
    return found[-1].upper() if found else None


def marked_letter(text: str, letters: str, last: bool = False) -> str | None:
    """The first (or last) letter written ``X.``, ``(X)`` or ``X:`` as a word of its own, any case."""
    pattern = rf"\(([{letters}])\)|\b([{letters}])[.:](?!\w)"
    found = [a or b for a, b in re.findall(pattern, text, flags=re.IGNORECASE)]
    if not found:
        return None
    return str(found[-1] if last else found[0]).upper()


def _only_letter(text: str, letters: str) -> str | None:
    """The letter left when every non-letter is removed, if exactly one remains and it is an option letter."""
    rest = re.sub(r"[^A-Za-z]", "", text)
    return rest.upper() if len(rest) == 1 and rest.upper() in letters else None


# ----------------------------------------------------------------------------------- MMSI-style (PAI-Bench)


def mmsi_chain_letter(text: str, letters: str = "ABCD") -> str:
    """The MMSI-style chain: the first standalone letter inside ``` ``x`` ``` or `` `x` ``; ``\\boxed{X}``; the
    first ``X.``, ``(X)`` or ``X:`` in any case; the first standalone capital not followed by a space and a
    letter; a single letter left after removing the rest; else ``""`` (wrong)."""
    for pattern in (r"```(.*?)```", r"`([^`]*)`"):
        for inner in re.findall(pattern, text, flags=re.DOTALL):
            found = re.search(rf"\b([{letters}])\b", inner)
            if found:
                return found.group(1)
    return (
        boxed_letter(text, letters)
        or marked_letter(text, letters)
        or _standalone(text, letters)
        or _only_letter(text, letters)
        or ""
    )


def _standalone(text: str, letters: str) -> str | None:
    found = re.search(rf"\b([{letters}])\b(?!\s[A-Za-z])", text)
    return found.group(1) if found else None


def pai_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """PAI-Bench (understanding): :func:`mmsi_chain_letter` over A-D against the answer letter; an empty
    extraction is wrong."""
    got = mmsi_chain_letter(reply, "ABCD")
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got


# ------------------------------------------------------------------------------------------ PerceptionComp


def perceptioncomp_paper_choice(
    reply: str, gt: Any, choices: Any = None, param: str | None = None
) -> tuple[float, Any]:
    """PerceptionComp: ``<answer>X</answer>``; ``\\boxed{X}``; "answer" then spaces or a colon and X; the
    *last* standalone A-E in any case (so a trailing article "a" reads A); a single letter. Compared with the
    answer upper-cased."""
    letters = "ABCDE"
    tag = re.findall(r"<answer>\s*\(?([A-E])\)?\.?\s*</answer>", reply, flags=re.IGNORECASE)
    said = re.findall(r"answer[\s:]+\(?([A-E])\b", reply, flags=re.IGNORECASE)
    alone = re.findall(r"\b([A-E])\b", reply, flags=re.IGNORECASE)
    got = (
        (tag[-1].upper() if tag else None)
        or boxed_letter(reply, letters)
        or (said[0].upper() if said else None)
        or (alone[-1].upper() if alone else None)
        or _only_letter(reply, letters)
        or ""
    )
    return (1.0 if got and got == str(gt).strip().upper() else 0.0), got


# -------------------------------------------------------------------------------------------- SPAR-Bench


def spar_paper_letter(reply: str) -> str:
    """SPAR-Bench's letter: ``\\boxed{X}``; the first ``(X)``, ``X.``, ``X:`` or ``X)`` (A-D, any case); a
    single A-D left after deleting everything else; the first character if it is A-D; else the text."""
    text = reply.strip()
    first = re.search(r"\(([A-D])\)|\b([A-D])[.:)](?!\w)", text, flags=re.IGNORECASE)
    return (
        boxed_letter(text, "ABCD")
        or (((first.group(1) or first.group(2)).upper()) if first else None)
        or _only_letter(text, "ABCD")
        or (text[0] if text[:1] in ("A", "B", "C", "D") else None)
        or text
    )


def spar_paper_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench multiple choice: :func:`spar_paper_letter`, then SPAR's lenient match, lower-cased: equal,
    or the extraction contained in the answer, or its first character equal to the answer."""
    got = spar_paper_letter(reply)
    pred, target = got.lower(), str(gt).strip().lower()
    right = bool(pred) and (pred == target or pred in target or pred[:1] == target)
    return (1.0 if right else 0.0), got


# ---------------------------------------------------------------- VSI-Bench (debiased), SPBench, SpatialTree


def vsi_paper_letter(reply: str, choices: Sequence[str] | None, letters: str | None = None) -> str:
    """``\\boxed{X}``; the first ``X.``, ``(X)`` or ``X:`` (any case); the first token when it is a letter;
    the option whose text the reply is (case-insensitive, trailing period ignored); else ``""``."""
    letters = letters or _letters(choices)
    token = vsi_fuzzy(reply.strip())
    got = boxed_letter(reply, letters) or marked_letter(reply, letters)
    if got:
        return got
    if len(token) == 1 and token.upper() in letters:
        return token.upper()
    wanted = reply.strip().rstrip(".").strip().lower()
    for i, option in enumerate(choices or []):
        if wanted and wanted == option_text(option).rstrip(".").strip().lower():
            return chr(ord("A") + i)
    return ""


def vsi_paper_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench debiased and SPBench multiple choice: :func:`vsi_paper_letter`, compared case-insensitively."""
    got = vsi_paper_letter(reply, choices)
    return (1.0 if got and got.lower() == str(gt).strip().lower() else 0.0), got


def spatialtree_paper_letter(reply: str) -> str:
    """SpatialTree-Bench multiple choice: ``\\boxed{X}``; the first ``X.``, ``(X)`` or ``X:`` (A-K, any case);
    the first token when it is a letter; else ``""``."""
    letters = "ABCDEFGHIJK"
    got = boxed_letter(reply, letters) or marked_letter(reply, letters)
    if got:
        return got
    token = vsi_fuzzy(reply.strip())
    return token.upper() if len(token) == 1 and token.upper() in letters else ""


# --------------------------------------------------------------------------------------- Video-MME (v1, v2)


def videomme_base_letter(reply: str) -> str:
    """The base extractor: ``\\boxed{X}``; the first letter followed by ``.``, ``:`` or ``)`` (optionally
    after ``(``), any letter and case, with no word boundary (so ``"Answer: B"`` reads R); a single letter left
    after removing non-letters; else the stripped text."""
    boxed = re.findall(r"\\boxed\{\s*\(?\s*([A-Za-z])\s*\)?\s*\.?\s*\}", reply)
    if boxed:
        return str(boxed[-1]).upper()
    first = re.search(r"\(?([A-Za-z])[.:)]", reply)
    if first:
        return first.group(1).upper()
    rest = re.sub(r"[^A-Za-z]", "", reply)
    return rest.upper() if len(rest) == 1 else reply.strip()


def videomme_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME: :func:`videomme_base_letter` equals the answer (upper-cased)."""
    got = videomme_base_letter(reply)
    return (1.0 if got == str(gt).strip().upper() else 0.0), got


_V2_PREFIXES = (
    "Final Answer:",
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
    "Answer:",
    "Option:",
)


def videommev2_letter(reply: str) -> str | None:
    """Video-MME-v2: the answer prefixes removed; ``\\boxed{X}`` (A-H); a reply of more than ten words with no
    capital A-H reads nothing; else the first capital A-H. None when nothing is read."""
    text = reply.strip()
    for prefix in _V2_PREFIXES:
        text = text.replace(prefix, "")
    boxed = re.findall(r"\\boxed\{\s*\(?\s*([A-H])\s*\)?\s*\.?\s*\}", text)
    if boxed:
        return str(boxed[-1])
    found = re.search(r"[A-H]", text)
    if len(text.split()) > 10 and not found:
        return None
    return found.group() if found else None


def videommev2_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME-v2: :func:`videommev2_letter` equals the answer; nothing read is wrong."""
    got = videommev2_letter(reply)
    return (1.0 if got is not None and got == str(gt).strip().upper() else 0.0), got


# ----------------------------------------------------------------------------------------- ViewSpatial-Bench

_MARKERS = (
    r"final answer|correct answer|answer is|the answer|best answer|best option|correct option|correct choice|"
    r"answer|option"
)


def viewspatial_paper_letter(reply: str) -> str | None:
    """ViewSpatial-Bench: ``\\boxed{X}``; ``<answer>X</answer>``; the letter after the *last* answer-marker
    phrase ("final answer", "the answer", "option", ...); the last ``(X)``, then the last ``X.``, then the
    last ``X:``; a single letter; the last standalone capital A-D in the final 400 characters."""
    letters = "ABCD"
    boxed = boxed_letter(reply, letters)
    if boxed:
        return boxed
    tag = re.findall(r"<answer>\s*\(?([A-D])\)?\.?\s*</answer>", reply, flags=re.IGNORECASE)
    if tag:
        return str(tag[-1]).upper()
    marker = re.findall(rf"(?i:{_MARKERS})\s*[:\-=]?\s*(?:\*\*)?\s*\(?([A-D])\b", reply)
    if marker:
        return str(marker[-1]).upper()
    for pattern in (r"\(([A-D])\)", r"\b([A-D])\.", r"\b([A-D]):"):
        found = re.findall(pattern, reply)
        if found:
            return str(found[-1])
    only = _only_letter(reply, letters)
    if only:
        return only
    tail = re.findall(r"\b([A-D])\b", reply[-400:])
    return tail[-1] if tail else None


def viewspatial_paper_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ViewSpatial-Bench: :func:`viewspatial_paper_letter` equals the answer's first letter (``"A. right"``
    -> A)."""
    got = viewspatial_paper_letter(reply)
    target = str(gt).strip()[:1].upper()
    return (1.0 if got is not None and got == target else 0.0), got
