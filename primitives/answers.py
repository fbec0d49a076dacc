"""What counts as an answer: one normalisation, used by the kernel's ``answer()`` and by the host.

The kernel's ``answer(value)`` normalises what the model passed (``"(B)"`` -> ``"B"``, ``"3.2 m"`` ->
``3.2``) and publishes the result; the host treats that message as a claim and checks it again with
:func:`validate_claim`, the same code, against its own copy of the task's choices and answer type. Only
a claim that passes is recorded, so nothing a cell does (publishing the answer message directly,
patching ``answer``) can record a value the question does not allow.

A benchmark scored as its reference scores it (the task's ``meta["scoring"] == "reference"``, the default for
the paper's benchmarks) records the text given instead, as the reference's ``ReturnAnswer`` stores
``str(value)``: nothing is normalised or checked against the options, and the benchmark's own extractor reads
it when the episode is scored (:func:`normalise_answer`'s ``keep_text``).

This module is pure Python (no NumPy, no IPython) so that the host imports it without the kernel's
dependencies.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ANSWER_TYPES",
    "MAX_TEXT_ANSWER_CHARS",
    "AnswerError",
    "keeps_text",
    "normalise_answer",
    "normalise_for",
    "option_key",
    "option_letters",
    "validate_claim",
]

MAX_TEXT_ANSWER_CHARS = 1000
"""A text answer is a few words; anything longer is rejected rather than recorded."""

ANSWER_TYPES = ("multiple_choice", "number", "text", "yes_no")


class AnswerError(ValueError):
    """The submitted answer does not fit the question's answer type; the message says what would."""


def option_letters(count: int) -> list[str]:
    """``["A", "B", ...]`` for ``count`` options."""
    return [chr(ord("A") + i) for i in range(count)]


def option_key(text: Any) -> str:
    """An option's text reduced for comparison: case-folded, whitespace collapsed, outer quotes and
    trailing punctuation removed (``" The Chair. "`` and ``"the chair"`` compare equal)."""
    reduced = " ".join(str(text).split()).casefold()
    reduced = reduced.strip("\"'`*")
    return reduced.rstrip(".,;:!").strip()


# "B", "(B)", "B.", "B:", "B)", "[B]", optionally followed by the option's text ("B. the chair")
_LETTER_FORM = re.compile(
    r"^\s*(?:option\s+)?[\(\[]?([A-Za-z])[\)\]]?(?:\s*[.:)\-]\s*|\s+|$)(.*)$", re.DOTALL | re.IGNORECASE
)


def _scalar(value: Any) -> Any:
    """A NumPy/torch scalar (anything with ``.item()`` and size 1) as its Python value."""
    if hasattr(value, "item") and getattr(value, "size", 1) in (1, None) and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (TypeError, ValueError):
            return value
    return value


def _choice(value: Any, choices: list[str], labels: list[str] | None = None) -> str | int:
    if labels is not None:
        return _numbered_choice(value, choices, labels)
    letters = option_letters(len(choices))
    options = "; ".join(f"{letter}. {choice}" for letter, choice in zip(letters, choices, strict=True))
    value = _scalar(value)
    if isinstance(value, bool) or value is None:
        raise AnswerError(f"answer with an option's letter; got {value!r}. The options are {options}")
    if isinstance(value, int) and 0 <= value < len(choices):
        raise AnswerError(f"answer with the option's letter, not a position: the options are {options}")
    if not isinstance(value, (str, int, float)):
        raise AnswerError(
            f"answer with an option's letter (a string); got a {type(value).__name__}. The options are {options}"
        )
    text = str(value).strip()
    by_text: dict[str, list[str]] = {}
    for letter, choice in zip(letters, choices, strict=True):
        by_text.setdefault(option_key(choice), []).append(letter)
    match = _LETTER_FORM.match(text)
    if match and match.group(1).upper() in letters:
        letter, rest = match.group(1).upper(), option_key(match.group(2))
        if not rest or rest == option_key(choices[letters.index(letter)]):
            return letter
        # "A. the table" where A is "the chair": the letter and the text disagree
        named = by_text.get(rest)
        if named and letter not in named:
            raise AnswerError(
                f"{value!r} names option {letter} but the text of option {'/'.join(named)}; answer with one letter: {options}"
            )
    named = by_text.get(option_key(text))
    if named:
        if len(named) > 1:
            raise AnswerError(
                f"{value!r} is the text of several options ({', '.join(named)}); answer with one letter: {options}"
            )
        return named[0]
    raise AnswerError(f"{value!r} is not one of the options. Answer with a letter: {options}")


# "2", "2.", "(2)", "2)", "2: the pan", "option 2"
_NUMBER_FORM = re.compile(
    r"^\s*(?:option\s+)?[\(\[]?(\d+)[\)\]]?(?:\s*[.:)\-]\s*|\s+|$)(.*)$", re.DOTALL | re.IGNORECASE
)


def _numbered_choice(value: Any, choices: list[str], labels: list[str]) -> int:
    """The number of the option ``value`` names (numbered options ``0. ...``, ``1. ...``: the number as an int)."""
    if len(labels) != len(choices) or not all(label.isdigit() for label in labels):
        raise AnswerError(f"the option numbers {labels!r} do not fit the {len(choices)} options")
    options = "; ".join(f"{label}. {choice}" for label, choice in zip(labels, choices, strict=True))
    value = _scalar(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise AnswerError(f"answer with an option's number; got {value!r}. The options are {options}")
    text = str(value).strip()
    match = _NUMBER_FORM.match(text)
    if match and match.group(1).lstrip("0").zfill(1) in labels:
        number, rest = match.group(1).lstrip("0").zfill(1), option_key(match.group(2))
        if not rest or rest == option_key(choices[labels.index(number)]):
            return int(number)
        raise AnswerError(f"{value!r} names option {number} with another text; answer with one number: {options}")
    named = [label for label, choice in zip(labels, choices, strict=True) if option_key(choice) == option_key(text)]
    if len(named) == 1:
        return int(named[0])
    if named:
        raise AnswerError(
            f"{value!r} is the text of several options ({', '.join(named)}); answer with one number: {options}"
        )
    raise AnswerError(f"{value!r} is not one of the options. Answer with an option's number: {options}")


def _number(value: Any) -> float:
    value = _scalar(value)
    if isinstance(value, bool):
        raise AnswerError("this question needs a number; got a boolean")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        number = _number_in_text(value)
    else:
        raise AnswerError(
            f"this question needs a number; got a {type(value).__name__}. Pass a float, e.g. answer(1.25)"
        )
    if not math.isfinite(number):
        raise AnswerError(f"the answer must be a finite number; got {number}")
    return number


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
# what may stand around the one number: a few words of unit or hedge ("about 3.2 m", "3.2 metres", "~4")
_AROUND = re.compile(r"^[\sA-Za-z~≈°%²³'\".:()]{0,24}$")


def _number_in_text(value: str) -> float:
    """The one number a short text states ("3.2", "3.2 m", "about 4 metres"); a text that is a JSON
    object or list, holds several numbers or a sentence is refused rather than read for its first number."""
    text = value.strip()
    how = "Pass a float, e.g. answer(1.25)"
    if text.startswith(("{", "[")):  # not text[:1] in "{[": an empty text is no structure
        raise AnswerError(f"this question needs one number; got a structure {text[:60]!r}. {how}")
    text = re.sub(r"([A-Za-z])\^?[23]\b", r"\1", text.replace(",", ""))  # "m^2", "m3": a unit's power
    found = _NUMBER.findall(text)
    if not found:
        raise AnswerError(f"this question needs a number; got {value!r}. {how}")
    if len(found) > 1:
        raise AnswerError(
            f"this question needs ONE number; {value!r} holds {len(found)} ({', '.join(found[:4])}). {how}"
        )
    rest = text.replace(found[0], " ", 1)
    if not _AROUND.match(rest):
        raise AnswerError(f"this question needs a number (a unit at most); got the text {value[:80]!r}. {how}")
    return float(found[0])


def _yes_no(value: Any) -> str:
    value = _scalar(value)
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if isinstance(value, str):
        text = option_key(value)
        if text in {"yes", "y", "true"}:
            return "yes"
        if text in {"no", "n", "false"}:
            return "no"
    raise AnswerError(f"this question needs 'yes' or 'no'; got {value!r}")


def _allowed_text(value: Any, allowed: list[str]) -> str:
    """The allowed value ``value`` names, spelt as the question lists it (compared case-insensitively)."""
    listed = ", ".join(allowed)
    value = _scalar(value)
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        for item in allowed:
            if option_key(item) == option_key(value):
                return item
    raise AnswerError(f"{value!r} is not one of the allowed answers; answer with one of: {listed}")


def _text(value: Any) -> Any:
    value = _scalar(value)
    if value is None:
        raise AnswerError("answer() needs a value, e.g. answer('the red chair')")
    if isinstance(value, float) and not math.isfinite(value):
        raise AnswerError(f"the answer must be a finite number or a text; got {value}")
    if isinstance(value, (dict, list, tuple, set)):
        raise AnswerError(f"this question needs a short text; got a {type(value).__name__}. Pass a string")
    if not isinstance(value, (str, int, float, bool)):
        value = str(value)
    if isinstance(value, str):
        if not value.strip():
            raise AnswerError("the answer is empty; give a short text")
        if len(value) > MAX_TEXT_ANSWER_CHARS:
            raise AnswerError(
                f"the answer is {len(value)} characters long; give a short text (at most {MAX_TEXT_ANSWER_CHARS})"
            )
    return value


def normalise_answer(
    value: Any,
    choices: list[str] | None = None,
    answer_type: str | None = None,
    labels: list[str] | None = None,
    allowed: list[str] | None = None,
    keep_text: bool = False,
) -> Any:
    """The answer as it is recorded, or :class:`AnswerError` saying what would fit.

    Multiple choice (``choices`` given): an option letter (``"B"``, ``"b"``, ``"(B)"``, ``"B."``,
    ``"B. the chair"``) or an option's text, returned as the letter; a text shared by several options
    must be given as a letter. Numbered options (``labels`` such as ``["0", "1", "2"]``): the option's
    number (``2``, ``"2"``, ``"2. pan left"``) or its text, returned as the int. ``"number"``: an int, a
    float or a text holding one (``"3.2 m"``), returned as a finite float, in the unit the question asks
    for. ``"yes_no"``: ``"yes"``/``"no"`` (also booleans). ``"text"``: a short text (at most
    :data:`MAX_TEXT_ANSWER_CHARS` characters); with ``allowed`` (the values the question lists) one of
    them, returned spelt as listed.

    ``keep_text`` (a benchmark scored as its reference scores it, ``meta["scoring"] == "reference"``): the
    answer as given, ``str(value)`` (a text stripped), with none of the above: ``"(b)"``, ``"b"``, ``"B. left"``,
    an option's text and a text that names no option are recorded as they are, and the benchmark's own
    extractor decides what they say when the episode is scored, as the reference's does. Refused still: no
    value (None), a value that is no text or number (a list, a dict, an array), an empty text, a text over
    :data:`MAX_TEXT_ANSWER_CHARS` characters, and any answer to a multiple-choice question without options.
    """
    if keep_text:
        return _as_given(value, choices, answer_type)
    return _checked(value, choices, answer_type, labels, allowed)


def _as_given(value: Any, choices: list[str] | None, answer_type: str | None) -> str:
    """The text of an answer recorded as given (see :func:`normalise_answer`'s ``keep_text``)."""
    kind = answer_type or ("multiple_choice" if choices else "text")
    if kind not in ANSWER_TYPES:
        raise AnswerError(f"unknown answer type {kind!r}; known: {', '.join(ANSWER_TYPES)}")
    if kind == "multiple_choice" and not choices:
        raise AnswerError("this multiple-choice question has no options to answer from")
    value = _scalar(value)
    if value is None:
        raise AnswerError("answer() needs a value, e.g. answer('B')")
    if not isinstance(value, (str, int, float, bool)):
        raise AnswerError(f"answer with a text or a number; got a {type(value).__name__}")
    text = value.strip() if isinstance(value, str) else str(value)
    if not text:
        raise AnswerError("the answer is empty; give your answer as the question asks for it")
    if len(text) > MAX_TEXT_ANSWER_CHARS:
        raise AnswerError(
            f"the answer is {len(text)} characters long; give it in at most {MAX_TEXT_ANSWER_CHARS} characters"
        )
    return text


def _checked(
    value: Any,
    choices: list[str] | None,
    answer_type: str | None,
    labels: list[str] | None,
    allowed: list[str] | None,
) -> Any:
    kind = answer_type or ("multiple_choice" if choices else "text")
    if kind not in ANSWER_TYPES:
        raise AnswerError(f"unknown answer type {kind!r}; known: {', '.join(ANSWER_TYPES)}")
    if choices:
        return _choice(value, list(choices), list(labels) if labels else None)
    if kind == "multiple_choice":
        raise AnswerError("this multiple-choice question has no options to answer from")
    if kind == "number":
        return _number(value)
    if kind == "yes_no":
        return _yes_no(value)
    if allowed:
        return _allowed_text(value, list(allowed))
    return _text(value)


def normalise_for(value: Any, spec: Mapping[str, Any] | None) -> Any:
    """:func:`normalise_answer` against a task's answer spec (its kernel ``meta``: ``choices``,
    ``answer_type``, ``option_labels``, ``allowed_answers``, ``scoring``)."""
    spec = spec or {}
    return normalise_answer(
        value,
        spec.get("choices"),
        spec.get("answer_type"),
        spec.get("option_labels"),
        spec.get("allowed_answers"),
        keeps_text(spec),
    )


def keeps_text(spec: Mapping[str, Any] | None) -> bool:
    """Whether a task's answer spec records the text given to ``answer()`` (scored as its benchmark's reference
    scores it, ``"scoring": "reference"``) rather than the normalised value."""
    return spec is not None and spec.get("scoring") == "reference"


def validate_claim(
    claim: Any,
    choices: list[str] | None = None,
    answer_type: str | None = None,
    labels: list[str] | None = None,
    allowed: list[str] | None = None,
    keep_text: bool = False,
) -> Any:
    """Check an answer message published by the kernel against the task (the arguments of
    :func:`normalise_answer`); returns the value to record.

    A genuine claim is ``{"value": v, "raw": ...}`` where ``v`` is already normalised, so normalising it
    again gives ``v`` back. Anything else (not a dict, no value, a value of the wrong type, outside the
    choices, or one that normalisation would still change) raises :class:`AnswerError`.
    """
    if not isinstance(claim, dict) or "value" not in claim:
        raise AnswerError(
            f"the answer message is malformed (expected an object with a 'value'; got {type(claim).__name__})"
        )
    value = claim["value"]
    if value is not None and not isinstance(value, (str, int, float, bool)):
        raise AnswerError(f"the answer message carries a {type(value).__name__}, not an answer value")
    normalised = normalise_answer(value, choices, answer_type, labels, allowed, keep_text)
    if type(normalised) is not type(value) or normalised != value:
        raise AnswerError(
            f"the answer message carries {value!r}, which is not in normalised form (expected {normalised!r})"
        )
    return normalised
