"""Every command shown in docs/errors.md, docs/trajectories.md and the runner sections of
docs/benchmarks.md runs as written: ``console`` transcripts must print what they show, ``bash`` and plain
command blocks must succeed. Model calls go to a scripted OpenAI-compatible server (``OPENAI_BASE_URL``),
which answers the synthetic tasks from their ground truth, so the commands behave as with a good model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.benchmarks.synthetic import generate
from spatialclaw.testing.provider_server import ScriptedProvider, tool_call
from tests.doc_examples import code_blocks
from tests.paths import REPO_ROOT

BIN = Path(sys.executable).parent


def _answering_script():
    truths = {t.question: t.ground_truth for t in generate(30, seed=0)}

    def script(request: dict, index: int):
        text = json.dumps(request["messages"])
        question = max((q for q in truths if json.dumps(q)[1:-1] in text), key=len, default=None)
        truth = truths.get(question, 1)
        if "You cannot run code" in text or "That was the only cell" in text:
            return f"ANSWER: {truth}"
        if request.get("tools"):
            return tool_call("answer", {"value": truth})
        return f"```python\nanswer({truth!r})\n```"

    return script


def _env(url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPATIALCLAW_COMPAT"))}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", OPENAI_API_KEY="test-key", HF_HUB_OFFLINE="1")
    if url is not None:
        env["OPENAI_BASE_URL"] = url
    return env


def _run_script(block: str, cwd: Path, env: dict[str, str]) -> None:
    result = subprocess.run(["bash", "-e", "-c", block], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{block}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"


def _transcript(block: str, cwd: Path, env: dict[str, str]) -> None:
    """Run a ``console`` block's ``$`` commands in one shell; each command's output must be the lines the
    block shows under it (``...`` in a shown line matches anything)."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    script = "__rc=0\n" + "".join(
        f"printf '@@step\\n'; (exit $__rc); {command} 2>&1; __rc=$?\n" for command, _ in steps
    )
    result = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    outputs = result.stdout.split("@@step\n")[1:]
    assert len(outputs) == len(steps), result.stdout + result.stderr
    for (command, expected), output in zip(steps, outputs, strict=True):
        shown = [re.escape(line).replace(re.escape("..."), ".*") for line in expected]
        actual = output.rstrip("\n").splitlines()
        assert len(actual) == len(shown) and all(re.fullmatch(p, a) for p, a in zip(shown, actual, strict=True)), (
            f"$ {command}\nshown:\n" + "\n".join(expected) + "\nprinted:\n" + output
        )


def test_errors_md_transcripts_print_what_they_show(tmp_path: Path) -> None:
    Image.new("RGB", (32, 24), (90, 90, 90)).save(tmp_path / "room.jpg")
    Image.new("RGB", (32, 24), (90, 90, 90)).save(tmp_path / "a.jpg")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("not a run\n")
    text = (REPO_ROOT / "docs" / "errors.md").read_text()
    blocks = re.findall(r"^```console\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
    assert blocks
    for block in blocks:
        _transcript(block, tmp_path, _env(None))
    assert not (tmp_path / "runs").exists(), "bad input wrote nothing"


@pytest.mark.slow
def test_trajectories_md_commands_run_as_written(tmp_path: Path) -> None:
    document = "trajectories.md"
    with ScriptedProvider(_answering_script()) as server:
        env = _env(server.url)
        heading = "Trajectories as data: export, replay, viewer, RL environment"
        intro = (REPO_ROOT / "docs" / document).read_text().split("## Export", 1)[0]
        assert heading in intro
        for block in re.findall(r"^```bash\n(.*?)^```", intro, flags=re.DOTALL | re.MULTILINE):
            _run_script(block, tmp_path, env)
        for block in re.findall(r"^```python\n(.*?)^```", intro, flags=re.DOTALL | re.MULTILINE):
            result = subprocess.run(
                [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
            )
            assert result.returncode == 0, result.stderr
        for block in code_blocks(document, "Export: `spatialclaw export`", ""):
            _run_script(block, tmp_path, env)
        for block in code_blocks(document, "Replay: `spatialclaw replay DIR`", "console"):
            _transcript(block, tmp_path, env)
        for block in code_blocks(document, "Viewer: `spatialclaw view RUN_OR_EPISODE [--out DIR]`", "bash"):
            _run_script(block, tmp_path, env)
    assert (tmp_path / "data" / "sft.jsonl").stat().st_size > 0 and (
        tmp_path / "runs" / "demo" / "index.html"
    ).is_file()


@pytest.mark.slow
def test_benchmarks_md_runner_commands_run_as_written(tmp_path: Path) -> None:
    with ScriptedProvider(_answering_script()) as server:
        env = _env(server.url)
        for section in ("Quick start", "Interfaces"):
            for block in code_blocks("benchmarks.md", section, "bash"):
                _run_script(block, tmp_path, env)
    manifest = json.loads((tmp_path / "runs" / "syn-gpt41" / "manifest.json").read_text())
    assert manifest["task_count"] == 30 and [s["workers"] for s in manifest["sessions"]] == [4, 8]
    assert (tmp_path / "reports" / "cmp" / "report.md").read_text().count("interfaces (openai:gpt-4.1)") == 1
    assert (tmp_path / "runs" / "syn-gpt41" / "index.html").is_file()


def test_trajectories_md_rl_environment_example_runs_as_written(tmp_path: Path) -> None:
    [block] = code_blocks("trajectories.md", "RL environment", "python")
    result = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, env=_env(None), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"^reward 1\.0 logged to ", result.stdout, flags=re.MULTILINE), result.stdout
