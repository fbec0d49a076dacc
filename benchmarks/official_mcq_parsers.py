"""Official multiple-choice scorers with multi-stage answer parsers: MindCube's ``extract_answer``,
lmms-eval's ``extract_mcq_answer`` (ERQA), the MMMU-style option parser (PerceptionComp, SpatialTree-Bench)
and VLMEvalKit's rule matching (3DSRBench).

Each scorer: (reply text, ground truth, choices, parameter) -> (score in [0, 1], what was extracted).
Deviation: where the official code draws a random option when it finds none (PerceptionComp,
SpatialTree-Bench), the reply scores as wrong instead (see :mod:`spatialclaw.benchmarks.official`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from spatialclaw.benchmarks.official_common import option_text

__all__ = [
    "erqa_choice",
    "mcq_extract",
    "mindcube_choice",
    "mindcube_extract",
    "perceptioncomp_choice",
    "spatialtree_choice",
    "vlmeval_choice",
    "vlmeval_infer",
]


def mindcube_extract(text: str) -> str | None:
    """MindCube's ``extract_answer`` (the official repo's and lmms-eval's): the last ``X.`` first; then the
    text after an ``<Answer>`` tag; then prioritised patterns (last match of the first that hits); then
    line-by-line fallbacks. Letters A-E only, capitals only."""
    if not text:
        return None
    dotted = list(re.finditer(r"([A-E])\.", text))
    if dotted:
        return dotted[-1].group(1)
    tagged = re.search(r"<Answer>(.*?)(?:<|$)", text, re.DOTALL)
    if tagged:
        section = tagged.group(1)
        for pattern in (
            r"[Mm]y answer is ([A-E])",
            r"[Mm]y answer is ([A-E])\.",
            r"[Tt]he answer is ([A-E])",
            r"(?:Answer: )?([A-E])\.",
            r"\b([A-E])\b",
        ):
            found = list(re.finditer(pattern, section))
            if found:
                return found[-1].group(1)
    for pattern in (
        r'(?:Answer: )?([A-E])\. [A-Za-z0-9 \-\(\)\'",]+(?=(?:\n|$|\.|"))',
        r'(?:Answer: )?([A-E])\. [A-Za-z0-9 \-\(\)\'"]+',
        r"(?:^|\n)(?:Answer: )?([A-E])(?:\.|$|\s)",
        r"[\*\"]([A-E])[\*\"]",
        r"\bAnswer:?\s*([A-E])\b",
        r"[Mm]y answer is ([A-E])",
        r"[Mm]y answer is ([A-E])\.",
        r"answer is ([A-E])",
    ):
        found = list(re.finditer(pattern, text))
        if found:
            return found[-1].group(1)
    lines = text.split("\n")
    described = [m.group(1) for line in lines for m in [re.search(r'([A-E])\. [A-Za-z0-9 \-\(\)\'",]+', line)] if m]
    if described:
        return described[-1]
    for line in reversed(lines):
        match = re.search(r"\b([A-E])\b", line)
        if match:
            return match.group(1)
    return None


def mindcube_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MindCube: :func:`mindcube_extract` on the stripped reply equals ``gt_answer`` exactly."""
    got = mindcube_extract(reply.strip())
    return (1.0 if got == str(gt) else 0.0), got


_DECLARATION = re.compile(
    r"(?<!\w)(?:(?:the|my)\s+)?(?:(?:correct|best|final)\s+)?(?:answer|option|choice)\s*(?:is\b|[:=])"
    r"|(?<!\w)i\s+(?:choose|select|pick)\b",
    re.IGNORECASE,
)
_WRAP_OPEN = "*_`\"'([{$"


def _read_letter(fragment: str) -> tuple[str, str] | None:
    """A single ASCII letter at the start of ``fragment`` (after wrappers such as ``**``, ``(`` and an
    ``option`` prefix) that is not part of a word; returns (capital letter, the rest)."""
    text = fragment.lstrip().lstrip(":=,;").lstrip()
    text = re.sub(r"^(?:option|choice)\b\s*:?\s*", "", text, flags=re.IGNORECASE)
    text = text.lstrip(_WRAP_OPEN + " ")
    if not text or not ("A" <= text[0].upper() <= "Z") or not text[0].isascii():
        return None
    letter, tail = text[0], text[1:]
    if tail[:1].isalnum() or tail[:1] == "_":
        return None
    return letter.upper(), tail


def _alternative_follows(tail: str) -> bool:
    rest = tail.lstrip("*_`\"')]}$ .:").lstrip()
    connector = re.match(r"(?:and\s*/\s*or|and|or|[/&,+|])\s*", rest, flags=re.IGNORECASE)
    return connector is not None and _read_letter(rest[connector.end() :]) is not None


def mcq_extract(reply: str, allowed: Sequence[str] = tuple("ABCDEFGH")) -> str:
    """The main rules of lmms-eval's ``extract_mcq_answer`` (used by its ERQA task): the last ``<answer>``
    or ``\\boxed{}`` container scopes the search; otherwise the *last* explicit declaration ("the answer
    is C", "Answer: D", "I choose B") decides, even when it names a letter that is not offered (then "");
    otherwise a bare or leading-label letter (``"B"``, ``"(C)"``, ``"D. lamp"``). Two letters joined by
    "or", "and", "/" or "," abstain (""). The upstream parser handles more wrappers and languages; those
    extra forms are not reproduced."""
    if not reply or not reply.strip():
        return ""
    allowed_set = {a.upper() for a in allowed}
    text = reply.strip()
    containers = list(
        re.finditer(
            r"<answer\b[^<>]*>(.*?)(?:</answer\s*>|$)|\\boxed\s*\{([^{}]*)\}", text, flags=re.IGNORECASE | re.DOTALL
        )
    )
    if containers:
        last = containers[-1]
        text = (last.group(1) if last.group(1) is not None else last.group(2)).strip()
    declared = None
    for match in _DECLARATION.finditer(text):
        choice = _read_letter(text[match.end() :])
        declared = choice[0] if choice and choice[0] in allowed_set and not _alternative_follows(choice[1]) else ""
    if declared is not None:
        return declared
    choice = _read_letter(text)
    if choice is None or _alternative_follows(choice[1]):
        return ""
    tail = choice[1].strip()
    if tail and not re.match(r"^[\).:\]*_`'\"}]", tail):
        return ""  # "A chair is ..." is prose, not a label
    return choice[0] if choice[0] in allowed_set else ""


def erqa_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ERQA (lmms-eval): :func:`mcq_extract` over A-D equals the answer letter."""
    got = mcq_extract(reply, "ABCD")
    return (1.0 if got == str(gt) else 0.0), got


def _mmmu_parse(reply: str, options: Sequence[str]) -> str | None:
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


def perceptioncomp_choice(
    reply: str, gt: Any, choices: Sequence[str] | None = None, param: str | None = None
) -> tuple[float, Any]:
    """PerceptionComp (lmms-eval): :func:`_mmmu_parse` over the non-empty options equals the answer letter."""
    got = _mmmu_parse(reply, [option_text(c) for c in choices or []])
    return (1.0 if got is not None and got.upper() == str(gt).upper() else 0.0), got


_SPATIALTREE_PATTERNS = (
    r"The correct option is ([A-Z])",
    r"The answer is ([A-Z])",
    r"The correct answer is ([A-Z])",
    r"Option ([A-Z]) is correct",
    r"The right choice is ([A-Z])",
    r"Thus, the answer is ([A-Z])",
    r"Therefore, the correct option is ([A-Z])",
    r"The answer should be ([A-Z])",
    r"Hence, the correct answer is ([A-Z])",
    r"The correct choice is ([A-Z])",
    r"Accordingly, the answer is ([A-Z])",
    r"Consequently, the correct option is ([A-Z])The correct option is ([A-Z])",
    r"Answer: ([A-Z])",
    r"Answer ([A-Z])",
    r"Choice ([A-Z])",
    r"Select ([A-Z])",
    r"([A-Z]) is correct",
    r"([A-Z]) is the answer",
    r"([A-Z]) is the correct option",
    r"Correct: ([A-Z])",
    r"Right: ([A-Z])",
    r"<\|begin_of_box\|>([A-Z])<\|end_of_box\|>",
)


def spatialtree_choice(
    reply: str, gt: Any, choices: Sequence[str] | None = None, param: str | None = None
) -> tuple[float, Any]:
    """SpatialTree-Bench ``multichoiceeval``: the first listed answer pattern naming an offered letter, else
    a single offered letter after the last ``Answer:``, else :func:`_mmmu_parse`; equals the answer."""
    options = [str(c) for c in choices or []]
    letters = [chr(ord("A") + i) for i in range(len(options))]
    got = None
    for pattern in _SPATIALTREE_PATTERNS:
        match = re.search(pattern, reply)
        if match and match.group(1) in letters:
            got = match.group(1)
            break
    if got is None and reply.rfind("Answer:") != -1:
        tail = reply[reply.rfind("Answer:") + len("Answer:") :].strip()
        named = [c for c in letters if c in tail]
        if len(named) == 1:
            got = named[0]
    if got is None:
        got = _mmmu_parse(reply, options)
    return (1.0 if got is not None and got == str(gt) else 0.0), got


_REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)


def vlmeval_infer(reply: str, options: Sequence[str]) -> str | None:
    """VLMEvalKit's rule matching (``can_infer_option``, then ``can_infer_text``): punctuation
    ``.()[],:;!*#{}`` becomes spaces; exactly one option letter among the tokens is the answer, unless an
    ``A`` appears in a reply of more than three tokens (an article); a refusal or a lone ``Z`` is ``"Z"``;
    otherwise exactly one option text inside the lower-cased reply. None where VLMEvalKit would ask its
    LLM judge (not reproduced)."""
    letters = [chr(ord("A") + i) for i in range(len(options))]
    if "Failed to obtain answer via API" in reply:
        return None
    if any(refusal in reply for refusal in _REFUSALS):
        return "Z"
    spaced = reply
    for char in ".()[],:;!*#{}":
        spaced = spaced.replace(char, " ")
    tokens = [t.strip() for t in spaced.split()]
    hits = [c for c in letters if c in tokens]
    if len(hits) == 1 and not ("A" in tokens and len(tokens) > 3):
        return hits[0]
    if not hits and "Z" in tokens:
        return "Z"
    low = reply.lower()
    named = [c for c, text in zip(letters, options, strict=True) if str(text).lower() in low]
    return named[0] if len(named) == 1 else None


def vlmeval_choice(
    reply: str, gt: Any, choices: Sequence[str] | None = None, param: str | None = None
) -> tuple[float, Any]:
    """3DSRBench (VLMEvalKit's multiple-choice evaluation): :func:`vlmeval_infer` equals the answer letter."""
    got = vlmeval_infer(reply, [option_text(c) for c in choices or []])
    return (1.0 if got is not None and got == str(gt).strip() else 0.0), got
