"""Strings a dataset or a tampered results file carries stay text in ``report.md`` and the run page
(issue 30, B5 and B6).

A task category from a dataset forged table rows, a heading and raw HTML in ``report.md``; a row's status
edited to ``ok<img onerror=...>`` ran script in the run page's task detail (``detail()`` joined the
attempts' statuses without escaping). The page's own script is run here in Node with a minimal DOM, opened
on the task by its URL fragment, as a browser would.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spatialclaw.cli import main
from spatialclaw.testing import ScriptedProvider
from tests.bench_runs import one_task_run

NODE = shutil.which("node")
CATEGORY = "cat | 0.0 |\n| **forged-category** | **100.0** |\n\n## injected heading\n<img src=x onerror=alert(1)>"
STATUS = "ok<img src=x onerror=\"document.body.dataset['pwnedstatus']='1'\">"


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    """Every start tag of ``html`` as a browser's parser would read it: (name, attributes)."""
    from html.parser import HTMLParser

    found: list[tuple[str, dict[str, str | None]]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, dict(attrs)))

    Tags().feed(html)
    return found


@pytest.fixture(scope="module")
def tampered_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-task synthetic run whose dataset category is hostile and whose row's status was edited."""
    from spatialclaw.runner import run_benchmark

    run = tmp_path_factory.mktemp("report-escaping") / "run"
    with ScriptedProvider(["```python\nanswer('B' if meta['choices'] else 2)\n```"]) as server:
        run_benchmark(one_task_run(server.url, run, agent={"preview_images": 8}))
    for name in ("tasks.jsonl", "results.jsonl"):
        rows = [json.loads(line) for line in (run / name).read_text().splitlines()]
        for row in rows:
            row["category"] = CATEGORY
        if name == "results.jsonl":
            rows[-1]["status"] = STATUS
        (run / name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run


def test_a_dataset_category_cannot_forge_rows_headings_or_html_in_the_report(
    tampered_run: Path, tmp_path: Path
) -> None:
    assert main(["report", str(tampered_run), "--out", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "forged-category" in markdown  # the category is shown ...
    assert "| **forged-category** |" not in markdown  # ... inside its own cell, not as a row of its own
    assert not re.search(r"^#+ injected heading", markdown, re.MULTILINE)
    assert "<img" not in markdown and "&lt;img src=x onerror=alert(1)&gt;" in markdown
    for line in markdown.splitlines():
        if "forged-category" in line:  # one row with as many cells as the table's header
            assert line.replace("\\|", "").count("|") == 3, line


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_tampered_status_runs_no_script_in_the_run_pages_task_detail(tampered_run: Path, tmp_path: Path) -> None:
    assert main(["view", str(tampered_run)]) == 0
    page = (tampered_run / "index.html").read_text()
    scripts = dict(re.findall(r'<script type="application/json" id="([\w-]+)">(.*?)</script>', page, re.DOTALL))
    [code] = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)
    task_id = json.loads(scripts["run-data"])["tasks"][0]["task_id"]
    harness = tmp_path / "page.js"
    harness.write_text(
        # just enough DOM for the page's script: elements by id, innerHTML kept as written
        "const nodes = {};\n"
        "const data = " + json.dumps(scripts) + ";\n"
        "const el = (id) => nodes[id] || (nodes[id] = {id, textContent: data[id] || '', innerHTML: '', value: '',"
        " checked: false, dataset: {}});\n"
        "globalThis.document = {getElementById: el, querySelectorAll: () => []};\n"
        "globalThis.history = {replaceState() {}};\n"
        f"globalThis.location = {{hash: '#open=' + encodeURIComponent({json.dumps(task_id)})}};\n"
        + code
        + "\nprocess.stdout.write(JSON.stringify({detail: el('detail').innerHTML, rows: el('rows').innerHTML}));\n"
    )
    done = subprocess.run([str(NODE), str(harness)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert "attempts:" in shown["detail"]  # the detail was opened from the fragment
    for html in shown.values():
        tags = _tags(html)
        assert not [attrs for tag, attrs in tags if tag == "img" and attrs.get("src") == "x"], tags
        assert not [attrs for _, attrs in tags if any(name.startswith("on") for name in attrs)], tags
    assert "ok&lt;img src=x onerror=&quot;document.body.dataset" in shown["detail"]
