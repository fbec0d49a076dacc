"""The user's own paths everywhere: a bad input is refused on the host before a kernel starts (exit 2, naming
the file as given), and a sandboxed kernel, which reads private links to the inputs, shows the user's paths
in ``frames``, ``meta['sources']``, errors and benchmark rows, so that ``replay`` reproduces its episodes
wherever their sandboxes lived. Real command-line processes, real sandboxed kernels, real Redwood frames."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from spatialclaw.kernel import sandbox
from spatialclaw.primitives.frames.load import load_frames
from spatialclaw.primitives.frames.sources import FrameLoadError
from tests.cli_process import spatialclaw
from tests.paths import DATA_ROOT

REDWOOD = DATA_ROOT / "rgbd-redwood" / "color"
STAGED = re.compile(r"spatialclaw-sandbox-|/inputs/\d+-\d+/")
FENCE = "`" * 3

pytestmark = pytest.mark.skipif(not REDWOOD.is_dir(), reason=f"real test data not found at {DATA_ROOT}")
needs_sandbox = pytest.mark.skipif(
    not sandbox.support().available, reason=f"no kernel sandbox here: {sandbox.support().missing}"
)


@pytest.fixture
def scans(tmp_path: Path) -> Path:
    """Two real Redwood frames in a folder of the user's (with a space in its name)."""
    folder = tmp_path / "my scans"
    folder.mkdir()
    for name in ("00000.jpg", "00001.jpg"):
        shutil.copyfile(REDWOOD / name, folder / name)
    return folder


def truncated_copy(folder: Path) -> Path:
    data = (REDWOOD / "00002.jpg").read_bytes()
    bad = folder / "kitchen cut.jpg"
    bad.write_bytes(data[: len(data) // 2])
    return bad


def replies(path: Path, *cells: str) -> Path:
    path.write_text("".join(json.dumps(f"{FENCE}python\n{cell}\n{FENCE}") + "\n" for cell in cells))
    return path


def test_a_truncated_image_is_refused_before_a_kernel_starts(tmp_path: Path, scans: Path) -> None:
    bad = truncated_copy(scans)
    done = spatialclaw(
        "run", "--model", "scripted:look-and-answer", "--frames", "my scans/kitchen cut.jpg",
        "--question", "Is there a chair? (yes/no)", "--out", "ep", "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith(f"spatialclaw run: cannot read image {bad}: "), done.stderr
    assert "truncated" in done.stderr and done.stderr.count("\n") == 1 and not STAGED.search(done.stderr)
    assert not (tmp_path / "ep" / "episode.jsonl").exists()  # no episode was started

    session = spatialclaw(
        "session", "start", "--root", str(tmp_path / "sessions"), "--frames", str(scans),
        "--question", "Is there a chair?", cwd=tmp_path,
    )  # fmt: skip
    assert session.returncode == 2 and f"cannot read image {bad}: " in session.stderr, session.stderr
    assert not STAGED.search(session.stderr) and not any((tmp_path / "sessions").glob("*/episode.jsonl"))


def test_an_empty_video_is_refused_saying_it_is_empty(tmp_path: Path) -> None:
    (tmp_path / "clip.mp4").write_bytes(b"")
    done = spatialclaw(
        "run", "--model", "scripted:look-and-answer", "--video", "clip.mp4", "--count", "4",
        "--question", "Is there a chair? (yes/no)", "--out", "ep", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr == (
        f"spatialclaw run: cannot read video {tmp_path / 'clip.mp4'}: the file is empty (0 bytes), as a copy or "
        "download that did not finish leaves it; replace it or remove it from the input list.\n"
    )


def test_frames_name_the_paths_they_are_shown_by_not_those_they_are_read_from(tmp_path: Path, scans: Path) -> None:
    """What a sandbox does, without one: frames read from staged links, named by the user's paths."""
    staged = tmp_path / "staged" / "1-0"
    staged.mkdir(parents=True)
    names = ["00000.jpg", "00001.jpg"]
    for name in names:
        os.link(scans / name, staged / name)
    user = [str(scans / name) for name in names]
    frames = load_frames({"kind": "images", "paths": [str(staged / n) for n in names], "display_paths": user})
    assert frames.sources == user and frames[1].source == user[1]
    assert repr(frames) == f"Frames(2 frames, indices [0, 1], 640x480, 2 files in {str(scans)!r})"
    assert frames[1].array.shape == (480, 640, 3)  # the pixels come from the staged link
    cut = truncated_copy(scans)
    os.link(cut, staged / cut.name)
    with pytest.raises(FrameLoadError, match=f"^cannot read image {re.escape(str(cut))}: ") as caught:
        load_frames({"kind": "images", "paths": [str(staged / cut.name)], "display_paths": [str(cut)]})
    assert str(staged) not in str(caught.value)


@needs_sandbox
def test_a_sandboxed_episode_shows_the_users_paths_and_replays(tmp_path: Path, scans: Path) -> None:
    cells = replies(
        tmp_path / "replies.jsonl",
        "print(frames)\nprint(meta['sources'])\nprint(frames[1].source)",
        "frames.at(7)",
        "answer('yes')",
    )
    done = spatialclaw(
        "run", "--model", f"scripted:replies={cells}", "--frames", "my scans", "--sandbox", "required",
        "--question", "Is there a chair? (yes/no)", "--out", "ep", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"  │ Frames(2 frames, indices [0, 1], 640x480, 2 files in {str(scans)!r})" in lines
    assert f"  │ {[str(scans / '00000.jpg'), str(scans / '00001.jpg')]}" in lines
    assert f"  │ {scans / '00001.jpg'}" in lines
    assert not STAGED.search(done.stdout), done.stdout

    replayed = spatialclaw("replay", "ep", "--sandbox", "required", cwd=tmp_path)  # another sandbox directory
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "3 of 3 cell(s) reproduced" in replayed.stdout


@needs_sandbox
def test_replay_reads_an_older_episodes_sandbox_paths_as_the_users(tmp_path: Path, scans: Path) -> None:
    """Episodes recorded before kernels showed the user's paths printed their sandbox's private links."""
    cells = replies(tmp_path / "replies.jsonl", "print(frames)\nprint(frames.sources)", "answer('yes')")
    done = spatialclaw(
        "run", "--model", f"scripted:replies={cells}", "--frames", "my scans", "--sandbox", "required",
        "--question", "Is there a chair? (yes/no)", "--out", "ep", "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    log = tmp_path / "ep" / "episode.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    first = next(e for e in events if e["type"] == "cell")["result"]
    old = "/tmp/spatialclaw-sandbox-k2x_9q/inputs/3-0"  # as the kernel of an older version printed them
    assert str(scans) in first["stdout"]
    first["stdout"] = first["stdout"].replace(str(scans), old)
    log.write_text("".join(json.dumps(e) + "\n" for e in events))

    replayed = spatialclaw("replay", "ep", "--sandbox", "required", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "2 of 2 cell(s) reproduced" in replayed.stdout

    first["stdout"] = first["stdout"].replace("00001.jpg", "00009.jpg")  # a real difference still shows
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert spatialclaw("replay", "ep", "--sandbox", "required", cwd=tmp_path).returncode == 1


@needs_sandbox
def test_a_benchmark_row_names_the_users_file(tmp_path: Path, scans: Path) -> None:
    cut = truncated_copy(scans)
    tasks = tmp_path / "tasks.jsonl"
    rows = [
        {"task_id": "good", "question": "Is there a chair?", "images": ["my scans/00000.jpg"], "answer": "yes"},
        {"task_id": "cut", "question": "Is there a chair?", "images": ["my scans/kitchen cut.jpg"], "answer": "yes"},
    ]
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = spatialclaw(
        "bench", "--benchmark", str(tasks), "--model", "scripted:look-and-answer", "--sandbox", "required",
        "--out", "run", "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    results = {row["task_id"]: row for row in map(json.loads, (tmp_path / "run" / "results.jsonl").open())}
    assert results["good"]["error"] is None, done.stderr
    assert f"cannot read image {cut}: " in results["cut"]["error"], results["cut"]["error"]
    assert not STAGED.search(results["cut"]["error"]) and not STAGED.search(done.stderr)
