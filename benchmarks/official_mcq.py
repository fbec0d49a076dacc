"""Official multiple-choice scorers that read the option letter by one simple rule: a first token, a leading
letter, a tag, a prefix list or a single pattern (VSI-Bench, CV-Bench/BLINK, MMSI-Bench, ViewSpatial-Bench,
OmniSpatial, Video-MME(-v2), DSI-Bench, MMSI-Video-Bench, PAI-Bench, SPAR-Bench choices).

Each scorer: (reply text, ground truth, choices, parameter) -> (score in [0, 1], what was extracted); each
re-implements what the benchmark's published evaluation code does to one reply (see
:mod:`spatialclaw.benchmarks.official`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from spatialclaw.benchmarks.official_common import vsi_fuzzy

__all__ = [
    "cv_letter",
    "dsi_choice",
    "leading_letter",
    "mmsi_choice",
    "mmsi_video_choice",
    "mmsi_video_extract",
    "omnispatial_choice",
    "pai_choice",
    "spar_mca",
    "videomme_choice",
    "videomme_v2_choice",
    "viewspatial_choice",
    "viewspatial_option",
    "vsi_mca",
]


def vsi_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """VSI-Bench (and VSTI-Bench, SPBench) multiple choice: the first token equals the letter, any case."""
    got = vsi_fuzzy(reply)
    return (1.0 if got.lower() == str(gt).lower() else 0.0), got


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


_VIDEOMME_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    # Two pairs the official list joins by a missing comma, kept as the official code has them:
    "The best option isThe correct option is",
    "Best answer:Best option:",
)
_VIDEOMME_V2_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Final Answer:",
    "Best answer:",
    "Best option:",
    "Answer:",
    "Option:",
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


def spar_mca(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SPAR-Bench ``exact_match`` (lower-cased): equal, or the reply contained in the answer, or the reply's
    first character equal to the answer (so ``"a) chair"`` and ``"Answer: A"`` both count for A)."""
    pred, target = reply.lower(), str(gt).lower()
    if pred == target or pred in target or pred[:1] == target:
        return 1.0, reply
    return 0.0, reply
