"""The answer in a reply that is not a cell (the fallback after a limit, the no-tools and single-pass
interfaces): ``ANSWER: ...`` or free text, normalised for the task's answer type."""

from __future__ import annotations

import re
from typing import Any

from spatialclaw.task import Task

__all__ = ["parse_direct_answer"]


def parse_direct_answer(text: str, task: Task) -> Any:
    """The answer in a fallback reply (``ANSWER: ...`` or free text), normalised for ``task.answer_type``:
    an option letter, a float, ``"yes"``/``"no"``, or the text; None when nothing fits. A task scored as its
    benchmark's reference scores it (``meta["scoring"] == "reference"``) gets the text after the last
    ``ANSWER:`` (else the whole reply) as it is: the benchmark's own extractor reads it."""
    from spatialclaw.benchmarks.scoring.answer_parsing import extract_choice, extract_number

    match = re.findall(r"ANSWER\s*[:=]\s*(.+)", text, flags=re.IGNORECASE)
    value = match[-1].strip().strip("`*").strip() if match else text.strip()
    if task.meta.get("scoring") == "reference":
        return value or None
    if task.answer_type == "multiple_choice" and task.choices:
        return extract_choice(value, task.choices) or extract_choice(text, task.choices)
    if task.answer_type == "number":
        number = extract_number(value)
        return number if number is not None else extract_number(text)
    if task.answer_type == "yes_no":
        words = re.findall(r"[a-z]+", value.lower())
        return next((w for w in words if w in ("yes", "no")), None)
    return value or None
