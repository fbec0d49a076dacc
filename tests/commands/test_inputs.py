"""Several inputs with their source indices, previews of them, and relative paths resolved once.

Every command runs as its own process from a working directory that is not the repository root, with
relative paths, as a person or a harness would type them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw import Kernel
from spatialclaw.testing import ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from tests import cli_process as cli
from tests.agent_helpers import cell
from tests.cli_process import cli_env

PRINT_INPUTS = (
    "print([(v.sources[0].rsplit('/', 1)[-1], v.indices) for v in videos], frames.indices == videos[0].indices)"
)


def spatialclaw(
    cwd: Path, *args: str, stdin: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess[str]:
    sessions = {"SPATIALCLAW_SESSIONS": str(cwd / "sessions"), "SPATIALCLAW_KERNEL_MEMORY_MB": "0"}
    return cli.spatialclaw(*args, env=cli_env(**sessions, **(env or {})), cwd=cwd, stdin=stdin)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """Two short videos (20 and 12 frames, brightness = 10 x frame number) and two key-frame images."""
    import cv2

    for name, length in (("kitchen.mp4", 20), ("hall.mp4", 12)):
        writer = cv2.VideoWriter(str(tmp_path / name), cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
        for index in range(length):
            writer.write(np.full((48, 64, 3), index * 10, np.uint8))
        writer.release()
    for name in ("key16.png", "key32.png"):
        Image.new("RGB", (64, 48), (200, 30, 30)).save(tmp_path / name)
    return tmp_path


def test_a_two_video_session_reaches_the_kernel_as_two_inputs_with_their_indices(workspace):
    question = "Which room is brighter?\nA. the kitchen\nB. the hall"
    started = spatialclaw(
        workspace,
        "session",
        "start",
        "--video",
        "kitchen.mp4",
        "--video",
        "hall.mp4",
        "--indices",
        "2",
        "5",
        "7",
        "--count",
        "3",
        "--question",
        question,
        "--json",
    )
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    try:
        step = json.loads(
            spatialclaw(
                workspace, "session", "exec", info["session"], "--code", "-", "--json", stdin=PRINT_INPUTS
            ).stdout
        )
        assert step["text"].splitlines()[0] == "[('kitchen.mp4', [0, 10, 19]), ('hall.mp4', [2, 5, 7])] True"
        prompt = Path(info["prompt"]).read_text()
        assert "Input 1 (`videos[0]` = `frames`): the video kitchen.mp4, 3 frames sampled evenly." in prompt
        assert "Input 2 (`videos[1]`): the video hall.mp4, source frames 2, 5, 7." in prompt
        assert prompt.count("the kitchen") == 1 and "A. the kitchen" in prompt  # the options, once
        # the inputs can be seen before a cell is spent: a contact sheet and one PNG per frame
        assert Path(info["preview"]).is_file() and Image.open(info["preview"]).width > 64
        assert [Path(p).name for p in info["preview_frames"]][-3:] == [
            "input2_frame2.png",
            "input2_frame5.png",
            "input2_frame7.png",
        ]
        assert all(Path(p).is_file() for p in info["preview_frames"])
        listed = spatialclaw(workspace, "session", "list")
        assert listed.stdout.strip().count("\n") == 0  # one line per session, the question on one line
        assert "Which room is brighter?" in listed.stdout
    finally:
        spatialclaw(workspace, "session", "close", info["session"])


def test_run_takes_several_inputs_key_frame_indices_and_a_sidecar_and_a_relative_out(workspace):
    (workspace / "hall.json").write_text(json.dumps({"indices": [1, 3]}))
    script = [cell(PRINT_INPUTS + "\nprint(frames.times)"), cell("answer('A')")]
    with ScriptedProvider(script) as server:
        done = spatialclaw(
            workspace,
            "run",
            "--model",
            f"openai-compat:scripted@{server.url}",
            "--frames",
            "key16.png",
            "key32.png",
            "--indices",
            "16",
            "32",
            "--times",
            "0.533",
            "1.067",
            "--video",
            "hall.mp4",
            "--sidecar",
            "hall.json",
            "--question",
            "Is the red frame from the hall? Options: A: yes, B: no",
            "--out",
            "runs/ep0",
        )
    assert done.returncode == 0, done.stderr
    episode = load_episode(workspace / "runs" / "ep0")  # resolved once, against the working directory
    first = episode.cells()[0][1]
    assert first.stdout.splitlines() == ["[('key16.png', [16, 32]), ('hall.mp4', [1, 3])] True", "[0.533, 1.067]"]
    task = episode.of_type("task")[0]["task"]
    assert task["choices"] == ["yes", "no"] and task["answer_type"] == "multiple_choice"
    assert any("read from the question text" in note for note in task["inferred"])
    assert not (workspace / "runs" / "ep0" / "workdir" / "runs").exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--video", "hall.mp4", "--fps", "1", "--count", "2"],
            "--fps and --count both choose how a video is sampled; give one of them",
        ),
        (["--frames", "key16.png", "key32.png", "--indices", "16"], "--indices gives 1 frame numbers for 2 image(s)"),
        (["--indices", "3", "--frames", "key16.png"], "put it after --frames or --video"),
        (["--video", "hall.mp4", "--times", "0.5"], "--times is for key-frame images"),
    ],
)
def test_conflicting_input_options_are_rejected_up_front_with_one_line(workspace, args, message):
    for command in (["run", "--model", "openai-compat:m@http://127.0.0.1:9/v1", "--out", "ep"], ["session", "start"]):
        done = spatialclaw(workspace, *command, *args, "--question", "q")
        assert done.returncode == 2
        assert message in done.stderr and len(done.stderr.strip().splitlines()) <= 2, (
            done.stderr
        )  # argparse adds a usage line
    assert not (workspace / "ep").exists() and not (workspace / "sessions").exists()


def test_a_relative_kernel_workdir_is_resolved_once_against_the_callers_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with Kernel(workdir="runs/ep0/work") as kernel:
        assert kernel.workdir == tmp_path / "runs" / "ep0" / "work"
        assert kernel.execute("import os; print(os.getcwd())").stdout.strip() == str(tmp_path / "runs" / "ep0" / "work")
    with Kernel(workdir="runs/ep1/work", sandbox="off") as kernel:  # an unsandboxed kernel may move on reset
        kernel.reset(workdir="runs/ep2/work")
        assert kernel.execute("import os; print(os.getcwd())").stdout.strip() == str(tmp_path / "runs" / "ep2" / "work")
    assert not list(tmp_path.glob("runs/*/work/runs"))
