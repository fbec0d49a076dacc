"""``spatialclaw mcp`` driven by the official MCP SDK's stdio client, as an IDE or terminal agent would."""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path

import anyio
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from PIL import Image

from tests.paths import REPO_ROOT


@pytest.fixture
def frame_files(tmp_path: Path) -> list[Path]:
    paths = []
    for index, colour in enumerate([(200, 30, 30), (30, 200, 30)]):
        path = tmp_path / "frames" / f"{index}.png"
        path.parent.mkdir(exist_ok=True)
        Image.new("RGB", (80, 60), colour).save(path)
        paths.append(path)
    return paths


def server_parameters(tmp_path: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "spatialclaw.cli", "mcp", *extra],
        env={
            "SPATIALCLAW_SESSIONS": str(tmp_path / "sessions"),
            "SPATIALCLAW_KERNEL_MEMORY_MB": "0",
            "SPATIALCLAW_CACHE": os.environ["SPATIALCLAW_CACHE"],
        },
        cwd=str(REPO_ROOT),
    )


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def session_id_from(text: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith("session: "))
    return line.split(": ", 1)[1].strip()


def test_mcp_client_runs_a_session_over_stdio(tmp_path: Path, frame_files: list[Path]) -> None:
    async def scenario() -> dict:
        seen: dict = {}
        async with stdio_client(server_parameters(tmp_path)) as (read, write), ClientSession(read, write) as client:
            initialised = await client.initialize()
            seen["server"] = initialised.server_info.name
            tools = await client.list_tools()
            seen["tools"] = sorted(tool.name for tool in tools.tools)
            start_schema = next(t for t in tools.tools if t.name == "session_start").input_schema
            seen["start_params"] = sorted(start_schema["properties"])

            started = await client.call_tool(
                "session_start",
                {
                    "question": "Which frame is green?",
                    "frames": [str(p) for p in frame_files],
                    "choices": ["first", "second"],
                },
            )
            assert not started.is_error, text_of(started)
            seen["start_text"] = text_of(started)
            session = session_id_from(seen["start_text"])
            seen["session"] = session

            ran = await client.call_tool(
                "session_exec", {"session": session, "code": "x = frames[1]\nprint(x.width, x.height)\nshow(x)"}
            )
            assert not ran.is_error, text_of(ran)
            seen["exec_text"] = text_of(ran)
            seen["images"] = [(b.mime_type, base64.b64decode(b.data)) for b in ran.content if b.type == "image"]

            failed = await client.call_tool("session_exec", {"session": session, "code": "undefined_name + 1"})
            seen["error_text"] = text_of(failed)

            wrong = await client.call_tool("session_answer", {"session": session, "value": "C"})
            seen["wrong_answer"] = text_of(wrong)
            answered = await client.call_tool("session_answer", {"session": session, "value": "B"})
            seen["answer_text"] = text_of(answered)

            status = await client.call_tool("session_status", {"session": session})
            seen["status"] = text_of(status)
            state = json.loads(seen["status"])
            seen["daemon_pid"], seen["kernel_pid"] = state["pid"], state["kernel_pid"]

            closed = await client.call_tool("session_close", {"session": session})
            seen["closed"] = json.loads(text_of(closed))

            unknown = await client.call_tool("session_exec", {"session": "nope", "code": "1"})
            seen["unknown"] = (unknown.is_error, text_of(unknown))
        return seen

    seen = anyio.run(scenario)
    assert seen["server"] == "spatialclaw"
    assert seen["tools"] == ["session_answer", "session_close", "session_exec", "session_start", "session_status"]
    assert {"question", "frames", "video", "choices"} <= set(seen["start_params"])
    assert "prompt file: " in seen["start_text"] and "B. second" in seen["start_text"]
    assert "session_exec" in seen["start_text"] and seen["session"] in seen["start_text"]

    assert "80 60" in seen["exec_text"]
    assert len(seen["images"]) == 1
    mime, png = seen["images"][0]
    assert mime == "image/png"
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (320, 240) and image.convert("RGB").getpixel((20, 20)) == (30, 200, 30)

    assert "NameError" in seen["error_text"] and "undefined_name" in seen["error_text"]
    assert "not one of the options" in seen["wrong_answer"]
    assert "answer submitted: 'B'" in seen["answer_text"]
    assert '"state": "answered"' in seen["status"]
    assert seen["closed"]["closed"] is True
    assert seen["unknown"][0] is True and "no session 'nope'" in seen["unknown"][1]
    for pid in (seen["daemon_pid"], seen["kernel_pid"]):
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE

    from spatialclaw.trajectories.episode_log import load_episode

    episode = load_episode(tmp_path / "sessions" / seen["session"])
    assert episode.complete and episode.answer == "B"


def test_sessions_left_open_are_closed_when_the_client_disconnects(tmp_path: Path, frame_files: list[Path]) -> None:
    async def scenario() -> tuple[str, int, int]:
        async with stdio_client(server_parameters(tmp_path)) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            started = await client.call_tool("session_start", {"question": "q", "frames": [str(frame_files[0])]})
            session = session_id_from(text_of(started))
            state = json.loads(text_of(await client.call_tool("session_status", {"session": session})))
            return session, state["pid"], state["kernel_pid"]

    session, daemon_pid, kernel_pid = anyio.run(scenario)
    for pid in (daemon_pid, kernel_pid):
        try:
            psutil.Process(pid).wait(30)
        except psutil.NoSuchProcess:
            pass
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE

    from spatialclaw.trajectories.episode_log import load_episode

    episode = load_episode(tmp_path / "sessions" / session)
    assert episode.complete and episode.end["reason"] == "closed"


def test_the_python_client_of_the_mcp_guide_runs_as_written(tmp_path: Path) -> None:
    import subprocess

    from tests.doc_examples import code_blocks

    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        SPATIALCLAW_SESSIONS=str(tmp_path / "sessions"),
        SPATIALCLAW_KERNEL_MEMORY_MB="0",
    )
    completed = subprocess.run(
        [sys.executable, "-c", code_blocks("mcp.md", "A client in Python", "python")[0]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "['session_start', 'session_exec', 'session_answer', 'session_status', 'session_close']"
    assert lines[1:4] == [
        "text step 1 (ok)",
        "[ 30. 200.  30.]",
        "[1 image(s) attached: 1: frame 0 [4x upscale of 80x60] (320x240)]",
    ]
    assert lines[4].startswith("image image/png, ")
    assert "[answer submitted: 'B']" in lines
    assert len(list((tmp_path / "sessions").iterdir())) == 1, "the example keeps its sessions in ./sessions"


def test_the_server_operator_chooses_the_sandbox_and_a_client_cannot(tmp_path: Path, frame_files: list[Path]) -> None:
    async def scenario() -> tuple[dict, list[str], str]:
        async with (
            stdio_client(server_parameters(tmp_path, "--sandbox", "off")) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            tools = await client.list_tools()
            start_params = sorted(next(t for t in tools.tools if t.name == "session_start").input_schema["properties"])
            started = await client.call_tool(
                "session_start", {"question": "Which frame is green?", "frames": [str(frame_files[0])]}
            )
            assert not started.is_error, text_of(started)
            session = session_id_from(text_of(started))
            status = json.loads(text_of(await client.call_tool("session_status", {"session": session})))
            refused = await client.call_tool(
                "session_start", {"question": "q?", "frames": [str(frame_files[0])], "max_steps": 0}
            )
            await client.call_tool("session_close", {"session": session})
            return status, start_params, text_of(refused)

    status, start_params, refused = anyio.run(scenario)
    assert status["sandboxed"] is False
    assert "sandbox" not in start_params
    assert "max_steps (--max-steps) must be a whole number of at least 1, got 0" in refused


def test_unreadable_inputs_are_refused_naming_the_file_before_a_kernel_starts(
    tmp_path: Path, frame_files: list[Path]
) -> None:
    """As ``spatialclaw session start``: the inputs are opened on the host first, so a corrupt image or an
    empty video is a tool error naming the client's file, and no session (daemon, kernel) is started."""
    corrupt = tmp_path / "frames" / "corrupt.png"
    corrupt.write_bytes(b"not a png at all")
    empty = tmp_path / "clip.mp4"
    empty.write_bytes(b"")

    async def scenario() -> list[tuple[bool, str]]:
        async with stdio_client(server_parameters(tmp_path)) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            refused = []
            for arguments in (
                {"frames": [str(frame_files[0]), str(corrupt)]},
                {"video": str(empty)},
                {"inputs": [{"frames": [str(frame_files[0])]}, {"video": str(empty), "count": 4}]},
            ):
                result = await client.call_tool("session_start", {"question": "Which is red?", **arguments})
                refused.append((result.is_error, text_of(result)))
            return refused

    refused = anyio.run(scenario)
    assert [is_error for is_error, _ in refused] == [True, True, True], refused
    assert f"cannot read image {corrupt}" in refused[0][1] and "corrupt" in refused[0][1]
    for _, text in refused[1:]:
        assert f"cannot read video {empty}: the file is empty (0 bytes)" in text, text
    sessions = tmp_path / "sessions"
    assert not sessions.exists() or not any(sessions.iterdir()), "no session was started for bad inputs"
