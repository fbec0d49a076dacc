"""Questions as people write them: options inside the text, an answer type to infer.

Benchmarks and people put the options of a multiple-choice question in the question itself, in many
styles::

    Where is the sofa? Options: A: front-left, B: behind, C: right        (MMSI-Bench)
    ... after I turn left, what is in front of me? A. a sofa B. a window   (MindCube, SPAR-Bench)
    Which object will it hit first? Choices: A. the mug B. the shelf      (ERQA)
    Is the lamp to my left?\\n(A) left\\n(B) right                           (line form)

:func:`parse_question` finds them (line and inline forms, ``A.``/``A:``/``(A)``/``A)``), removes them
from the question it displays when they are listed separately (so no option is shown twice), infers the
answer type from the wording unless the caller sets it, and says in plain sentences what it inferred;
:func:`make_task` builds a :class:`~spatialclaw.task.Task` from that. ``run``, ``session start``, the MCP
server, the notebook magics and the ``local`` benchmark format all go through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from spatialclaw.primitives.answers import ANSWER_TYPES, option_key, option_letters
from spatialclaw.task import Task

__all__ = ["ParsedQuestion", "find_options", "infer_answer_type", "make_task", "parse_question"]

# one option at the start of a line: "A. text", "A: text", "A) text", "(A) text", "[A] text"
_LINE_OPTION = re.compile(r"^\s*[\(\[]?([A-Z])(?:[\)\]]\s*|\s*[.:)]\s+|\s*[.:]\s*(?=\S))(\S.*?)\s*$")
# an option marker inside running text: preceded by the start, a space or punctuation
_INLINE_OPTION = re.compile(r"(?:(?<=^)|(?<=[\s,;:?!.]))[\(\[]?([A-Z])(?:[\)\]]\s*|\s*[.:)]\s+)")
_MARKER = re.compile(r"(?:^|\s)(options|choices|answer choices|candidates)\s*[:：]?\s*$", re.IGNORECASE)
_INSTRUCTION = re.compile(
    r"(?:(?<=[.!?])|(?<=\n))\s*(?=(?:please|answer|respond|reply|select|choose|only|return|output|your answer)\b)",
    re.IGNORECASE,
)
_PREFIXED_CHOICE = re.compile(r"^\s*[\(\[]?([A-Z])(?:[\)\]]|\s*[.:)])\s*(.*\S)\s*$")
# "Select from the following choices." before the options: about the options, so it leaves with them
_LEAD_IN = re.compile(
    r"(?:^|(?<=[.?!\n]))\s*(?:please\s+)?(?:select|choose|pick)\s+(?:one\s+|an?\s+answer\s+)?(?:from|among)\s+"
    r"the\s+following\s+(?:choices|options|answers)\s*[.:]?\s*$",
    re.IGNORECASE,
)


@dataclass
class ParsedQuestion:
    """A question split into what to display and what it asks for.

    ``text`` is the question to show (options removed when they are listed separately); ``choices`` the
    option texts in letter order (None when it is not multiple choice); ``answer_type`` one of
    ``multiple_choice``, ``number``, ``yes_no``, ``text``; ``notes`` one sentence per inference made;
    ``duplicates`` groups of option letters that share a text.
    """

    text: str
    choices: list[str] | None
    answer_type: str
    original: str
    notes: list[str] = field(default_factory=list)
    duplicates: list[list[str]] = field(default_factory=list)


def _clean_option(text: str) -> str:
    return text.strip().rstrip(",;").strip().rstrip(".").strip()


def _split_instruction(text: str) -> tuple[str, str]:
    """``("the bottle", "Please answer with the letter.")`` from an option text that runs into an instruction."""
    match = _INSTRUCTION.search(text)
    if not match or match.start() == 0:
        return text, ""
    return text[: match.start()], text[match.start() :].strip()


def _line_options(text: str) -> tuple[str, list[str], str] | None:
    """Options written one per line (the last block of consecutive ``A``, ``B``, ... lines)."""
    lines = text.splitlines()
    best: tuple[int, int] | None = None
    index = 0
    while index < len(lines):
        match = _LINE_OPTION.match(lines[index])
        if match and match.group(1) == "A":
            end = index + 1
            while end < len(lines):
                following = _LINE_OPTION.match(lines[end])
                if not following or following.group(1) != chr(ord("A") + end - index):
                    break
                end += 1
            if end - index >= 2:
                best = (index, end)
            index = end
        else:
            index += 1
    if best is None:
        return None
    start, end = best
    options = [_clean_option(_LINE_OPTION.match(lines[i]).group(2)) for i in range(start, end)]  # type: ignore[union-attr]
    stem_lines = lines[:start]
    if stem_lines and _MARKER.search(stem_lines[-1]) and _MARKER.sub("", stem_lines[-1]).strip() == "":
        stem_lines = stem_lines[:-1]
    elif stem_lines:
        stem_lines[-1] = _MARKER.sub("", stem_lines[-1]).rstrip()
    trailing = "\n".join(lines[end:]).strip()
    return "\n".join(stem_lines).strip(), options, trailing


def _inline_options(text: str) -> tuple[str, list[str], str] | None:
    """Options inside running text: the last run ``A``, ``B``, ... of at least two markers that starts
    after a question mark, a colon, an ``Options:``/``Choices:`` marker or a line break."""
    matches = list(_INLINE_OPTION.finditer(text))
    for first in reversed([i for i, m in enumerate(matches) if m.group(1) == "A"]):
        run = [matches[first]]
        for match in matches[first + 1 :]:
            if match.group(1) == chr(ord(run[-1].group(1)) + 1):
                run.append(match)
        if len(run) < 2:
            continue
        before = text[: run[0].start()].rstrip()
        has_marker = bool(_MARKER.search(before))
        if not (has_marker or not before or before.endswith(("?", ":", "\n")) or text[: run[0].start()].endswith("\n")):
            continue
        options = []
        for i, match in enumerate(run):
            end = run[i + 1].start() if i + 1 < len(run) else len(text)
            options.append(text[match.end() : end])
        last, trailing = _split_instruction(options[-1])
        options[-1] = last
        options = [_clean_option(o) for o in options]
        if any(not o for o in options):
            continue
        stem = _MARKER.sub("", before).rstrip() if has_marker else before
        return stem.strip(), options, trailing
    return None


# "Choose from N, NE, E or SE." / "Answer with one of: left, right, behind" : the allowed answers, listed
_ALLOWED = re.compile(
    r"(?:^|(?<=[.?!:\n]))\s*(?:please\s+)?(?:choose|select|pick|answer)\s+(?:with\s+)?(?:only\s+)?"
    r"(?:(?:one\s+)?(?:from|among)|one\s+of)(?:\s+the\s+following(?:\s+(?:choices|options|answers))?)?\s*[:：]?\s*"
    r"(?P<items>[^\n]+?)\s*(?:\.\s*$|\.\s+(?=[A-Z])|$|\n)",
    re.IGNORECASE | re.MULTILINE,
)
_SHORT_OPTION = re.compile(r"^[^?\n]{1,40}$")


def _allowed_list(text: str) -> tuple[str, list[str], str] | None:
    """Options named in an instruction ("Choose from N, NE, E, SE."): comma-separated short items, two
    at least; the instruction leaves the stem."""
    for match in reversed(list(_ALLOWED.finditer(text))):
        items = re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", match.group("items").strip().rstrip("."))
        items = [_clean_option(i) for i in items if i.strip()]
        if len(items) >= 2 and all(_SHORT_OPTION.match(i) and len(i.split()) <= 4 for i in items):
            return text[: match.start()].strip(), items, text[match.end() :].strip()
    return None


def _short_line(line: str) -> bool:
    """A line that reads as one short option (a few words, no question, not an ``Options:`` marker)."""
    return bool(line and _SHORT_OPTION.match(line) and len(line.split()) <= 5 and not _MARKER.search(line))


def _unlettered_lines(text: str) -> tuple[str, list[str], str] | None:
    """Options written one per line without letters ("Yes." / "No.") at the end of the question: after
    an ``Options:`` line or a line ending in "?", two or more short lines (a few words each)."""
    lines = [line.strip() for line in text.strip().splitlines()]
    start = len(lines)
    while start > 0 and _short_line(lines[start - 1]):
        start -= 1
    if len(lines) - start < 2 or start == 0:
        return None
    head = lines[start - 1]
    marker = bool(_MARKER.search(head)) and _MARKER.sub("", head).strip() == ""
    if not (marker or head.endswith("?")):
        return None
    options = [_clean_option(line) for line in lines[start:]]
    stem = lines[: start - 1] if marker else lines[:start]
    return "\n".join(stem).strip(), options, ""


def find_options(text: str) -> tuple[str, list[str], str] | None:
    """``(stem, options, trailing text)`` when ``text`` lists options, else None: lettered options (A, B,
    ... in order, at least two; line forms before inline forms), then options one per line without
    letters after an ``Options:`` line or the question ("Yes." / "No."), then allowed answers named in
    an instruction ("Choose from N, NE, E, SE.")."""
    return _line_options(text) or _inline_options(text) or _unlettered_lines(text) or _allowed_list(text)


_NUMBER_PHRASES = [
    (re.compile(r"\bhow (many|much|far|long|tall|high|wide|deep|big|large|thick)\b", re.I), "how {0}"),
    (
        re.compile(
            r"\bwhat(?:'s| is) the (?:\w+ )?(distance|length|width|height|depth|size|area|volume|number|count|angle|speed)\b",
            re.I,
        ),
        "what is the {0}",
    ),
    (
        re.compile(
            r"\b(?:in|measured in|in units of)\s+(meters?|metres?|centimeters?|centimetres?|millimeters?|millimetres?|"
            r"cm|mm|km|kilometers?|feet|foot|inches|inch|square meters?|square metres?|m2|m²|degrees?|seconds?|minutes?)\b",
            re.I,
        ),
        "in {0}",
    ),
    (re.compile(r"\b(count|number of)\b", re.I), "{0}"),
]
_YES_NO_START = re.compile(r"^\s*(is|are|was|were|does|do|did|can|could|will|would|should|has|have|had|must)\b", re.I)


def infer_answer_type(question: str, choices: list[str] | None = None) -> tuple[str, str]:
    """``(answer type, reason)`` from the question's wording: options make it multiple choice; counting
    and measuring phrasing ("how many", "how far", "in meters", "what is the distance") a number; a
    question opening with an auxiliary verb ("Is ...", "Does ...") without an "or" alternative yes/no;
    anything else text."""
    if choices:
        return "multiple_choice", f"it has {len(choices)} options"
    for pattern, phrase in _NUMBER_PHRASES:
        match = pattern.search(question)
        if match:
            return "number", f"the question asks '{phrase.format(match.group(1).lower())}'"
    opening = _YES_NO_START.match(question)
    if opening and not re.search(r"\bor\b", question, re.I):
        return "yes_no", f"the question opens with '{opening.group(1)}' and offers no alternatives"
    return "text", "no options, no counting or measuring phrasing, not a yes/no question"


def _strip_letter_prefixes(choices: list[str]) -> list[str] | None:
    """``["left", "right"]`` from ``["A. left", "B. right"]`` when every choice carries its own letter."""
    stripped = []
    for letter, choice in zip(option_letters(len(choices)), choices, strict=True):
        match = _PREFIXED_CHOICE.match(str(choice))
        if not match or match.group(1) != letter:
            return None
        stripped.append(match.group(2))
    return stripped


def _join(stem: str, trailing: str) -> str:
    stem = _LEAD_IN.sub("", stem).strip()
    return f"{stem}\n{trailing}".strip() if trailing else stem


def parse_question(
    question: str, choices: list[str] | str | None = None, answer_type: str | None = None
) -> ParsedQuestion:
    """Split ``question`` into display text, choices and answer type (see the module docstring).

    ``choices`` given by the caller win over options found in the text; when the text lists the same
    options, they are removed from the displayed question. ``answer_type`` given by the caller is kept
    as it is (a ``ValueError`` when it is unknown, or multiple choice without options).
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError("the question is empty; give the question text")
    if answer_type is not None and answer_type not in ANSWER_TYPES:
        raise ValueError(f"unknown answer type {answer_type!r}; use one of {', '.join(ANSWER_TYPES)}")
    original = question
    notes: list[str] = []
    if isinstance(choices, str):  # "A. left\nB. right" (ViewSpatial-Bench writes its choices so)
        found = find_options(choices)
        choices = found[1] if found else [line for line in choices.splitlines() if line.strip()]
    given = [str(c).strip() for c in choices] if choices else None
    if given:
        unprefixed = _strip_letter_prefixes(given)
        if unprefixed is not None:
            given = unprefixed
            notes.append(
                "the given options carried their letters ('A. ...'); the letters were removed from the option texts"
            )
    text = question.strip()
    found = find_options(text)
    if found and given:
        stem, options, trailing = found
        if [option_key(o) for o in options] == [option_key(c) for c in given]:
            text = _join(stem, trailing)
            notes.append("the question text listed the options; they are shown once, under Options")
        else:
            notes.append(
                "the question text lists options that differ from the given choices; the given choices are used"
            )
    elif found:
        stem, options, trailing = found
        given = options
        text = _join(stem, trailing)
        notes.append(
            f"{len(options)} options ({', '.join(option_letters(len(options)))}) were read from the question text"
        )
    duplicates: list[list[str]] = []
    if given:
        by_key: dict[str, list[str]] = {}
        for letter, option in zip(option_letters(len(given)), given, strict=True):
            by_key.setdefault(option_key(option), []).append(letter)
        duplicates = [letters for letters in by_key.values() if len(letters) > 1]
        for letters in duplicates:
            notes.append(
                f"options {' and '.join(letters)} have the same text ({given[ord(letters[0]) - 65]!r}): answer with the letter"
            )
    if answer_type is None:
        answer_type, reason = infer_answer_type(text, given)
        notes.append(f"answer type {answer_type.replace('_', ' ')} was inferred: {reason}")
    elif answer_type == "multiple_choice" and not given:
        raise ValueError(
            "a multiple-choice question needs options: give choices, or list them in the question (A. ..., B. ...)"
        )
    elif given and answer_type != "multiple_choice":
        notes.append(f"the answer type was set to {answer_type.replace('_', ' ')}; the options are shown for reference")
    return ParsedQuestion(
        text=text, choices=given or None, answer_type=answer_type, original=original, notes=notes, duplicates=duplicates
    )


def make_task(
    question: str,
    inputs: list[Any] | None = None,
    choices: list[str] | str | None = None,
    answer_type: str | None = None,
    **fields: Any,
) -> Task:
    """A :class:`Task` from a question as written: parsed with :func:`parse_question`; the inferences are
    kept in ``task.inferred`` (shown in the prompt, recorded in the trajectory) and the text as written
    in ``task.meta["question_as_written"]`` when it changed."""
    parsed = parse_question(question, choices, answer_type)
    meta = dict(fields.pop("meta", None) or {})
    if parsed.text != question.strip():
        meta["question_as_written"] = parsed.original
    return Task(
        question=parsed.text,
        inputs=list(inputs or []),
        choices=parsed.choices,
        answer_type=parsed.answer_type,  # type: ignore[arg-type]
        inferred=parsed.notes,
        meta=meta,
        **fields,
    )
