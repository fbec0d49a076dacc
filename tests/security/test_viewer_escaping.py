"""What a cell prints or a model writes is shown as text, never read as markup, and previews stay private.

- the run page inlines its data in a script element: a cell that prints ``<!--<script>`` must not end or
  change that element (before, the page showed no rows at all);
- exported notebooks put model prose, questions and answers in markdown cells: raw HTML in them is
  escaped, so it shows as written and never renders;
- ``session start`` writes its input previews in a folder only the user can open.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.testing import ScriptedProvider
from tests.bench_runs import one_task_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE = "<!--<script>"
PROSE = "Look at this <img src=x onerror=alert(1)> and <script>alert(2)</script> & more"


def code(text: str) -> str:
    return f"```python\n{text}\n```"


def bench(run: Path, cells: list[str]) -> None:
    """A one-task synthetic bench run whose model writes ``cells`` in turn, then answers."""
    from spatialclaw.runner import run_benchmark

    script = [code(c) for c in cells] + [code("answer('B' if meta['choices'] else 2)")]
    with ScriptedProvider(script) as server:
        run_benchmark(one_task_run(server.url, run))


def script_data(page: str, element_id: str) -> str:
    match = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page, re.DOTALL)
    assert match is not None
    return match.group(1)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("escaping") / "run"
    bench(run, [f"print({HOSTILE!r})\nprint('\\u2028 line \\u2029 separators & </script>')"])
    return run


def test_a_printed_comment_opener_cannot_change_the_run_pages_data(hostile_run: Path) -> None:
    assert main(["view", str(hostile_run)]) == 0
    page = (hostile_run / "index.html").read_text()
    data = script_data(page, "run-data")
    assert not re.search(r"[<>&\u2028\u2029]", data), "the inlined JSON holds no markup character"
    tasks = json.loads(data)["tasks"]
    assert len(tasks) == 1
    stdout = "".join(e.get("stdout") or "" for a in tasks[0]["attempts"] for e in a["events"])
    assert HOSTILE in stdout and "\u2028 line \u2029 separators & </script>" in stdout


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (apt-get install -y chromium)")
def test_a_browser_shows_the_row_of_a_task_whose_cell_printed_a_comment_opener(
    hostile_run: Path, tmp_path: Path
) -> None:
    page = hostile_run / "index.html"
    main(["view", str(hostile_run)])
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            f"--user-data-dir={tmp_path / 'chromium'}",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    dom = done.stdout.split('<script type="application/json"')[0]
    assert len(re.findall(r'<tr class="task"', dom)) == 1, done.stderr[-2000:]


def test_model_prose_with_raw_html_is_escaped_in_exported_notebooks(tmp_path: Path) -> None:
    run = tmp_path / "run"
    from spatialclaw.runner import run_benchmark

    replies = [f"{PROSE}\n" + code("print(1)"), "Done <b>now</b>.\n" + code("answer('B' if meta['choices'] else 2)")]
    with ScriptedProvider(replies) as server:
        run_benchmark(one_task_run(server.url, run))
    out = tmp_path / "notebooks"
    assert main(["export", "--format", "ipynb", "--in", str(run), "--out", str(out), "--include-incomplete"]) == 0
    (notebook,) = out.glob("*.ipynb")
    cells = json.loads(notebook.read_text())["cells"]
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert "onerror" in markdown, "the prose is kept, as text"
    for tag in ("<img", "<script", "<b>"):
        assert tag not in markdown, tag
    assert "&lt;img src=x onerror=alert(1)&gt;" in markdown and "&lt;b&gt;now&lt;/b&gt;" in markdown


def test_session_previews_are_private_to_their_user(tmp_path: Path) -> None:
    frame = tmp_path / "frame.png"
    Image.new("RGB", (48, 32), (200, 30, 30)).save(frame)
    environment = {
        **os.environ,
        "SPATIALCLAW_SESSIONS": str(tmp_path / "sessions"),
        "SPATIALCLAW_KERNEL_MEMORY_MB": "0",
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "spatialclaw.cli", "session", *args],
            capture_output=True,
            text=True,
            env=environment,
            timeout=180,
        )

    old_umask = os.umask(0o022)  # an ordinary user's umask: world-readable unless made private
    try:
        done = cli("start", "--frames", str(frame), "--question", "What colour?", "--json")
    finally:
        os.umask(old_umask)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    try:
        folder = Path(info["preview"]).parent
        assert folder.name == "preview"
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
        files = sorted(folder.iterdir())
        assert files and all(stat.S_IMODE(os.lstat(p).st_mode) == 0o600 for p in files), files
    finally:
        cli("close", info["session"])
