"""README's first-hour commands run as written from a copy of the repository with nothing beside it
(no ``../shared``): the files git tracks or would add are copied to a fresh folder, the project's
virtualenv is linked in as ``.venv``, and each block runs there with the keyless scripted model."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _clone(target: Path) -> Path:
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


def _blocks(language: str, section: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, flags=re.DOTALL | re.MULTILINE)
    assert match, f"README.md has no section {section!r}"
    return re.findall(rf"^```{language}\n(.*?)^```", match.group(1), flags=re.DOTALL | re.MULTILINE)


@pytest.mark.slow
def test_readme_first_hour_runs_from_a_bare_clone(tmp_path: Path) -> None:
    clone = _clone(tmp_path / "clone")
    assert not (clone.parent / "shared").exists()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENAI_")}
    env = {**env, "HF_HUB_OFFLINE": "1", "SPATIALCLAW_TEST_DATA": str(tmp_path / "no-data")}
    [block] = _blocks("bash", "A first hour without a key")
    result = subprocess.run(
        ["bash", "-e", "-c", block], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert (clone / "first" / "report" / "report.md").is_file() and (clone / "first" / "bench" / "index.html").is_file()
    assert len((clone / "first" / "sft.jsonl").read_text().splitlines()) == 4
    for code in _blocks("python", "The kernel in five lines"):  # -P: the venv's install (it points at this
        # checkout), not the copy's sources, which a real clone would have installed itself
        script = f"source .venv/bin/activate\npython -P - <<'PY'\n{code}PY\n"
        run = subprocess.run(
            ["bash", "-e", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.stdout.startswith("2 (")
