"""Questions as people write them: options inside the text, an answer type to infer.

Benchmarks and people put the options of a multiple-choice question in the question itself, in many
styles::

    Where is the sofa? Options: A: front-left, B: behind, C: right        (MMSI-Bench)
    ... after I turn left, what is in front of me? A. a sofa B. a window   (MindCube, SPAR-Bench)
    Which object will it hit first? Choices: A. the mug B. the shelf      (ERQA)
    Is the lamp to my left?\\n(A) left\\n(B) right                           (line form)
    How does the camera move?\\n0. pan left\\n1. pan right                      (numbered: answered 0, 1)

:func:`parse_question` finds them (line and inline forms, ``A.``/``A:``/``(A)``/``A)``, numbers ``0.``
``1.`` ...), removes them from the question it displays when they are listed separately (so no option is
shown twice), infers the answer type from the wording unless the caller sets it, and says in plain
sentences what it inferred. Not options: a list of allowed values in an instruction ("Choose from N, NE,
E, ...": a text answer that must be one of them) and ``Yes.``/``No.`` lines (a yes/no answer);
:func:`make_task` builds a :class:`~spatialclaw.task.Task` from that. ``run``, ``session start``, the MCP
server, the notebook magics and the ``local`` benchmark format all go through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from spatialclaw.primitives.answers import ANSWER_TYPES, option_key, option_letters
from spatialclaw.task import Task

__all__ = ["ParsedQuestion", "find_allowed", "find_options", "infer_answer_type", "make_task", "parse_question"]

# one option at the start of a line: "A. text", "A: text", "A) text", "(A) text", "[A] text"; numbered
# options ("0. text", "(1) text") need a space after "." or ":" so that "0.5 m" is no option
_LINE_OPTION = re.compile(r"^\s*[\(\[]?([A-Z])(?:[\)\]]\s*|\s*[.:)]\s+|\s*[.:]\s*(?=\S))(\S.*?)\s*$")
_LINE_NUMBERED = re.compile(r"^\s*[\(\[]?(\d{1,2})(?:[\)\]]\s*|\s*[.:)]\s+)(\S.*?)\s*$")
# an option marker inside running text: preceded by the start, a space or punctuation
_INLINE_OPTION = re.compile(r"(?:(?<=^)|(?<=[\s,;:?!.]))[\(\[]?([A-Z])(?:[\)\]]\s*|\s*[.:)]\s+)")
_INLINE_NUMBERED = re.compile(r"(?:(?<=^)|(?<=[\s,;:?!]))[\(\[]?(\d{1,2})(?:[\)\]]\s*|\s*[.:)]\s+)")
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
    ``duplicates`` groups of option letters (or numbers) that share a text; ``labels`` the options'
    numbers when the question numbers them (``["0", "1", "2"]``: answered by number), else None (letters);
    ``allowed`` the values a text answer must be one of ("Choose from N, NE, E, ..."), else None.
    """

    text: str
    choices: list[str] | None
    answer_type: str
    original: str
    notes: list[str] = field(default_factory=list)
    duplicates: list[list[str]] = field(default_factory=list)
    labels: list[str] | None = None
    allowed: list[str] | None = None


def _clean_option(text: str) -> str:
    return text.strip().rstrip(",;").strip().rstrip(".").strip()


def _split_instruction(text: str) -> tuple[str, str]:
    """``("the bottle", "Please answer with the letter.")`` from an option text that runs into an instruction."""
    match = _INSTRUCTION.search(text)
    if not match or match.start() == 0:
        return text, ""
    return text[: match.start()], text[match.start() :].strip()


def _next_label(label: str) -> str:
    """The label after ``label``: ``"B"`` after ``"A"``, ``"3"`` after ``"2"``."""
    return str(int(label) + 1) if label.isdigit() else chr(ord(label) + 1)


def _first_label(label: str) -> bool:
    """Whether a run of options may start at ``label``: ``A``, or ``0``/``1`` for numbered options."""
    return label in ("A", "0", "1")


_Found = tuple[str, list[str], str, list[str]]  # stem, options, trailing text, the options' labels


def _line_options(text: str, pattern: re.Pattern[str] = _LINE_OPTION) -> _Found | None:
    """Options written one per line (the last block of consecutive ``A``, ``B``, ... lines, or with the
    numbered ``pattern`` ``0``, ``1``, ... or ``1``, ``2``, ... lines)."""
    lines = text.splitlines()
    best: tuple[int, int] | None = None
    index = 0
    while index < len(lines):
        match = pattern.match(lines[index])
        if match and _first_label(match.group(1)):
            end = index + 1
            label = match.group(1)
            while end < len(lines):
                following = pattern.match(lines[end])
                if not following or following.group(1) != _next_label(label):
                    break
                label = following.group(1)
                end += 1
            if end - index >= 2:
                best = (index, end)
            index = end
        else:
            index += 1
    if best is None:
        return None
    start, end = best
    matches = [pattern.match(lines[i]) for i in range(start, end)]
    options = [_clean_option(m.group(2)) for m in matches if m]
    labels = [m.group(1) for m in matches if m]
    stem_lines = lines[:start]
    if stem_lines and _MARKER.search(stem_lines[-1]) and _MARKER.sub("", stem_lines[-1]).strip() == "":
        stem_lines = stem_lines[:-1]
    elif stem_lines:
        stem_lines[-1] = _MARKER.sub("", stem_lines[-1]).rstrip()
    trailing = "\n".join(lines[end:]).strip()
    return "\n".join(stem_lines).strip(), options, trailing, labels


def _inline_options(text: str, pattern: re.Pattern[str] = _INLINE_OPTION) -> _Found | None:
    """Options inside running text: the last run ``A``, ``B``, ... (or, with the numbered ``pattern``,
    ``0``, ``1``, ...) of at least two markers that starts after a question mark, a colon, an
    ``Options:``/``Choices:`` marker or a line break."""
    matches = list(pattern.finditer(text))
    for first in reversed([i for i, m in enumerate(matches) if _first_label(m.group(1))]):
        run = [matches[first]]
        for match in matches[first + 1 :]:
            if match.group(1) == _next_label(run[-1].group(1)):
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
        return stem.strip(), options, trailing, [m.group(1) for m in run]
    return None


# "Choose from N, NE, E or SE." / "Answer with one of: left, right, behind" : the allowed answers, listed
_ALLOWED = re.compile(
    r"(?:^|(?<=[.?!:\n]))\s*(?:please\s+)?(?:choose|select|pick|answer)\s+(?:with\s+)?(?:only\s+)?"
    r"(?:(?:one\s+)?(?:from|among)|one\s+of)(?:\s+the\s+following(?:\s+(?:choices|options|answers))?)?\s*[:：]?\s*"
    r"(?P<items>[^\n]+?)\s*(?:\.\s*$|\.\s+(?=[A-Z])|$|\n)",
    re.IGNORECASE | re.MULTILINE,
)
_SHORT_OPTION = re.compile(r"^[^?\n]{1,40}$")
_INSTRUCTION_START = re.compile(
    r"^\s*(?:please|answer|respond|reply|select|choose|only|return|output|your answer)\b", re.IGNORECASE
)


def find_allowed(text: str) -> list[str] | None:
    """The allowed answers an instruction names ("Choose from N, NE, E, SE."; "Answer with one of:
    left, right, or behind"): two or more comma-separated short items, else None. They are not options:
    the answer is the value itself."""
    for match in reversed(list(_ALLOWED.finditer(text))):
        items = re.split(r"\s*,\s*(?:(?:or|and)\s+)?|\s+or\s+", match.group("items").strip().rstrip("."))
        items = [_clean_option(i) for i in items if i.strip()]
        if len(items) >= 2 and all(_SHORT_OPTION.match(i) and len(i.split()) <= 4 for i in items):
            return items
    return None


def _short_line(line: str) -> bool:
    """A line that reads as one short option (a few words, no question, not an ``Options:`` marker nor
    an instruction)."""
    return bool(
        line
        and _SHORT_OPTION.match(line)
        and len(line.split()) <= 5
        and not _MARKER.search(line)
        and not _INSTRUCTION_START.match(line)
    )


def _unlettered_lines(text: str) -> tuple[str, list[str], str] | None:
    """Options written one per line without letters ("Yes." / "No.") at the end of the question, before
    any instruction lines: after an ``Options:`` line or a line ending in "?" (or in "? Options:"), two or
    more short lines (a few words each)."""
    lines = [line.strip() for line in text.strip().splitlines()]
    end = len(lines)
    while end > 0 and _INSTRUCTION_START.match(lines[end - 1]):
        end -= 1
    start = end
    while start > 0 and _short_line(lines[start - 1]):
        start -= 1
    if end - start < 2 or start == 0:
        return None
    # the head: an "Options:" line, the question, or the question ending in "Options:"
    head = _MARKER.sub("", lines[start - 1]).strip() if _MARKER.search(lines[start - 1]) else lines[start - 1]
    if head and not head.endswith("?"):
        return None
    options = [_clean_option(line) for line in lines[start:end]]
    stem = lines[: start - 1] + ([head] if head else [])
    return "\n".join(stem).strip(), options, "\n".join(lines[end:]).strip()


def _ends_question(found: _Found) -> bool:
    """Whether numbered items end a question (a numbered list inside it is not its options): the text
    before them asks ("?") or introduces them (":"), and only an instruction follows them."""
    stem, _, trailing, _ = found
    return (not stem or "?" in stem or ":" in stem) and (not trailing or bool(_INSTRUCTION_START.match(trailing)))


def _find(text: str) -> tuple[_Found, str] | None:
    """The options ``text`` lists and their kind: ``"lettered"`` options, else ``"numbered"`` options,
    else unlettered option ``"lines"`` (see :func:`find_options`)."""
    lettered = _line_options(text) or _inline_options(text)
    if lettered:
        return lettered, "lettered"
    numbered = _line_options(text, _LINE_NUMBERED) or _inline_options(text, _INLINE_NUMBERED)
    if numbered and _ends_question(numbered):
        return numbered, "numbered"
    lines = _unlettered_lines(text)
    return ((*lines, option_letters(len(lines[1]))), "lines") if lines else None


def find_options(text: str) -> tuple[str, list[str], str] | None:
    """``(stem, options, trailing text)`` when ``text`` lists options, else None: lettered options (A, B,
    ... in order, at least two; line forms before inline forms), then numbered options (``0.``, ``1.``,
    ... or ``1.``, ``2.``, ...), then options one per line without letters after an ``Options:`` line or
    the question ("Yes." / "No."). Allowed values named in an instruction are not options
    (:func:`find_allowed`)."""
    found = _find(text)
    return found[0][:3] if found else None


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
_AUXILIARY = r"(is|are|was|were|does|do|did|can|could|will|would|should|has|have|had|must)"
# the auxiliary verb opening the question or a clause of it ("In both videos, does ...?")
_YES_NO_VERB = re.compile(rf"(?:^|[,:;]\s*){_AUXILIARY}\b", re.I)
_WH_START = re.compile(r"^\s*(what|which|where|when|who|whom|whose|why|how)\b", re.I)
# "Answer 'Yes' or 'No'", "reply with yes/no", "(yes or no)"
_QUOTE = "[\"'\u2018\u2019\u201c\u201d]?"
_YES_NO_INSTRUCTION = re.compile(
    rf"(?:\b(?:answer|respond|reply|say)\b[^.?!\n]*?|\(\s*){_QUOTE}yes{_QUOTE}\s*(?:or|/)\s*{_QUOTE}no\b", re.I
)


def _question_sentence(question: str) -> str:
    """The sentence that asks (the last one ending in "?"), or the whole text when none does."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])|\n+", question.strip())
    asks = [s for s in sentences if s.rstrip().endswith("?")]
    return asks[-1].strip() if asks else question.strip()


def infer_answer_type(question: str, choices: list[str] | None = None) -> tuple[str, str]:
    """``(answer type, reason)`` from the question's wording: options make it multiple choice; an
    instruction to answer yes or no ("Answer 'Yes' or 'No'") yes/no; counting and measuring phrasing
    ("how many", "how far", "in meters", "what is the distance") a number; a question sentence whose
    first word or the first word after a leading phrase and comma ("In both videos, does ...?") is an
    auxiliary verb, with no "or" alternative in it, yes/no; anything else text."""
    if choices:
        return "multiple_choice", f"it has {len(choices)} options"
    if _YES_NO_INSTRUCTION.search(question):
        return "yes_no", "the question asks for 'yes' or 'no'"
    for pattern, phrase in _NUMBER_PHRASES:
        match = pattern.search(question)
        if match:
            return "number", f"the question asks '{phrase.format(match.group(1).lower())}'"
    sentence = _question_sentence(question)
    verb = _YES_NO_VERB.search(sentence)
    alternative = re.search(r"\bor\b(?!\s+not\b)", sentence, re.I)
    if verb and not _WH_START.match(sentence) and not alternative:
        return "yes_no", f"the question asks '{verb.group(1)} ...?' and offers no alternatives"
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
    as it is (a ``ValueError`` when it is unknown, or multiple choice without options). Numbered options
    are answered by their number (``labels``); ``Yes.``/``No.`` option lines make a yes/no question; an
    instruction that lists allowed values ("Choose from N, NE, ...") keeps a text answer that must be
    one of them (``allowed``).
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError("the question is empty; give the question text")
    if answer_type is not None and answer_type not in ANSWER_TYPES:
        raise ValueError(f"unknown answer type {answer_type!r}; use one of {', '.join(ANSWER_TYPES)}")
    original = question
    notes: list[str] = []
    if isinstance(choices, str):  # "A. left\nB. right" (ViewSpatial-Bench writes its choices so)
        listed = find_options(choices)
        choices = listed[1] if listed else [line for line in choices.splitlines() if line.strip()]
    given = [str(c).strip() for c in choices] if choices else None
    if given:
        unprefixed = _strip_letter_prefixes(given)
        if unprefixed is not None:
            given = unprefixed
            notes.append(
                "the given options carried their letters ('A. ...'); the letters were removed from the option texts"
            )
    text = question.strip()
    labels: list[str] | None = None
    allowed: list[str] | None = None
    found = _find(text)
    if found and given:
        (stem, options, trailing, numbers), kind = found
        if [option_key(o) for o in options] == [option_key(c) for c in given]:
            text = _join(stem, trailing)
            labels = numbers if kind == "numbered" else None
            notes.append("the question text listed the options; they are shown once, under Options")
        else:
            notes.append(
                "the question text lists options that differ from the given choices; the given choices are used"
            )
    elif found and found[1] == "lines" and _is_yes_no(found[0][1]) and answer_type in (None, "yes_no"):
        stem, _, trailing, _ = found[0]
        text = _join(stem, trailing)
        answer_type = "yes_no"
        notes.append("the question lists 'Yes' and 'No' one per line: answer type yes/no, answer 'yes' or 'no'")
    elif found:
        (stem, options, trailing, numbers), kind = found
        given = options
        text = _join(stem, trailing)
        labels = numbers if kind == "numbered" else None
        shown = ", ".join(labels or option_letters(len(options)))
        how = "; answer with the option's number" if labels else ""
        notes.append(f"{len(options)} options ({shown}) were read from the question text{how}")
    elif not given and answer_type in (None, "text"):
        allowed = find_allowed(text)
        if allowed and _is_yes_no(allowed) and answer_type is None:  # a set "text" keeps yes/no as its values
            allowed, answer_type = None, "yes_no"
            notes.append("the question lists 'yes' and 'no' as the answers: answer type yes/no")
        elif allowed:
            answer_type = "text"
            notes.append(
                f"the answer is one of the values the question lists ({', '.join(allowed)}), written as listed"
            )
    duplicates: list[list[str]] = []
    if given:
        names = labels or option_letters(len(given))
        by_key: dict[str, list[str]] = {}
        for name, option in zip(names, given, strict=True):
            by_key.setdefault(option_key(option), []).append(name)
        duplicates = [group for group in by_key.values() if len(group) > 1]
        for group in duplicates:
            what = "number" if labels else "letter"
            notes.append(
                f"options {' and '.join(group)} have the same text ({given[names.index(group[0])]!r}): answer with the {what}"
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
        text=text,
        choices=given or None,
        answer_type=answer_type,
        original=original,
        notes=notes,
        duplicates=duplicates,
        labels=labels if given and answer_type == "multiple_choice" else None,
        allowed=allowed,
    )


def _is_yes_no(options: list[str]) -> bool:
    """Whether ``options`` are exactly "yes" and "no" (either order, any case, with or without a dot)."""
    return sorted(option_key(o) for o in options) == ["no", "yes"]


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
        option_labels=parsed.labels,
        allowed_answers=parsed.allowed,
        meta=meta,
        **fields,
    )
