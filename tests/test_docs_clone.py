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
from doc_examples import code_blocks

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


# (document, section or None for the whole guide, which python blocks, what stdout must show)
GUIDE_EXAMPLES = {
    "frames": ("frames.md", None, slice(None), r"Frames\(5 frames, indices \[0, 1, 2, 3, 4\], 640x480, 5 files"),
    "track": ("perception.md", "Tracking without weights", slice(None), r"round trip error \(px\): 0\.0\n"),
    "motion": ("geometry.md", "Camera and object motion: motion(frames)", slice(None), r"pans right 8\.0 deg"),
    "stereo": ("depth_and_reconstruction.md", "stereo_depth(left, right, ...)", slice(None), r"\n?0\.00\d+\n"),
    "rgbd": ("depth_and_reconstruction.md", "reconstruct(frames)", slice(1, 2), r"5/5 frames registered, method=rgbd"),
    "sfm": ("depth_and_reconstruction.md", "reconstruct(frames)", slice(2, 3), r"^sfm 6\nframe 1: registered \("),
}


def _guide_blocks(document: str, section: str | None, which: slice) -> list[str]:
    if section is not None:
        return code_blocks(document, section, "python")[which]
    text = (ROOT / "docs" / document).read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)[which]


@pytest.fixture(scope="module")
def bare_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    clone = _clone(tmp_path_factory.mktemp("guides") / "clone")
    assert not (clone.parent / "shared").exists()
    return clone


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow] if n == "sfm" else []) for n in GUIDE_EXAMPLES]
)
def test_guide_examples_run_from_a_bare_clone(name: str, bare_clone: Path, tmp_path: Path) -> None:
    document, section, which, shown = GUIDE_EXAMPLES[name]
    blocks = _guide_blocks(document, section, which)
    assert blocks and not any("../shared" in b or "SPATIALCLAW_TEST_DATA" in b for b in blocks), blocks
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENAI_")}
    env = {**env, "HF_HUB_OFFLINE": "1", "SPATIALCLAW_TEST_DATA": str(tmp_path / "no-data")}
    work = bare_clone / "work" / name  # the blocks write their own inputs (photos, a clip) next to them
    work.mkdir(parents=True)
    script = f"source {bare_clone}/.venv/bin/activate\npython -P - <<'PY'\n{''.join(blocks)}PY\n"
    run = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.search(shown, run.stdout), run.stdout[-3000:]


def test_no_example_of_the_runnable_guides_reads_the_shared_data_folder() -> None:
    for document in ("frames.md", "perception.md", "depth_and_reconstruction.md"):
        for block in _guide_blocks(document, None, slice(None)):
            assert "../shared" not in block and "SPATIALCLAW_TEST_DATA" not in block, (document, block)
