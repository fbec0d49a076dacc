"""A harness that drives a session can give its model's words with each cell (``session exec
--reasoning`` / MCP ``reasoning``); the session then exports as SFT rows in the agent's own form, with
failed cells masked. Without them export says why it skips the session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.agent.prompting import system_prompt
from spatialclaw.cli import main
from spatialclaw.export import export_episodes
from spatialclaw.interactive.session import start_session
from spatialclaw.task import FrameSpec, Task
from tests.paths import REPO_ROOT


@pytest.fixture
def frames(tmp_path: Path) -> list[Path]:
    paths = []
    for index, colour in enumerate([(255, 0, 0), (0, 255, 0)]):
        path = tmp_path / f"{index}.png"
        Image.new("RGB", (64, 48), colour).save(path)
        paths.append(path)
    return paths


@pytest.fixture
def root(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("SPATIALCLAW_KERNEL_MEMORY_MB", "0")
    return tmp_path / "sessions"


def _task(frames: list[Path]) -> Task:
    return Task(
        question="Which frame is green?",
        inputs=[FrameSpec.images(frames)],
        choices=["the first", "the second"],
        ground_truth="B",
        task_id="green",
    )


def test_driver_turns_export_as_agent_rows(root, frames, tmp_path):
    session = start_session(_task(frames), root=root, max_steps=5)
    try:
        session.execute(
            "print([f.array[0, 0].tolist() for f in frames])\nshow(frames[1])", reasoning="Compare the colours."
        )
        session.execute("1 / 0", reasoning="Check the division.")
        session.answer("B", reasoning="The second frame is green.")
    finally:
        session.close()
    report = export_episodes("openai", [session.directory], tmp_path / "sft.jsonl", system="full")
    assert report.exported == 1, report.summary()
    messages = json.loads((tmp_path / "sft.jsonl").read_text())["messages"]
    assert [m["role"] for m in messages] == ["system", "user"] + ["assistant", "user"] * 2 + ["assistant"]
    assert messages[0]["content"] == system_prompt(5, api_detail="full")
    assistants = [m for m in messages if m["role"] == "assistant"]
    assert assistants[0]["content"] == (
        "Compare the colours.\n```python\nprint([f.array[0, 0].tolist() for f in frames])\nshow(frames[1])\n```"
    )
    assert assistants[2]["content"] == "The second frame is green.\n```python\nanswer('B')\n```"
    assert [m["weight"] for m in assistants] == [1, 0, 1], "the failed cell is masked"
    observation = messages[3]["content"]
    assert "[[255, 0, 0], [0, 255, 0]]" in observation[0]["text"] and observation[0]["text"].startswith("Step 1 of 5")
    assert sum(1 for part in observation if part["type"] == "image_url") == 1
    assert "ZeroDivisionError" in messages[5]["content"][0]["text"]
    task_images = [part for part in messages[1]["content"] if part["type"] == "image_url"]
    assert len(task_images) == 2, "the frame previews go with the task, as the agent sends them"


def test_turns_before_the_first_reasoning_stay_in_the_history(root, frames, tmp_path):
    session = start_session(_task(frames), root=root, max_steps=5)
    try:
        session.execute("x = 2")
        session.answer("B", reasoning="Done.")
    finally:
        session.close()
    export_episodes("openai", [session.directory], tmp_path / "sft.jsonl")
    messages = json.loads((tmp_path / "sft.jsonl").read_text())["messages"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == [
        "```python\nx = 2\n```",
        "Done.\n```python\nanswer('B')\n```",
    ]


def test_sessions_without_reasoning_are_skipped_with_the_reason(root, frames, tmp_path, capsys):
    session = start_session(_task(frames), root=root, max_steps=5)
    try:
        session.execute("print(1)")
        session.answer("B")
    finally:
        session.close()
    code = main(["export", "--format", "trl", "--in", str(session.directory), "--out", str(tmp_path / "trl")])
    assert code == 1
    assert "session without driver turns (give session exec --reasoning): 1" in capsys.readouterr().err
    assert not (tmp_path / "trl").exists()


def test_reasoning_must_be_text(root, frames):
    from spatialclaw.interactive.session_dir import SessionError

    session = start_session(_task(frames), root=root, max_steps=5)
    try:
        with pytest.raises(SessionError, match="reasoning must be text"):
            session.request({"op": "exec", "code": "print(1)", "reasoning": ["not", "text"]})
        assert session.status()["steps"] == 0, "a refused request runs nothing"
    finally:
        session.close()


def test_mcp_tools_take_the_reasoning(tmp_path, frames):
    import os
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "spatialclaw.cli", "mcp"],
        cwd=str(REPO_ROOT),
        env={
            "SPATIALCLAW_SESSIONS": str(tmp_path / "sessions"),
            "SPATIALCLAW_KERNEL_MEMORY_MB": "0",
            "SPATIALCLAW_CACHE": os.environ.get("SPATIALCLAW_CACHE", str(tmp_path / "cache")),
        },
    )

    async def scenario() -> None:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            started = await client.call_tool(
                "session_start",
                {"question": "Which frame is green? A. the first B. the second", "frames": [str(p) for p in frames]},
            )
            text = "\n".join(block.text for block in started.content if block.type == "text")
            session = next(line for line in text.splitlines() if line.startswith("session: ")).split(": ", 1)[1].strip()
            await client.call_tool(
                "session_exec",
                {"session": session, "code": "print(frames[1].array[0, 0])", "reasoning": "Look at the second frame."},
            )
            await client.call_tool("session_answer", {"session": session, "value": "B", "reasoning": "It is green."})
            await client.call_tool("session_close", {"session": session})

    anyio.run(scenario)
    report = export_episodes("openai", [tmp_path / "sessions"], tmp_path / "sft.jsonl")
    assert report.exported == 1, report.summary()
    messages = json.loads((tmp_path / "sft.jsonl").read_text())["messages"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == [
        "Look at the second frame.\n```python\nprint(frames[1].array[0, 0])\n```",
        "It is green.\n```python\nanswer('B')\n```",
    ]
