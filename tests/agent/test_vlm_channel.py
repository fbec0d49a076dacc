"""The kernel's ``vlm`` side channel: host server, kernel client, parsing, and keys staying on the host."""

from __future__ import annotations

import json

import numpy as np
import pytest

from spatialclaw.agent.loop import Agent
from spatialclaw.agent.vlm_server import VLMServer
from spatialclaw.chat import ModelReply
from spatialclaw.models import ModelUnavailableError, load_model
from spatialclaw.primitives.perception.vlm import Location, VLMClient, VLMError, parse_locations
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing import ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from tests.agent_helpers import cell, fast_retry, openai_text, photo

SECRET = "sk-secret-value-that-must-stay-on-the-host"


def side_channel_script(steps):
    """Agent steps in order; side-channel requests (one user message, no system prompt) by what they ask."""
    queue = list(steps)

    def reply(request, index):
        if len(request["messages"]) > 1:
            return queue.pop(0)
        text = openai_text(request)
        if "Reply with JSON only" in text:
            return 'Sure: [{"box": [100, 40, 160, 120], "label": "face"}, {"point": [0.5, 0.5]}]'
        assert "Which colour is the suit?" in text
        return "White."

    return reply


def test_cells_reach_the_model_through_the_side_channel_and_the_kernel_holds_no_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    steps = [
        cell("colour = vlm.ask(frames[0], 'Which colour is the suit?')\nprint('colour:', colour)"),
        cell(
            "found = vlm.locate(frames[0], 'the face')\nfor f in found:\n    print(type(f).__name__, f.box, f.point, f.label)"
        ),
        cell(
            "import os\nenv = dict(os.environ)\n"
            "print('secret in env:', any('sk-secret' in v for v in env.values()))\n"
            "print('key names:', sorted(k for k in env if k.endswith('API_KEY')))\nprint('vlm config:', sorted(vlm._config))"
        ),
        cell("answer('A')"),
    ]
    task = Task("Where is the face?", inputs=[FrameSpec.images([photo(tmp_path)])], choices=["top", "bottom"])
    with ScriptedProvider(side_channel_script(steps)) as server:
        model = load_model("openai:gpt-4o-mini", base_url=server.url, retry=fast_retry())  # key from the env
        result = Agent(model).run(task, tmp_path / "ep")
    assert result.status == "answered", result.error
    episode = load_episode(result.trajectory_dir)
    outputs = [r.stdout for _, r in episode.cells()]
    assert outputs[0] == "colour: White.\n"
    assert outputs[1].splitlines() == [
        "Location (100.0, 40.0, 160.0, 120.0) (130.0, 80.0) face",
        "Location None (128.0, 128.0) None",  # normalised coordinates scaled to the 256x256 frame
    ]
    assert "secret in env: False" in outputs[2]
    assert "key names: []" in outputs[2]
    # the address of the host's side channel (a Unix socket in a sandboxed kernel), the token, the timeout
    assert ("vlm config: ['timeout_s', 'token', 'url']" in outputs[2]) or (
        "vlm config: ['socket', 'timeout_s', 'token']" in outputs[2]
    )
    purposes = [e["purpose"] for e in episode.of_type("model_call")]
    assert purposes == ["step", "vlm.ask", "step", "vlm.locate", "step", "step"]
    ask = episode.of_type("model_call")[1]
    assert ask["step"] == 1 and ask["request"]["messages"][0]["content"][0]["type"] == "image"
    locate_text = episode.messages(episode.of_type("model_call")[3])[0].text_content
    assert "256 x 256 pixels" in locate_text
    assert result.cost_usd is not None and result.cost_usd > 0  # side-channel calls are paid for too


class FakeCall:
    """Stands in for the agent's logged model call inside the server (the server is what is tested)."""

    def __init__(self, text="ok", fail=False):
        self.text, self.fail, self.seen = text, fail, []

    def __call__(self, messages, purpose):
        self.seen.append((messages, purpose))
        if self.fail:
            raise ModelUnavailableError("the provider is down")
        return ModelReply(text=self.text)


def test_client_and_server_over_http_in_one_process():
    call = FakeCall('[{"bbox_2d": [1, 2, 30, 40]}]')
    with VLMServer() as server:
        client = VLMClient(server.open_channel(call))
        image = np.zeros((50, 60, 3), dtype=np.uint8)
        assert client.locate(image, "a dark thing") == [Location(point=(15.5, 21.0), box=(1.0, 2.0, 30.0, 40.0))]
        assert client.ask([image, image], "same?") == '[{"bbox_2d": [1, 2, 30, 40]}]'
    messages, purpose = call.seen[1]
    assert purpose == "vlm.ask" and len(messages[0].images) == 2 and messages[0].images[0].width == 60


def test_wrong_token_model_failure_and_missing_configuration_are_clear_errors():
    with VLMServer() as server:
        config = server.open_channel(FakeCall())
        with pytest.raises(VLMError, match=r"HTTP 401.*wrong, missing or expired token"):
            VLMClient({**config, "token": "guess"}).ask(np.zeros((4, 4)), "x")
        assert VLMClient(config).ask(np.zeros((4, 4)), "x") == "ok"
        server.close_channel(config)
        with pytest.raises(VLMError, match="HTTP 401"):
            VLMClient(config).ask(np.zeros((4, 4)), "x")  # a finished episode's token no longer works
        failing = server.open_channel(FakeCall(fail=True))
        with pytest.raises(VLMError, match=r"HTTP 502.*the provider is down"):
            VLMClient(failing).ask(np.zeros((4, 4)), "x")
        with pytest.raises(VLMError, match=r"HTTP 400.*non-empty 'question'"):
            VLMClient(failing).ask(np.zeros((4, 4)), " ")
    with pytest.raises(VLMError, match="not configured"):
        VLMClient(None).ask(np.zeros((4, 4)), "x")


def test_the_server_rejects_images_that_are_not_png():
    with pytest.raises(ValueError, match="not a base64 PNG"):
        VLMServer.handle(FakeCall(), "/ask", {"images": ["bm90IGFuIGltYWdl"], "question": "q"})


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            '```json\n[{"box": [10, 20, 50, 60], "label": "cup"}]\n```',
            [Location((30.0, 40.0), (10.0, 20.0, 50.0, 60.0), "cup")],
        ),
        ('{"point_2d": [0.25, 0.5]}', [Location((25.0, 100.0))]),
        ("[[-5, 10, 500, 30]]", [Location((50.0, 20.0), (0.0, 10.0, 100.0, 30.0))]),  # clipped to 100x200
        ("It is at (40, 20) in the image.", [Location((40.0, 20.0))]),
        ("[]", []),
    ],
)
def test_locate_replies_are_parsed_into_pixel_locations(text, expected):
    assert parse_locations(text, 100, 200) == expected


def test_a_reply_without_coordinates_is_an_error_that_quotes_it():
    with pytest.raises(VLMError, match=r"could not read any coordinates.*I see no cup"):
        parse_locations("I see no cup here.", 100, 100)
    with pytest.raises(VLMError, match="no box"):
        parse_locations(json.dumps([{"label": "cup"}]), 100, 100)
