"""Nothing a cell writes can run, leak or corrupt on the host through the episode trees.

The attacks are performed through the real entry points: a sandboxed kernel cell (in ``spatialclaw run``
and in a session) plants a forged episode whose page is a link to a host file, then ``spatialclaw view``
runs on the output; and episode trees with links and ``../`` references among their stored files go
through ``spatialclaw export`` and ``spatialclaw view``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.testing import ScriptedProvider
from tests.bench_runs import one_task_run

# A forged episode that claims a perfect score, planted in the cell's working directory, with its
# page (``episode.html``) a link to a host file: ``view`` would write the page through the link.
PLANT = """
import json, os
events = [
    {{"type": "header", "seq": 0, "time": 0, "format_version": 1, "model": "forged", "config": {{}}}},
    {{"type": "task", "seq": 1, "time": 0, "task": {{"task_id": "forged", "question": "q"}}, "files": {{}}}},
    {{"type": "answer", "seq": 2, "time": 0, "value": "B", "source": "cell"}},
    {{"type": "score", "seq": 3, "time": 0, "score": 1.0, "ground_truth": "B", "details": {{"correct": True}}}},
    {{"type": "end", "seq": 4, "time": 0, "reason": "answered", "steps": 1}},
]
os.makedirs("x", exist_ok=True)
with open("x/episode.jsonl", "w") as handle:
    handle.write("\\n".join(json.dumps(e) for e in events) + "\\n")
os.symlink({target!r}, "x/episode.html")
print("planted in", os.getcwd())
"""


def code(text: str) -> str:
    return f"```python\n{text}\n```"


@pytest.fixture
def frame(tmp_path: Path) -> Path:
    path = tmp_path / "frame.png"
    Image.new("RGB", (48, 32), (10, 120, 200)).save(path)
    return path


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A host file a cell must never write: a ``.pth`` would run at the next Python start."""
    path = tmp_path / "host" / "zz_victim.pth"
    path.parent.mkdir()
    path.write_text("# untouched\n")
    return path


def run_episode(out: Path, frame: Path, cells: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """One ``spatialclaw run`` episode whose model writes ``cells`` in turn, then answers."""
    monkeypatch.setenv("SPATIALCLAW_KERNEL_MEMORY_MB", "0")
    script = [code(c) for c in cells] + [code("answer('A')")]
    with ScriptedProvider(script) as server:
        status = main(
            [
                "run",
                "--model",
                f"openai-compat:scripted@{server.url}",
                "--frames",
                str(frame),
                "--question",
                "Is the frame blue? A. yes B. no",
                "--quiet",
                "--out",
                str(out),
            ]
        )
    assert status == 0


def test_a_link_planted_by_a_run_cell_is_never_written_through_by_view(
    tmp_path: Path, frame: Path, victim: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    run_episode(runs / "ep0", frame, [PLANT.format(target=str(victim))], monkeypatch)
    capsys.readouterr()
    assert main(["view", str(runs)]) == 0
    assert victim.read_text() == "# untouched\n"
    planted = [p for p in runs.rglob("*") if p.name in ("episode.jsonl", "episode.html") and p.parent.name == "x"]
    assert planted == [], "the cell's files are not inside the episode's directory"
    assert not (runs / "ep0" / "workdir").exists()
    assert (runs / "ep0" / "episode.html").is_file()
    index = (runs / "index.html").read_text()
    assert "forged" not in index and index.count("<tr>") <= 2  # the real episode only


def test_a_link_planted_by_a_session_cell_is_never_written_through_by_view(
    tmp_path: Path, frame: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spatialclaw.interactive.session import start_session
    from spatialclaw.task import FrameSpec, Task

    monkeypatch.setenv("SPATIALCLAW_KERNEL_MEMORY_MB", "0")
    root = tmp_path / "sessions"
    session = start_session(Task(question="What colour?", inputs=[FrameSpec.images([frame])]), root=root)
    try:
        step = session.execute(PLANT.format(target=str(victim)))
        assert step.status == "ok", step.text
    finally:
        session.close()
    assert main(["view", str(root)]) == 0
    assert victim.read_text() == "# untouched\n"
    assert sorted(p.name for p in session.directory.iterdir() if p.is_dir()) == ["images"]
    assert not [p for p in root.rglob("episode.jsonl") if p.parent != session.directory]


# --- episode trees treated as hostile -----------------------------------------------------------------
@pytest.fixture
def two_episodes(tmp_path: Path, frame: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two real episodes under ``runs/``: ``good`` and ``bad`` (the tests tamper with ``bad``)."""
    for name in ("good", "bad"):
        run_episode(tmp_path / "runs" / name, frame, ["print(frames)"], monkeypatch)
    return tmp_path / "runs"


def stored(episode: Path, folder: str) -> list[Path]:
    return sorted((episode / folder).iterdir())


def plant_links(episode: Path, secret: Path) -> None:
    """Every stored text of ``episode`` becomes a link to ``secret``, every image one to /proc/self/environ."""
    texts, images = stored(episode, "texts"), stored(episode, "images")
    assert texts and images, "a real episode stores its long prompt and its frames"
    for path in texts:
        path.unlink()
        path.symlink_to(secret)
    for path in images:
        path.unlink()
        path.symlink_to("/proc/self/environ")


def plant_parent_ref(episode: Path, secret: Path) -> None:
    """The episode's long-text references become ``../`` paths to ``secret`` (``secret`` ends in ``.txt``)."""
    log = episode / "episode.jsonl"
    relative = os.path.relpath(secret.with_suffix(""), episode / "texts")
    text = log.read_text()
    refs = set(re.findall(r'"text_ref": "([0-9a-f]{64})"', text))
    assert refs
    for ref in refs:
        text = text.replace(ref, relative)
    log.write_text(text)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command in its own process, whose environment holds a secret (``/proc/self/environ``)."""
    environment = {**os.environ, "LEAK_MARKER": "ENVIRONMENT-SECRET-VALUE"}
    command = [sys.executable, "-m", "spatialclaw.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)


def decoded(out: Path) -> str:
    """An export or a page with every inlined image decoded."""
    text = out.read_text()
    decoded = [base64.b64decode(b).decode("latin-1") for b in re.findall(r"base64,([A-Za-z0-9+/=]+)", text)]
    return text + "\n".join(decoded)


@pytest.mark.parametrize("plant", [plant_links, plant_parent_ref], ids=["links", "parent-ref"])
def test_export_never_copies_a_host_file_or_the_environment_into_the_dataset(
    two_episodes: Path,
    tmp_path: Path,
    plant,
) -> None:
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("HOST-SECRET-FILE " * 20)
    plant(two_episodes / "bad", secret)
    out = tmp_path / "export" / "rows.jsonl"
    done = cli("export", "--format", "openai", "--out", str(out), "--in", str(two_episodes))
    assert done.returncode == 0, done.stderr
    stderr = done.stderr
    dataset = decoded(out)
    assert "ENVIRONMENT-SECRET-VALUE" not in dataset, "the exporting process's environment"
    assert "HOST-SECRET-FILE" not in dataset, "a host file"
    assert len(out.read_text().splitlines()) == 1, "the good episode is still exported"
    assert str(two_episodes / "bad") in stderr, "the bad episode is named"


@pytest.mark.parametrize("plant", [plant_links, plant_parent_ref], ids=["links", "parent-ref"])
def test_view_never_inlines_a_host_file_and_still_renders_the_other_episodes(
    two_episodes: Path, tmp_path: Path, plant
) -> None:
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("HOST-SECRET-FILE " * 20)
    plant(two_episodes / "bad", secret)
    done = cli("view", str(two_episodes))
    assert done.returncode == 0, done.stderr
    for page in two_episodes.rglob("*.html"):
        shown = decoded(page)
        assert "ENVIRONMENT-SECRET-VALUE" not in shown, "the viewing process's environment"
        assert "HOST-SECRET-FILE" not in shown, "a host file"
    assert str(two_episodes / "bad") in done.stderr
    assert (two_episodes / "good" / "episode.html").is_file()


def test_view_refuses_a_page_that_is_a_link_and_follows_no_linked_folder(
    two_episodes: Path, tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (two_episodes / "bad" / "episode.html").symlink_to(victim)
    elsewhere = tmp_path / "elsewhere"
    (two_episodes / "good").rename(elsewhere)
    (two_episodes / "linked").symlink_to(elsewhere)  # a linked folder holding a real episode
    (two_episodes / "third").mkdir()
    (two_episodes / "third" / "episode.jsonl").symlink_to(elsewhere / "episode.jsonl")  # a linked log
    capsys.readouterr()
    main(["view", str(two_episodes)])
    stderr = capsys.readouterr().err
    assert victim.read_text() == "# untouched\n"
    assert str(two_episodes / "bad" / "episode.html") in stderr and "link" in stderr
    assert not (elsewhere / "episode.html").exists()
    assert not (two_episodes / "third" / "episode.html").exists()


def test_stored_file_references_must_be_plain_content_hashes(tmp_path: Path) -> None:
    from spatialclaw.trajectories.safe_files import BadReference, read_ref

    (tmp_path / "texts").mkdir()
    good = "a" * 64
    (tmp_path / "texts" / f"{good}.txt").write_text("fine")
    assert read_ref(tmp_path, "texts", good, ".txt") == b"fine"
    for bad in ["../" * 3 + "etc/passwd", "A" * 64, "a" * 63, "a" * 64 + "/x", None, 7]:
        with pytest.raises(BadReference):
            read_ref(tmp_path, "texts", bad, ".txt")
    with pytest.raises(FileNotFoundError):
        read_ref(tmp_path, "texts", "b" * 64, ".txt")
    (tmp_path / "texts" / f"{'c' * 64}.txt").symlink_to(tmp_path / "texts" / f"{good}.txt")
    with pytest.raises(BadReference, match="is a link"):
        read_ref(tmp_path, "texts", "c" * 64, ".txt")
    os.mkfifo(tmp_path / "texts" / f"{'d' * 64}.txt")  # never waited on
    with pytest.raises(BadReference, match="not a regular file"):
        read_ref(tmp_path, "texts", "d" * 64, ".txt")
    (tmp_path / "linked").symlink_to(tmp_path / "texts")
    with pytest.raises(BadReference, match="is a link"):
        read_ref(tmp_path, "linked", good, ".txt")


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_bench_episode_has_no_kernel_writable_folder(tmp_path: Path, sandbox: str) -> None:
    from spatialclaw.runner import run_benchmark

    cell = code("open('mine.txt', 'w').write('x')\nimport os\nprint('CWD', os.getcwd())")
    answer = code("answer('B' if meta['choices'] else 2)")
    with ScriptedProvider(lambda request, index: cell if index % 2 == 0 else answer) as server:
        run_benchmark(one_task_run(server.url, tmp_path / "run", agent={"sandbox": sandbox}))
    assert not [p for p in (tmp_path / "run").rglob("mine.txt")]
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    episode_dir = tmp_path / "run" / rows[0]["trajectory_dir"]
    folders = {p.name for p in episode_dir.iterdir() if p.is_dir()}
    assert folders <= {"images", "texts"}
    from spatialclaw.trajectories.episode_log import load_episode

    _, first = load_episode(episode_dir).cells()[0]
    assert first.ok, "the cell still has a writable working directory"
    cwd = Path(first.stdout.split("CWD ", 1)[1].strip())
    assert tmp_path / "run" not in (cwd, *cwd.parents)
