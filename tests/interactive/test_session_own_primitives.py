"""A primitive written in a folder outside the repository, given to ``session start --primitive``: the session
prompt lists it with its signature and first sentence, and ``session exec`` calls it in the kernel (the
command run from another folder than the file's, so the daemon finds it by its absolute path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

BIN = Path(sys.executable).parent / "spatialclaw"
PRIMITIVE = '''
import numpy as np


def mean_brightness(image, channel: int = -1) -> float:
    """Mean brightness of an image, 0 (black) to 255 (white)."""
    array = np.asarray(image, dtype=np.float64)
    return float(array.mean() if channel < 0 else array[..., channel].mean())
'''


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "sessions"
    from spatialclaw.interactive.session import list_sessions

    for session in list_sessions(tmp_path / "sessions"):  # a failed test leaves no daemon running
        session.close()


def _cli(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "SPATIALCLAW_SESSIONS"))}
    env["SPATIALCLAW_KERNEL_MEMORY_MB"] = "0"
    return subprocess.run([str(BIN), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=180)


def test_a_session_lists_and_runs_a_primitive_from_a_file_outside_the_repository(tmp_path: Path, root: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "my_tools.py").write_text(PRIMITIVE)
    Image.new("RGB", (64, 48), (200, 200, 200)).save(mine / "grey.png")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    started = _cli(
        "session", "start", "--root", str(root), "--frames", "grey.png", "--question", "How bright is it (0-255)?",
        "--answer-type", "number", "--primitive", "mean_brightness=my_tools.py:mean_brightness", "--json",
        cwd=mine,
    )  # fmt: skip
    assert started.returncode == 0, started.stdout + started.stderr
    data = json.loads(started.stdout)
    prompt = Path(data["prompt"]).read_text()
    own = prompt.split("Your own primitives (bound in the kernel):", 1)
    assert len(own) == 2, prompt
    assert "- `mean_brightness(image, channel: int = -1) -> float`: Mean brightness of an image" in own[1]
    ran = _cli(
        "session", "exec", data["session"], "--root", str(root), "--code", "-",
        cwd=elsewhere, stdin="print('brightness', mean_brightness(frames[0]))\n",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "brightness 200.0" in ran.stdout, ran.stdout


def test_a_missing_primitive_file_is_named_before_a_session_starts(tmp_path: Path, root: Path) -> None:
    Image.new("RGB", (8, 8)).save(tmp_path / "a.png")
    done = _cli(
        "session", "start", "--root", str(root), "--frames", "a.png", "--question", "q",
        "--primitive", "f=nowhere/tools.py:f", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "primitive 'f': nowhere/tools.py does not exist" in done.stderr, done.stderr
    assert not root.exists() or not any(root.iterdir())
