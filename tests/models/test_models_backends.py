"""The openai, anthropic and openai-compat backends, through the real SDKs over HTTP to a local server."""

from __future__ import annotations

import base64
import json

import pytest
from PIL import Image

from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.models import (
    ModelAuthError,
    ModelRequestError,
    ModelUnavailableError,
    RetryPolicy,
    load_model,
    parse_spec,
)
from spatialclaw.models.pricing import price_for, set_price
from spatialclaw.testing import (
    Reply,
    ScriptedProvider,
    bad_request,
    delayed,
    dropped,
    malformed,
    rate_limited,
    server_error,
    unauthorized,
)


class RecordedSleep:
    """A RetryPolicy sleep that records the waits instead of sleeping."""

    def __init__(self):
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def policy(sleep=None, attempts=4):
    return RetryPolicy(max_attempts=attempts, base_delay_s=0.01, max_delay_s=0.05, sleep=sleep or RecordedSleep())


def conversation():
    image = ImagePart.from_pil(Image.new("RGB", (8, 6), (255, 0, 0)), label="red")
    return [
        Message.text("system", "You write code."),
        Message("user", [TextPart("Look:"), image]),
        Message.text("assistant", "```python\nprint(1)\n```"),
        Message.text("user", "1"),
    ]


def openai_model(server, name="gpt-4o", **options):
    return load_model(f"openai:{name}", api_key="sk-test", base_url=server.url, **options)


def anthropic_model(server, **options):
    return load_model(
        "anthropic:claude-sonnet-4-20250514", api_key="sk-ant-test", base_url=server.anthropic_url, **options
    )


# --- wire formats -----------------------------------------------------------------------------------
def test_openai_sends_images_as_png_data_urls_and_reads_usage_and_cost():
    with ScriptedProvider(
        [Reply("hi", usage={"prompt_tokens": 1000, "completion_tokens": 200, "cached_tokens": 400})]
    ) as server:
        reply = openai_model(server, retry=policy()).chat(conversation(), max_tokens=50, temperature=0.2)
    body = server.requests[0]
    assert server.paths == ["/v1/chat/completions"]
    assert body["messages"][0] == {"role": "system", "content": "You write code."}
    image_part = body["messages"][1]["content"][1]
    assert image_part["type"] == "image_url"
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]).startswith(b"\x89PNG")
    assert body["max_tokens"] == 50 and body["temperature"] == 0.2
    assert reply.text == "hi" and reply.finish_reason == "stop"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cached_tokens) == (1000, 200, 400)
    # gpt-4o: $2.50 / M input, $1.25 / M cached input, $10 / M output
    assert reply.cost_usd == pytest.approx((600 * 2.50 + 400 * 1.25 + 200 * 10.0) / 1e6)
    assert reply.raw["choices"][0]["message"]["content"] == "hi"


def test_openai_reasoning_models_get_reasoning_parameters():
    with ScriptedProvider([Reply("ok", usage={"reasoning_tokens": 64, "completion_tokens": 80})]) as server:
        reply = openai_model(server, name="o4-mini", retry=policy()).chat(
            conversation(), max_tokens=500, temperature=0.7, reasoning_effort="high"
        )
    body = server.requests[0]
    assert body["max_completion_tokens"] == 500 and "max_tokens" not in body
    assert "temperature" not in body
    assert body["reasoning_effort"] == "high"
    assert reply.usage.reasoning_tokens == 64


def test_openai_compat_passes_extra_body_through_and_keeps_reasoning_content():
    with ScriptedProvider([Reply("answer", reasoning="I compared the depths.")]) as server:
        model = load_model(
            f"openai-compat:Qwen/Qwen2.5-VL-7B-Instruct@{server.url}",
            retry=policy(),
            extra_body={"top_k": 20, "chat_template_kwargs": {"enable_thinking": True}},
        )
        reply = model.chat(conversation(), max_tokens=30)
    body = server.requests[0]
    assert body["model"] == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert body["top_k"] == 20 and body["chat_template_kwargs"] == {"enable_thinking": True}
    assert body["max_tokens"] == 30
    assert reply.reasoning == "I compared the depths."
    assert reply.cost_usd is None  # a local model has no known price: unknown, not free


def test_anthropic_sends_base64_images_and_a_separate_system_and_keeps_thinking():
    with ScriptedProvider([Reply("done", reasoning="The chair is nearer.")]) as server:
        reply = anthropic_model(server, retry=policy()).chat(conversation(), thinking_budget=2048, temperature=0.5)
    body = server.requests[0]
    assert body["system"][0]["text"] == "You write code."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    image_block = body["messages"][0]["content"][1]
    assert image_block["type"] == "image" and image_block["source"]["media_type"] == "image/png"
    assert base64.b64decode(image_block["source"]["data"]).startswith(b"\x89PNG")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048 and "temperature" not in body
    assert reply.text == "done" and reply.reasoning == "The chair is nearer."
    thinking = [b for b in reply.raw["content"] if b["type"] == "thinking"]
    assert thinking and thinking[0]["signature"].startswith("scripted-")  # the signature is kept for the log
    assert reply.usage.prompt_tokens > 0 and reply.cost_usd is not None


def test_anthropic_marks_the_system_prompt_and_the_history_for_prompt_caching_and_bills_it():
    usage = {"prompt_tokens": 10_000, "cached_tokens": 8_000, "cache_write_tokens": 1_500, "completion_tokens": 100}
    with ScriptedProvider([Reply("ok", usage=usage), "ok"]) as server:
        reply = load_model("anthropic:claude-sonnet-4-20250514", api_key="k", base_url=server.url, retry=policy()).chat(
            conversation()
        )
        load_model(
            "anthropic:claude-sonnet-4-20250514", api_key="k", base_url=server.url, retry=policy(), prompt_caching=False
        ).chat(conversation())
    cached, uncached = server.requests
    assert cached["system"] == [{"type": "text", "text": "You write code.", "cache_control": {"type": "ephemeral"}}]
    assert cached["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum("cache_control" in b for m in cached["messages"] for b in m["content"]) == 1
    assert uncached["system"] == "You write code." and "cache_control" not in json.dumps(uncached)
    assert (reply.usage.prompt_tokens, reply.usage.cached_tokens) == (10_000, 8_000)
    # claude-sonnet-4: $3 / M input, $0.30 / M cache reads, cache writes 1.25 x input, $15 / M output
    expected = (2_000 * 3.0 + 8_000 * 0.30 + 1_500 * 3.0 * 0.25 + 100 * 15.0) / 1e6
    assert reply.cost_usd == pytest.approx(expected)


def test_anthropic_merges_consecutive_messages_of_one_role():
    messages = [Message.text("user", "a"), Message.text("user", "b"), Message.text("assistant", "c")]
    with ScriptedProvider(["x"]) as server:
        anthropic_model(server, retry=policy()).chat(messages)
    wire = server.requests[0]["messages"]
    assert wire[0] == {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert wire[1]["content"][-1]["cache_control"] == {"type": "ephemeral"}  # the last turn is the breakpoint


# --- retries and errors -----------------------------------------------------------------------------
@pytest.mark.parametrize("make_model", [openai_model, anthropic_model], ids=["openai", "anthropic"])
def test_rate_limit_is_retried_no_sooner_than_retry_after(make_model):
    sleep = RecordedSleep()
    with ScriptedProvider([rate_limited(retry_after=7), rate_limited(retry_after=None), "finally"]) as server:
        reply = make_model(server, retry=policy(sleep)).chat(conversation())
    assert reply.text == "finally"
    assert server.calls == 3
    assert sleep.waits[0] >= 7.0  # honoured the server's Retry-After
    assert 0.0 <= sleep.waits[1] <= 0.02  # no hint: jittered exponential backoff (base 0.01 s, attempt 2)


@pytest.mark.parametrize("make_model", [openai_model, anthropic_model], ids=["openai", "anthropic"])
def test_server_errors_malformed_bodies_and_dropped_connections_are_retried(make_model):
    script = [server_error(500), server_error(503), malformed(), dropped(), "recovered"]
    with ScriptedProvider(script) as server:
        reply = make_model(server, retry=policy(attempts=5)).chat(conversation())
    assert reply.text == "recovered" and server.calls == 5


def test_a_valid_json_body_without_choices_is_treated_as_malformed_and_retried():
    with ScriptedProvider([malformed('{"id": "x", "object": "chat.completion"}'), "ok"]) as server:
        assert openai_model(server, retry=policy()).chat(conversation()).text == "ok"
    assert server.calls == 2


def test_a_timeout_is_retried():
    with ScriptedProvider([delayed(2.0, "too late"), "in time"]) as server:
        reply = openai_model(server, retry=policy(), timeout_s=0.3).chat(conversation())
    assert reply.text == "in time"


@pytest.mark.parametrize("make_model", [openai_model, anthropic_model], ids=["openai", "anthropic"])
def test_authentication_and_bad_requests_fail_at_once_with_a_clear_message(make_model):
    with ScriptedProvider([unauthorized(), "never reached"]) as server:
        with pytest.raises(ModelAuthError, match=r"refused the credentials.*API key"):
            make_model(server, retry=policy()).chat(conversation())
        assert server.calls == 1
    with ScriptedProvider([bad_request("image too large"), "never reached"]) as server:
        with pytest.raises(ModelRequestError, match=r"image too large.*not retried"):
            make_model(server, retry=policy()).chat(conversation())
        assert server.calls == 1


def test_persistent_failures_end_with_a_clear_error_after_the_last_attempt():
    with ScriptedProvider(lambda request, index: server_error(502, "bad gateway")) as server:
        with pytest.raises(ModelUnavailableError, match="failed 3 times; last error: HTTP 502: bad gateway"):
            openai_model(server, retry=policy(attempts=3)).chat(conversation())
        assert server.calls == 3


def test_missing_api_key_is_reported_before_any_request(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelAuthError, match="OPENAI_API_KEY"):
        load_model("openai:gpt-4o")
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY"):
        load_model("anthropic:claude-sonnet-4-5")


# --- specs and prices -------------------------------------------------------------------------------
def test_spec_parsing_and_its_errors():
    assert parse_spec("openai-compat:org/model:tag@http://h:8000/v1") == (
        "openai-compat",
        "org/model:tag",
        "http://h:8000/v1",
    )
    assert parse_spec("hf:/models/qwen") == ("hf", "/models/qwen", None)
    with pytest.raises(ValueError, match="openai:MODEL, anthropic:MODEL"):
        parse_spec("gpt-4o")
    with pytest.raises(ValueError, match="needs MODEL@URL"):
        parse_spec("openai-compat:qwen")


def test_price_table_longest_prefix_and_user_overrides(tmp_path, monkeypatch):
    assert price_for("gpt-4o-mini-2024-07-18").input == 0.15
    assert price_for("gpt-4o-2024-08-06").input == 2.50
    assert price_for("my-local-model") is None
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"my-local-model": {"input": 0.5, "output": 1.0}}))
    monkeypatch.setenv("SPATIALCLAW_PRICES", str(table))
    assert price_for("my-local-model").output == 1.0
    set_price("gpt-4o", 1.0, 2.0)
    try:
        assert price_for("gpt-4o-2024-08-06").input == 1.0
    finally:
        from spatialclaw.models import pricing

        pricing._overrides.clear()
    table.write_text("not json")
    with pytest.raises(ValueError, match="SPATIALCLAW_PRICES"):
        price_for("gpt-4o")


def test_a_script_that_runs_out_says_so_in_the_error():
    with ScriptedProvider(["only one"]) as server:
        model = openai_model(server, retry=policy(attempts=2))
        assert model.chat(conversation()).text == "only one"
        with pytest.raises(ModelUnavailableError, match=r"has only 1 replies; request \d has none"):
            model.chat(conversation())
