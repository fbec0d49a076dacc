"""Scoring: turn a model's free-form answer into a score, and scores into benchmark numbers.

Answer extraction
    :func:`extract_choice` finds the chosen option letter in text such as ``"B"``, ``"(B)"``, ``"B."``,
    ``"B. the chair"``, ``"The answer is B"``, ``"<answer>B</answer>"`` or the option's own text
    (``"left"``, ``"Left, because ..."``). :func:`extract_number` finds a quantity such as ``"2.5"``,
    ``"about 3 meters"``, ``"150 cm"``, ``"5 ft 6 in"``, ``"three"``, ``"2-3 m"`` (a range gives its
    midpoint) and optionally converts it to a requested unit.

Metrics
    :func:`mean_relative_accuracy` is the official VSI-Bench rule bit for bit (lmms-eval
    ``tasks/vsibench/utils.py``, copied by SPAR-Bench, VSTI-Bench, SpatialTree-Bench and others): a hit at
    each of the ten thresholds ``conf = np.linspace(0.5, 0.95, 10)`` (numpy's floats: 0.5499999...) when
    ``|pred - gt| / |gt| <= 1 - conf``; MRA is the share of hits. So 0.88 against 1.0 scores 0.8, 1.26
    scores 0.5 and 2 against 4 scores 0.1 (the error 0.5 equals ``1 - 0.5``). Paper text writes ``<``; the
    code, which produced every published number, uses ``<=``.

    Zero ground truth policy: relative error is undefined when ``gt == 0`` (the official code divides by
    it). We score it as exact: 1.0 when ``|pred| <= 1e-9`` and 0.0 otherwise. A missing or non-finite
    prediction scores 0.0.

    Official per-benchmark metrics (``"vsi_mca"``, ``"mmsi_choice"``, ``"dsi_choice"``, ...; see
    :mod:`spatialclaw.benchmarks.official`) reproduce each benchmark's own answer extraction; the adapters
    in :mod:`spatialclaw.benchmarks.specs` set them in ``task.meta["metric"]``. The lenient extractors below
    (:func:`extract_choice`, :func:`extract_number`) serve local and synthetic tasks.

Aggregation
    Every benchmark reports the mean score per category and an overall number computed by that benchmark's
    own rule (:data:`AGGREGATORS`): ``micro`` (mean over questions), ``macro`` (mean over categories),
    ``vsi_bench`` (macro over question types after merging the three relative-direction difficulties),
    ``cv_bench`` (mean of the 2D score, itself the mean of ADE20K and COCO, and the 3D Omni3D score),
    ``circular`` (a question counts only when every circular variant of it is right), ``videomme_v2``
    (grouped non-linear scores per video) and ``spatialtree`` (means up the ability tree).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from spatialclaw.benchmarks.names import normalise_benchmark_name
from spatialclaw.benchmarks.official import OFFICIAL_METRICS, VSI_CONFIDENCE, literal, parse_metric, render_structured

__all__ = [
    "VSI_BENCH_THRESHOLDS",
    "AGGREGATORS",
    "Aggregate",
    "Score",
    "ScoredRow",
    "aggregate",
    "choice_letters",
    "exact_match",
    "extract_choice",
    "extract_number",
    "mean_relative_accuracy",
    "normalise_benchmark_name",
    "normalize_choice_answer",
    "score_answer",
]

#: The official thresholds ``np.linspace(0.5, 0.95, 10)``, as the floats numpy makes them.
VSI_BENCH_THRESHOLDS: tuple[float, ...] = tuple(float(t) for t in VSI_CONFIDENCE)


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


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s.\-]", " ", str(text).lower())).strip(" .")


def _focus(text: str) -> str:
    """The part of a reply that holds the answer: an ``<answer>`` tag, a ``\\boxed{}``, or the text after the
    last "answer is"/"answer:" cue; otherwise the whole text."""
    tag = _ANSWER_TAG.findall(text)
    if tag:
        return tag[-1]
    boxed = _BOXED.findall(text)
    if boxed:
        return boxed[-1]
    cues = list(_ANSWER_CUE.finditer(text))
    if cues:
        tail = text[cues[-1].end():].strip()
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
    options = [_norm(_option_text(c)) for c in choices]
    for candidate in (_focus(raw), raw):
        letter = _choice_in(candidate, letters, options)
        if letter:
            return letter
    return None


def _choice_in(text: str, letters: list[str], options: list[str]) -> str | None:
    stripped = text.strip().strip("*`'\" ")
    letter = _leading_label(stripped, letters, options)
    if letter:
        return letter
    normalized = _norm(stripped)
    # The option's text, exactly.
    exact = [i for i, o in enumerate(options) if o and normalized == o]
    if len(exact) == 1:
        return letters[exact[0]]
    # The option's text followed by trailing words ("left, because ..."): the longest option that prefixes.
    prefixed = [i for i, o in enumerate(options) if o and re.match(re.escape(o) + r"(?![\w])", normalized)]
    mentioned = [i for i, o in enumerate(options) if o and re.search(r"(?<![\w])" + re.escape(o) + r"(?![\w])", normalized)]
    if prefixed:
        best = max(prefixed, key=lambda i: len(options[i]))
        if all(options[i] in options[best] for i in mentioned):
            return letters[best]
    # Explicit labels anywhere: "(B)", "option B", "choice B".
    labelled = {
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
    lone = {t for t in re.findall(r"(?<![\w'])([A-Z])(?![\w'])", text) if t in letters and t not in {"A", "I"}}
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
        rest = _norm(spaced.group(2))
        # "A" and "I" are also English words: accept them only when the option's text or "is" follows.
        if letter not in {"A", "I"} or rest.startswith(("is ", "is.")) or rest == "is" or (
            options[letters.index(letter)] and rest.startswith(options[letters.index(letter)])
        ):
            return letter
    return None


def normalize_choice_answer(value: Any, choices: Sequence[str]) -> str | None:
    """A ground truth for multiple choice as a letter: accepts ``"B"``, ``"(B)"``, ``"B. text"``, the option
    text, or a 0-based option index. None when it matches no option."""
    return extract_choice(value, choices)


# --------------------------------------------------------------------------------------------- numbers

_UNIT_TO_METRES = {
    "mm": 0.001, "millimeter": 0.001, "millimeters": 0.001, "millimetre": 0.001, "millimetres": 0.001,
    "cm": 0.01, "centimeter": 0.01, "centimeters": 0.01, "centimetre": 0.01, "centimetres": 0.01,
    "m": 1.0, "meter": 1.0, "meters": 1.0, "metre": 1.0, "metres": 1.0,
    "km": 1000.0, "kilometer": 1000.0, "kilometers": 1000.0, "kilometre": 1000.0, "kilometres": 1000.0,
    "in": 0.0254, "inch": 0.0254, "inches": 0.0254, '"': 0.0254, "″": 0.0254,
    "ft": 0.3048, "foot": 0.3048, "feet": 0.3048, "'": 0.3048, "′": 0.3048,
    "yd": 0.9144, "yard": 0.9144, "yards": 0.9144,
}
_AREA_UNITS = {"m2": 1.0, "m²": 1.0, "square meters": 1.0, "square metres": 1.0, "sq m": 1.0,
               "ft2": 0.09290304, "ft²": 0.09290304, "square feet": 0.09290304, "sq ft": 0.09290304}

_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
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

    text = re.sub(r"\b(?:a\s+dozen|a\s+half|a\s+couple)\b", lambda m: _fmt(_PHRASES[re.sub(r"\s+", " ", m.group(0).lower())]), text, flags=re.IGNORECASE)
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
    for candidate in (_focus(raw), raw):
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
        if b is not None and m.group(0)[len(m.group("a")):].lstrip().startswith("-") and b < 0:
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


# --------------------------------------------------------------------------------------------- metrics

def mean_relative_accuracy(pred: Any, gt: Any, thresholds: Sequence[float] = VSI_BENCH_THRESHOLDS) -> float:
    """VSI-Bench mean relative accuracy of one numeric prediction, in [0, 1], by the official rule: the
    share of ``thresholds`` (default: the official ten) with ``|pred - gt| / |gt| <= 1 - threshold``.
    ``pred`` may be a number or text (read with :func:`extract_number`). A missing, non-numeric or
    non-finite prediction scores 0.0. Zero ground truth: 1.0 iff ``|pred| <= 1e-9``."""
    p = extract_number(pred) if not isinstance(pred, (int, float)) or isinstance(pred, bool) else float(pred)
    g = float(gt) if isinstance(gt, (int, float)) else extract_number(gt)
    if g is None or not math.isfinite(g):
        raise ValueError(f"ground truth {gt!r} is not a finite number; fix the task's ground_truth")
    if p is None or not math.isfinite(p):
        return 0.0
    if g == 0.0:
        return 1.0 if abs(p) <= 1e-9 else 0.0
    relative_error = abs(p - g) / abs(g)
    return float(np.mean(relative_error <= 1 - np.asarray(thresholds, dtype=float)))


def exact_match(pred: Any, gt: Any) -> float:
    """1.0 when the two agree after lower-casing and dropping punctuation and extra spaces, else 0.0."""
    if pred is None:
        return 0.0
    return 1.0 if _norm(str(pred)) == _norm(str(gt)) else 0.0


_YES = {"yes", "y", "true", "correct", "right"}
_NO = {"no", "n", "false", "incorrect", "wrong"}


def _yes_no(text: Any) -> str | None:
    if text is None:
        return None
    if isinstance(text, bool):
        return "yes" if text else "no"
    words = _norm(_focus(str(text))).split()
    for word in words:
        if word in _YES:
            return "yes"
        if word in _NO:
            return "no"
    return None


@dataclass
class Score:
    """A scored answer: ``value`` in [0, 1], the ``metric`` used, and what was read from the answer."""

    value: float
    metric: str
    extracted: Any = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.value, "metric": self.metric, "extracted": self.extracted, **self.details}


METRICS = ("choice", "mra", "exact", "number_exact", "yes_no", *OFFICIAL_METRICS)


def default_metric(answer_type: str) -> str:
    """The metric a task uses when its ``meta["metric"]`` does not say: choices by letter, numbers by MRA."""
    return {"multiple_choice": "choice", "number": "mra", "yes_no": "yes_no"}.get(answer_type, "exact")


def score_answer(
    answer: Any,
    ground_truth: Any,
    answer_type: str = "text",
    choices: Sequence[str] | None = None,
    metric: str | None = None,
    unit: str | None = None,
) -> Score:
    """Score one answer against its ground truth.

    ``metric``: ``"choice"`` (option letter accuracy), ``"mra"`` (mean relative accuracy), ``"exact"``
    (normalised string match), ``"number_exact"`` (the number read from the answer equals the ground truth
    to 1e-6, e.g. counts) or ``"yes_no"``; defaults from ``answer_type``. A benchmark's official metric
    (``"vsi_mca"``, ``"spar_na:<task>"``, ...: a name from :data:`~spatialclaw.benchmarks.official.OFFICIAL_METRICS`,
    optionally ``:parameter``) renders a structured answer in the official reply format and runs that
    benchmark's own extraction and comparison. ``unit`` converts a numeric
    answer written with units (``"150 cm"``) into the ground truth's unit before comparing.
    """
    metric = metric or default_metric(answer_type)
    name, param = parse_metric(metric)
    if name not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    if ground_truth is None:
        raise ValueError("cannot score a task without ground truth")
    if name in OFFICIAL_METRICS:
        if answer is None or not str(answer).strip():
            # no answer is wrong everywhere (SPAR-Bench's exact_match would count an empty reply as right)
            return Score(0.0, metric, None, {"ground_truth": ground_truth})
        scorer, template = OFFICIAL_METRICS[name]
        value, extracted = scorer(render_structured(answer, choices, template), ground_truth, choices, param)
        return Score(float(value), metric, extracted, {"ground_truth": ground_truth})
    if metric == "choice":
        if not choices:
            raise ValueError("metric 'choice' needs the task's choices")
        gt = normalize_choice_answer(ground_truth, choices)
        if gt is None:
            raise ValueError(f"ground truth {ground_truth!r} matches none of the choices {list(choices)}")
        got = extract_choice(answer, choices)
        return Score(1.0 if got == gt else 0.0, metric, got, {"ground_truth": gt})
    if metric in {"mra", "number_exact"}:
        got = extract_number(answer, unit)
        g = extract_number(ground_truth)
        if g is None:
            raise ValueError(f"ground truth {ground_truth!r} is not a number")
        if metric == "mra":
            return Score(mean_relative_accuracy(got, g), metric, got, {"ground_truth": g})
        return Score(1.0 if got is not None and abs(got - g) <= 1e-6 else 0.0, metric, got, {"ground_truth": g})
    if metric == "yes_no":
        got, gt = _yes_no(answer), _yes_no(ground_truth)
        if gt is None:
            raise ValueError(f"ground truth {ground_truth!r} is neither yes nor no")
        return Score(1.0 if got == gt else 0.0, metric, got, {"ground_truth": gt})
    extracted = _focus(str(answer)).strip() if answer is not None else None
    return Score(exact_match(extracted, ground_truth), metric, extracted, {"ground_truth": ground_truth})


# --------------------------------------------------------------------------------------------- aggregation

@dataclass
class ScoredRow:
    """The part of a result row aggregation needs. ``score`` is None for an unscored row (counted as 0)."""

    task_id: str
    category: str | None
    score: float | None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Aggregate:
    """A benchmark's numbers: ``overall`` and per-category means (both in [0, 1]), question counts, the rule."""

    overall: float | None
    categories: dict[str, float]
    counts: dict[str, int]
    n: int
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {"overall": self.overall, "categories": self.categories, "counts": self.counts, "n": self.n, "rule": self.rule}


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _by_category(rows: Sequence[ScoredRow]) -> tuple[dict[str, float], dict[str, int]]:
    groups: dict[str, list[float]] = {}
    for row in rows:
        groups.setdefault(row.category or "uncategorized", []).append(row.score or 0.0)
    return {k: sum(v) / len(v) for k, v in sorted(groups.items())}, {k: len(v) for k, v in sorted(groups.items())}


def aggregate_micro(rows: Sequence[ScoredRow]) -> Aggregate:
    """Overall = mean over all questions (MMSI-Bench, MindCube, ERQA, OmniSpatial, ViewSpatial-Bench, ...)."""
    cats, counts = _by_category(rows)
    return Aggregate(_mean(r.score or 0.0 for r in rows), cats, counts, len(rows), "micro")


def aggregate_macro(rows: Sequence[ScoredRow]) -> Aggregate:
    """Overall = mean of the per-category means (BLINK over subtasks, SPAR-Bench over tasks)."""
    cats, counts = _by_category(rows)
    return Aggregate(_mean(cats.values()), cats, counts, len(rows), "macro")


VSI_DIRECTION_TYPES = ("object_rel_direction_easy", "object_rel_direction_medium", "object_rel_direction_hard")


def aggregate_vsi_bench(rows: Sequence[ScoredRow]) -> Aggregate:
    """VSI-Bench: mean per question type; the three relative-direction difficulties are averaged into one
    ``object_rel_direction`` entry (mean of the three means); overall = mean over the resulting types."""
    cats, counts = _by_category(rows)
    merged = {k: v for k, v in cats.items() if k not in VSI_DIRECTION_TYPES}
    directions = [cats[k] for k in VSI_DIRECTION_TYPES if k in cats]
    if directions:
        merged["object_rel_direction"] = sum(directions) / len(directions)
    return Aggregate(_mean(merged.values()), dict(sorted(merged.items())), counts, len(rows), "vsi_bench")


def aggregate_cv_bench(rows: Sequence[ScoredRow]) -> Aggregate:
    """CV-Bench: 2D = mean of the ADE20K and COCO accuracies, 3D = the Omni3D accuracy,
    overall = (2D + 3D) / 2; ``meta["source"]`` names each question's source dataset."""
    cats, counts = _by_category(rows)
    by_source: dict[str, list[float]] = {}
    for row in rows:
        by_source.setdefault(str(row.meta.get("source", "")), []).append(row.score or 0.0)
    src = {k: sum(v) / len(v) for k, v in by_source.items()}
    two_d = _mean(src[s] for s in ("ADE20K", "COCO") if s in src)
    three_d = src.get("Omni3D")
    overall = _mean(x for x in (two_d, three_d) if x is not None)
    extra = {f"source:{k}": v for k, v in sorted(src.items()) if k}
    if two_d is not None:
        extra["2D"] = two_d
    if three_d is not None:
        extra["3D"] = three_d
    return Aggregate(overall, {**cats, **extra}, counts, len(rows), "cv_bench")


def aggregate_circular(rows: Sequence[ScoredRow]) -> Aggregate:
    """Circular evaluation (3DSRBench): rows sharing ``meta["circular_group"]`` are one question, right
    only when every variant is right; overall = mean over questions, categories likewise."""
    groups: dict[str, list[ScoredRow]] = {}
    for row in rows:
        groups.setdefault(str(row.meta.get("circular_group", row.task_id)), []).append(row)
    collapsed = [
        ScoredRow(key, members[0].category, min(m.score or 0.0 for m in members), members[0].meta)
        for key, members in groups.items()
    ]
    result = aggregate_micro(collapsed)
    result.rule = "circular"
    return result


def _video_mme_v2_logic(scores: list[bool], structure: Any) -> float:
    """Video-MME-v2 chain scoring of a logic group: the run of right answers from the first question,
    weighted by the group's structure (the official map, divided by 100)."""
    last = -1
    for index, right in enumerate(scores):
        if not right:
            break
        last = index
    structure = literal(structure)
    if structure == [1, 2, 3, 4]:
        weights = {0: 0.0, 1: 1 / 16, 2: 4 / 16, 3: 9 / 16, 4: 1.0}
    elif structure == [1, [2, 3], 4]:
        weights = {0: 0.0, 1: 1 / 12, 2: 4 / 12, 3: 7 / 12, 4: 1.0}
        if last == 0 and len(scores) > 2 and scores[2]:
            last += 1
    elif structure == [[1, 2], 3, 4]:
        weights = {0: 0.0, 1: 1 / 10, 2: 2 / 10, 3: 5 / 10, 4: 1.0}
        if last == -1 and len(scores) > 1 and scores[1]:
            last += 1
    else:
        raise ValueError(f"unknown Video-MME-v2 group_structure {structure!r}")
    return weights.get(last + 1, 0.0)


def aggregate_video_mme_v2(rows: Sequence[ScoredRow]) -> Aggregate:
    """Video-MME-v2 (lmms-eval ``videomme_v2_aggregate_results``): the questions of one video form a group,
    ordered by the number after the last ``-`` of ``meta["question_id"]``; a ``relevance`` group scores
    by how many are right (0, 1/16, 4/16, 9/16, 1), a ``logic`` group by :func:`_video_mme_v2_logic`, any
    other by the share right; overall = mean over groups. Categories: per-question means and
    ``group:<type>`` group means."""
    cats, counts = _by_category(rows)
    groups: dict[str, list[ScoredRow]] = {}
    for row in rows:
        groups.setdefault(str(row.meta.get("video_id", row.task_id)), []).append(row)
    by_type: dict[str, list[float]] = {}
    for members in groups.values():
        members.sort(key=lambda r: int(str(r.meta.get("question_id", "0")).split("-")[-1]))
        right = [(r.score or 0.0) >= 1.0 for r in members]
        kind = str(members[0].meta.get("group_type"))
        if kind == "relevance":
            value = {0: 0.0, 1: 1 / 16, 2: 4 / 16, 3: 9 / 16, 4: 1.0}.get(sum(right), 0.0)
        elif kind == "logic":
            value = _video_mme_v2_logic(right, members[0].meta.get("group_structure"))
        else:
            value = sum(right) * 0.25
        by_type.setdefault(kind, []).append(value)
    every = [v for values in by_type.values() for v in values]
    extra = {f"group:{k}": sum(v) / len(v) for k, v in sorted(by_type.items())}
    return Aggregate(_mean(every), {**cats, **extra}, counts, len(rows), "videomme_v2")


def aggregate_spatialtree(rows: Sequence[ScoredRow]) -> Aggregate:
    """SpatialTree-Bench: each question sits at a leaf of the ability tree (``meta["spatree"]``, e.g.
    ``["L1", "Geometry", "Size"]``); a leaf scores the mean of its questions, every inner node the mean of
    its children, overall = the root. lmms-eval weights children by ``spatree_hierarchy.json``; that file
    is not reproduced here, so children weigh equally (the official weights default to 1 too)."""
    cats, counts = _by_category(rows)
    leaves: dict[tuple[str, ...], list[float]] = {}
    for row in rows:
        path = tuple(str(p) for p in (row.meta.get("spatree") or [row.category or "uncategorized"]))
        leaves.setdefault(path, []).append(row.score or 0.0)

    def node(prefix: tuple[str, ...]) -> float | None:
        if prefix in leaves and not any(len(p) > len(prefix) and p[: len(prefix)] == prefix for p in leaves):
            return sum(leaves[prefix]) / len(leaves[prefix])
        children = sorted({p[len(prefix)] for p in leaves if len(p) > len(prefix) and p[: len(prefix)] == prefix})
        values = [v for v in (node(prefix + (c,)) for c in children) if v is not None]
        return sum(values) / len(values) if values else None

    levels = {f"level:{top}": node((top,)) for top in sorted({p[0] for p in leaves})}
    return Aggregate(node(()), {**cats, **{k: v for k, v in levels.items() if v is not None}}, counts, len(rows),
                     "spatialtree")


AGGREGATORS: dict[str, Callable[[Sequence[ScoredRow]], Aggregate]] = {
    "micro": aggregate_micro,
    "macro": aggregate_macro,
    "vsi_bench": aggregate_vsi_bench,
    "cv_bench": aggregate_cv_bench,
    "circular": aggregate_circular,
    "videomme_v2": aggregate_video_mme_v2,
    "spatialtree": aggregate_spatialtree,
}


def aggregate(rows: Sequence[ScoredRow], rule: str = "micro") -> Aggregate:
    """Aggregate scored rows by the named rule (see :data:`AGGREGATORS`)."""
    try:
        return AGGREGATORS[rule](rows)
    except KeyError:
        raise ValueError(f"unknown aggregation rule {rule!r}; use one of {', '.join(AGGREGATORS)}") from None
