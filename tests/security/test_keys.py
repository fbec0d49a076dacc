"""API keys go only to the endpoint they belong to (issue 11, item 5).

Every test puts canary credentials in the environment (the user's OpenAI key, the SDK's admin key,
organisation, project and custom headers, the compat key) and inspects the headers a real local
server received from the real ``openai`` SDK: a canary seen there is a leaked credential.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from spatialclaw.chat import Message
from spatialclaw.models import ModelAuthError, RetryPolicy, load_model
from spatialclaw.testing import ScriptedProvider, unauthorized
from tests.cli_process import spatialclaw
from tests.paths import REPO_ROOT

CANARIES = {
    "OPENAI_API_KEY": "sk-user-openai-CANARY",
    "OPENAI_ADMIN_KEY": "sk-admin-CANARY",
    "OPENAI_ORG_ID": "org-CANARY",
    "OPENAI_PROJECT_ID": "proj-CANARY",
    "OPENAI_CUSTOM_HEADERS": "Authorization: Bearer sk-custom-CANARY\nX-Team-Secret: team-CANARY",
    "ANTHROPIC_API_KEY": "sk-ant-CANARY",
}


@pytest.fixture
def canary_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SPATIALCLAW_COMPAT_API_KEY", raising=False)
    return dict(os.environ)


def leaked(headers: dict[str, str]) -> list[str]:
    """The header lines that carry any canary (or any Authorization at all)."""
    return [f"{k}: {v}" for k, v in headers.items() if "CANARY" in v or k.lower() == "authorization"]


def ask(spec: str, **options) -> None:
    load_model(spec, retry=RetryPolicy(max_attempts=1), **options).chat([Message.text("user", "hi")])


def test_openai_compat_sends_no_credentials_of_the_environment(canary_env: dict[str, str]) -> None:
    with ScriptedProvider(["hello"]) as server:
        ask(f"openai-compat:local@{server.url}")
    assert server.calls == 1
    assert leaked(server.headers[0]) == []


def test_a_key_named_for_the_endpoint_is_the_only_credential_sent(
    canary_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_VLLM_API_KEY", "sk-vllm-named")
    with ScriptedProvider(["a", "b", "c", "d"]) as server:
        ask(f"openai-compat:local@{server.url}", api_key_env="LOCAL_VLLM_API_KEY")
        ask(f"openai-compat:local@{server.url}", api_key="sk-explicit")
        monkeypatch.setenv("SPATIALCLAW_COMPAT_API_KEY", "sk-compat-default")
        ask(f"openai-compat:local@{server.url}")
        ask(f"openai-compat:local@{server.url}", api_key_env=None)  # explicitly none, even with the default set
    sent = [h.get("authorization") for h in server.headers]
    assert sent == ["Bearer sk-vllm-named", "Bearer sk-explicit", "Bearer sk-compat-default", None]
    assert [line for h in server.headers for line in leaked(h) if "CANARY" in line] == []


def test_a_named_key_does_not_follow_a_redirect_to_another_origin(
    canary_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    monkeypatch.setenv("LOCAL_VLLM_API_KEY", "sk-vllm-named")
    seen: list[str | None] = []
    with ScriptedProvider(["moved"]) as elsewhere:

        class Redirect(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                seen.append(self.headers.get("Authorization"))
                self.send_response(307)
                self.send_header("Location", f"{elsewhere.url}/chat/completions")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        redirector = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        threading.Thread(target=redirector.serve_forever, daemon=True).start()
        try:
            ask(
                f"openai-compat:local@http://127.0.0.1:{redirector.server_address[1]}/v1",
                api_key_env="LOCAL_VLLM_API_KEY",
            )
        finally:
            redirector.shutdown()
            redirector.server_close()
    assert seen == ["Bearer sk-vllm-named"]  # the endpoint the key was named for
    assert elsewhere.calls == 1 and leaked(elsewhere.headers[0]) == []  # another port is another origin


def test_the_openai_backend_still_sends_its_own_key_to_its_own_endpoint(
    canary_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_CUSTOM_HEADERS")  # the SDK's own override for OpenAI, the user's to set
    with ScriptedProvider(["hello"]) as server:
        ask("openai:gpt-4o", base_url=server.url)
    assert server.headers[0]["authorization"] == f"Bearer {CANARIES['OPENAI_API_KEY']}"


def test_a_named_key_must_exist_and_be_named_like_a_secret(
    canary_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MISSING_VLLM_API_KEY", raising=False)
    with pytest.raises(ModelAuthError, match=r"\$MISSING_VLLM_API_KEY, which is not set"):
        load_model("openai-compat:m@http://127.0.0.1:9/v1", api_key_env="MISSING_VLLM_API_KEY")
    # a variable kernels inherit (not named like a secret) cannot hold a key: the kernel would see it
    with pytest.raises(ModelAuthError, match="does not look like a secret's name"):
        load_model("openai-compat:m@http://127.0.0.1:9/v1", api_key_env="HOME")
    with pytest.raises(ModelAuthError, match="api_key_env must name"):
        load_model("openai:gpt-4o", api_key_env=None)


def test_a_refused_compat_request_says_how_to_name_a_key(canary_env: dict[str, str]) -> None:
    with (
        ScriptedProvider([unauthorized("missing bearer token")]) as server,
        pytest.raises(ModelAuthError, match=r"api_key_env=NAME.*SPATIALCLAW_COMPAT_API_KEY.*never OPENAI_API_KEY"),
    ):
        ask(f"openai-compat:local@{server.url}")
    assert leaked(server.headers[0]) == []


# --- sessions and MCP: a client chooses the vlm_model -------------------------------------------------
@pytest.fixture
def session_canary_env(canary_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The canaries plus a compat key canary, a sessions folder of the test's own and no kernel memory limit."""
    return dict(
        canary_env,
        SPATIALCLAW_SESSIONS=str(tmp_path / "sessions"),
        SPATIALCLAW_KERNEL_MEMORY_MB="0",
        SPATIALCLAW_COMPAT_API_KEY="sk-compat-CANARY",
    )


def test_a_session_sends_a_compat_key_only_when_its_starter_names_one(
    session_canary_env: dict[str, str], green_frame: Path
) -> None:
    # without --vlm-api-key-env no key goes (the MCP test below shows it); with it, that key and nothing else
    env = dict(session_canary_env, LOCAL_VLLM_API_KEY="sk-vllm-named")

    def cli(*args: str, stdin: str | None = None) -> dict:
        done = spatialclaw("session", *args, "--json", env=env, cwd=REPO_ROOT, stdin=stdin)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    with ScriptedProvider(["green"]) as server:
        session = cli(
            "start",
            "--frames",
            str(green_frame),
            "--question",
            "What colour?",
            "--vlm-model",
            f"openai-compat:local@{server.url}",
            "--vlm-api-key-env",
            "LOCAL_VLLM_API_KEY",
        )["session"]
        try:
            step = cli("exec", session, "--code", "-", stdin="print(vlm.ask(frames[0], 'What colour?'))\n")
        finally:
            cli("close", session)
    assert step["status"] == "ok" and "green" in step["text"], step["text"]
    assert [h.get("authorization") for h in server.headers] == ["Bearer sk-vllm-named"]
    assert [line for h in server.headers for line in leaked(h) if "CANARY" in line] == []


def test_an_mcp_client_choosing_the_vlm_url_receives_no_host_key(
    session_canary_env: dict[str, str], green_frame: Path
) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    # the operator allows URL models (by default a client may not name one: tests/security/test_mcp_models.py)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "spatialclaw.cli", "mcp", "--allow-models", "openai-compat:*"],
        env=session_canary_env,
        cwd=str(REPO_ROOT),
    )

    async def scenario(url: str) -> str:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            started = await client.call_tool(
                "session_start",
                {
                    "question": "What colour?",
                    "frames": [str(green_frame)],
                    "vlm_model": f"openai-compat:attacker@{url}",
                },
            )
            text = "\n".join(b.text for b in started.content if b.type == "text")
            assert not started.is_error, text
            session = next(line for line in text.splitlines() if line.startswith("session: ")).split(": ", 1)[1]
            step = await client.call_tool(
                "session_exec", {"session": session, "code": "print(vlm.ask(frames[0], 'hi'))"}
            )
            await client.call_tool("session_close", {"session": session})
            return "\n".join(b.text for b in step.content if b.type == "text")

    with ScriptedProvider(["green"]) as server:
        observation = anyio.run(scenario, server.url)
    assert "green" in observation, observation
    assert server.calls == 1
    assert leaked(server.headers[0]) == []


def test_the_docs_example_of_key_routing_runs_as_written(canary_env: dict[str, str]) -> None:
    from tests.doc_examples import code_blocks

    (block,) = code_blocks("models.md", "Which key goes where", "python")
    done = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, env=canary_env, cwd=REPO_ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[None, 'Bearer sk-local']"
