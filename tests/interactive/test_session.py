"""Step-by-step sessions driven through the shell commands, each command its own process, as a coding
agent would drive them: start, exec (including a cell that kills the kernel), answer, status, close."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from PIL import Image

from tests import cli_process as cli
from tests.paths import REPO_ROOT


@pytest.fixture
def frame_files(tmp_path: Path) -> list[Path]:
    """Three small frames with known sizes and colours (red, green, blue)."""
    paths = []
    for index, colour in enumerate([(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
        path = tmp_path / "frames" / f"{index:03d}.png"
        path.parent.mkdir(exist_ok=True)
        Image.new("RGB", (64, 48), colour).save(path)
        paths.append(path)
    return paths


def spatialclaw(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return cli.spatialclaw(*args, env=env, cwd=REPO_ROOT, stdin=stdin)


def one_json(completed: subprocess.CompletedProcess[str]) -> dict:
    """stdout must be exactly one JSON object."""
    text = completed.stdout.strip()
    assert text, f"no output; stderr: {completed.stderr}"
    decoder = json.JSONDecoder()
    value, end = decoder.raw_decode(text)
    assert text[end:].strip() == "", f"more than one JSON object on stdout: {text!r}"
    assert isinstance(value, dict)
    return value


def start(env: dict[str, str], frames: list[Path], *extra: str) -> dict:
    completed = spatialclaw(
        env,
        "session",
        "start",
        "--frames",
        *map(str, frames),
        "--question",
        "Which frame is green?",
        "--choices",
        "the first",
        "the second",
        "the third",
        "--json",
        *extra,
    )
    assert completed.returncode == 0, completed.stderr
    return one_json(completed)


def processes_mentioning(text: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and any(text in part for part in proc.info["cmdline"] or []):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_full_session_through_separate_commands(sessions_env: dict[str, str], frame_files: list[Path]) -> None:
    started = start(sessions_env, frame_files)
    session, prompt = started["session"], Path(started["prompt"])
    directory = Path(sessions_env["SPATIALCLAW_SESSIONS"]) / session
    prompt_text = prompt.read_text()
    assert f"session exec {session}" in prompt_text
    assert "Which frame is green?" in prompt_text and "B. the second" in prompt_text

    first = spatialclaw(
        sessions_env,
        "session",
        "exec",
        session,
        "--code",
        "-",
        "--json",
        stdin="x = 41\nprint(len(frames), frames[1].width, frames[1].height)\nshow(frames[1], label='second')\n",
    )
    assert first.returncode == 0, first.stderr
    step = one_json(first)
    assert step["status"] == "ok" and step["answer"] is None
    assert "3 64 48" in step["text"]
    assert len(step["images"]) == 1
    image_path = Path(step["images"][0])
    assert image_path.is_file() and directory in image_path.parents
    with Image.open(image_path) as shown:
        assert shown.format == "PNG" and shown.size == (256, 192)
        assert shown.convert("RGB").getpixel((10, 10)) == (0, 255, 0)

    status = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert status["state"] == "running" and status["steps"] == 1
    daemon_pid, first_kernel = status["pid"], status["kernel_pid"]
    assert psutil.pid_exists(daemon_pid) and psutil.pid_exists(first_kernel)

    crash = one_json(
        spatialclaw(sessions_env, "session", "exec", session, "--code", "-", "--json", stdin="import os\nos._exit(1)\n")
    )
    assert crash["status"] == "crashed"
    assert "restarted" in crash["text"] and "x" in crash["text"]

    after = spatialclaw(sessions_env, "session", "exec", session, "--code", "-", stdin="print(x + 1)\n")
    assert after.returncode == 0 and after.stdout.splitlines()[0] == "42"
    status = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert status["steps"] == 3 and status["pid"] == daemon_pid
    assert status["kernel_pid"] != first_kernel and not psutil.pid_exists(first_kernel)

    rejected = spatialclaw(sessions_env, "session", "answer", session, "Z", "--json")
    assert rejected.returncode == 1
    assert "not one of the options" in one_json(rejected)["text"]

    accepted = spatialclaw(sessions_env, "session", "answer", session, "B", "--json")
    assert accepted.returncode == 0
    outcome = one_json(accepted)
    assert outcome["answered"] is True and outcome["answer"] == "B"
    status = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert status["state"] == "answered" and status["answer"] == "B" and status["steps"] == 5

    kernel_pid = status["kernel_pid"]
    closed = spatialclaw(sessions_env, "session", "close", session, "--json")
    assert closed.returncode == 0, closed.stderr
    assert one_json(closed)["closed"] is True
    assert not psutil.pid_exists(daemon_pid) or psutil.Process(daemon_pid).status() == psutil.STATUS_ZOMBIE
    assert not psutil.pid_exists(kernel_pid)
    assert processes_mentioning(str(directory)) == []
    assert not (directory / "daemon.sock").exists()

    from spatialclaw.trajectories.episode_log import load_episode

    episode = load_episode(directory)
    assert episode.complete and episode.end["reason"] == "answered"
    assert episode.answer == "B"
    cells = episode.cells()
    assert [result.status for _, result in cells] == ["ok", "crashed", "ok", "error", "ok"]
    assert cells[0][1].images[0].png == image_path.read_bytes()
    assert episode.header["model"] == "session" and episode.task["question"] == "Which frame is green?"

    final = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert final["state"] == "closed" and final["answered"] is True and final["steps"] == 5
    assert final["answer"] == "B" and final["end_reason"] == "answered"


def test_cell_errors_are_observations_and_human_output_lists_images(
    sessions_env: dict[str, str], frame_files: list[Path], tmp_path: Path
) -> None:
    session = start(sessions_env, frame_files)["session"]
    try:
        cell = tmp_path / "cell.py"
        cell.write_text("ratio = frames[0].width / 0\n")
        failed = spatialclaw(sessions_env, "session", "exec", session, "--code", str(cell))
        assert failed.returncode == 0
        assert "ZeroDivisionError" in failed.stdout and "line 1" in failed.stdout

        shown = spatialclaw(
            sessions_env, "session", "exec", session, "--code", "-", stdin="show(frames[0], frames[2])\n"
        )
        lines = shown.stdout.splitlines()
        assert "images:" in lines
        listed = [Path(line.strip()) for line in lines[lines.index("images:") + 1 :]]
        assert len(listed) == 2 and all(path.suffix == ".png" and path.is_file() for path in listed)
    finally:
        spatialclaw(sessions_env, "session", "close", session)


def test_step_budget_is_enforced_but_answering_is_always_allowed(
    sessions_env: dict[str, str], frame_files: list[Path]
) -> None:
    session = start(sessions_env, frame_files, "--max-steps", "1")["session"]
    try:
        assert spatialclaw(sessions_env, "session", "exec", session, "--code", "-", stdin="print(1)\n").returncode == 0
        refused = spatialclaw(sessions_env, "session", "exec", session, "--code", "-", "--json", stdin="print(2)\n")
        assert refused.returncode == 2
        assert "step budget of 1" in one_json(refused)["error"]
        answered = one_json(spatialclaw(sessions_env, "session", "answer", session, "the second", "--json"))
        assert answered["answer"] == "B"
        again = spatialclaw(sessions_env, "session", "exec", session, "--code", "-", "--json", stdin="print(3)\n")
        assert again.returncode == 2 and "already answered" in one_json(again)["error"]
    finally:
        spatialclaw(sessions_env, "session", "close", session)


def test_bad_requests_get_clear_errors(sessions_env: dict[str, str], frame_files: list[Path], tmp_path: Path) -> None:
    unknown = spatialclaw(
        sessions_env, "session", "exec", "no-such-session", "--code", "-", "--json", stdin="print(1)\n"
    )
    assert unknown.returncode == 2
    assert "no session 'no-such-session'" in one_json(unknown)["error"]

    missing = spatialclaw(
        sessions_env, "session", "start", "--frames", str(tmp_path / "nope.png"), "--question", "q", "--json"
    )
    assert missing.returncode == 2 and "nope.png" in one_json(missing)["error"]

    fps_on_images = spatialclaw(
        sessions_env, "session", "start", "--frames", str(frame_files[0]), "--question", "q", "--fps", "2"
    )
    assert fps_on_images.returncode == 2 and "--fps" in fps_on_images.stderr

    session = start(sessions_env, frame_files)["session"]
    spatialclaw(sessions_env, "session", "close", session)
    closed = spatialclaw(sessions_env, "session", "exec", session[:12], "--code", "-", "--json", stdin="print(1)\n")
    assert closed.returncode == 2 and "is closed" in one_json(closed)["error"]
    status = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert status["state"] == "closed"


def test_a_killed_daemon_is_reported_dead_and_close_reaps_its_kernel(
    sessions_env: dict[str, str], frame_files: list[Path]
) -> None:
    session = start(sessions_env, frame_files)["session"]
    status = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    daemon_pid, kernel_pid = status["pid"], status["kernel_pid"]
    os.kill(daemon_pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while (
        psutil.pid_exists(daemon_pid)
        and psutil.Process(daemon_pid).status() != psutil.STATUS_ZOMBIE
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)

    dead = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert dead["state"] == "dead"
    failed = spatialclaw(sessions_env, "session", "exec", session, "--code", "-", "--json", stdin="print(1)\n")
    assert failed.returncode == 2
    assert "dead" in one_json(failed)["error"] and "daemon.log" in one_json(failed)["error"]

    closed = spatialclaw(sessions_env, "session", "close", session, "--json")
    assert closed.returncode == 0, closed.stdout + closed.stderr
    assert not psutil.pid_exists(kernel_pid) or psutil.Process(kernel_pid).status() == psutil.STATUS_ZOMBIE


def test_the_docs_example_runs_as_written(tmp_path: Path) -> None:
    from tests.doc_examples import code_blocks

    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        SPATIALCLAW_KERNEL_MEMORY_MB="0",
    )
    env.pop("SPATIALCLAW_SESSIONS", None)
    script = code_blocks("sessions.md", "Try it", "bash")[0]
    shell = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert shell.returncode == 0, shell.stderr
    assert "centroid x per frame: [14.5, 44.5]" in shell.stdout
    assert "state: answered" in shell.stdout and "closed after 2 step(s)" in shell.stdout

    env["SPATIALCLAW_SESSIONS"] = str(tmp_path / "python-sessions")
    python = subprocess.run(
        [sys.executable, "-c", code_blocks("sessions.md", "From Python", "python")[0]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert python.returncode == 0, python.stderr
    assert python.stdout.split() == ["2", "True", "closed"]


def test_vlm_side_questions_reach_the_session_model_and_are_logged(
    sessions_env: dict[str, str], frame_files: list[Path]
) -> None:
    from spatialclaw.testing.provider_server import ScriptedProvider
    from spatialclaw.trajectories.episode_log import load_episode

    with ScriptedProvider(["It is a plain green square."]) as server:
        session = start(sessions_env, frame_files, "--vlm-model", f"openai-compat:scripted@{server.url}")["session"]
        try:
            step = one_json(
                spatialclaw(
                    sessions_env,
                    "session",
                    "exec",
                    session,
                    "--code",
                    "-",
                    "--json",
                    stdin="reply = vlm.ask(frames[1], 'What is in this image?')\nprint(reply)\n",
                )
            )
        finally:
            spatialclaw(sessions_env, "session", "close", session)
        requests = list(server.requests)
    assert step["status"] == "ok", step["text"]
    assert step["text"].splitlines()[0] == "It is a plain green square."
    assert (
        len(requests) == 1
        and "What is in this image?" in json.dumps(requests[0])
        and "image_url" in json.dumps(requests[0])
    )

    episode = load_episode(Path(sessions_env["SPATIALCLAW_SESSIONS"]) / session)
    calls = episode.of_type("model_call")
    assert [c["purpose"] for c in calls] == ["vlm.ask"] and calls[0]["step"] == 1
    assert calls[0]["response"]["text"] == "It is a plain green square."
    assert episode.header["config"]["vlm_model"].startswith("openai-compat:scripted@")
    assert episode.end["usage"]["completion_tokens"] == calls[0]["usage"]["completion_tokens"] > 0


def test_vlm_without_a_model_says_how_to_get_one(sessions_env: dict[str, str], frame_files: list[Path]) -> None:
    session = start(sessions_env, frame_files)["session"]
    try:
        step = one_json(
            spatialclaw(
                sessions_env, "session", "exec", session, "--code", "-", "--json", stdin="vlm.ask(frames[0], 'what?')\n"
            )
        )
    finally:
        spatialclaw(sessions_env, "session", "close", session)
    assert step["status"] == "error" and "VLMError" in step["text"] and "not configured" in step["text"]
    prompt = (Path(sessions_env["SPATIALCLAW_SESSIONS"]) / session / "prompt.md").read_text()
    assert "not available in this session" in prompt and "--vlm-model" in prompt


def test_video_sessions_sample_frames_and_are_listed(sessions_env: dict[str, str], tmp_path: Path) -> None:
    import cv2
    import numpy as np

    video = tmp_path / "clip.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
    for index in range(20):
        writer.write(np.full((48, 64, 3), index * 10, np.uint8))
    writer.release()

    started = spatialclaw(
        sessions_env,
        "session",
        "start",
        "--video",
        str(video),
        "--count",
        "4",
        "--question",
        "How long is the clip?",
        "--answer-type",
        "number",
        "--json",
    )
    assert started.returncode == 0, started.stderr
    session = one_json(started)["session"]
    try:
        step = one_json(
            spatialclaw(
                sessions_env,
                "session",
                "exec",
                session,
                "--code",
                "-",
                "--json",
                stdin="print(len(frames), frames[0].index, frames[-1].index, meta.fps)\n",
            )
        )
        assert step["text"].splitlines()[0] == "4 0 19 10.0"
        listed = one_json(spatialclaw(sessions_env, "session", "list", "--json"))["sessions"]
        assert [(s["session"], s["state"], s["steps"]) for s in listed] == [(session, "running", 1)]
        answered = one_json(spatialclaw(sessions_env, "session", "answer", session, "about 1.9 s", "--json"))
        assert answered["answer"] == 1.9
    finally:
        spatialclaw(sessions_env, "session", "close", session)


def test_a_session_that_cannot_start_says_why_and_is_recorded_as_failed(
    sessions_env: dict[str, str], frame_files: list[Path]
) -> None:
    failed = spatialclaw(
        sessions_env,
        "session",
        "start",
        "--frames",
        str(frame_files[0]),
        "--question",
        "q",
        "--vlm-model",
        "nonsense:model",
        "--json",
    )
    assert failed.returncode == 2
    error = one_json(failed)["error"]
    assert "failed to start" in error and "cannot read model spec 'nonsense:model'" in error and "daemon.log" in error
    listed = one_json(spatialclaw(sessions_env, "session", "list", "--json"))["sessions"]
    assert len(listed) == 1 and listed[0]["state"] == "closed" and listed[0]["end_reason"] == "error"
    assert processes_mentioning(listed[0]["directory"]) == []


def wait_gone(pids: list[int], seconds: float = 30.0) -> None:
    for pid in pids:
        try:
            psutil.Process(pid).wait(seconds)
        except psutil.NoSuchProcess:
            pass


def test_status_is_busy_during_a_long_cell_and_timeouts_interrupt_it(
    sessions_env: dict[str, str], frame_files: list[Path]
) -> None:
    session = start(sessions_env, frame_files)["session"]
    try:
        long_cell = subprocess.Popen(
            [sys.executable, "-m", "spatialclaw.cli", "session", "exec", session, "--code", "-", "--json"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=sessions_env,
            cwd=REPO_ROOT,
        )
        long_cell.stdin.write("import time\ntime.sleep(4)\nprint('slept')\n")
        long_cell.stdin.close()
        states = []
        deadline = time.monotonic() + 20
        while long_cell.poll() is None and time.monotonic() < deadline:
            states.append(one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))["state"])
            if "busy" in states:
                break
            time.sleep(0.2)
        output = json.loads(long_cell.stdout.read())
        long_cell.wait(30)
        assert "busy" in states
        assert output["status"] == "ok" and output["text"].startswith("slept")

        stuck = one_json(
            spatialclaw(
                sessions_env,
                "session",
                "exec",
                session,
                "--code",
                "-",
                "--timeout",
                "1",
                "--json",
                stdin="while True:\n    pass\n",
            )
        )
        assert stuck["status"] == "timeout" and "longer than 1 s" in stuck["text"]
        assert one_json(
            spatialclaw(sessions_env, "session", "exec", session, "--code", "-", "--json", stdin="print(6 * 7)\n")
        )["text"].startswith("42")
    finally:
        spatialclaw(sessions_env, "session", "close", session)


def test_an_idle_session_closes_itself(sessions_env: dict[str, str], frame_files: list[Path]) -> None:
    session = start(sessions_env, frame_files, "--idle-timeout", "1")["session"]
    directory = Path(sessions_env["SPATIALCLAW_SESSIONS"]) / session
    daemon = json.loads((directory / "daemon.json").read_text())
    wait_gone([daemon["pid"], daemon["kernel_pid"]])
    status = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert status["state"] == "closed" and status["end_reason"] == "idle"
    assert processes_mentioning(str(directory)) == []


def test_sigterm_closes_the_session_cleanly(sessions_env: dict[str, str], frame_files: list[Path]) -> None:
    session = start(sessions_env, frame_files)["session"]
    directory = Path(sessions_env["SPATIALCLAW_SESSIONS"]) / session
    daemon = json.loads((directory / "daemon.json").read_text())
    os.kill(daemon["pid"], signal.SIGTERM)
    wait_gone([daemon["pid"], daemon["kernel_pid"]])
    status = one_json(spatialclaw(sessions_env, "session", "status", session, "--json"))
    assert status["state"] == "closed" and status["end_reason"] == "interrupted"
    assert processes_mentioning(str(directory)) == []


def test_input_paths_expand_globs_and_folders_and_reject_mixtures(tmp_path: Path, frame_files: list[Path]) -> None:
    from spatialclaw.input_paths import expand_paths, frame_spec

    folder = frame_files[0].parent
    assert expand_paths([str(folder / "*.png")]) == [str(p) for p in frame_files]
    assert expand_paths([folder]) == [str(p) for p in frame_files]
    assert frame_spec([frame_files[2], frame_files[0]]).paths == [
        str(frame_files[2].resolve()),
        str(frame_files[0].resolve()),
    ]
    (tmp_path / "clip.mp4").write_bytes(b"")
    with pytest.raises(ValueError, match="one video on its own"):
        frame_spec([tmp_path / "clip.mp4", frame_files[0]])
    with pytest.raises(ValueError, match="fps and count sample a video"):
        frame_spec(frame_files, fps=2)
    with pytest.raises(FileNotFoundError, match="no file matches"):
        expand_paths([str(tmp_path / "missing-*.png")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no images"):
        expand_paths([tmp_path / "empty"])
