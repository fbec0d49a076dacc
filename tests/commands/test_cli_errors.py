"""Bad input at the command line, the way a new user meets it: every ``spatialclaw`` command run as its own
process must fail with a non-zero exit code and a short message on stderr that names the problem and what
to do, without a Python traceback (unless ``--debug`` asks for one), and must lose nothing already done."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw.testing import ScriptedProvider, delayed, malformed, unauthorized
from spatialclaw.trajectories.episode_log import load_episode
from tests.bench_runs import one_task_bench_args

SPATIALCLAW = str(Path(sys.executable).with_name("spatialclaw"))


def spatialclaw(
    *args: str, env: dict | None = None, unset: tuple[str, ...] = (), timeout: float = 120
) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("SPATIALCLAW_MODEL", "SPATIALCLAW_DEBUG", *unset)}
    environment.update(env or {})
    return subprocess.run(
        [SPATIALCLAW, *args], capture_output=True, text=True, timeout=timeout, env=environment, stdin=subprocess.DEVNULL
    )


def assert_clean_failure(done: subprocess.CompletedProcess, *needles: str, code: int = 2, max_lines: int = 2) -> None:
    """Exit ``code``, no traceback, at most ``max_lines`` lines on stderr, each needle among them."""
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert 1 <= len(lines) <= max_lines, done.stderr
    for needle in needles:
        assert needle in done.stderr, (needle, done.stderr)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A good image, a corrupt JPEG, a truncated video, a text file and a plain file to put paths under."""
    good = tmp_path / "good.png"
    Image.fromarray(np.full((48, 64, 3), 120, np.uint8)).save(good)
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF" + b"\x00" * 40)
    video = tmp_path / "truncated.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00moov" * 30)
    text = tmp_path / "notes.txt"
    text.write_text("not an image")
    plain = tmp_path / "plain_file"
    plain.write_text("x")
    return {"good": good, "corrupt": corrupt, "video": video, "text": text, "plain": plain}


@pytest.fixture
def closed_url():
    """The URL of a local port that refuses connections (bound, never listening)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def run_args(model: str, out: Path, *inputs: str) -> list[str]:
    return ["run", "--model", model, *inputs, "--question", "How far?", "--max-steps", "2", "--out", str(out)]


# ---------------------------------------------------------------- run: inputs


def test_run_names_a_missing_frame_file(tmp_path, closed_url):
    done = spatialclaw(
        *run_args(f"openai-compat:m@{closed_url}", tmp_path / "ep", "--frames", str(tmp_path / "missing.jpg"))
    )
    assert_clean_failure(done, "missing.jpg", "not found")
    assert not (tmp_path / "ep").exists()


@pytest.mark.parametrize(
    "name, needles",
    [
        ("corrupt", ["corrupt.jpg", "corrupt, truncated or not an image"]),
        ("video", ["truncated.mp4", "re-encode"]),
    ],
)
def test_run_refuses_an_unreadable_file_before_starting_an_episode(tmp_path, files, closed_url, name, needles):
    kind = "--video" if name == "video" else "--frames"
    out = tmp_path / "ep"
    done = spatialclaw(*run_args(f"openai-compat:m@{closed_url}", out, kind, str(files[name])))
    # checked on the host before a kernel starts, naming the file as given
    assert_clean_failure(done, str(files[name]), *needles, code=2, max_lines=1)
    assert not out.exists()


@pytest.mark.parametrize(
    "inputs, needles",
    [
        (["--frames", "TEXT"], ["notes.txt", ".txt", "PNG or JPEG"]),
        (["--video", "GOOD"], ["good.png", "not a video", "--frames"]),
        (["--frames", "VIDEO"], ["truncated.mp4", "a video", "--video"]),
        (["--video", "VIDEO", "--fps", "0"], ["--fps", "0"]),
        (["--video", "VIDEO", "--fps", "-1"], ["--fps", "-1"]),
        (["--video", "VIDEO", "--count", "0"], ["--count", "0"]),
    ],
)
def test_run_rejects_a_wrong_input_before_starting_an_episode(tmp_path, files, closed_url, inputs, needles):
    paths = {"TEXT": files["text"], "GOOD": files["good"], "VIDEO": files["video"]}
    inputs = [str(paths[a]) if a in paths else a for a in inputs]
    done = spatialclaw(*run_args(f"openai-compat:m@{closed_url}", tmp_path / "ep", *inputs))
    assert_clean_failure(done, *needles)
    assert not (tmp_path / "ep").exists()


# ---------------------------------------------------------------- run: models


@pytest.mark.parametrize(
    "spec, needles",
    [
        ("openai", ["'openai'", "no model named", "openai:MODEL"]),
        ("openai:", ["'openai:'", "no model named", "openai:MODEL"]),
        ("gpt-4o", ["'gpt-4o'", "no backend: prefix", "openai:MODEL"]),
        ("openai-compat:x", ["'openai-compat:x'", "MODEL@URL"]),
        ("foo:bar", ["'foo:bar'", "unknown backend 'foo'", "anthropic:MODEL"]),
    ],
)
def test_run_rejects_a_malformed_model_spec(tmp_path, files, spec, needles):
    done = spatialclaw(*run_args(spec, tmp_path / "ep", "--frames", str(files["good"])))
    assert_clean_failure(done, *needles)


@pytest.mark.parametrize(
    "spec, variable", [("openai:gpt-4.1", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY")]
)
def test_a_missing_api_key_names_the_environment_variable(tmp_path, files, spec, variable):
    done = spatialclaw(
        *run_args(spec, tmp_path / "ep", "--frames", str(files["good"])),
        unset=("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"),
    )
    assert_clean_failure(done, variable, "no API key")


def test_a_refused_api_key_ends_the_episode_with_a_message_naming_it(tmp_path, files):
    out = tmp_path / "ep"
    with ScriptedProvider([unauthorized("invalid API key (scripted)")] * 3) as server:
        done = spatialclaw(*run_args(f"openai-compat:m@{server.url}", out, "--frames", str(files["good"])))
    assert_clean_failure(done, "HTTP 401", "invalid API key (scripted)", "OPENAI_API_KEY", code=1, max_lines=1)
    assert load_episode(out).end["reason"] == "error"


@pytest.mark.slow  # the client retries with back-off (about 10 s)
def test_run_against_an_unreachable_server_says_so_after_retrying(tmp_path, files, closed_url):
    out = tmp_path / "ep"
    done = spatialclaw(*run_args(f"openai-compat:m@{closed_url}", out, "--frames", str(files["good"])))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "Connection refused" in last and "Check that the server is up" in last
    assert load_episode(out).end["reason"] == "error"


@pytest.mark.slow  # the client retries with back-off (about 12 s)
def test_run_against_a_server_sending_malformed_bodies_says_so_after_retrying(tmp_path, files):
    out = tmp_path / "ep"
    with ScriptedProvider([malformed()] * 6) as server:
        done = spatialclaw(*run_args(f"openai-compat:m@{server.url}", out, "--frames", str(files["good"])))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "malformed response body" in done.stderr.strip().splitlines()[-1]
    assert load_episode(out).end["reason"] == "error"


def test_an_interrupted_run_leaves_a_loadable_trajectory_marked_interrupted(tmp_path, files):
    out = tmp_path / "ep"
    script = ["```python\nprint('first step', frames[0].size)\n```", delayed(60, "never sent")]
    with ScriptedProvider(script) as server:
        process = subprocess.Popen(
            [SPATIALCLAW, *run_args(f"openai-compat:m@{server.url}", out, "--frames", str(files["good"]))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while server.calls < 2 and time.monotonic() < deadline:  # the second request is in flight
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in stderr
    assert stderr.strip() == "spatialclaw run: interrupted"
    episode = load_episode(out)
    assert episode.complete and episode.end["reason"] == "interrupted"
    cells = [e for e in episode.events if e["type"] == "cell"]
    assert len(cells) == 1 and "first step (64, 48)" in cells[0]["result"]["stdout"]  # the work done is kept


# ---------------------------------------------------------------- bench


def test_bench_unknown_benchmark_lists_the_known_ones(tmp_path, closed_url):
    done = spatialclaw(
        "bench", "--benchmark", "nosuch", "--model", f"openai-compat:m@{closed_url}", "--out", str(tmp_path / "run")
    )
    assert_clean_failure(done, "'nosuch'", "synthetic", "vsi-bench", ".jsonl")


def test_bench_resume_on_a_folder_that_is_not_a_run_touches_nothing(tmp_path, closed_url):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    done = spatialclaw(*one_task_bench_args(f"openai-compat:m@{closed_url}", folder, "--resume"))
    assert_clean_failure(done, str(folder), "not a run", "choose another --out")
    assert [p.name for p in folder.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("spec, needles", [("foo:bar", ["'foo:bar'"]), ("openai:gpt-4.1", ["OPENAI_API_KEY"])])
def test_bench_checks_the_model_before_any_episode(tmp_path, spec, needles):
    done = spatialclaw(*one_task_bench_args(spec, tmp_path / "run"), unset=("OPENAI_API_KEY", "OPENAI_BASE_URL"))
    assert_clean_failure(done, *needles)
    assert not (tmp_path / "run").exists()


def test_bench_records_malformed_replies_per_task_and_says_how_to_retry(tmp_path):
    with ScriptedProvider([malformed()] * 4) as server:
        model = f"openai-compat:m@{server.url}"
        done = spatialclaw(*one_task_bench_args(model, tmp_path / "run", "--model-retries", "2", "--no-progress"))
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "malformed response body" in done.stderr and "--resume" in done.stderr.splitlines()[-1]
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["error"] and "malformed response body" in rows[0]["error"]


# ---------------------------------------------------------------- export, replay, view, rescore, report


def test_export_bad_inputs_and_outputs(tmp_path, files):
    empty = tmp_path / "empty"
    empty.mkdir()
    done = spatialclaw("export", "--format", "nosuch", "--in", str(empty), "--out", str(tmp_path / "x.jsonl"))
    assert done.returncode == 2 and "invalid choice: 'nosuch'" in done.stderr and "'openai'" in done.stderr
    assert "Traceback" not in done.stderr
    done = spatialclaw("export", "--format", "openai", "--in", str(empty), "--out", str(tmp_path / "x.jsonl"))
    assert_clean_failure(done, str(empty), "holds no episode")
    done = spatialclaw(
        "export", "--format", "openai", "--in", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x.jsonl")
    )
    assert_clean_failure(done, "nowhere", "does not exist")
    done = spatialclaw("export", "--format", "openai", "--in", str(empty), "--out", str(files["plain"] / "x.jsonl"))
    assert_clean_failure(done, f"{files['plain']} is a file", "choose another path")
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("command", ["replay", "view"])
def test_replay_and_view_on_a_folder_that_is_not_an_episode(tmp_path, command):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "notes.json").write_text("{}")
    assert_clean_failure(spatialclaw(command, str(folder)), str(folder), "holds no episode", "episode directory")
    assert_clean_failure(spatialclaw(command, str(tmp_path / "nowhere")), "nowhere", "does not exist")
    episode_file = folder / "episode.jsonl"
    assert_clean_failure(spatialclaw(command, str(folder / "notes.json")), "notes.json is a file", "episode directory")
    episode_file.write_text("")
    assert_clean_failure(spatialclaw(command, str(episode_file)), f"{episode_file} is a file", f"holding it, {folder}")


@pytest.mark.parametrize("command", ["rescore", "report"])
def test_rescore_and_report_on_a_folder_that_is_not_a_run(tmp_path, command):
    assert_clean_failure(spatialclaw(command, str(tmp_path)), str(tmp_path), "not a run directory", "spatialclaw bench")


# ---------------------------------------------------------------- session, mcp, demo


def test_session_commands_on_an_unknown_session(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text("print(1)")
    root = ["--root", str(tmp_path / "sessions")]
    assert_clean_failure(
        spatialclaw("session", "exec", "nosuch", "--code", str(cell), *root), "'nosuch'", "session list"
    )
    done = spatialclaw("session", "status", "nosuch", "--json", *root)
    assert done.returncode == 2 and "'nosuch'" in json.loads(done.stdout)["error"]


def test_session_start_rejects_a_non_positive_fps_before_starting_a_kernel(tmp_path, files):
    root = tmp_path / "sessions"
    done = spatialclaw(
        "session", "start", "--video", str(files["video"]), "--fps", "0", "--question", "q", "--root", str(root)
    )
    assert_clean_failure(done, "fps", "positive", "got 0.0")
    assert not root.exists() or not any(root.iterdir())


def test_mcp_help_describes_the_server():
    done = spatialclaw("mcp", "--help")
    assert done.returncode == 0 and "Model Context Protocol" in done.stdout


def test_demo_output_under_a_file_is_named_and_debug_shows_the_traceback(files):
    out = files["plain"] / "episode"
    assert_clean_failure(
        spatialclaw("demo", "--out", str(out)), "Not a directory", str(files["plain"]), "choose another path"
    )
    for debug in (
        spatialclaw("--debug", "demo", "--out", str(out)),
        spatialclaw("demo", "--out", str(out), env={"SPATIALCLAW_DEBUG": "1"}),
    ):
        assert debug.returncode == 2
        assert "Traceback" in debug.stderr and debug.stderr.strip().splitlines()[-1].startswith(
            "spatialclaw demo: Not a directory"
        )


# ---------------------------------------------------------------- the central handler, in-process


def test_a_bug_keeps_its_traceback_and_asks_for_a_report(monkeypatch, capsys, tmp_path):
    from spatialclaw import cli
    from spatialclaw.commands import rescore

    def broken(args):
        raise TypeError("an internal mistake")

    monkeypatch.setattr(rescore, "handle", broken)
    assert cli.main(["rescore", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "TypeError: an internal mistake" in err
    assert err.strip().splitlines()[-1] == (
        "spatialclaw rescore: unexpected TypeError: this is a bug in spatialclaw; "
        "please report it with the traceback above"
    )


def _logged(error: BaseException, debug: bool) -> str:
    import logging

    from spatialclaw.cli import LogFormatter

    try:
        raise error
    except type(error):
        record = logging.LogRecord(
            "spatialclaw.agent.result", logging.ERROR, __file__, 1, "episode %s failed", ("cli",), sys.exc_info()
        )
    return LogFormatter(debug).format(record)


def test_logged_exceptions_are_one_line_for_bad_input_and_keep_the_traceback_for_bugs():
    assert (
        _logged(ValueError("fps must be positive"), debug=False)
        == "episode cli failed: ValueError: fps must be positive"
    )
    assert "Traceback" in _logged(ValueError("fps must be positive"), debug=True)
    bug = _logged(KeyError("oops"), debug=False)
    assert bug.startswith("episode cli failed\nTraceback") and "KeyError: 'oops'" in bug
    assert bug.endswith("this is a bug in spatialclaw; please report it with the traceback above")
