"""Fenced code blocks from the user docs, and how tests run them exactly as written: from a bare copy of the
repository, as a new user's shell would (``tests/docs/test_docs_every_block.py``; the table of what runs how is
``tests/docs/doc_block_table.py``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.DOTALL | re.MULTILINE)


def code_blocks(document: str, section: str, language: str) -> list[str]:
    """The ``language`` blocks of the ``## section`` of ``docs/document``, in order."""
    text = (DOCS / document).read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, flags=re.DOTALL | re.MULTILINE)
    if match is None:
        raise AssertionError(f"docs/{document} has no section '## {section}'")
    blocks = re.findall(rf"^```{language}\n(.*?)^```", match.group(1), flags=re.DOTALL | re.MULTILINE)
    if not blocks:
        raise AssertionError(f"docs/{document}, section {section!r}, has no {language} block")
    return blocks


@dataclass(frozen=True)
class Block:
    """One fenced block of a user document: where it is, its info string's language and its text."""

    document: str  # relative to the repository root: "README.md", "docs/geometry.md"
    line: int  # of the opening fence, 1-based
    language: str  # "python", "bash", "console", "" (none), ...
    code: str

    def __str__(self) -> str:
        return f"{self.document}:{self.line} ({self.language or 'no language'})"


def user_documents(root: Path = ROOT) -> list[str]:
    """Every page a user reads: README.md, CONTRIBUTING.md and docs/*.md."""
    return ["README.md", "CONTRIBUTING.md", *sorted(f"docs/{p.name}" for p in (root / "docs").glob("*.md"))]


def all_blocks(root: Path = ROOT) -> list[Block]:
    """Every fenced block of every user document, in document order."""
    found = []
    for document in user_documents(root):
        text = (root / document).read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(document, line, match.group(1), match.group(2)))
    return found


def matching(document: str, snippet: str, blocks: list[Block]) -> list[Block]:
    """The blocks of ``document`` that hold ``snippet``; a snippet that is a whole block names that one."""
    of_document = [b for b in blocks if b.document == document]
    whole = [b for b in of_document if b.code.strip() == snippet.strip()]
    return whole or [b for b in of_document if snippet in b.code]


def block(document: str, snippet: str, blocks: list[Block]) -> Block:
    """The one block of ``document`` that ``snippet`` names."""
    found = matching(document, snippet, blocks)
    assert len(found) == 1, f"{document}: {len(found)} blocks contain {snippet!r}"
    return found[0]


# ---- running blocks as a new user would ----------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """Blocks of one page, run in order in one working folder of a bare clone (``tests/docs/doc_block_table.py``)."""

    document: str
    blocks: tuple[str, ...]  # a snippet that names each block, in the order they run
    shows: tuple[str, ...] = ()  # regular expressions the output must match (re.MULTILINE)
    inputs: tuple[str, ...] = ()  # the user's own files the blocks name: made first (photos, videos, notes)
    edits: tuple[tuple[str, str], ...] = ()  # (text, replacement): each must occur in the blocks
    output: str | None = None  # a snippet of the untagged block that shows the printed lines
    env: tuple[tuple[str, str], ...] = ()  # set for the run, e.g. a placeholder key a block never uses
    tiny_models: bool = False  # run `spatialclaw tiny-models models` first and export what it prints
    server: bool = False  # openai: specs go to a scripted server answering the synthetic tasks' ground truth
    notebook: bool = False  # the python blocks are the cells of one notebook (nbclient)
    cwd: str = "work"  # "work": an empty folder of the clone; "root": the repository root
    slow: bool = False


def clone(target: Path) -> Path:
    """The files git tracks or would add, copied to ``target``; the project's virtualenv linked in as
    ``.venv`` (a clone would have made its own with ``bash scripts/bootstrap.sh``)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return target


def user_env(home: Path) -> dict[str, str]:
    """The environment of a new user: no key, no project variable, an empty home, the hub offline."""
    drop = ("OPENAI_", "ANTHROPIC_", "SPATIALCLAW_", "HF_", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and not k.endswith("_API_KEY")}
    home.mkdir(parents=True, exist_ok=True)
    # no path to the project's data folder, which the package would otherwise find beside its checkout
    return {**env, "HOME": str(home), "HF_HUB_OFFLINE": "1", "SPATIALCLAW_TEST_DATA": str(home / "no-data")}


def make_inputs(names: tuple[str, ...], folder: Path) -> None:
    """The user's own files a block names: photos (scikit-image's samples), 3 s videos panning over one,
    notes (``.txt``)."""
    import av
    import numpy as np
    import skimage.data
    from PIL import Image

    photos = [skimage.data.astronaut(), skimage.data.coffee(), skimage.data.chelsea(), skimage.data.rocket()]
    for number, name in enumerate(names):
        photo = photos[number % len(photos)]
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".txt":
            path.write_text("not a run\n")
        elif path.suffix in (".jpg", ".png"):
            Image.fromarray(photo).resize((320, 240)).save(path)
        else:
            with av.open(str(path), "w") as out:
                stream = out.add_stream("libx264", rate=10)
                stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
                for t in range(30):
                    window = np.ascontiguousarray(photo[40:280:2, 4 * t : 4 * t + 320 : 2])
                    out.mux(stream.encode(av.VideoFrame.from_ndarray(window, format="rgb24")))
                out.mux(stream.encode())


CELL = "\n# @@ next notebook cell\n"  # between the blocks of a notebook run
NOTEBOOK_RUNNER = """
import json, sys
import nbformat
from nbclient import NotebookClient

cells = json.load(open(sys.argv[1]))
notebook = nbformat.v4.new_notebook()
notebook.cells = [nbformat.v4.new_code_cell(source.rstrip("\\n")) for source in cells]
NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
for number, cell in enumerate(notebook.cells):
    print(f"--- cell {number}")
    for output in cell.outputs:
        if output.output_type == "stream":
            print(output.text, end="")
        elif output.output_type in ("display_data", "execute_result"):
            data = output.data
            print(data.get("text/markdown") or data.get("text/plain", "") or ", ".join(sorted(data)))
"""


def segments(run: Run, blocks: list[Block]) -> list[tuple[str, str]]:
    """The run as (kind, text) steps: one per bash or console block, one per stretch of python blocks (the
    blocks of a notebook run joined by :data:`CELL`); the run's edits applied."""
    chosen = [block(run.document, s, blocks) for s in run.blocks]
    texts = [b.code for b in chosen]
    for old, new in run.edits:
        assert any(old in t for t in texts), f"edit {old!r} matches none of the blocks"
        texts = [t.replace(old, new) for t in texts]
    steps: list[tuple[str, str]] = []
    for chosen_block, text in zip(chosen, texts, strict=True):
        kind = "python" if chosen_block.language == "python" else chosen_block.language or "bash"
        if kind == "python" and steps and steps[-1][0] == "python":
            steps[-1] = ("python", steps[-1][1] + (CELL if run.notebook else "") + text)
        else:
            steps.append((kind, text))
    return steps


def transcript(text: str, shell: str, cwd: Path, env: dict[str, str]) -> str:
    """Run a console block's ``$`` commands in one shell; each must print the lines shown under it
    (:func:`shown_line`). Returns what they printed."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    script = shell + "__rc=0\n"
    script += "".join(f"printf '@@step\\n'; (exit $__rc); {command} 2>&1; __rc=$?\n" for command, _ in steps)
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    outputs = done.stdout.split("@@step\n")[1:]
    assert len(outputs) == len(steps), done.stdout + done.stderr
    for (command, expected), output in zip(steps, outputs, strict=True):
        printed = output.rstrip("\n").splitlines()
        assert len(printed) == len(expected) and all(
            re.fullmatch(shown_line(s), p.rstrip()) for s, p in zip(expected, printed, strict=True)
        ), f"$ {command}\nshown:\n" + "\n".join(expected) + "\nprinted:\n" + output
    return "".join(outputs)


def answering_server() -> Any:
    """A scripted OpenAI-compatible server that answers the synthetic benchmark from its ground truth."""
    from spatialclaw.benchmarks.synthetic import generate
    from spatialclaw.testing.provider_server import ScriptedProvider, tool_call

    truths = {t.question: t.ground_truth for t in generate(30, seed=0)}

    def script(request: dict[str, Any], index: int) -> Any:
        text = json.dumps(request["messages"])
        question = max((q for q in truths if json.dumps(q)[1:-1] in text), key=len, default=None)
        truth = truths.get(question, 1) if question is not None else 1
        if "You cannot run code" in text or "That was the only cell" in text:
            return f"ANSWER: {truth}"
        if request.get("tools"):
            return tool_call("answer", {"value": truth})
        return f"```python\nanswer({truth!r})\n```"

    return ScriptedProvider(script)


def run_blocks(run: Run, clone_dir: Path, work: Path, env: dict[str, str]) -> str:
    """Run ``run``'s blocks in ``work`` with the clone's virtualenv activated; each step must succeed.
    Returns everything they printed."""
    shell = f"source {clone_dir}/.venv/bin/activate\n"
    if run.tiny_models:  # as the page says: `spatialclaw tiny-models models`, then the line it prints
        made = subprocess.run(
            ["bash", "-e", "-c", shell + "spatialclaw tiny-models models"],
            cwd=work, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr[-3000:]
        exports = made.stdout.strip().splitlines()[-1].removeprefix("export ").split()
        env = {**env, **dict(pair.split("=", 1) for pair in exports)}
    printed = []
    for kind, text in segments(run, all_blocks()):
        if kind == "console":
            printed.append(transcript(text, shell, work, env))
            continue
        if kind == "python" and run.notebook:
            (work / "cells.json").write_text(json.dumps(text.split(CELL)))
            script = shell + f"python -P - cells.json <<'@@PY'\n{NOTEBOOK_RUNNER}@@PY\n"
        elif kind == "python":  # -P: the installed package, never a folder of the working directory
            script = shell + f"python -P - <<'@@PY'\n{text}@@PY\n"
        else:
            script = shell + text
        done = subprocess.run(
            ["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=900
        )
        printed.append(done.stdout)
        assert done.returncode == 0, (
            f"{text[:2000]}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
    return "".join(printed)


def bootstrap_is_a_no_op() -> bool:
    """Whether ``scripts/bootstrap.sh`` (which demo.sh runs) would leave the shared virtualenv as it is."""
    import hashlib

    parts = (ROOT / "pyproject.toml", ROOT / "requirements" / "lock.txt", ROOT / "scripts" / "bootstrap.sh")
    want = hashlib.sha256(b"".join(part.read_bytes() for part in parts))
    stamp = Path(sys.executable).parent.parent / ".spatialclaw-installed"
    return stamp.is_file() and stamp.read_text().strip() == want.hexdigest()


def shown_line(line: str) -> str:
    """A shown output line as a pattern: ``...`` matches anything, a ``<placeholder>`` any text."""
    parts = re.split(r"(\.\.\.|<[a-z0-9 ]+>)", line.rstrip())
    return "".join(".*" if p == "..." else ".+" if p.startswith("<") else re.escape(p) for p in parts)


def lines_in_order(shown: list[str], printed: list[str]) -> None:
    """Each shown line is a printed line (:func:`shown_line`), in order."""
    position = 0
    for line in shown:
        pattern = shown_line(line)
        while position < len(printed) and not re.fullmatch(pattern, printed[position].rstrip()):
            position += 1
        assert position < len(printed), f"shown line {line!r} was not printed (in order):\n" + "\n".join(printed)
        position += 1
