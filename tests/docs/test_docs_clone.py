"""What the docs state beyond their code blocks holds: the manual sizes they quote, the commands a session
prints for the user to copy, and the quickstart script of the first hour (no key, no data). The code blocks
themselves run from a bare clone in ``tests/docs/test_docs_every_block.py``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO_ROOT

ROOT = REPO_ROOT


def _stated_sizes(document: str) -> list[int]:
    text = (ROOT / "docs" / document).read_text(encoding="utf-8")
    return [int(n.replace(",", "")) for n in re.findall(r"about (\d{1,3}(?:,\d{3})+) characters", text)]


def test_the_manual_sizes_the_docs_state_are_measured_ones() -> None:
    from spatialclaw.agent.prompting import system_prompt

    measured = {detail: len(system_prompt(30, api_detail=detail)) for detail in ("core", "brief", "full")}
    stated = {"agent.md": ["core", "brief", "full"], "trajectories.md": ["core", "full"]}
    for document, details in stated.items():
        sizes = _stated_sizes(document)
        assert len(sizes) == len(details), f"docs/{document} states {sizes}"
        for detail, size in zip(details, sizes, strict=True):
            assert abs(size - measured[detail]) <= 0.1 * measured[detail], (document, detail, size, measured)


def test_a_session_under_its_own_root_prints_commands_that_work_as_copied(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (64, 48), (200, 30, 30)).save(tmp_path / "red.png")
    root = tmp_path / "eval sessions"  # a space: the printed --root must be quoted for the shell
    spatialclaw = str(Path(sys.executable).parent / "spatialclaw")
    env = {**os.environ, "SPATIALCLAW_SESSIONS": str(tmp_path / "default-root")}
    start = subprocess.run(
        [spatialclaw, "session", "start", "--root", str(root), "--frames", str(tmp_path / "red.png"),
         "--question", "What colour is it?"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert start.returncode == 0, start.stderr[-2000:]
    [hint] = [line for line in start.stdout.splitlines() if line.startswith("next: ")]
    session_id = start.stdout.split("session: ", 1)[1].split()[0]
    try:
        command = hint.removeprefix("next: ").split(" <<'EOF'")[0]
        ran = subprocess.run(
            ["bash", "-c", f"{command} <<'EOF'\nprint(len(frames))\nEOF"],
            cwd=tmp_path, env={**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert ran.returncode == 0 and "1" in ran.stdout, ran.stdout + ran.stderr
        prompt = (root / session_id / "prompt.md").read_text()
        assert f"spatialclaw session close {session_id} --root '{root}'" in prompt
    finally:
        subprocess.run([spatialclaw, "session", "close", session_id, "--root", str(root)], env=env, timeout=120)


def test_the_quickstart_example_walks_the_first_hour_without_key_or_data(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENAI_")}
    env = {**env, "HF_HUB_OFFLINE": "1", "SPATIALCLAW_TEST_DATA": str(tmp_path / "no-data")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("kernel: 2 (741, 500)") and "agent: answered" in done.stdout
    assert "openai: exported 4 of 4 episode(s)" in done.stdout
    assert len((tmp_path / "sft.jsonl").read_text().splitlines()) == 4 and (tmp_path / "report" / "report.md").is_file()
