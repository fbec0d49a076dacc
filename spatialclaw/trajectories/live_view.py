"""A live view of a run in progress: ``spatialclaw view RUN --live`` serves the run's page on 127.0.0.1.

Each request renders the page anew from the run's files (``manifest.json``, ``results.jsonl`` and the
episodes, as :mod:`spatialclaw.trajectories.run_viewer` reads them), with a progress line (rows written of
the rows the run will have: its tasks times its repeats, and their statuses) and a refresh every
``refresh_s`` seconds, so a browser left open follows the run. Like the static page it is a reader: it
writes nothing into the run and never talks to the runner.
"""

from __future__ import annotations

import html
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from spatialclaw.services.local_http import LocalHTTPServer
from spatialclaw.trajectories.results import ResultsStore
from spatialclaw.trajectories.run_dir import MANIFEST, RESULTS
from spatialclaw.trajectories.run_viewer import load_run_view, render_run_page

__all__ = ["LiveRunView", "progress"]


def progress(run_dir: str | Path) -> dict[str, Any]:
    """``done`` rows of ``total`` (tasks x repeats; None when the manifest is not written yet) and the
    rows' ``statuses``."""
    run_dir = Path(run_dir)
    rows, _ = ResultsStore(run_dir / RESULTS).read()
    statuses: dict[str, int] = {}
    for row in rows.values():
        statuses[str(row.get("status"))] = statuses.get(str(row.get("status")), 0) + 1
    try:
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
        total: int | None = int(manifest["task_count"]) * int(manifest["config"].get("repeats", 1))
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        total = None
    return {"done": len(rows), "total": total, "statuses": statuses}


def live_page(run_dir: str | Path, refresh_s: float) -> str:
    """The run's page with its progress line and a refresh every ``refresh_s`` seconds."""
    state = progress(run_dir)
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(state["statuses"].items())) or "none yet"
    total = "?" if state["total"] is None else state["total"]
    line = (
        f'<div id="progress" class="meta" data-progress="{html.escape(json.dumps(state))}">live: '
        f"{state['done']} of {total} row(s) written ({html.escape(statuses)}); refreshes every {refresh_s:g} s</div>"
    )
    page = render_run_page(load_run_view(run_dir))
    page = page.replace("<head>", f'<head><meta http-equiv="refresh" content="{refresh_s:g}">', 1)
    return page.replace("<header>", "<header>" + line, 1)


class LiveRunView(LocalHTTPServer):
    """Serves :func:`live_page` of ``run_dir`` at ``url`` (127.0.0.1, a free port); a context manager."""

    def __init__(self, run_dir: str | Path, refresh_s: float = 5.0) -> None:
        if not refresh_s > 0:
            raise ValueError(f"--refresh must be above 0 seconds, got {refresh_s}")
        self.run_dir = Path(run_dir)
        self.refresh_s = refresh_s
        load_run_view(self.run_dir)  # not a run directory: fail here, not on the first request
        super().__init__("live run view")

    def __enter__(self) -> LiveRunView:
        self._serve(_handler(self))
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


def _handler(view: LiveRunView) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path == "/progress.json":
                body, kind = json.dumps(progress(view.run_dir)).encode(), "application/json"
            elif path in ("/", "/index.html"):
                try:
                    body, kind = live_page(view.run_dir, view.refresh_s).encode(), "text/html; charset=utf-8"
                except (
                    FileNotFoundError,
                    ValueError,
                ) as problem:  # a file mid-write: say so, the next refresh reads it
                    body, kind = f"cannot read the run now: {html.escape(str(problem))}".encode(), "text/plain"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
