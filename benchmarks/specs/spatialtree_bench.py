"""SpatialTree-Bench ("SpatialTree: How Spatial Abilities Branch Out in MLLMs", 2025): a hierarchy of
spatial abilities, from perception (L1) to agentic competence (L4); the paper's ``spatialtree``.

Record (``LongfeiLi/SpatialTree-Bench``: ``annotations_plain.parquet``, 6,300 questions: multiple-choice
4,248, open 1,852, judge 200; media ``videos/*.mp4`` and ``images/*.jpg`` under the repository root):
``session_id`` (the sample id), ``question``, ``question_type`` (``multiple-choice`` / ``open`` / ``judge``),
``option`` (list; nulls dropped), ``answer``, ``extra_info`` (JSON: ``metricfunc``, the ability path
``spatree0`` level, ``spatree1`` category, ``spatree2`` subcategory), ``hint`` (kept in meta, not shown),
``video`` (the first entry is used), ``image`` (list). Frames: a video at its native fps with 32 key
frames shown; images: all of them.

Scoring: the paper's setting, metric ``spatialtree_paper:<kind>``: every record is loaded and run. Those
whose ``metricfunc`` is an LLM judge or a simulator (gpteval, cogmapeval, affmask, manipulateeval,
agenticnaveval, gravityeval) are marked ``paper_scored`` False and left out of every number. Multiple
choice: boxed / first ``X.``, ``(X)``, ``X:`` (A-K) / a first-token letter, equal to the answer; metricfunc
meanrelativeacc, meanrelativeacc2, angulardifference, l2distance: MRA on the number read (number words
first), zero answer scores 0; judge: whichever of yes/no comes last; otherwise MRA when both are numbers,
else case-insensitive equality. Overall = mean over the scored questions (rule ``spatialtree_scored``),
with breakdowns per level, level/category, level/category/subcategory, question type and metricfunc.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from spatialclaw import jsonl
from spatialclaw.benchmarks.data.published import parquet_records, require_file
from spatialclaw.benchmarks.scoring.answer_parsing import choice_letters
from spatialclaw.benchmarks.scoring.letters import boxed_letter, marked_letter, mmmu_parse, vsi_fuzzy
from spatialclaw.benchmarks.scoring.numbers import abs_mra, mra_or_zero_policy, to_float, word_or_digits
from spatialclaw.benchmarks.scoring.rows import Row, by_category, group_scores, mean
from spatialclaw.benchmarks.spec import BenchmarkSpec, FramePolicy, RecordContext, strip_option_labels
from spatialclaw.task import AnswerType, FrameSpec, Task

REPO = "LongfeiLi/SpatialTree-Bench"
COLUMNS = ("session_id", "question", "question_type", "option", "answer", "extra_info")


def read_source(root: Path) -> Iterator[dict[str, Any]]:
    """The rows of ``annotations_plain.parquet`` in file order."""
    yield from parquet_records(
        require_file(root, "annotations_plain.parquet", "spatialtree", REPO), COLUMNS, "spatialtree"
    )


def _json(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    return jsonl.loads(text) if text else {}


def _kind(question_type: str, metric_func: str | None) -> tuple[str, AnswerType]:
    """The scoring branch and the answer type of one question."""
    if metric_func in SPATIALTREE_UNSCORED:
        return "unscored", "multiple_choice" if question_type == "multiple-choice" else "text"
    if question_type == "multiple-choice":
        return "choice", "multiple_choice"
    if metric_func in SPATIALTREE_MRA:
        return "mra", "number"
    if question_type == "judge":
        return "judge", "yes_no"
    return "other", "text"


def to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    info = _json(record.get("extra_info"))
    metric_func = info.get("metricfunc")
    path = [str(info[k]) for k in sorted((k for k in info if k.startswith("spatree")), key=lambda k: int(k[7:]))]
    videos = [v for v in (record.get("video") or []) if v]
    if videos:
        inputs = [FrameSpec.video(ctx.media(str(videos[0])))]
    else:
        inputs = [FrameSpec.images([ctx.media(str(p)) for p in record.get("image") or [] if p])]
    question_type = str(record.get("question_type") or "")
    kind, answer_type = _kind(question_type, metric_func)
    options = [str(o) for o in (record.get("option") or []) if o is not None]
    if answer_type == "text" and to_float(str(record["answer"]).strip()) is not None:
        answer_type = "number"
    session = str(record.get("session_id", ctx.index))
    return Task(
        question=str(record["question"]),
        inputs=inputs,
        choices=(strip_option_labels(options) or choice_letters(4)) if answer_type == "multiple_choice" else None,
        answer_type=answer_type,
        ground_truth=str(record["answer"]).strip(),
        task_id=f"spatialtree-bench/{session}",
        benchmark="spatialtree-bench",
        category=path[-1] if path else "uncategorized",
        meta={
            "metric": f"spatialtree_paper:{kind}",
            "paper_scored": kind != "unscored",
            "spatree": path,
            "spatree_level": path[0] if path else None,
            "metricfunc": metric_func,
            "question_type": question_type,
            "hint": record.get("hint"),
            "sample_id": session,
            **({"options_in_question": True} if answer_type == "multiple_choice" and not options else {}),
        },
    )


SPEC = BenchmarkSpec(
    name="spatialtree-bench",
    description="A tree of spatial abilities: perception, mental mapping, simulation and agentic competence",
    to_task=to_task,
    hub_id=REPO,
    split="test",
    aggregation="spatialtree_scored",
    media_help=f"Download {REPO} (annotations_plain.parquet, images/, videos/) and pass --source DIR",
    homepage="https://huggingface.co/datasets/LongfeiLi/SpatialTree-Bench",
    metric="mean over scored questions (LLM-judged/simulator items run, not scored): letter, MRA, yes/no, equality",
    paper_name="spatialtree",
    read_source=read_source,
    frames=FramePolicy(fps=None, key_frames=32),
    instruction="spatialtree.md",
    expected_files=(("annotations_plain.parquet", 1),),
    paper_order=True,
    breakdowns=("spatree_level", "question_type", "metricfunc"),
)


# ---------------------------------------- scoring

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
    a single offered letter after the last ``Answer:``, else :func:`mmmu_parse`; equals the answer."""
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
        got = mmmu_parse(reply, options)
    return (1.0 if got is not None and got == str(gt) else 0.0), got


def spatialtree_number(text: str) -> str:
    """SpatialTree-Bench ``find_number``: the first number outside coordinate pairs such as ``(1, 2)``;
    as upstream, commas are dropped before the pair patterns run, so a written pair is not recognised."""
    text = text.replace(",", "")
    stripped = text
    for pattern in (
        r"\(\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\)",
        r"\[\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\]",
        r"\{\s*-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\s*\}",
        r"\b-?\d+\.?\d*\s*,\s*-?\d+\.?\d*\b",
    ):
        stripped = re.sub(pattern, "", stripped)
    match = re.search(r"-?\d+\.?\d*", stripped)
    if match:
        return match.group()
    every = list(re.finditer(r"-?\d+\.?\d*", text))
    return every[0].group() if every else ""


def spatialtree_mra(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SpatialTree-Bench ``meanrelativeacc``: :func:`spatialtree_number`, then the VSI-Bench MRA (a reply
    without a number raises in the official code, which scores 0)."""
    got = to_float(spatialtree_number(reply))
    return mra_or_zero_policy(got, float(gt)), got


def spatialtree_paper_letter(reply: str) -> str:
    """SpatialTree-Bench multiple choice: ``\\boxed{X}``; the first ``X.``, ``(X)`` or ``X:`` (A-K, any case);
    the first token when it is a letter; else ``""``."""
    letters = "ABCDEFGHIJK"
    got = boxed_letter(reply, letters) or marked_letter(reply, letters)
    if got:
        return got
    token = vsi_fuzzy(reply.strip())
    return token.upper() if len(token) == 1 and token.upper() in letters else ""


#: metricfunc values scored by MRA on a number.
SPATIALTREE_MRA = ("meanrelativeacc", "meanrelativeacc2", "angulardifference", "l2distance")


#: metricfunc values the paper runs but leaves out of every score (LLM judges, simulators).
SPATIALTREE_UNSCORED = ("gpteval", "cogmapeval", "affmask", "manipulateeval", "agenticnaveval", "gravityeval")


def _yes_no_last(text: str) -> str | None:
    lower = text.lower()
    yes, no = lower.rfind("yes"), lower.rfind("no")
    if yes < 0 and no < 0:
        return None
    return "yes" if yes > no else "no"


def spatialtree_paper(reply: str, gt: Any, choices: Any = None, param: str | None = None) -> tuple[float, Any]:
    """SpatialTree-Bench by ``param``: ``choice`` (the letter equals the answer), ``mra`` (:func:`word_or_digits`
    then :func:`abs_mra`), ``judge`` (whichever of "yes"/"no" occurs last equals the answer), ``unscored``
    (0; the aggregation leaves these rows out), else ``other``: MRA when both sides are numbers and the answer
    is not 0, otherwise case-insensitive equality."""
    if param == "choice":
        letter = spatialtree_paper_letter(reply)
        return (1.0 if letter and letter == str(gt).strip().upper() else 0.0), letter
    if param == "mra":
        number = word_or_digits(reply)
        return abs_mra(number, to_float(gt)), number
    if param == "judge":
        said = _yes_no_last(reply)
        return (1.0 if said is not None and said == str(gt).strip().lower() else 0.0), said
    if param == "unscored":
        return 0.0, None
    pred, target = to_float(reply.strip()), to_float(gt)
    if pred is not None and target is not None and target != 0:
        return abs_mra(pred, target), pred
    return (1.0 if reply.strip().lower() == str(gt).strip().lower() else 0.0), reply.strip()


def aggregate_spatialtree(rows: Sequence[Row]) -> dict[str, Any]:
    """SpatialTree-Bench: each question sits at a leaf of the ability tree (``meta["spatree"]``, e.g.
    ``["L1", "Geometry", "Size"]``); a leaf scores the mean of its questions, every inner node the mean of
    its children, overall = the root. lmms-eval weights children by ``spatree_hierarchy.json``; that file
    is not reproduced here, so children weigh equally (the official weights default to 1 too)."""
    cats, counts = by_category(rows)
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
    return {
        "overall": node(()),
        "categories": {**cats, **{k: v for k, v in levels.items() if v is not None}},
        "counts": counts,
    }


def spatialtree_scored(rows: Sequence[Row]) -> dict[str, Any]:
    """SpatialTree-Bench: rows with ``meta["paper_scored"]`` False (LLM-judged or simulator metrics) are left
    out; overall = the mean over the rest; breakdowns per level, level/category, level/category/subcategory
    (``meta["spatree"]``), ``question_type`` and ``metricfunc``."""
    scored = [r for r in rows if r.meta.get("paper_scored", True) is not False]
    cats, counts = by_category(scored)
    keys = {
        "level": lambda r: "/".join(r.meta.get("spatree", [])[:1]),
        "level/category": lambda r: "/".join(r.meta.get("spatree", [])[:2]),
        "level/category/subcategory": lambda r: "/".join(r.meta.get("spatree", [])[:3]),
        "question_type": lambda r: r.meta.get("question_type"),
        "metricfunc": lambda r: r.meta.get("metricfunc"),
    }
    extra: dict[str, float] = {}
    for label, key in keys.items():
        for value, scores in sorted(group_scores(scored, key).items()):
            extra[f"{label}:{value}"] = sum(scores) / len(scores)
    counts["unscored"] = len(rows) - len(scored)
    return {"overall": mean(r.score or 0.0 for r in scored), "categories": {**cats, **extra}, "counts": counts}
