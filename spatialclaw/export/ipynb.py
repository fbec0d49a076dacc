"""Jupyter notebooks, one per episode: ``OUT/<episode>.ipynb`` (nbformat 4).

Cells, in order: a markdown cell with the task (question, choices, the frames as attachments); per
step a markdown cell with the model's reasoning (its separate thinking text, quoted, and the prose of
its output without the code block), then a code cell with the exact code that ran and its outputs
(``stdout`` and ``stderr`` streams with the exact text, one ``display_data`` PNG per image, the last
expression as ``execute_result``, the exception as ``error``); a step whose output had no code gets a
markdown cell with the output and the message the model was shown; a last markdown cell with the
answer, the score, the ground truth, why the episode ended, and usage. The code uses the spatialclaw
kernel namespace (``frames``, ``show``, ``answer``, ...), so re-running it needs that kernel.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spatialclaw.agent.extraction import strip_reasoning
from spatialclaw.export.conversation import Conversation
from spatialclaw.export.runner import ExportStats
from spatialclaw.kernel.cell import CellResult
from spatialclaw.trajectories.episodes import Step, episode_steps
from spatialclaw.trajectories.safe_files import write_file

__all__ = ["episode_notebook", "write"]

CODE_BLOCK = re.compile(r"```[a-zA-Z0-9_+-]*[ \t]*\n.*?```", re.DOTALL)
INLINE_REASONING = re.compile(r"<(think|thinking|reasoning)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)


def _b64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")


def _md(value: Any) -> str:
    """Recorded text (model prose, cell output, task fields) for a markdown cell: ``<``, ``>`` and ``&`` as
    entities, so it reads the same but no raw HTML from an episode reaches the rendered notebook."""
    return html.escape(str(value), quote=False)


def _code_span(value: Any) -> str:
    """``value`` as an inline code span, fenced with more backticks than it holds (nothing in it can
    close the span early; HTML inside a span stays literal)."""
    text = str(value).replace("\n", " ")
    run = max((len(ticks) for ticks in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    return f"{fence} {text} {fence}" if run else f"{fence}{text}{fence}"


def _quote(text: str) -> str:
    return "\n".join("> " + _md(line) if line else ">" for line in text.strip().splitlines())


class _Cells:
    """Builds nbformat 4.5 cells as plain dicts (validated once per notebook), with stable ids."""

    def __init__(self) -> None:
        self.cells: list[dict[str, Any]] = []

    def markdown(self, source: str, attachments: dict[str, Any] | None = None) -> None:
        cell: dict[str, Any] = {
            "cell_type": "markdown",
            "id": f"md-{len(self.cells)}",
            "metadata": {},
            "source": source,
        }
        if attachments:
            cell["attachments"] = attachments
        self.cells.append(cell)

    def code(self, source: str, count: int, outputs: list[dict[str, Any]]) -> None:
        self.cells.append(
            {
                "cell_type": "code",
                "id": f"code-{len(self.cells)}",
                "metadata": {},
                "execution_count": count,
                "source": source,
                "outputs": outputs,
            }
        )


def _task_markdown(cells: _Cells, conversation: Conversation) -> None:
    task = conversation.task
    lines = [f"# {_md(task.get('task_id', conversation.episode_id))}", ""]
    if task.get("benchmark"):
        category = f" / {_md(task['category'])}" if task.get("category") else ""
        lines += [f"Benchmark: {_md(task['benchmark'])}" + category, ""]
    lines += ["**Question:** " + _md(task.get("question", "")), ""]
    # Not strict: the letters are a fixed alphabet longer than any list of choices.
    for letter, choice in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", task.get("choices") or [], strict=False):
        lines.append(f"- {letter}. {_md(choice)}")
    attachments = {}
    prompt_images = [image for turn in conversation.turns if turn.kind in ("system", "prompt") for image in turn.images]
    for i, image in enumerate(prompt_images):
        name = f"frame-{i}.png"
        attachments[name] = {"image/png": _b64(image.png)}
        label = _md(image.label or name).replace("[", "\\[").replace("]", "\\]")
        lines += ["", f"![{label}](attachment:{name})"]
    cells.markdown("\n".join(lines).rstrip() + "\n", attachments)


def _reasoning_markdown(cells: _Cells, step: Step) -> None:
    lines = [f"## Step {step.index}"]
    thoughts = [step.reasoning] if step.reasoning else []
    thoughts += [match.group(2) for match in INLINE_REASONING.finditer(step.response_text)]
    lines += ["\n" + _quote(thought) for thought in thoughts if thought.strip()]
    prose = CODE_BLOCK.sub("", strip_reasoning(step.response_text)).strip()
    if prose:
        lines += ["", _md(prose)]
    cells.markdown("\n".join(lines))


def _outputs(result: CellResult, count: int) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = []
    if result.stdout:
        outputs.append({"output_type": "stream", "name": "stdout", "text": result.stdout})
    if result.stderr:
        outputs.append({"output_type": "stream", "name": "stderr", "text": result.stderr})
    for image in result.images:
        outputs.append(
            {
                "output_type": "display_data",
                "data": {
                    "image/png": _b64(image.png),
                    "text/plain": f"<image {image.label or image.origin} {image.width}x{image.height}>",
                },
                "metadata": {"image/png": {"width": image.width, "height": image.height}} if image.width else {},
            }
        )
    if result.result_text:
        outputs.append(
            {
                "output_type": "execute_result",
                "execution_count": count,
                "data": {"text/plain": result.result_text},
                "metadata": {},
            }
        )
    if result.error is not None:
        traceback = result.error.traceback.splitlines() or [result.error.to_text()]
        outputs.append(
            {"output_type": "error", "ename": result.error.type, "evalue": result.error.message, "traceback": traceback}
        )
    elif not result.ok:
        outputs.append(
            {"output_type": "error", "ename": result.status, "evalue": f"the cell {result.status}", "traceback": []}
        )
    return outputs


def _summary_markdown(cells: _Cells, conversation: Conversation) -> None:
    episode = conversation.episode
    end = episode.end
    lines = ["## Result", ""]
    lines.append(f"- Answer: {_code_span(repr(episode.answer))}" if episode.of_type("answer") else "- Answer: none")
    lines.append(f"- Ground truth: {_code_span(repr(conversation.task.get('ground_truth')))}")
    lines.append(
        f"- Score: {_md(conversation.score)}"
        + ("" if conversation.correct is None else f" (correct: {_md(conversation.correct)})")
    )
    if end:
        ended = f"{_md(end.get('reason'))} after {_md(end.get('steps'))} step(s), {_md(end.get('duration_s'))} s"
        lines.append(f"- Ended: {ended}")
        if isinstance(end.get("usage"), dict):
            lines.append("- Usage: " + ", ".join(f"{_md(k)} {_md(v)}" for k, v in end["usage"].items()))
        if end.get("cost_usd") is not None:
            lines.append(f"- Cost: ${end['cost_usd']:.4f}")
    else:
        lines.append("- **Incomplete episode**: the log has no end event (the run was interrupted).")
    cells.markdown("\n".join(lines))


def episode_notebook(conversation: Conversation) -> Any:
    """The notebook (an ``nbformat.NotebookNode``, not yet validated) of one episode."""
    import nbformat

    cells = _Cells()
    _task_markdown(cells, conversation)
    for step in episode_steps(conversation.episode):
        if step.call is None and step.cell is None and step.fallback is None:
            continue
        _reasoning_markdown(cells, step)
        if step.cell is not None:
            count = step.cell.execution_count or step.index
            cells.code(step.cell.code, count, _outputs(step.cell, count))
        elif step.format_error is not None:
            cells.markdown(
                "_No code was run: the output had no code cell._\n\n" + _quote(step.format_error.get("message", ""))
            )
        if step.fallback is not None:
            reply = (step.fallback.get("response") or {}).get("text") or ""
            cells.markdown(
                "## Fallback\n\n_The step budget ran out; the model was asked for a direct answer:_\n\n" + _quote(reply)
            )
    _summary_markdown(cells, conversation)
    header = conversation.episode.header
    return nbformat.from_dict(  # type: ignore[no-untyped-call]  # nbformat leaves it unannotated
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {
                "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                "language_info": {"name": "python"},
                "spatialclaw": {
                    "episode": conversation.episode_id,
                    "model": header.get("model"),
                    "prompt_version": header.get("prompt_version"),
                    "complete": conversation.episode.complete,
                },
            },
            "cells": cells.cells,
        }
    )


def write(conversations: Iterable[Conversation], out: Path) -> ExportStats:
    """Write one validated notebook per episode into the directory ``out``."""
    import nbformat

    stats = ExportStats(paths=[out])
    used: set[str] = set()
    for conversation in conversations:
        out.mkdir(parents=True, exist_ok=True)
        stem = conversation.episode_id
        if stem in used:
            stem = f"{conversation.episode.directory.parent.name}-{stem}"
        while stem in used:
            stem += "_"
        used.add(stem)
        nb = episode_notebook(conversation)
        nbformat.validate(nb)
        path = out / f"{stem}.ipynb"
        write_file(path, json.dumps(nb, ensure_ascii=False, indent=1) + "\n")  # never through a link
        stats.records += 1
        stats.turns += sum(1 for c in nb.cells if c.cell_type == "code")
        stats.images += sum(
            1 for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})
        )
        stats.paths.append(path)
    return stats
