"""The ``hf:`` backend with a tiny randomly initialised VLM loaded from a local folder."""

from __future__ import annotations

import pytest
from PIL import Image

from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.models import ModelError, load_model
from spatialclaw.primitives.perception.models import MissingWeightsError
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing.tiny_models import build_tiny_vlm
from spatialclaw.trajectories.episode_log import load_episode
from tests.agent_helpers import photo


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    return build_tiny_vlm(tmp_path_factory.mktemp("tiny-idefics3"))


@pytest.fixture(scope="module")
def model(tiny_vlm):
    return load_model(f"hf:{tiny_vlm}", max_tokens=12)


def request(with_image: bool) -> list[Message]:
    parts = [TextPart("Where is the chair?")]
    if with_image:
        parts.insert(0, ImagePart.from_pil(Image.new("RGB", (64, 48), (200, 30, 30))))
    return [Message.text("system", "You write code."), Message("user", parts)]


def test_a_local_vlm_answers_through_its_chat_template(model):
    reply = model.chat(request(with_image=True))
    assert isinstance(reply.text, str)
    assert 1 <= reply.usage.completion_tokens <= 12
    assert len(reply.raw["generated_token_ids"]) == reply.usage.completion_tokens
    assert reply.raw["device"] == "cpu" and reply.cost_usd is None
    assert reply.finish_reason in ("stop", "length")
    assert (reply.finish_reason == "length") == (reply.usage.completion_tokens == 12)


def test_the_image_enters_the_prompt_and_decoding_is_greedy(model):
    with_image, without = model.chat(request(True)), model.chat(request(False))
    # <fake_token_around_image><global-img><image><fake_token_around_image>: one image token (image_seq_len=1) plus its markers
    assert with_image.usage.prompt_tokens - without.usage.prompt_tokens == 4
    assert model.chat(request(True)).raw["generated_token_ids"] == with_image.raw["generated_token_ids"]


def test_an_episode_with_the_local_model_is_logged(model, tmp_path):
    task = Task("Which side?", inputs=[FrameSpec.images([photo(tmp_path, size=64)])], choices=["left", "right"])
    config = AgentConfig(max_steps=1, max_format_errors=1, fallback=False, vlm_side_channel=False)
    result = Agent(model, config).run(task, tmp_path / "ep")
    # random weights rarely write a code block: the episode ends cleanly after its one step either way
    assert result.status in ("format_errors", "budget", "answered") and result.steps == 1
    episode = load_episode(result.trajectory_dir)
    assert episode.complete
    calls = episode.of_type("model_call")
    assert len(calls) == 1 and calls[0]["model"].startswith("hf:")
    assert calls[0]["response"]["raw"]["generated_token_ids"]
    assert calls[0]["usage"]["prompt_tokens"] > 0
    assert episode.header["model"]["backend"] == "HFModel"


def test_a_processor_that_needs_torchvision_says_so(tiny_vlm, tmp_path):
    import importlib.util
    import json
    import shutil

    if importlib.util.find_spec("torchvision") is not None:
        pytest.skip("torchvision is installed here, so the video processor loads")
    folder = tmp_path / "qwen-like"
    shutil.copytree(tiny_vlm, folder)
    config = json.loads((folder / "processor_config.json").read_text())
    config["processor_class"] = "Qwen2VLProcessor"  # a processor with a video processor
    (folder / "processor_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"needs? torchvision|with torchvision, and torchvision is not installed"):
        load_model(f"hf:{folder}")


def test_missing_weights_say_where_to_get_them(tmp_path, monkeypatch):
    with pytest.raises(MissingWeightsError, match="does not exist"):
        load_model(f"hf:{tmp_path / 'no-such-model'}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        MissingWeightsError,
        match=r"HF_HUB_OFFLINE.*hf download HuggingFaceTB/SmolVLM-Instruct|hf download HuggingFaceTB/SmolVLM-Instruct",
    ):
        load_model("hf:HuggingFaceTB/SmolVLM-Instruct")
