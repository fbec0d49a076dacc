"""The option-letter extraction steps several benchmarks' scorers share: boxed, labelled, standalone and
first-token letters, an option's text, the base extractor and the MMMU-style parser.

Each benchmark's own chain (the order it tries these steps, and its comparison) is in its module under
:mod:`spatialclaw.benchmarks.specs`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np


def option_text(option: str) -> str:
    """An option without its label: ``"A. red"`` and ``"(a) red"`` -> ``"red"``."""
    return re.sub(r"^\s*\(?[A-Za-z]\s*[\).:]\s+", "", str(option), count=1).strip()


def vsi_fuzzy(reply: str) -> str:
    """VSI-Bench's ``fuzzy_matching``: the reply's first space-separated token, trailing dots removed."""
    return reply.split(" ")[0].rstrip(".").strip()


def mmmu_parse(reply: str, options: Sequence[str]) -> str | None:
    """The MMMU-style option parser used by PerceptionComp and SpatialTree-Bench: ``(X)``, then ``X `` and
    ``X.`` occurrences, then option texts when the reply is longer than five words; several candidates:
    the last one in the reply. None when nothing matches (the official code picks a random option)."""
    letters = [chr(ord("A") + i) for i in range(len(options))]
    index2ans = dict(zip(letters, options, strict=True))
    for char in [",", ".", "!", "?", ";", ":", "'"]:
        reply = reply.strip(char)
    reply = " " + reply + " "
    by_index, bracketed = True, False
    candidates = [c for c in letters if f"({c})" in reply]
    bracketed = bool(candidates)
    if not candidates:
        candidates = [c for c in letters if f"{c} " in reply]
    if not candidates:
        candidates = [c for c in letters if f"{c}." in reply]
    if not candidates and len(reply.split()) > 5:
        candidates = [c for c, text in index2ans.items() if text.lower() in reply.lower()]
        by_index = False
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    if by_index:
        where = [reply.rfind(f"({c})") if bracketed else reply.rfind(f" {c} ") for c in candidates]
    else:
        where = [reply.lower().rfind(index2ans[c].lower()) for c in candidates]
    return candidates[int(np.argmax(where))]


def boxed_letters(text: str, letters: str = "A-E") -> list[str]:
    """Every ``\\boxed{X}`` letter (``\\boxed{(B)}`` and ``\\boxed{B.}`` too), in order, upper-cased."""
    found = re.findall(rf"\\boxed\{{\s*\(?\s*([{letters}])\s*\)?\s*\.?\s*\}}", text, flags=re.IGNORECASE)
    return [letter.upper() for letter in found]


def first_labelled_letter(text: str, letters: str = "A-D") -> str | None:
    """The reference's labelled letter, any case, upper-cased: the first ``X.`` anywhere in the text; else the
    first ``(X)``; else the first ``X:`` (the letter standing alone). So ``I rule out (A). So B.`` reads B:
    the kinds are tried in turn, not by position."""
    for pattern in (rf"(?<![A-Za-z])([{letters}])\.", rf"\(([{letters}])\)", rf"(?<![A-Za-z])([{letters}]):"):
        match = re.search(pattern, text, flags=re.IGNORECASE)
        if match:
            return match.group(1).upper()
    return None


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


def base_extract(reply: str) -> str:
    """The paper's base letter extractor: ``\\boxed{X}``; else the *first* letter followed by ``.``, ``:`` or
    ``)`` (optionally after ``(``), any case, so "Answer: B" reads R; else the single letter left after
    removing non-letters; else the reply itself. Letters are upper-cased."""
    boxed = boxed_letters(reply, "A-Z")
    if boxed:
        return boxed[0]
    labelled = re.search(r"\(?([A-Za-z])[.:)]", reply)
    if labelled:
        return labelled.group(1).upper()
    letters = re.sub(r"[^A-Za-z]", "", reply)
    if len(letters) == 1:
        return letters.upper()
    return reply.strip()


def offered_letters(choices: Sequence[str] | None, default: str = "ABCD") -> str:
    """The option letters a question offers: A.. up to its number of options, else ``default``."""
    return "".join(chr(ord("A") + i) for i in range(len(choices))) if choices else default


def boxed_letter(text: str, letters: str) -> str | None:
    """The letter in the last ``\\boxed{X}`` (parentheses or a period around X allowed), as a capital."""
    found = re.findall(rf"\\boxed\{{\s*\(?\s*([{letters}])\s*\)?\s*\.?\s*\}}", text, flags=re.IGNORECASE)
    return found[-1].upper() if found else None


def marked_letter(text: str, letters: str) -> str | None:
    """:func:`first_labelled_letter` over ``letters`` with the letter a word of its own (``X.``/``X:`` not
    followed by a word character): ``X.`` anywhere first, then ``(X)``, then ``X:``."""
    for pattern in (rf"\b([{letters}])\.(?!\w)", rf"\(([{letters}])\)", rf"\b([{letters}]):(?!\w)"):
        match = re.search(pattern, text, flags=re.IGNORECASE)
        if match:
            return match.group(1).upper()
    return None


def only_letter(text: str, letters: str) -> str | None:
    """The letter left when every non-letter is removed, if exactly one remains and it is an option letter."""
    rest = re.sub(r"[^A-Za-z]", "", text)
    return rest.upper() if len(rest) == 1 and rest.upper() in letters else None
