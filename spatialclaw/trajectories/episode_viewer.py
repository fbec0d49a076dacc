"""Self-contained HTML views of episodes: one page per episode and an index per run.

Pages need no server and no network: images are inlined as ``data:image/png;base64`` URLs, styles
are inline, there is no script. By default an episode's page is ``EPISODE_DIR/episode.html`` and a
run's index is ``RUN_DIR/index.html`` linking to them; with ``out`` everything goes under that
directory instead (``out/index.html`` and ``out/episodes/<name>.html``).
"""

from __future__ import annotations

import base64
import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.kernel.cell import CellResult
from spatialclaw.trajectories.episode_log import EPISODE_FILE, Episode, load_episode
from spatialclaw.trajectories.episodes import (
    Step,
    episode_is_correct,
    episode_steps,
    find_episode_dirs,
    main_model_calls,
    step_count,
)
from spatialclaw.trajectories.safe_files import BadReference, UnsafeTarget, write_file

__all__ = ["ViewResult", "render_episode", "render_index", "write_views"]

PAGE_NAME = "episode.html"
INDEX_NAME = "index.html"

STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.meta { color: #555; font-size: 13px; } .question { font-size: 17px; background: #f4f6fa; padding: 12px; border-radius: 6px; }
pre { background: #f7f7f7; padding: 10px; border-radius: 4px; overflow-x: auto; white-space: pre-wrap; font-size: 13px; }
pre.code { background: #272822; color: #f8f8f2; } pre.error { background: #fdecea; color: #8a1c12; }
pre.stderr { background: #fff8e1; } .images img { max-width: 480px; margin: 4px; border: 1px solid #ccc; image-rendering: pixelated; }
.frames img { max-width: 320px; margin: 4px; border: 1px solid #ccc; }
.badge { display: inline-block; padding: 2px 8px; border-radius: 10px; font-size: 12px; color: #fff; }
.ok { background: #2e7d32; } .bad { background: #c62828; } .warn { background: #ef6c00; } .neutral { background: #607d8b; }
details { margin: 6px 0; } summary { cursor: pointer; color: #444; }
table { border-collapse: collapse; width: 100%; font-size: 14px; } td, th { border-bottom: 1px solid #eee; padding: 6px; text-align: left; }
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _seconds(value: Any) -> str:
    return f"{value:.2f} s" if isinstance(value, (int, float)) else "n/a"


def _model_name(model: Any) -> Any:
    """The header's model: a spec string, or the backend's description dict (its ``spec``)."""
    return model.get("spec", model) if isinstance(model, dict) else model


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def _status_badge(episode: Episode) -> str:
    """How the episode ended: ``incomplete``, an end reason that is not an answer (``error``, ``timeout``,
    ``budget``...: not "wrong", the model never answered in time), else its score: ``correct``, ``wrong``, or
    a partial score as a number (a mean relative accuracy of 0.7 is neither)."""
    if not episode.complete:
        return '<span class="badge warn">incomplete</span>'
    reason = (episode.end or {}).get("reason")
    if reason not in ("answered", None) and episode.answer is None:
        return f'<span class="badge warn">{_e(reason)}</span>'
    correct = episode_is_correct(episode)
    if correct is None:
        return '<span class="badge neutral">not scored</span>'
    score = episode.score
    if not correct and score is not None and 0 < float(score) < 1:
        return f'<span class="badge warn">score {float(score):.3g}</span>'
    return '<span class="badge ok">correct</span>' if correct else '<span class="badge bad">wrong</span>'


def _frames(episode: Episode) -> list[tuple[bytes, str]]:
    """Images of the task's prompt: user turns before the first output in the first main-loop request."""
    calls = main_model_calls(episode)
    if not calls:
        return []
    frames: list[tuple[bytes, str]] = []
    for message in episode.messages(calls[0]):
        if message.role == "assistant":
            break
        frames.extend((image.png, image.label or f"image {len(frames)}") for image in message.images)
    return frames


def _cell_html(cell: CellResult) -> str:
    parts = [f'<pre class="code">{_e(cell.code)}</pre>']
    output = cell.stdout + (
        ("\n" if cell.stdout and not cell.stdout.endswith("\n") else "") + cell.result_text if cell.result_text else ""
    )
    if output:
        parts.append(f'<pre class="stdout">{_e(output)}</pre>')
    if cell.stderr:
        parts.append(f'<pre class="stderr">{_e(cell.stderr)}</pre>')
    if cell.error is not None:
        parts.append(f'<pre class="error">{_e(cell.error.to_text())}</pre>')
    elif not cell.ok:
        parts.append(f'<pre class="error">cell status: {_e(cell.status)}</pre>')
    if cell.images:
        parts.append('<div class="images">' + "".join(_img(i.png, i.label or i.origin) for i in cell.images) + "</div>")
    if cell.answered:
        parts.append(f"<p><b>answer(</b><code>{_e(repr(cell.answer))}</code><b>)</b></p>")
    notes = cell.notes + ([f"kernel restarted; restored {cell.restored}, lost {cell.lost}"] if cell.restarted else [])
    parts.extend(f'<p class="meta">note: {_e(n)}</p>' for n in notes)
    parts.append(f'<p class="meta">status {_e(cell.status)}, {cell.duration_s:.2f} s</p>')
    return "\n".join(parts)


def _step_html(step: Step, episode: Episode) -> str:
    parts = [f'<section class="step" id="step-{step.index}"><h2>Step {step.index}</h2>']
    call = step.call or {}
    if call:
        usage = call.get("usage") or {}
        parts.append(
            f'<p class="meta">{_e(call.get("purpose", "step"))} · {_e(call.get("model"))} · '
            f"{_e(usage.get('prompt_tokens'))} prompt / {_e(usage.get('completion_tokens'))} completion tokens · "
            f"{_seconds(call.get('latency_s'))}"
            + (f" · ${call['cost_usd']:.4f}" if call.get("cost_usd") is not None else "")
            + "</p>"
        )
        if call.get("error"):
            parts.append(f'<pre class="error">model call failed: {_e(call["error"])}</pre>')
    if step.reasoning:
        parts.append(f"<details><summary>reasoning</summary><pre>{_e(step.reasoning)}</pre></details>")
    if step.response_text:
        parts.append(f"<details open><summary>model output</summary><pre>{_e(step.response_text)}</pre></details>")
    if step.format_error is not None:
        parts.append(f'<pre class="error">no code ran: {_e(step.format_error.get("message"))}</pre>')
    if step.cell is not None:
        parts.append(_cell_html(step.cell))
    if step.fallback is not None:
        reply = (step.fallback.get("response") or {}).get("text")
        parts.append(
            f'<h3>Fallback</h3><p class="meta">the step budget ran out; the model was asked for a direct answer</p><pre>{_e(reply)}</pre>'
        )
    for side in step.side_calls:
        messages = episode.request_messages(side)
        asked = "".join(p.get("text", "") for m in messages for p in m["content"] if p["type"] == "text")
        images = sum(1 for m in messages for p in m["content"] if p["type"] == "image")
        response = (side.get("response") or {}).get("text") or side.get("error")
        parts.append(
            f"<details><summary>{_e(side.get('purpose'))} side call ({images} image(s))</summary>"
            f"<pre>{_e(asked)}</pre><pre>{_e(response)}</pre></details>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def render_episode(episode: Episode, index_link: str | None = None) -> str:
    """The HTML page of one episode (a complete, self-contained document)."""
    task = episode.task or {}
    header = episode.header or {}
    title = task.get("task_id") or episode.directory.name
    body = []
    if index_link:
        body.append(f'<p><a href="{_e(index_link)}">&larr; run index</a></p>')
    body.append(f"<h1>{_e(title)} {_status_badge(episode)}</h1>")
    body.append(
        f'<p class="meta">benchmark {_e(task.get("benchmark"))} / {_e(task.get("category"))} · model '
        f"{_e(_model_name(header.get('model')))} · prompt {_e(header.get('prompt_version'))} · spatialclaw "
        f"{_e(header.get('package_version'))} · config {_e(header.get('config_hash'))}</p>"
    )
    if not episode.complete:
        body.append(
            '<p class="badge warn">This episode has no end event: the run was interrupted or is still running.</p>'
        )
    body += [f'<p class="badge warn">{_e(problem)}: not shown</p>' for problem in episode.unreadable]
    body.append(f'<div class="question">{_e(task.get("question"))}</div>')
    if task.get("choices"):
        body.append('<ol type="A">' + "".join(f"<li>{_e(c)}</li>" for c in task["choices"]) + "</ol>")
    frames = _frames(episode)
    if frames:
        body.append(
            '<h2>Frames</h2><div class="frames">' + "".join(_img(png, label) for png, label in frames) + "</div>"
        )
    for step in episode_steps(episode):
        if step.call is not None or step.cell is not None or step.format_error is not None or step.fallback is not None:
            body.append(_step_html(step, episode))
    body.append("<h2>Result</h2><table>")
    rows = [
        ("answer", repr(episode.answer) if episode.of_type("answer") else "none"),
        ("ground truth", repr(task.get("ground_truth"))),
        ("score", episode.score),
        ("steps", step_count(episode)),
    ]
    end = episode.end or {}
    if end:
        rows += [
            ("ended", f"{end.get('reason')}" + (f" ({end['error']})" if end.get("error") else "")),
            ("duration", _seconds(end.get("duration_s"))),
            ("usage", json.dumps(end.get("usage"))),
            ("cost", f"${end['cost_usd']:.4f}" if end.get("cost_usd") is not None else "n/a"),
        ]
    body.extend(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    body.append("</table>")
    return _page(f"{title} - spatialclaw episode", "\n".join(body))


def render_index(entries: list[tuple[Episode, str]], title: str) -> str:
    """The run index: one row per ``(episode, link to its page)``, with the mean score."""
    scores = [e.score for e, _ in entries if e.score is not None]
    mean = f"{sum(scores) / len(scores):.3f} over {len(scores)} scored" if scores else "no scored episodes"
    rows = []
    for episode, link in entries:
        task = episode.task or {}
        rows.append(
            f'<tr><td><a href="{_e(link)}">{_e(task.get("task_id") or episode.directory.name)}</a></td>'
            f"<td>{_e(task.get('benchmark'))}</td><td>{_e(task.get('question'))}</td>"
            f"<td>{_e(repr(episode.answer) if episode.of_type('answer') else '')}</td><td>{_e(episode.score)}</td>"
            f"<td>{step_count(episode)}</td><td>{_status_badge(episode)}</td></tr>"
        )
    body = (
        f'<h1>{_e(title)}</h1><p class="meta">{len(entries)} episode(s); mean score {mean}</p>'
        "<table><tr><th>task</th><th>benchmark</th><th>question</th><th>answer</th><th>score</th><th>steps</th>"
        "<th>status</th></tr>" + "".join(rows) + "</table>"
    )
    return _page(f"{title} - spatialclaw run", body)


@dataclass
class ViewResult:
    """Pages written, the index (``None`` when viewing a single episode), and ``problems``: one line per
    episode that could not be rendered (a link or a malformed reference among its files, a missing
    image), naming its directory; every other episode still has its page."""

    pages: list[Path]
    index: Path | None
    problems: list[str] = field(default_factory=list)

    @property
    def main(self) -> Path:
        """The file to open: the index for a run, the page for a single episode."""
        return self.index or self.pages[0]


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target, start)).as_posix()


def write_views(path: str | Path, out: str | Path | None = None) -> ViewResult:
    """Write the page of the episode at ``path``, or the pages and the index of the run at ``path``.

    Pages are written without following links (:func:`write_file`): a page or folder that is a link is
    refused with :class:`UnsafeTarget`. An episode whose files cannot be read safely is reported in
    ``problems`` (for a run) or raises :class:`BadReference` (a single episode)."""
    path = Path(path)
    directories = find_episode_dirs([path])
    single = (path / EPISODE_FILE).exists()
    out_dir = Path(out) if out is not None else None
    if single:
        if out_dir is None:
            target, inside = path / PAGE_NAME, path
        elif out_dir.suffix == ".html":
            target, inside = out_dir, None
        else:
            target, inside = out_dir / f"{path.name}.html", None
        target.parent.mkdir(parents=True, exist_ok=True)
        episode = load_episode(path)
        write_file(target, render_episode(episode), inside=inside)
        return ViewResult(pages=[target], index=None, problems=list(episode.unreadable))
    index = (out_dir or path) / INDEX_NAME
    index.parent.mkdir(parents=True, exist_ok=True)
    entries, pages, problems = [], [], []
    for directory in directories:
        if out_dir is None:
            page, inside = directory / PAGE_NAME, path
        else:
            page, inside = out_dir / "episodes" / (_relative(directory, path).replace("/", "__") + ".html"), None
            page.parent.mkdir(parents=True, exist_ok=True)
        try:
            episode = load_episode(directory)
            problems += episode.unreadable  # its page shows the other lines
            rendered = render_episode(episode, index_link=_relative(index, page.parent))
        except (BadReference, FileNotFoundError) as failure:  # this episode only; the others still get pages
            problems.append(f"{directory}: not rendered: {failure}")
            continue
        try:
            write_file(page, rendered, inside=inside)
        except UnsafeTarget as refused:  # a page that is a link is never written through
            problems.append(str(refused))
            continue
        pages.append(page)
        entries.append((episode, _relative(page, index.parent)))
    write_file(index, render_index(entries, title=path.name), inside=path if out_dir is None else None)
    return ViewResult(pages=pages, index=index, problems=problems)
