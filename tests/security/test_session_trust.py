"""Sessions and the MCP server trust neither the kernel nor the client's paths (issue 19, item 8).

A cell redefines ``answer`` or patches ``Answerer``, then the driver answers: the session records what the
driver passed, checked by the host. An MCP client (an agent a model may steer) names a host trajectory as
``replay:``, a local ``hf:`` folder, a secret file or a link to one as a frame, a sidecar file as
``indices``: each is refused with a clear error, while what the operator allowed still works. A cell
prints terminal escape sequences: ``spatialclaw session exec`` shows them as text.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from PIL import Image

from spatialclaw.testing import ScriptedProvider
from tests.cli_process import spatialclaw
from tests.paths import REPO_ROOT

SECRET = "SECRET-HOST-TRAJECTORY-7f3a"


@pytest.fixture
def env(sessions_env: dict[str, str]) -> dict[str, str]:
    return sessions_env


def cli(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return spatialclaw("session", *args, env=env, cwd=REPO_ROOT, stdin=stdin)


def start(env: dict[str, str], green_frame: Path) -> str:
    done = cli(
        env, "start", "--frames", str(green_frame), "--question", "Which colour?", "--choices", "red", "green", "--json"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return str(json.loads(done.stdout)["session"])


# --- the answer a session records ---------------------------------------------------------------------


def test_session_answer_records_what_the_driver_passed_even_after_a_cell_redefines_answer(
    env: dict[str, str], green_frame: Path, tmp_path: Path
) -> None:
    session = start(env, green_frame)
    # the kernel's answer now accepts anything and always claims "A" (a valid option)
    patched = cli(env, "exec", session, "--code", "-", "--json", stdin="type(answer).normalise = lambda self, v: 'A'\n")
    assert patched.returncode == 0, patched.stdout
    rejected = cli(env, "answer", session, "Z", "--json")
    assert rejected.returncode == 1, rejected.stdout
    assert "not one of the options" in json.loads(rejected.stdout)["text"]
    redefined = cli(env, "exec", session, "--code", "-", stdin="real = answer\nanswer = lambda v: real('A')\n")
    assert redefined.returncode == 0, redefined.stdout
    answered = json.loads(cli(env, "answer", session, "green", "--json").stdout)
    assert answered["answered"] is True and answered["answer"] == "B", answered
    status = json.loads(cli(env, "status", session, "--json").stdout)
    assert status["answer"] == "B" and status["state"] == "answered"
    cli(env, "close", session)

    from spatialclaw.trajectories.episode_log import load_episode

    episode = load_episode(tmp_path / "sessions" / session)
    assert episode.answer == "B"
    assert [event["value"] for event in episode.of_type("answer")] == ["B"]
    assert episode.of_type("cell")[-1]["code"] == "answer('green')"


def test_an_answer_request_with_a_non_scalar_value_is_refused_and_the_session_goes_on(
    env: dict[str, str], green_frame: Path, tmp_path: Path
) -> None:
    from spatialclaw.interactive.session_client import Session
    from spatialclaw.interactive.session_dir import SessionError

    handle = Session.open(start(env, green_frame), tmp_path / "sessions")
    with pytest.raises(SessionError, match="the answer must be text or a number, got dict"):
        handle.request({"op": "answer", "value": {"value": "B"}})
    assert handle.answer("B").answer == "B"
    handle.close()


# --- what a cell prints reaches the operator's terminal as text ----------------------------------------


def test_escape_sequences_a_cell_prints_reach_the_terminal_as_text(env: dict[str, str], green_frame: Path) -> None:
    session = start(env, green_frame)
    cell = "print('\\x1b]52;c;ZWNobyBwd25lZA==\\x1b\\\\ title\\x9b2J \\u202egnp.exe ok\\r hidden')\n"
    shown = cli(env, "exec", session, "--code", "-", stdin=cell)
    cli(env, "close", session)
    assert shown.returncode == 0, shown.stderr
    for raw in ("\x1b", "\x9b", "\u202e", "\r"):
        assert raw not in shown.stdout, repr(shown.stdout)
    assert "\\x1b]52;c;ZWNobyBwd25lZA==" in shown.stdout and "\\u202egnp.exe" in shown.stdout


# --- paths an MCP client names -------------------------------------------------------------------------


def test_an_mcp_client_names_only_what_the_operator_allowed(
    env: dict[str, str], green_frame: Path, tmp_path: Path
) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    allowed, private, elsewhere = tmp_path / "allowed", tmp_path / "private", tmp_path / "elsewhere"
    for folder in (allowed, private, elsewhere):
        folder.mkdir()
    secret = private / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- " + SECRET)
    (elsewhere / "link.png").symlink_to(secret)
    Image.new("RGB", (8, 8)).save(elsewhere / "outside.png")
    sidecar = private / "indices.json"
    sidecar.write_text("[7]")
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "spatialclaw.cli", "mcp", "--replay-root", str(allowed), "--input-root", str(green_frame.parent)),
            *("--allow-models", "openai-compat:m@http://127.0.0.1:*", "--allow-models", "replay:*"),
            *("--allow-models", "hf:*"),
        ],
        env=env,
        cwd=str(REPO_ROOT),
    )
    question = {"question": "Which colour?", "frames": [str(green_frame)]}

    async def scenario(url: str) -> dict[str, tuple[bool, str]]:
        seen: dict[str, tuple[bool, str]] = {}
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client:
            await client.initialize()

            async def tool(name: str, tool_name: str, arguments: dict[str, Any]) -> str:
                result = await client.call_tool(tool_name, arguments)
                seen[name] = (bool(result.is_error), "\n".join(b.text for b in result.content if b.type == "text"))
                return seen[name][1]

            def session_of(text: str) -> str:
                return next(x for x in text.splitlines() if x.startswith("session: ")).split(": ", 1)[1]

            # a trajectory recorded by a session of this server (its vlm answered with the secret)
            recorded = session_of(
                await tool("record", "session_start", {**question, "vlm_model": f"openai-compat:m@{url}"})
            )
            await tool("ask", "session_exec", {"session": recorded, "code": "print(vlm.ask(frames[0], 'q'))"})
            await tool("close", "session_close", {"session": recorded})
            source = tmp_path / "sessions" / recorded
            shutil.copytree(source, private / "trajectory", ignore=shutil.ignore_patterns("*.sock"))
            shutil.copytree(source, allowed / "trajectory", ignore=shutil.ignore_patterns("*.sock"))
            (allowed / "link").symlink_to(private / "trajectory")
            replay = "print(vlm.ask(frames[0], 'q'))"
            for name, model in {
                "host": f"replay:{private / 'trajectory'}",
                "traversal": f"replay:{allowed}/../private/trajectory",
                "link": f"replay:{allowed / 'link'}",
                "hf": f"hf:{private}",
            }.items():
                await tool(f"replay {name}", "session_start", {**question, "vlm_model": model})
            for name, spec in {"session": source, "allowed": allowed / "trajectory"}.items():
                text = await tool(f"replay {name}", "session_start", {**question, "vlm_model": f"replay:{spec}"})
                if not seen[f"replay {name}"][0]:
                    replayed = session_of(text)
                    await tool(f"replayed {name}", "session_exec", {"session": replayed, "code": replay})
                    await tool(f"close {name}", "session_close", {"session": replayed})
            for name, arguments in {
                "secret frame": {"frames": [str(secret)]},
                "linked frame": {"frames": [str(elsewhere / "link.png")]},
                "outside frame": {"frames": [str(elsewhere / "outside.png")]},
                "secret video": {"frames": None, "video": str(secret)},
                "sidecar": {"frames": None, "inputs": [{"frames": [str(green_frame)], "indices": str(sidecar)}]},
            }.items():
                await tool(name, "session_start", {**question, **arguments})
        return seen

    with ScriptedProvider([SECRET]) as server:
        seen = anyio.run(scenario, server.url)
    assert not seen["record"][0] and SECRET in seen["ask"][1], seen["ask"]
    for name in ("replay host", "replay traversal", "replay link"):
        refused, text = seen[name]
        assert refused and "may replay only a session of this server" in text and "--replay-root" in text, seen[name]
        assert SECRET not in text
    assert seen["replay hf"][0] and "a local model folder must lie inside a folder" in seen["replay hf"][1]
    for name in ("session", "allowed"):
        assert not seen[f"replay {name}"][0], seen[f"replay {name}"]
        assert SECRET in seen[f"replayed {name}"][1], seen[f"replayed {name}"]
    assert seen["secret frame"][0] and f"frames: {secret} is not an image file" in seen["secret frame"][1]
    assert seen["linked frame"][0] and f"{elsewhere / 'link.png'} is not an image file" in seen["linked frame"][1]
    assert seen["outside frame"][0] and "outside the folders this server reads inputs from" in seen["outside frame"][1]
    assert seen["secret video"][0] and "is not a video file" in seen["secret video"][1]
    assert seen["sidecar"][0] and "inputs[0].indices must be a list of frame numbers" in seen["sidecar"][1]
    assert all(
        SECRET not in text
        for name, (_, text) in seen.items()
        if name not in {"ask", "replayed session", "replayed allowed"}
    )
    started = sorted(p.name for p in (tmp_path / "sessions").iterdir())
    assert len(started) == 3, started  # the recording and the two allowed replays: nothing else started
