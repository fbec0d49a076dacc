"""Answer extraction: the option letter or the quantity a model's free-form reply states.

:func:`extract_choice` finds the chosen option letter in text such as ``"B"``, ``"(B)"``, ``"B."``,
``"B. the chair"``, ``"The answer is B"``, ``"<answer>B</answer>"`` or the option's own text
(``"left"``, ``"Left, because ..."``). :func:`extract_number` finds a quantity such as ``"2.5"``,
``"about 3 meters"``, ``"150 cm"``, ``"5 ft 6 in"``, ``"three"``, ``"2-3 m"`` (a range gives its
midpoint) and optionally converts it to a requested unit.

These lenient extractors serve local and synthetic tasks (and the agent's reading of a free-text answer);
benchmark adapters use each benchmark's official extraction (:mod:`spatialclaw.benchmarks.scoring.metrics`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "choice_letters",
    "extract_choice",
    "extract_number",
    "focus",
    "norm",
    "normalize_choice_answer",
]


# --------------------------------------------------------------------------------------------- choices


def choice_letters(n: int) -> list[str]:
    """``["A", "B", ...]`` for ``n`` options (at most 26)."""
    if not 0 < n <= 26:
        raise ValueError(f"a multiple-choice question needs 1..26 options, got {n}")
    return [chr(ord("A") + i) for i in range(n)]


_OPTION_PREFIX = re.compile(r"^\s*\(?([A-Za-z])\s*[\).:]\s+")
_ANSWER_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.DOTALL | re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER_CUE = re.compile(
    r"(?:final\s+answer|the\s+answer|answer|correct\s+(?:option|choice))\s*(?:is|:|=)?\s*(?:option\s+)?", re.IGNORECASE
)


def _option_text(option: str) -> str:
    """An option without a leading ``"A. "`` / ``"(A) "`` label (VSI-Bench stores options that way)."""
    return _OPTION_PREFIX.sub("", str(option), count=1).strip()


def norm(text: str) -> str:
    """``text`` lower-cased, punctuation other than ``.`` and ``-`` turned to spaces, spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s.\-]", " ", str(text).lower())).strip(" .")


def focus(text: str) -> str:
    """The part of a reply that holds the answer: an ``<answer>`` tag, a ``\\boxed{}``, or the text after the
    last "answer is"/"answer:" cue; otherwise the whole text."""
    tag: list[str] = _ANSWER_TAG.findall(text)
    if tag:
        return tag[-1]
    boxed: list[str] = _BOXED.findall(text)
    if boxed:
        return boxed[-1]
    cues = list(_ANSWER_CUE.finditer(text))
    if cues:
        tail = text[cues[-1].end() :].strip()
        if tail:
            return tail
    return text


def extract_choice(text: Any, choices: Sequence[str]) -> str | None:
    """The option letter (``"A"``, ``"B"``, ...) that ``text`` chooses among ``choices``, or None.

    ``choices`` are the option texts in order (a leading ``"A. "`` label on them is ignored). Accepted
    forms: a bare letter, ``"(B)"``, ``"B."``, ``"B) ..."``, ``"B. option text"``, ``"The answer is B"``,
    ``"<answer>B</answer>"``, ``"\\boxed{B}"``, the option's text (case and punctuation ignored) and the
    option's text followed by trailing words. Letters outside the option range are rejected. When the text
    names more than one option and nothing disambiguates it, the result is None (never a guess).
    """
    if text is None:
        return None
    if isinstance(text, int) and not isinstance(text, bool):
        letters = choice_letters(len(choices))
        return letters[text] if 0 <= text < len(letters) else None
    raw = str(text).strip()
    if not raw or not choices:
        return None
    letters = choice_letters(len(choices))
    options = [norm(_option_text(c)) for c in choices]
    for candidate in (focus(raw), raw):
        letter = _choice_in(candidate, letters, options)
        if letter:
            return letter
    return None


def _choice_in(text: str, letters: list[str], options: list[str]) -> str | None:
    stripped = text.strip().strip("*`'\" ")
    letter = _leading_label(stripped, letters, options)
    if letter:
        return letter
    normalized = norm(stripped)
    # The option's text, exactly.
    exact = [i for i, o in enumerate(options) if o and normalized == o]
    if len(exact) == 1:
        return letters[exact[0]]
    # The option's text followed by trailing words ("left, because ..."): the longest option that prefixes.
    prefixed = [i for i, o in enumerate(options) if o and re.match(re.escape(o) + r"(?![\w])", normalized)]
    mentioned = [
        i for i, o in enumerate(options) if o and re.search(r"(?<![\w])" + re.escape(o) + r"(?![\w])", normalized)
    ]
    if prefixed:
        best = max(prefixed, key=lambda i: len(options[i]))
        if all(options[i] in options[best] for i in mentioned):
            return letters[best]
    # Explicit labels anywhere: "(B)", "option B", "choice B".
    labelled: set[str] = {
        g.upper()
        for g in re.findall(r"\(([A-Za-z])\)|\b(?:option|choice)\s+([A-Za-z])\b", text, flags=re.IGNORECASE)
        for g in g
        if g
    }
    labelled &= set(letters)
    if len(labelled) == 1:
        return labelled.pop()
    # The option text appearing once, as a phrase, where no other option does.
    found = [i for i in mentioned if not any(i != j and options[i] in options[j] for j in mentioned)]
    if len(found) == 1:
        return letters[found[0]]
    # A lone capital letter naming an option ("I think it's B"); "A" and "I" are too common to count.
    lone: set[str] = {
        t for t in re.findall(r"(?<![\w'])([A-Z])(?![\w'])", text) if t in letters and t not in {"A", "I"}
    }
    if len(lone) == 1:
        return lone.pop()
    return None


def _leading_label(text: str, letters: list[str], options: list[str]) -> str | None:
    """A reply that starts with an option label: ``"B"``, ``"(B)"``, ``"B."``, ``"B) chair"``, ``"B is right"``."""
    bare = re.fullmatch(r"\(?\s*([A-Za-z])\s*\)?\s*[.:]?", text)
    if bare:
        letter = bare.group(1).upper()
        return letter if letter in letters else None
    labelled = re.match(r"^(?:\(\s*([A-Za-z])\s*\)|([A-Za-z])\s*[.):,])(?=\s)", text)
    if labelled:
        letter = (labelled.group(1) or labelled.group(2)).upper()
        return letter if letter in letters else None
    spaced = re.match(r"^([A-Z])\s+(.*)$", text, flags=re.DOTALL)
    if spaced and spaced.group(1) in letters:
        letter = spaced.group(1)
        rest = norm(spaced.group(2))
        # "A" and "I" are also English words: accept them only when the option's text or "is" follows.
        if (
            letter not in {"A", "I"}
            or rest.startswith(("is ", "is."))
            or rest == "is"
            or (options[letters.index(letter)] and rest.startswith(options[letters.index(letter)]))
        ):
            return letter
    return None


def normalize_choice_answer(value: Any, choices: Sequence[str]) -> str | None:
    """A ground truth for multiple choice as a letter: accepts ``"B"``, ``"(B)"``, ``"B. text"``, the option
    text, or a 0-based option index. None when it matches no option."""
    return extract_choice(value, choices)


# --------------------------------------------------------------------------------------------- numbers

_UNIT_TO_METRES = {
    "mm": 0.001,
    "millimeter": 0.001,
    "millimeters": 0.001,
    "millimetre": 0.001,
    "millimetres": 0.001,
    "cm": 0.01,
    "centimeter": 0.01,
    "centimeters": 0.01,
    "centimetre": 0.01,
    "centimetres": 0.01,
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "km": 1000.0,
    "kilometer": 1000.0,
    "kilometers": 1000.0,
    "kilometre": 1000.0,
    "kilometres": 1000.0,
    "in": 0.0254,
    "inch": 0.0254,
    "inches": 0.0254,
    '"': 0.0254,
    "″": 0.0254,
    "ft": 0.3048,
    "foot": 0.3048,
    "feet": 0.3048,
    "'": 0.3048,
    "′": 0.3048,
    "yd": 0.9144,
    "yard": 0.9144,
    "yards": 0.9144,
}
_AREA_UNITS = {
    "m2": 1.0,
    "m²": 1.0,
    "square meters": 1.0,
    "square metres": 1.0,
    "sq m": 1.0,
    "ft2": 0.09290304,
    "ft²": 0.09290304,
    "square feet": 0.09290304,
    "sq ft": 0.09290304,
}

_SMALL = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_TENS = {
    w: 10 * (i + 2)
    for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])
}
_SCALES = {"hundred": 100, "thousand": 1000}
_PHRASES = {"a dozen": 12, "a half": 0.5, "a couple": 2}

_NUMBER_WORD = "|".join(sorted(list(_SMALL) + list(_TENS) + list(_SCALES), key=len, reverse=True))
_WORDS_RE = re.compile(rf"\b(?:{_NUMBER_WORD})(?:[\s-]+(?:and\s+)?(?:{_NUMBER_WORD}))*\b", re.IGNORECASE)
_NUM = r"[-+]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
_UNIT_RE = (
    r"(?:square\s+(?:meters|metres|feet)|sq\s*(?:m|ft)|m2|m²|ft2|ft²|millimet(?:er|re)s?|centimet(?:er|re)s?|"
    r"kilomet(?:er|re)s?|met(?:er|re)s?|inch(?:es)?|feet|foot|yards?|mm|cm|km|m|ft|in|yd|\"|″|'|′)"
)
_QUANTITY = re.compile(
    rf"(?P<a>{_NUM})\s*(?P<ua>{_UNIT_RE}(?![\w²])|['′\"″])?"
    rf"(?:\s*(?:-|–|—|to|and)\s*(?P<b>{_NUM})\s*(?P<ub>{_UNIT_RE}(?![\w²])|['′\"″])?)?"
    rf"(?:\s*(?P<c>\d+(?:\.\d+)?)\s*(?P<uc>inch(?:es)?|in|\"|″)(?!\w))?",
    re.IGNORECASE,
)


def _words_to_number(phrase: str) -> float | None:
    total, current = 0.0, 0.0
    seen = False
    for token in re.split(r"[\s-]+", phrase.lower()):
        if token in {"and", ""}:
            continue
        if token in _SMALL:
            current += _SMALL[token]
        elif token in _TENS:
            current += _TENS[token]
        elif token in _SCALES:
            current = max(current, 1.0) * _SCALES[token]
            if _SCALES[token] >= 1000:
                total, current = total + current, 0.0
        else:
            return None
        seen = True
    return total + current if seen else None


def _replace_number_words(text: str) -> str:
    def convert(phrase: str) -> str:
        value = _words_to_number(phrase)
        return phrase if value is None else _fmt(value)

    def sub(m: re.Match[str]) -> str:
        # "and" joins parts of one number only after a scale ("one hundred and twenty"); otherwise it
        # separates two numbers ("between two and three").
        parts = re.split(r"(?<!hundred)(?<!thousand)\s+and\s+", m.group(0), flags=re.IGNORECASE)
        return " and ".join(convert(part) for part in parts)

    text = re.sub(
        r"\b(?:a\s+dozen|a\s+half|a\s+couple)\b",
        lambda m: _fmt(_PHRASES[re.sub(r"\s+", " ", m.group(0).lower())]),
        text,
        flags=re.IGNORECASE,
    )
    return _WORDS_RE.sub(sub, text)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _to_float(token: str | None) -> float | None:
    if not token or token in {"+", "-", ".", "+.", "-."}:
        return None
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


def extract_number(text: Any, unit: str | None = None) -> float | None:
    """The quantity ``text`` states, as a float, or None when there is none.

    Looks in an ``<answer>`` tag, a ``\\boxed{}``, or after an "answer is" cue when present, else in the
    whole text, and takes the first quantity there. Accepts digits (``"1,250.5"``, ``"3e2"``), number words
    (``"three"``, ``"twenty-five"``, ``"a dozen"``), ranges (``"2-3 m"``, ``"between 2 and 3"``,
    ``"2 to 3"``: the midpoint), feet and inches together (``"5 ft 6 in"``, ``5'6"``).

    ``unit``: when given (``"m"``, ``"cm"``, ``"mm"``, ``"ft"``, ``"in"``, ``"m2"``, ...), a quantity written
    with a length (or area) unit is converted to it (``"150 cm"`` with ``unit="m"`` gives 1.5); a bare
    number is returned as written, assumed to be in ``unit`` already. Without ``unit`` the written number
    is returned unconverted.
    """
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text) if math.isfinite(float(text)) else None
    raw = str(text)
    for candidate in (focus(raw), raw):
        value = _first_quantity(_replace_number_words(candidate), unit)
        if value is not None:
            return value
    return None


def _first_quantity(text: str, unit: str | None) -> float | None:
    for m in _QUANTITY.finditer(text):
        a = _to_float(m.group("a"))
        if a is None:
            continue
        unit_a = (m.group("ua") or "").lower()
        b = _to_float(m.group("b"))
        if b is not None and m.group(0)[len(m.group("a")) :].lstrip().startswith("-") and b < 0:
            b = -b  # "2-3" is a range, not 2 and -3
        unit_b = (m.group("ub") or "").lower()
        value = a
        written_unit = unit_a or unit_b
        if b is not None and b >= a:
            value = (a + b) / 2.0 if not (unit_a and unit_b and unit_a != unit_b) else a
        elif b is not None and unit_a in {"ft", "foot", "feet", "'", "′"}:
            value = a
        inches = _to_float(m.group("c"))
        if inches is not None and unit_a in {"ft", "foot", "feet", "'", "′"}:
            value = a + inches / 12.0
            written_unit = "ft"
        if not math.isfinite(value):
            continue
        return _convert(value, written_unit, unit)
    return None


def _unit_factor(name: str) -> tuple[str, float] | None:
    key = re.sub(r"\s+", " ", name.lower().strip())
    if key in _AREA_UNITS:
        return "area", _AREA_UNITS[key]
    if key in _UNIT_TO_METRES:
        return "length", _UNIT_TO_METRES[key]
    return None


def _convert(value: float, written: str, target: str | None) -> float:
    if not target or not written:
        return value
    src, dst = _unit_factor(written), _unit_factor(target)
    if dst is None:
        raise ValueError(f"unknown unit {target!r}: use one of m, cm, mm, km, ft, in, yd, m2, ft2")
    if src is None or src[0] != dst[0]:
        return value
    return value * src[1] / dst[1]
