"""An MCP client names only the models its operator allowed (issue 30, B4 and B7).

A client (an agent a model may steer) names ``vlm_model=scripted:replies=/proc/self/environ``: the daemon
would read that host file (the server's API key included) and hand its lines to ``vlm.ask`` in the cell. It
names ``openai-compat:m@http://127.0.0.1:PORT/v1``: the daemon would post the cell's requests to a loopback
service of the client's choosing and give the cell its reply. Both are refused unless the operator's
``spatialclaw mcp --allow-models`` names them; what the operator named still works.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from PIL import Image

from spatialclaw.testing import ScriptedProvider

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-PLANTED-mcp-5150"
LOOPBACK = "INTERNAL-ONLY loopback data: db_password=PLANTED-loop-777"
ASK = "try:\n    print(vlm.ask(frames[0], 'q'))\nexcept Exception as e:\n    print('failed:', e)"


@pytest.fixture
def env(sessions_env: dict[str, str]) -> dict[str, str]:
    return {**sessions_env, "OPENAI_API_KEY": KEY}


def _serve(env: dict[str, str], inputs: Path, models: dict[str, str], *allow: str) -> dict[str, tuple[bool, str]]:
    """Start ``spatialclaw mcp`` (with ``--allow-models`` for each of ``allow``), start a session with each
    ``models`` value and run one ``vlm.ask``; per name: (refused, the start's text + the cell's output)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    flags = [part for spec in allow for part in ("--allow-models", spec)]
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "spatialclaw.cli", "mcp", "--input-root", str(inputs), *flags],
        env=env,
        cwd=str(REPO_ROOT),
    )

    async def scenario() -> dict[str, tuple[bool, str]]:
        seen: dict[str, tuple[bool, str]] = {}
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client:
            await client.initialize()

            async def tool(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                result = await client.call_tool(name, arguments)
                return bool(result.is_error), "\n".join(b.text for b in result.content if b.type == "text")

            for name, spec in models.items():
                start = {"question": "How many red boxes?", "frames": [str(inputs / "a.png")], "vlm_model": spec}
                refused, text = await tool("session_start", start)
                if not refused:
                    session = next(x for x in text.splitlines() if x.startswith("session: ")).split(": ", 1)[1]
                    text += "\n" + (await tool("session_exec", {"session": session, "code": ASK}))[1]
                    await tool("session_close", {"session": session})
                seen[name] = (refused, text)
        return seen

    return anyio.run(scenario)


def test_a_client_cannot_make_the_daemon_read_a_host_file_or_reach_a_loopback_service(
    env: dict[str, str], tmp_path: Path
) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    Image.new("RGB", (32, 24), (200, 0, 0)).save(inputs / "a.png")
    secret = tmp_path / "private" / "host_secret.txt"
    secret.parent.mkdir()
    secret.write_text(f"line one {KEY}\n")
    with ScriptedProvider([LOOPBACK] * 4) as service:
        compat = f"openai-compat:m@{service.url}"
        seen = _serve(
            env,
            inputs,
            {
                "environ": "scripted:replies=/proc/self/environ",
                "file": f"scripted:replies={secret}",
                "loopback": compat,
            },
        )
        assert service.calls == 0  # the loopback service was never reached
        for name in ("environ", "file", "loopback"):
            refused, text = seen[name]
            assert refused, seen[name]
            assert "is not a model this server's operator allowed" in text and "--allow-models" in text, text
            assert KEY not in text and "PLANTED-loop" not in text
        # what the operator names, clients may use (and only that: openai: is no longer on the list)
        allowed = _serve(env, inputs, {"compat": compat, "openai": "openai:gpt-4.1"}, compat)
    refused, text = allowed["compat"]
    assert not refused and LOOPBACK in text, text
    assert allowed["openai"][0] and "is not a model this server's operator allowed" in allowed["openai"][1]
