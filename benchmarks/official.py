"""Each benchmark's official per-question scoring, reproduced: answer extraction, case rules and comparison.

Every function here re-implements (in our own code) what one benchmark's published evaluation code does to
one model reply; the module docstring of each benchmark spec and ``tests/test_scoring.py`` cite the
repository and file. The goldens in the tests were derived by tracing that code on each input.

Structured answers
    Our agent submits its answer through ``answer(...)``, not as free text. Before the official extraction
    runs, :func:`render_structured` turns a *structured* answer (a bare option letter such as ``"B"`` or
    ``"(b)"``, the exact text of one option, or a plain number) into the reply the official prompt asks
    for (``"<answer>B</answer>"`` for DSI-Bench, ``"Answer: B"`` for OmniSpatial, ...). Anything else is
    free text and goes through the official extraction unchanged, quirks included (for example Video-MME
    reads the first capital A-D anywhere, so ``"Definitely B"`` counts as D).

Deviations (each also stated where it applies): a zero ground truth is scored by our documented policy
(the official VSI-Bench code divides by it and crashes); where the official code draws a random option
when it finds none (PerceptionComp, SpatialTree-Bench), we score the reply as wrong instead.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any, Callable, Sequence

import numpy as np

__all__ = [
    "OFFICIAL_METRICS",
    "official_mra",
    "render_structured",
    "structured_letter",
]

# ------------------------------------------------------------------------------------------- shared parts

#: ``np.linspace(0.5, 0.95, int((0.95 - 0.5) / 0.05 + 2))`` exactly as lmms-eval's VSI-Bench code builds it:
#: the quotient is 8.999..., so ``int(... + 2)`` is 10 points, with numpy's float rounding (0.5499999...).
VSI_CONFIDENCE = np.linspace(0.5, 0.95, int((0.95 - 0.5) / 0.05 + 2))


def official_mra(pred: float | None, gt: float) -> float:
    """VSI-Bench mean relative accuracy, bit for bit: ``mean(|pred - gt| / gt <= 1 - conf)`` over the ten
    numpy thresholds. ``pred`` None (unreadable) scores 0.0 as in the official ``except TypeError``. The
    caller handles ``gt == 0`` (see :func:`spatialclaw.benchmarks.scoring.mean_relative_accuracy`)."""
    if pred is None or not math.isfinite(pred):
        return 0.0
    return float(np.mean(abs(pred - gt) / abs(gt) <= 1 - VSI_CONFIDENCE))


def _to_float(text: Any) -> float | None:
    """``float(text)`` or None, as the official ``to_float`` helpers do."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


_BARE_LETTER = re.compile(r"\s*\(?\s*([A-Za-z])\s*\)?\s*\.?\s*")


def _option_text(option: str) -> str:
    return re.sub(r"^\s*\(?[A-Za-z]\s*[\).:]\s+", "", str(option), count=1).strip()


def _squash(text: str) -> str:
    return re.sub(r"[^\w]+", " ", str(text).lower()).strip()


def structured_letter(answer: Any, choices: Sequence[str] | None) -> str | None:
    """The option letter a *structured* answer names: a bare letter (``"B"``, ``"(b)"``, ``"B."``), a
    0-based int index, or exactly one option's text (case and punctuation ignored). None for free text."""
    if isinstance(answer, bool) or answer is None:
        return None
    if isinstance(answer, int) and choices:
        return chr(ord("A") + answer) if 0 <= answer < len(choices) else None
    text = str(answer)
    bare = _BARE_LETTER.fullmatch(text)
    if bare:
        return bare.group(1).upper()
    if choices:
        wanted = _squash(text)
        same = [i for i, option in enumerate(choices) if wanted and _squash(_option_text(option)) == wanted]
        if len(same) == 1:
            return chr(ord("A") + same[0])
    return None


def render_structured(answer: Any, choices: Sequence[str] | None, template: str = "{}") -> str:
    """The reply text to run the official extraction on: a structured letter or number rendered with the
    benchmark's response ``template`` (``"<answer>{}</answer>"``), free text as it is, None as ``""``."""
    if answer is None:
        return ""
    letter = structured_letter(answer, choices) if choices else None
    if letter is not None:
        return template.format(letter)
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return template.format(_number_text(float(answer)))
    if not choices and _to_float(str(answer).strip()) is not None:
        return template.format(str(answer).strip())
    return str(answer)


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


# ------------------------------------------------------------------------------------------ per benchmark
# Each scorer: (reply text, ground truth, choices, parameter) -> (score in [0, 1], what was extracted).

Scorer = Callable[[str, Any, Sequence[str] | None, str | None], tuple[float, Any]]


def vsi_fuzzy(reply: str) -> str:
    """VSI-Bench's ``fuzzy_matching``: the reply's first space-separated token, trailing dots removed."""
    return reply.split(" ")[0].rstrip(".").strip()


def vsi_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench (and VSTI-Bench, SPBench) multiple choice: the first token equals the letter, any case."""
    got = vsi_fuzzy(reply)
    return (1.0 if got.lower() == str(gt).lower() else 0.0), got


def vsi_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench numbers: ``float()`` of the first token (so ``"3.5 m"`` reads 3.5, ``"about 3"`` nothing),
    then the official MRA."""
    got = _to_float(vsi_fuzzy(reply))
    return _mra_or_zero_policy(got, float(gt)), got


def _mra_or_zero_policy(pred: float | None, gt: float) -> float:
    if gt == 0.0:
        return 1.0 if pred is not None and abs(pred) <= 1e-9 else 0.0
    return official_mra(pred, gt)


def leading_letter(reply: str) -> str:
    """lmms-eval's CV-Bench/BLINK ``_extract_answer_letter``: a letter at the very start, after optional
    ``(`` or spaces (``"(B) chair"`` -> B, but also ``"Bed"`` -> B and ``"The answer is B"`` -> T)."""
    match = re.match(r"[\(\s]*([A-Z])[\)\.\s]*", reply.strip(), flags=re.IGNORECASE)
    return match.group(1).upper() if match else ""


def cv_letter(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """CV-Bench and BLINK: :func:`leading_letter` against the answer with its parentheses stripped."""
    got = leading_letter(reply)
    return (1.0 if got == str(gt).strip("()") else 0.0), got


def mmsi_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Bench ``extract_single_choice_with_word_boundary``: unwrap ````x````, ```x``` and ``{x}``, then
    the first capital A-D standing alone and not followed by a space and a word (``"B. chair"`` -> B,
    ``"A chair"`` -> nothing); compared case-insensitively with the answer letter."""
    pred = reply
    for pattern in (r"``([^`]*)``", r"`([^`]*)`", r"\{([^}]*)\}"):
        match = re.search(pattern, pred)
        if match:
            pred = match.group(1)
    match = re.search(r"\b[A-D]\b(?!\s[a-zA-Z])", pred)
    if not match:
        return 0.0, None
    letter = match.group()
    return (1.0 if str(gt).lower().replace("\n", " ").strip() == letter.lower() else 0.0), letter


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
        for pattern in (r"[Mm]y answer is ([A-E])", r"[Mm]y answer is ([A-E])\.", r"[Tt]he answer is ([A-E])",
                        r"(?:Answer: )?([A-E])\.", r"\b([A-E])\b"):
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


def viewspatial_option(text: str) -> str | None:
    """ViewSpatial-Bench ``extract_option``: the first standalone A-D, any case, as a capital."""
    match = re.search(r"\b([A-D])\b", text, re.IGNORECASE)
    return match.group(1).upper() if match else None


def viewspatial_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """ViewSpatial-Bench: the option in the reply's *last line* equals the option in the answer."""
    got = viewspatial_option(reply.split("\n")[-1])
    return (1.0 if got is not None and got == viewspatial_option(str(gt)) else 0.0), got


def omnispatial_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OmniSpatial (lmms-eval, its default ``eval_type: re``): the last ``Answer: X`` (X in A-D, any case),
    else ``"A"``; compared case-sensitively with the capital answer letter, as the official code does."""
    found = re.findall(r"Answer\s*:\s*([A-D])\b", reply, flags=re.IGNORECASE)
    got = found[-1] if found else "A"
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
    return bool(connector) and _read_letter(rest[connector.end():]) is not None


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
    containers = list(re.finditer(r"<answer\b[^<>]*>(.*?)(?:</answer\s*>|$)|\\boxed\s*\{([^{}]*)\}", text,
                                  flags=re.IGNORECASE | re.DOTALL))
    if containers:
        last = containers[-1]
        text = (last.group(1) if last.group(1) is not None else last.group(2)).strip()
    declared = None
    for match in _DECLARATION.finditer(text):
        choice = _read_letter(text[match.end():])
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
    index2ans = dict(zip(letters, options))
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


def perceptioncomp_choice(reply: str, gt: Any, choices: Sequence[str] | None = None,
                          param: str | None = None) -> tuple[float, Any]:
    """PerceptionComp (lmms-eval): :func:`_mmmu_parse` over the non-empty options equals the answer letter."""
    got = _mmmu_parse(reply, [_option_text(c) for c in choices or []])
    return (1.0 if got is not None and got.upper() == str(gt).upper() else 0.0), got


_SPATIALTREE_PATTERNS = (
    r"The correct option is ([A-Z])", r"The answer is ([A-Z])", r"The correct answer is ([A-Z])",
    r"Option ([A-Z]) is correct", r"The right choice is ([A-Z])", r"Thus, the answer is ([A-Z])",
    r"Therefore, the correct option is ([A-Z])", r"The answer should be ([A-Z])",
    r"Hence, the correct answer is ([A-Z])", r"The correct choice is ([A-Z])",
    r"Accordingly, the answer is ([A-Z])", r"Consequently, the correct option is ([A-Z])The correct option is ([A-Z])",
    r"Answer: ([A-Z])", r"Answer ([A-Z])", r"Choice ([A-Z])", r"Select ([A-Z])", r"([A-Z]) is correct",
    r"([A-Z]) is the answer", r"([A-Z]) is the correct option", r"Correct: ([A-Z])", r"Right: ([A-Z])",
    r"<\|begin_of_box\|>([A-Z])<\|end_of_box\|>",
)


def spatialtree_choice(reply: str, gt: Any, choices: Sequence[str] | None = None,
                       param: str | None = None) -> tuple[float, Any]:
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
        tail = reply[reply.rfind("Answer:") + len("Answer:"):].strip()
        named = [c for c in letters if c in tail]
        if len(named) == 1:
            got = named[0]
    if got is None:
        got = _mmmu_parse(reply, options)
    return (1.0 if got is not None and got == str(gt) else 0.0), got


def spatialtree_number(text: str) -> str:
    """SpatialTree-Bench ``find_number``: the first number outside coordinate pairs such as ``(1, 2)``;
    as upstream, commas are dropped before the pair patterns run, so a written pair is not recognised."""
    text = text.replace(",", "")
    stripped = text
    for pattern in (r"\(\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\)", r"\[\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\]",
                    r"\{\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\}", r"\b-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\b"):
        stripped = re.sub(pattern, "", stripped)
    match = re.search(r"-?\d+\.?\d*", stripped)
    if match:
        return match.group()
    every = list(re.finditer(r"-?\d+\.?\d*", text))
    return every[0].group() if every else ""


def spatialtree_mra(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SpatialTree-Bench ``meanrelativeacc``: :func:`spatialtree_number`, then the VSI-Bench MRA (a reply
    without a number raises in the official code, which scores 0)."""
    got = _to_float(spatialtree_number(reply))
    return _mra_or_zero_policy(got, float(gt)), got


_VIDEOMME_PREFIXES = (
    "The best answer is", "The correct answer is", "The answer is", "The answer",
    # Two pairs the official list joins by a missing comma, kept as the official code has them:
    "The best option isThe correct option is", "Best answer:Best option:",
)
_VIDEOMME_V2_PREFIXES = (
    "The best answer is", "The correct answer is", "The answer is", "The answer", "The best option is",
    "The correct option is", "Final Answer:", "Best answer:", "Best option:", "Answer:", "Option:",
)


def _videomme_extract(reply: str, prefixes: Sequence[str], letters: str) -> str:
    text = reply.strip()
    for prefix in prefixes:
        text = text.replace(prefix, "")
    if len(text.split()) > 10 and not re.search(f"[{letters}]", text):
        return ""
    match = re.search(f"[{letters}]", text)
    return match[0] if match else ""


def videomme_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME (lmms-eval ``extract_characters_regex``): drop answer prefixes, then the *first* capital
    A-D anywhere in the reply; compared case-insensitively."""
    got = _videomme_extract(reply, _VIDEOMME_PREFIXES, "ABCD")
    return (1.0 if got.lower() == str(gt).lower() else 0.0), got


def videomme_v2_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Video-MME-v2: the same extraction over A-H with its longer prefix list."""
    got = _videomme_extract(reply, _VIDEOMME_V2_PREFIXES, "A-H")
    return (1.0 if got.upper() == str(gt).upper() else 0.0), got


def dsi_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """DSI-Bench: the letter in ``<answer>X</answer>`` (A-D, any case, as a capital), else ``"E"``; its
    first character equals ``GT``."""
    match = re.search(r"<answer>\s*([A-D])\s*</answer>", reply, flags=re.IGNORECASE)
    got = match.group(1).upper() if match else "E"
    return (1.0 if str(gt).strip() == got[0] else 0.0), got


def _clear_words(text: str) -> str:
    return text.replace(" ", "").replace('"', "").replace("'", "").replace("\n", "").replace(":", "")


def mmsi_video_extract(reply: str) -> str:
    """MMSI-Video-Bench ``extract_answer``: ``boxed{}``, a JSON ``"answer":``, ``answer is``, ``Answer: ``
    or a bare first sentence, cleaned of spaces, quotes and colons; ``"O"`` when nothing is found."""
    reply = reply.replace("<answer>", "").replace("</answer>", "")
    if "no answer" in reply:
        return "O"
    if "boxed{" in reply:
        return _clear_words(reply.split("boxed{")[1].split("}")[0])
    for marker in ('"answer":', "answer is", "Answer: "):
        if marker in reply:
            return _clear_words(reply.split(marker)[-1].split(",")[0].split(".")[0])
    first = _clear_words(reply.split(".")[0])
    return first if first in ("A", "B", "C", "D", "E", "F") else "O"


def mmsi_video_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """MMSI-Video-Bench: the extracted letter (A-F only) equals the answer."""
    got = mmsi_video_extract(reply)
    return (1.0 if got in ("A", "B", "C", "D", "E", "F") and got == str(gt) else 0.0), got


def pai_choice(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """PAI-Bench (reason): the ``<answer>`` content (else the reply plus ``" N/A"``), lower-cased without
    dots and spaces, equals the answer treated the same way."""
    try:
        got = reply.split("<answer>")[1].split("</answer>")[0].strip()
    except IndexError:
        got = reply + " N/A"

    def squeeze(text: str) -> str:
        return text.lower().replace(".", "").replace(" ", "")

    return (1.0 if squeeze(got) == squeeze(str(gt)) else 0.0), got


def _omni3d_reply(reply: str) -> str:
    return reply.split("<ans>")[1].split("</ans>")[0] if "<ans>" in reply else reply


#: VLMEvalKit's Omni3D-Bench tolerances, compared with a strict ``<`` (unlike VSI-Bench's ``<=``).
OMNI3D_TOLERANCES = (0.5, 0.45, 0.40, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05)


def omni3d_score(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """Omni3D-Bench (VLMEvalKit ``Omni3DBench_acc``) by ``answer_type`` (``param``): ``int`` counts by
    ``int()`` equality; ``str`` yes/no when the reply (lower-cased) contains the answer or true/false;
    other ``str`` answers by exact equality with the lower-cased reply; ``float`` by the share of
    tolerances t with ``|gt - pred| / gt < t``."""
    pred = _omni3d_reply(reply)
    if param == "int":
        try:
            return (1.0 if int(pred) == int(gt) else 0.0), int(pred)
        except (TypeError, ValueError):
            return 0.0, None
    if param == "float":
        value = _to_float(pred)
        if value is None:
            return 0.0, None
        target = float(gt)
        hits = [abs(target - value) / target < t for t in OMNI3D_TOLERANCES] if target else [value == 0] * 10
        return sum(hits) / len(OMNI3D_TOLERANCES), value
    answer = str(gt)
    low = pred.lower()
    if answer in ("yes", "no"):
        right = answer in low or (answer == "yes" and "true" in low) or (answer == "no" and "false" in low)
        return (1.0 if right else 0.0), pred
    return (1.0 if answer == low else 0.0), pred


def spar_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench ``exact_match`` (lower-cased): equal, or the reply contained in the answer, or the reply's
    first character equal to the answer (so ``"a) chair"`` and ``"Answer: A"`` both count for A)."""
    pred, target = reply.lower(), str(gt).lower()
    if pred == target or pred in target or pred[:1] == target:
        return 1.0, reply
    return 0.0, reply


_SPAR_MV_NUMERIC = ("depth_prediction_oc_mv", "depth_prediction_oo_mv", "distance_prediction_oc_mv",
                    "distance_prediction_oo_mv")


def spar_number(reply: str, task: str | None) -> float | None:
    """SPAR-Bench ``process_na``: the first number in the reply (the *last* for the four multi-view depth and
    distance tasks, -1 when they have none); None when there is none."""
    numbers = [float(n) for n in re.findall(r"(?<!\^)\d+\.\d+|(?<!\^)\d+", reply)]
    if task in _SPAR_MV_NUMERIC:
        return numbers[-1] if numbers else -1.0
    return numbers[0] if numbers else None


def _spar_mra(pred: float, target: float) -> float:
    """SPAR-Bench's MRA: like VSI-Bench's, but a zero target measures the absolute error."""
    distance = abs(pred - target) if target == 0.0 else abs((pred - target) / target)
    return float(np.mean(distance <= 1 - VSI_CONFIDENCE))


def spar_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench numbers: :func:`spar_number` (``param`` is the task name), then SPAR's MRA."""
    got = spar_number(reply, param)
    target = _to_float(gt)
    if got is None or target is None:
        return 0.0, got
    return _spar_mra(got, target), got


_VCI_AXES = (("move_right", "move_left"), ("move_up", "move_down"), ("move_forward", "move_backward"),
             ("rotate_right", "rotate_left"), ("rotate_up", "rotate_down"))


def _parse_instruction(text: str) -> dict[str, float]:
    return {k: float(v) for k, v in [item.split(":") for item in text.split(",")]}


def spar_vci(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench ``view_change_infer``: both replies parsed as ``action:amount,...``, netted per axis
    (right - left, up - down, forward - backward, and the two rotations); the mean of
    ``mean_relative_accuracy(gt_axis, predicted_axis)`` over the five axes (the official argument order:
    the prediction is the reference). Any parse error scores 0."""
    try:
        pred, truth = _parse_instruction(reply), _parse_instruction(str(gt))
    except ValueError:
        return 0.0, None
    scores = []
    for plus, minus in _VCI_AXES:
        p = pred.get(plus, 0) - pred.get(minus, 0)
        g = truth.get(plus, 0) - truth.get(minus, 0)
        scores.append(_spar_mra(g, p))
    return float(np.mean(scores)), pred


_OSI_ZERO_THRESHOLD = {"absolute_speed": 0.30, "absolute_displacement": 0.30, "trajectory_length": 2.0}


def first_number(text: str) -> float | None:
    match = re.search(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text.replace(",", ""))
    return float(match.group()) if match else None


def osi_na(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """OSI-Bench numbers (VLMEvalKit ``_apply_osi_na_mra``; ``param`` is the category): VSI-Bench MRA; a
    zero answer for speed, displacement or trajectory length counts when the prediction is below the
    category's threshold (else MRA against the threshold), any other zero answer only when exact. The
    number is the reply's first number (EASI's extraction step was not available offline)."""
    got = first_number(reply)
    target = _to_float(gt)
    if got is None or target is None or math.isnan(got) or math.isnan(target):
        return 0.0, got
    threshold = _OSI_ZERO_THRESHOLD.get(param or "")
    if threshold is not None and target == 0:
        return (1.0 if got < threshold else official_mra(got, threshold)), got
    if target == 0:
        return (1.0 if got == 0 else 0.0), got
    return official_mra(got, target), got


_REFUSALS = ("Sorry, I can't help with images of people yet.", "I can't process this file.",
             "I'm sorry, but without the image provided", "Cannot determine the answer")


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
    named = [c for c, text in zip(letters, options) if str(text).lower() in low]
    return named[0] if len(named) == 1 else None


def vlmeval_choice(reply: str, gt: Any, choices: Sequence[str] | None = None,
                   param: str | None = None) -> tuple[float, Any]:
    """3DSRBench (VLMEvalKit's multiple-choice evaluation): :func:`vlmeval_infer` equals the answer letter."""
    got = vlmeval_infer(reply, [_option_text(c) for c in choices or []])
    return (1.0 if got is not None and got == str(gt).strip() else 0.0), got


#: metric name -> (scorer, the response template a structured answer is rendered with)
OFFICIAL_METRICS: dict[str, tuple[Scorer, str]] = {
    "vsi_mca": (vsi_mca, "{}"),
    "vsi_na": (vsi_na, "{}"),
    "cv_letter": (cv_letter, "{}"),
    "mmsi_choice": (mmsi_choice, "{}"),
    "mindcube_choice": (mindcube_choice, "{}"),
    "viewspatial_choice": (viewspatial_choice, "{}"),
    "omnispatial_choice": (omnispatial_choice, "Answer: {}"),
    "erqa_choice": (erqa_choice, "{}"),
    "perceptioncomp_choice": (perceptioncomp_choice, "{}"),
    "spatialtree_choice": (spatialtree_choice, "answer: {}"),
    "spatialtree_mra": (spatialtree_mra, "{}"),
    "videomme_choice": (videomme_choice, "{}"),
    "videomme_v2_choice": (videomme_v2_choice, "{}"),
    "dsi_choice": (dsi_choice, "<answer>{}</answer>"),
    "mmsi_video_choice": (mmsi_video_choice, "{}"),
    "pai_choice": (pai_choice, "<answer>{}</answer>"),
    "omni3d": (omni3d_score, "<ans>{}</ans>"),
    "spar_mca": (spar_mca, "{}"),
    "spar_na": (spar_na, "{}"),
    "spar_vci": (spar_vci, "{}"),
    "osi_na": (osi_na, "{}"),
    "vlmeval_choice": (vlmeval_choice, "{}"),
}


def parse_metric(metric: str) -> tuple[str, str | None]:
    """``"spar_na:depth_prediction_oc_mv"`` -> ``("spar_na", "depth_prediction_oc_mv")``."""
    name, _, param = metric.partition(":")
    return name, (param or None)


def literal(value: Any) -> Any:
    """A Python literal stored as text (``"[1, 2, 3, 4]"``), else the value."""
    if isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value
