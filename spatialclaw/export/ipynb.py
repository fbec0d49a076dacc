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
import json
import re
from pathlib import Path
from typing import Any, Iterable

from spatialclaw.cell import CellResult
from spatialclaw.episodes import Step, episode_steps
from spatialclaw.export.conversation import Conversation
from spatialclaw.export.runner import ExportStats

__all__ = ["episode_notebook", "write"]

CODE_BLOCK = re.compile(r"```[a-zA-Z0-9_+-]*[ \t]*\n.*?```", re.DOTALL)


def _b64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.strip().splitlines())


def _task_cell(nbf: Any, conversation: Conversation) -> Any:
    task = conversation.task
    lines = [f"# {task.get('task_id', conversation.episode_id)}", ""]
    if task.get("benchmark"):
        lines += [f"Benchmark: {task['benchmark']}" + (f" / {task['category']}" if task.get("category") else ""), ""]
    lines += ["**Question:** " + task.get("question", ""), ""]
    for letter, choice in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", task.get("choices") or []):
        lines.append(f"- {letter}. {choice}")
    attachments = {}
    prompt_images = [image for turn in conversation.turns if turn.kind in ("system", "prompt") for image in turn.images]
    for i, image in enumerate(prompt_images):
        name = f"frame-{i}.png"
        attachments[name] = {"image/png": _b64(image.png)}
        lines += ["", f"![{image.label or name}](attachment:{name})"]
    cell = nbf.v4.new_markdown_cell("\n".join(lines).rstrip() + "\n")
    if attachments:
        cell["attachments"] = attachments
    return cell


def _reasoning_cell(nbf: Any, step: Step) -> Any:
    lines = [f"## Step {step.index}"]
    if step.reasoning:
        lines += ["", _quote(step.reasoning)]
    prose = CODE_BLOCK.sub("", step.response_text).strip()
    if prose:
        lines += ["", prose]
    return nbf.v4.new_markdown_cell("\n".join(lines))


def _outputs(nbf: Any, result: CellResult, count: int) -> list[Any]:
    outputs = []
    if result.stdout:
        outputs.append(nbf.v4.new_output("stream", name="stdout", text=result.stdout))
    if result.stderr:
        outputs.append(nbf.v4.new_output("stream", name="stderr", text=result.stderr))
    for image in result.images:
        outputs.append(nbf.v4.new_output(
            "display_data",
            data={"image/png": _b64(image.png), "text/plain": f"<image {image.label or image.origin} {image.width}x{image.height}>"},
            metadata={"image/png": {"width": image.width, "height": image.height}} if image.width else {},
        ))
    if result.result_text:
        outputs.append(nbf.v4.new_output("execute_result", data={"text/plain": result.result_text}, execution_count=count))
    if result.error is not None:
        traceback = [line for line in result.error.traceback.splitlines()] or [result.error.to_text()]
        outputs.append(nbf.v4.new_output("error", ename=result.error.type, evalue=result.error.message, traceback=traceback))
    if result.status in ("timeout", "crashed") and result.error is None:
        outputs.append(nbf.v4.new_output("error", ename=result.status, evalue=f"the cell {result.status}", traceback=[]))
    return outputs


def _summary_cell(nbf: Any, conversation: Conversation) -> Any:
    episode = conversation.episode
    end = episode.end
    lines = ["## Result", ""]
    lines.append(f"- Answer: `{episode.answer!r}`" if episode.of_type("answer") else "- Answer: none")
    lines.append(f"- Ground truth: `{conversation.task.get('ground_truth')!r}`")
    lines.append(f"- Score: {conversation.score}" + ("" if conversation.correct is None else f" (correct: {conversation.correct})"))
    if end:
        lines.append(f"- Ended: {end.get('reason')} after {end.get('steps')} step(s), {end.get('duration_s')} s")
        if end.get("usage"):
            lines.append("- Usage: " + ", ".join(f"{k} {v}" for k, v in end["usage"].items()))
        if end.get("cost_usd") is not None:
            lines.append(f"- Cost: ${end['cost_usd']:.4f}")
    else:
        lines.append("- **Incomplete episode**: the log has no end event (the run was interrupted).")
    return nbf.v4.new_markdown_cell("\n".join(lines))


def episode_notebook(conversation: Conversation) -> Any:
    """The notebook (an ``nbformat.NotebookNode``) of one episode."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    header = conversation.episode.header
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["spatialclaw"] = {
        "episode": conversation.episode_id,
        "model": header.get("model"),
        "prompt_version": header.get("prompt_version"),
        "complete": conversation.episode.complete,
    }
    cells = [_task_cell(nbformat, conversation)]
    for step in episode_steps(conversation.episode):
        if step.call is None and step.cell is None and step.fallback is None:
            continue
        cells.append(_reasoning_cell(nbformat, step))
        if step.cell is not None:
            count = step.index + 1
            code_cell = nbformat.v4.new_code_cell(step.cell.code, execution_count=count)
            code_cell.outputs = _outputs(nbformat, step.cell, count)
            cells.append(code_cell)
        elif step.format_error is not None:
            cells.append(nbformat.v4.new_markdown_cell(
                "_No code was run: the output had no code cell._\n\n" + _quote(step.format_error.get("message", ""))))
        if step.fallback is not None:
            reply = (step.fallback.get("response") or {}).get("text") or ""
            cells.append(nbformat.v4.new_markdown_cell(
                "## Fallback\n\n_The step budget ran out; the model was asked for a direct answer:_\n\n" + _quote(reply)))
    cells.append(_summary_cell(nbformat, conversation))
    nb.cells = cells
    return nb


def write(conversations: Iterable[Conversation], out: Path) -> ExportStats:
    """Write one validated notebook per episode into the directory ``out``."""
    import nbformat

    out.mkdir(parents=True, exist_ok=True)
    stats = ExportStats(paths=[out])
    used: set[str] = set()
    for conversation in conversations:
        stem = conversation.episode_id
        if stem in used:
            stem = f"{conversation.episode.directory.parent.name}-{stem}"
        while stem in used:
            stem += "_"
        used.add(stem)
        nb = episode_notebook(conversation)
        nbformat.validate(nb)
        path = out / f"{stem}.ipynb"
        path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        stats.records += 1
        stats.turns += sum(1 for c in nb.cells if c.cell_type == "code")
        stats.images += sum(1 for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {}))
        stats.paths.append(path)
    return stats
