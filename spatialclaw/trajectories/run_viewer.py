"""The run viewer: one self-contained HTML page per run directory, in the spirit of Inspect's log viewer.

``spatialclaw view RUN_DIR`` writes ``RUN_DIR/index.html`` (or ``--out FILE.html`` / ``--out DIR``). The
viewer is a reader: it reads ``results.jsonl`` (the latest row per task) and each attempt's
``episode.jsonl`` under ``episodes/`` (the runner renders nothing). The page needs no server and no
network: the data and the images (each stored once, by content hash) are inlined, and a small script
does the rest:

- a table of tasks (the latest attempt of each by default; "all attempts" lists older ones too) with
  filters by benchmark, category and status, a score range, a free-text search over id, question and
  answer, and sorting by any column (the URL fragment sets them: ``#status=error&q=chair&sort=score``);
- statuses as the runner records them: ``ok`` (scored, the score shown as a number, so a partial MRA
  score of 0.7 reads 0.7, not "wrong"), ``budget``, ``timeout``, ``error`` and ``incomplete`` (an
  attempt cut by a kill), each in its own colour;
- per episode, every model call's exact request messages (text and images) and reply, and every cell
  with its code, output, error and images (tool-call cells name their call).

The header's counts and means are computed by :func:`run_summary` with the same rule as ``report``
(rows without a score count as 0) and are tested to agree with it.
"""

from __future__ import annotations

import base64
import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.trajectories.episode_log import EPISODE_FILE, Episode, load_episode
from spatialclaw.trajectories.results import ResultsStore
from spatialclaw.trajectories.run_dir import EPISODES, RESULTS
from spatialclaw.trajectories.safe_files import BadReference, is_episode_dir, write_file

__all__ = ["RunView", "is_run_dir", "load_run_view", "render_run_page", "run_summary", "write_run_page"]

_STATUS_OF_END = {
    "answered": "ok",
    "budget": "budget",
    "format_errors": "budget",
    "timeout": "timeout",
    "error": "error",
}


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` is a run directory (it holds ``results.jsonl``)."""
    return (Path(path) / RESULTS).is_file()


@dataclass
class RunView:
    """What the page shows: ``tasks`` (one entry per task: its latest row and all its attempts) and the
    ``images`` the attempts reference (base64 PNG by sha256), and ``problems``: unreadable lines, one each."""

    name: str
    tasks: list[dict[str, Any]]
    images: dict[str, str]
    problems: list[str] = field(default_factory=list)


def _episode_data(episode: Episode, images: dict[str, str]) -> dict[str, Any]:
    def keep(sha: str) -> None:
        if sha not in images:
            try:
                images[sha] = base64.b64encode(episode.image_bytes(sha)).decode("ascii")
            except (FileNotFoundError, BadReference):  # missing, a link or malformed: shown as no image
                images[sha] = ""

    events = []
    for event in episode.events:
        kind = event["type"]
        if kind == "model_call":
            messages = episode.request_messages(event)
            for message in messages:
                for part in message["content"]:
                    if part["type"] == "image":
                        keep(part["sha256"])
            response = event.get("response") or {}
            events.append(
                {
                    "type": kind,
                    "step": event.get("step"),
                    "purpose": event.get("purpose"),
                    "messages": messages,
                    "reply": response.get("text"),
                    "reasoning": response.get("reasoning"),
                    "tool_calls": _reply_tool_calls(response),
                    "error": event.get("error"),
                    "usage": event.get("usage"),
                    "latency_s": event.get("latency_s"),
                }
            )
        elif kind == "cell":
            result = event.get("result") or {}
            for image in result.get("images", []):
                keep(image["sha256"])
            events.append(
                {
                    "type": kind,
                    "step": event.get("step"),
                    "code": event.get("code"),
                    "tool_call": event.get("tool_call"),
                    "stdout": result.get("stdout"),
                    "stderr": result.get("stderr"),
                    "result_text": result.get("result_text"),
                    "error": result.get("error"),
                    "status": result.get("status"),
                    "images": [i["sha256"] for i in result.get("images", [])],
                    "duration_s": result.get("duration_s"),
                }
            )
        elif kind in ("format_error", "answer", "score", "end"):
            events.append({k: v for k, v in event.items() if k not in ("seq", "time")})
    end = episode.end or {}
    status = _STATUS_OF_END.get(end.get("reason", ""), "error") if episode.complete else "incomplete"
    return {
        "status": status,
        "answer": episode.answer,
        "score": episode.score,
        "events": events,
        "interface": episode.header.get("interface"),
        "model": (episode.header.get("model") or {}).get("spec")
        if isinstance(episode.header.get("model"), dict)
        else episode.header.get("model"),
    }


def _reply_tool_calls(response: dict[str, Any]) -> list[dict[str, Any]]:
    """Tool calls in a recorded raw reply (OpenAI ``tool_calls`` or Anthropic ``tool_use`` blocks)."""
    from spatialclaw.models.replay import tool_calls_from_raw

    return [
        {"id": c.id, "name": c.name, "arguments": json.dumps(c.arguments)}
        for c in tool_calls_from_raw(response.get("raw"))
    ]


def load_run_view(run_dir: str | Path) -> RunView:
    """Read a run directory's ``results.jsonl`` and its episodes (every attempt)."""
    run_dir = Path(run_dir)
    if not is_run_dir(run_dir):
        raise FileNotFoundError(f"{run_dir} is not a run directory (no {RESULTS}); run `spatialclaw bench` first")
    rows, problems = ResultsStore(run_dir / RESULTS).read()  # unreadable lines are named on the page
    images: dict[str, str] = {}
    tasks = []
    by_folder: dict[str, list[Path]] = {}
    episodes_root = run_dir / EPISODES
    if episodes_root.is_dir():
        for attempt in sorted(
            episodes_root.glob(f"*/attempt-*/{EPISODE_FILE}"), key=lambda p: (p.parent.parent.name, _number(p.parent))
        ):
            if os.path.islink(attempt.parent.parent) or not is_episode_dir(attempt.parent, EPISODE_FILE):
                continue  # links are never followed
            by_folder.setdefault(attempt.parent.parent.name, []).append(attempt.parent)
    for (task_id, _repeat), row in rows.items():
        latest = run_dir / str(row.get("trajectory_dir", ""))
        folder = latest.parent.name
        attempts = []
        for directory in by_folder.get(folder, []):
            try:
                problems += (episode := load_episode(directory)).unreadable  # the page names them
                data = _episode_data(episode, images)
            except (BadReference, FileNotFoundError) as failure:  # this attempt only; the page still shows the rest
                data = {"status": "error", "answer": None, "score": None, "interface": None}
                data["events"] = [{"type": "end", "reason": "unreadable", "error": f"{directory}: {failure}"}]
            data.update(attempt=_number(directory), latest=directory.resolve() == latest.resolve())
            if data["latest"]:  # the row is what the run counts: its status and score win over the log's
                data.update(status=row["status"], score=row.get("score"), answer=row.get("answer"))
            attempts.append(data)
        tasks.append(
            {
                "task_id": task_id,
                "benchmark": row.get("benchmark"),
                "category": row.get("category"),
                "status": row["status"],
                "score": row.get("score"),
                "answer": row.get("answer"),
                "ground_truth": row.get("ground_truth"),
                "attempt": row.get("attempt"),
                "error": row.get("error"),
                "steps": row.get("steps"),
                "duration_s": row.get("duration_s"),
                "interface": row.get("interface"),
                "question": _question(latest),
                "attempts": attempts,
            }
        )
    return RunView(run_dir.name, tasks, images, problems)


def _number(directory: Path) -> int:
    try:
        return int(directory.name.rsplit("-", 1)[-1])
    except ValueError:
        return 0


def _question(directory: Path) -> str | None:
    try:
        return load_episode(directory).task.get("question")
    except (FileNotFoundError, ValueError):
        return None


def run_summary(view: RunView) -> dict[str, Any]:
    """Counts and means of the latest rows: ``n``, ``statuses``, ``mean`` (rows without a score count as
    0, as in ``report``), and ``categories`` (category: mean) per benchmark in ``benchmarks``."""

    def mean(tasks: list[dict[str, Any]]) -> float | None:
        return sum(t["score"] or 0.0 for t in tasks) / len(tasks) if tasks else None

    statuses: dict[str, int] = {}
    for task in view.tasks:
        statuses[task["status"]] = statuses.get(task["status"], 0) + 1
    benchmarks = {}
    for benchmark in dict.fromkeys(t["benchmark"] for t in view.tasks):
        group = [t for t in view.tasks if t["benchmark"] == benchmark]
        categories = {
            c: mean([t for t in group if t["category"] == c]) for c in dict.fromkeys(t["category"] for t in group)
        }
        benchmarks[str(benchmark)] = {"n": len(group), "mean": mean(group), "categories": categories}
    return {"n": len(view.tasks), "statuses": statuses, "mean": mean(view.tasks), "benchmarks": benchmarks}


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #1d1d1f; }
header { padding: 12px 20px; background: #f4f6fa; border-bottom: 1px solid #ddd; }
h1 { font-size: 20px; margin: 0 0 6px; } .meta { color: #555; font-size: 13px; }
#filters { display: flex; flex-wrap: wrap; gap: 8px; padding: 10px 20px; border-bottom: 1px solid #eee; font-size: 13px; }
#filters input, #filters select { font-size: 13px; }
main { display: flex; } #list { width: 48%; overflow: auto; } #detail { width: 52%; padding: 0 16px; border-left: 1px solid #eee; }
table { border-collapse: collapse; width: 100%; font-size: 13px; } th { cursor: pointer; text-align: left; background: #fafafa; }
td, th { border-bottom: 1px solid #eee; padding: 5px 6px; vertical-align: top; } tr.task:hover { background: #f0f4ff; cursor: pointer; }
tr.old td { color: #888; } .badge { padding: 1px 7px; border-radius: 9px; color: #fff; font-size: 12px; }
.s-ok { background: #2e7d32; } .s-budget { background: #ef6c00; } .s-timeout { background: #6a1b9a; }
.s-error { background: #c62828; } .s-incomplete { background: #607d8b; }
.score { font-variant-numeric: tabular-nums; font-weight: 600; }
pre { background: #f7f7f7; padding: 8px; white-space: pre-wrap; font-size: 12px; border-radius: 4px; }
pre.code { background: #272822; color: #f8f8f2; } pre.err { background: #fdecea; color: #8a1c12; }
.msg { border-left: 3px solid #ccc; padding-left: 8px; margin: 6px 0; } .role { font-weight: 600; font-size: 12px; }
img { max-width: 360px; border: 1px solid #ccc; margin: 3px; }
"""

_SCRIPT = r"""
const DATA = JSON.parse(document.getElementById('run-data').textContent);
const IMAGES = JSON.parse(document.getElementById('run-images').textContent);
const $ = (id) => document.getElementById(id);
const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
const fmt = (v) => (v === null || v === undefined) ? '–' : (typeof v === 'number' ? String(Math.round(v * 1000) / 1000) : esc(JSON.stringify(v)));
let sortKey = 'task_id', sortDir = 1;
function options(id, values) {
  $(id).innerHTML = '<option value="">all</option>' + [...new Set(values)].map((v) => `<option>${esc(v)}</option>`).join('');
}
function entries() {
  const out = [];
  for (const t of DATA.tasks) {
    out.push({...t, key: t.task_id + '#latest', old: false});
    if ($('all-attempts').checked) for (const a of t.attempts) if (!a.latest)
      out.push({...t, key: t.task_id + '#' + a.attempt, old: true, status: a.status, score: a.score, answer: a.answer, attempt: a.attempt});
  }
  return out;
}
function shown() {
  const b = $('f-benchmark').value, c = $('f-category').value, s = $('f-status').value, q = $('f-search').value.toLowerCase();
  const lo = parseFloat($('f-min').value), hi = parseFloat($('f-max').value);
  return entries().filter((t) => (!b || t.benchmark === b) && (!c || t.category === c) && (!s || t.status === s)
    && (isNaN(lo) || (t.score ?? -1) >= lo) && (isNaN(hi) || (t.score ?? 2) <= hi)
    && (!q || [t.task_id, t.question, JSON.stringify(t.answer)].join(' ').toLowerCase().includes(q)))
    .sort((x, y) => { const a = x[sortKey] ?? '', b2 = y[sortKey] ?? ''; return (a > b2 ? 1 : a < b2 ? -1 : 0) * sortDir; });
}
function render() {
  const rows = shown();
  const latest = rows.filter((t) => !t.old);
  const mean = latest.length ? latest.reduce((s, t) => s + (t.score ?? 0), 0) / latest.length : null;
  $('shown').innerHTML = `<span id="shown-count">${latest.length}</span> of ${DATA.tasks.length} task(s) shown, mean score <span id="shown-mean">${fmt(mean)}</span>`;
  $('rows').innerHTML = rows.map((t) => `<tr class="task${t.old ? ' old' : ''}" data-key="${esc(t.key)}" data-status="${esc(t.status)}">
    <td>${esc(t.task_id)}${t.old ? ' (attempt ' + esc(t.attempt) + ')' : ''}</td><td>${esc(t.benchmark)}</td><td>${esc(t.category)}</td>
    <td><span class="badge s-${esc(t.status)}">${esc(t.status)}</span></td><td class="score">${fmt(t.score)}</td>
    <td>${fmt(t.answer)}</td><td>${fmt(t.ground_truth)}</td></tr>`).join('');
  for (const tr of document.querySelectorAll('tr.task')) tr.onclick = () => detail(tr.dataset.key);
  const h = new URLSearchParams();
  for (const [k, id] of [['benchmark', 'f-benchmark'], ['category', 'f-category'], ['status', 'f-status'], ['q', 'f-search'], ['min', 'f-min'], ['max', 'f-max']])
    if ($(id).value) h.set(k, $(id).value);
  if (sortKey !== 'task_id') h.set('sort', (sortDir < 0 ? '-' : '') + sortKey);
  if ($('all-attempts').checked) h.set('attempts', 'all');
  history.replaceState(null, '', '#' + h.toString());
}
function content(parts) {
  return parts.map((p) => p.type === 'text' ? `<pre>${esc(p.text)}</pre>` : `<img alt="${esc(p.label || p.sha256)}" src="data:image/png;base64,${IMAGES[p.sha256] || ''}">`).join('');
}
function detail(key) {
  const [id, which] = [key.slice(0, key.lastIndexOf('#')), key.slice(key.lastIndexOf('#') + 1)];
  const t = DATA.tasks.find((x) => x.task_id === id);
  const a = t.attempts.find((x) => which === 'latest' ? x.latest : String(x.attempt) === which);
  let out = `<h2>${esc(t.task_id)}</h2><p class="meta">${esc(t.benchmark)} / ${esc(t.category)} · attempts: ${t.attempts.map((x) => esc(x.attempt) + (x.latest ? ' (latest)' : '') + ' ' + esc(x.status)).join(', ')}</p>`;
  out += `<p>${esc(t.question)}</p>`;
  if (!a) { $('detail').innerHTML = out + '<p>no episode log for this attempt</p>'; return; }
  out += `<p>status <span class="badge s-${esc(a.status)}">${esc(a.status)}</span> · score <span class="score">${fmt(a.score)}</span> · answer ${fmt(a.answer)} · interface ${esc(a.interface)}</p>`;
  if (t.error && a.latest) out += `<pre class="err">${esc(t.error)}</pre>`;
  for (const e of a.events) {
    if (e.type === 'model_call') {
      out += `<details class="call"><summary>step ${esc(e.step)} · ${esc(e.purpose)} · request of ${esc(e.messages.length)} message(s)</summary>`
        + e.messages.map((m) => `<div class="msg"><div class="role">${esc(m.role)}${m.tool_call_id ? ' (' + esc(m.tool_call_id) + ')' : ''}</div>${content(m.content)}${(m.tool_calls || []).map((c) => `<pre>→ ${esc(c.name)}(${esc(JSON.stringify(c.arguments))})</pre>`).join('')}</div>`).join('')
        + '</details>';
      if (e.error) out += `<pre class="err">model call failed: ${esc(e.error)}</pre>`;
      if (e.reply) out += `<div class="msg"><div class="role">reply</div><pre>${esc(e.reply)}</pre></div>`;
      for (const c of e.tool_calls || []) out += `<pre>tool call ${esc(c.name)}(${esc(c.arguments)})</pre>`;
    } else if (e.type === 'cell') {
      out += `<div class="cell">${e.tool_call ? '<div class="role">tool call ' + esc(e.tool_call.name) + '</div>' : ''}<pre class="code">${esc(e.code)}</pre>`
        + (e.stdout ? `<pre>${esc(e.stdout)}</pre>` : '') + (e.result_text ? `<pre>${esc(e.result_text)}</pre>` : '')
        + (e.stderr ? `<pre>${esc(e.stderr)}</pre>` : '') + (e.error ? `<pre class="err">${esc(JSON.stringify(e.error))}</pre>` : '')
        + e.images.map((s) => `<img alt="cell image" src="data:image/png;base64,${IMAGES[s] || ''}">`).join('') + '</div>';
    } else if (e.type === 'format_error') {
      out += `<pre class="err">no code ran: ${esc(e.message)}</pre>`;
    } else if (e.type === 'end') {
      out += `<p class="meta">ended: ${esc(e.reason)}${e.error ? ' (' + esc(e.error) + ')' : ''} · ${fmt(e.duration_s)} s</p>`;
    }
  }
  $('detail').innerHTML = out;
}
options('f-benchmark', DATA.tasks.map((t) => t.benchmark));
options('f-category', DATA.tasks.map((t) => t.category));
options('f-status', ['ok', 'budget', 'timeout', 'error', 'incomplete']);
const initial = new URLSearchParams(location.hash.slice(1));
for (const [k, id] of [['benchmark', 'f-benchmark'], ['category', 'f-category'], ['status', 'f-status'], ['q', 'f-search'], ['min', 'f-min'], ['max', 'f-max']])
  if (initial.get(k)) $(id).value = initial.get(k);
if (initial.get('attempts') === 'all') $('all-attempts').checked = true;
if (initial.get('sort')) { const s = initial.get('sort'); sortDir = s.startsWith('-') ? -1 : 1; sortKey = s.replace(/^-/, ''); }
for (const id of ['f-benchmark', 'f-category', 'f-status', 'f-search', 'f-min', 'f-max', 'all-attempts']) $(id).oninput = render;
for (const th of document.querySelectorAll('th[data-key]')) th.onclick = () => { sortDir = sortKey === th.dataset.key ? -sortDir : 1; sortKey = th.dataset.key; render(); };
render();
if (initial.get('open')) detail(initial.get('open') + '#latest');
"""


_SCRIPT_ESCAPES: dict[str, str | int | None] = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _json_script(element_id: str, data: Any) -> str:
    """``data`` as JSON in a script element: ``<``, ``>``, ``&``, U+2028 and U+2029 are written as JSON
    escapes, so nothing in the data (``</script>``, ``<!--<script>``) can end or change the element."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    text = text.translate(str.maketrans(_SCRIPT_ESCAPES))
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def render_run_page(view: RunView) -> str:
    """The complete HTML page of a run."""
    summary = run_summary(view)
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items()))
    mean = "–" if summary["mean"] is None else f"{summary['mean']:.3f}"
    columns = [
        ("task_id", "task"),
        ("benchmark", "benchmark"),
        ("category", "category"),
        ("status", "status"),
        ("score", "score"),
        ("answer", "answer"),
        ("ground_truth", "truth"),
    ]
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(view.name)} - spatialclaw run</title>'
        f"<style>{_STYLE}</style></head><body>\n"
        f"<header><h1>{html.escape(view.name)}</h1>"
        f'<div id="summary" class="meta" data-summary="{html.escape(json.dumps(summary))}">{summary["n"]} task(s): {html.escape(statuses)}; '
        f"mean score {mean} (latest attempt per task; rows without a score count as 0)</div>"
        f'<div id="shown" class="meta"></div>{"".join(f"<p class=meta>{html.escape(p)}</p>" for p in view.problems)}</header>\n'
        '<div id="filters">benchmark <select id="f-benchmark"></select> category <select id="f-category"></select> '
        'status <select id="f-status"></select> score from <input id="f-min" size="4"> to <input id="f-max" size="4"> '
        'search <input id="f-search" size="24"> <label><input type="checkbox" id="all-attempts"> all attempts</label></div>\n'
        '<main><div id="list"><table><thead><tr>'
        + "".join(f'<th data-key="{k}">{label}</th>' for k, label in columns)
        + '</tr></thead><tbody id="rows"></tbody></table></div><div id="detail"><p class="meta">click a task</p></div></main>\n'
        + _json_script("run-data", {"tasks": view.tasks})
        + _json_script("run-images", view.images)
        + f"<script>{_SCRIPT}</script></body></html>\n"
    )


def write_run_page(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write the run's page (``RUN_DIR/index.html``; ``out``: a ``.html`` file or a directory for it)."""
    run_dir = Path(run_dir)
    target = (
        run_dir / "index.html"
        if out is None
        else (Path(out) if str(out).endswith(".html") else Path(out) / "index.html")
    )
    page = render_run_page(load_run_view(run_dir))
    target.parent.mkdir(parents=True, exist_ok=True)
    write_file(target, page, inside=run_dir if out is None else None)  # never through a link
    return target
