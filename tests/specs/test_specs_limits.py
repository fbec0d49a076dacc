"""Specifications of the episode limits' boundaries and of which host variables a kernel receives."""

from __future__ import annotations

import time

import pytest

from spatialclaw.agent.limits import LimitClock, LimitReached, Limits, Reservation
from spatialclaw.chat import ModelReply, Usage
from spatialclaw.kernel.environment import is_secret, kernel_environment


def test_usage_exactly_at_the_token_or_cost_limit_has_reached_it() -> None:
    clock = LimitClock(Limits(tokens=100, cost_usd=0.5), time.monotonic())
    assert clock.spend_hit(Usage(prompt_tokens=60, completion_tokens=39), 0.49) is None
    hit = clock.spend_hit(Usage(prompt_tokens=60, completion_tokens=40), 0.1)
    assert hit is not None and (hit.kind, hit.value, hit.used) == ("tokens", 100, 100)
    cost = clock.spend_hit(Usage(prompt_tokens=1), 0.5)
    assert cost is not None and (cost.kind, cost.value, cost.used) == ("cost", 0.5, 0.5)
    over = clock.spend_hit(Usage(prompt_tokens=1), 0.75)
    assert over is not None and (over.kind, over.used) == ("cost", 0.75)
    assert LimitClock(Limits(), time.monotonic()).spend_hit(Usage(prompt_tokens=10**9), 10**6) is None
    assert LimitClock(Limits(cost_usd=0.5), time.monotonic()).spend_hit(Usage(), None) is None


def test_a_reservation_fits_up_to_exactly_the_limit_and_counts_calls_in_flight() -> None:
    clock = LimitClock(Limits(tokens=100, cost_usd=1.0), time.monotonic())
    first = clock.reserve(60, 0.25)
    assert (clock.held_tokens, clock.held_usd) == (60, 0.25)
    with pytest.raises(LimitReached) as refused:
        clock.reserve(41)
    assert (refused.value.hit.kind, refused.value.hit.used) == ("tokens", 60)
    second = clock.reserve(40, 0.75)  # 100 tokens and 1.0 USD exactly: fits
    with pytest.raises(LimitReached, match="tokens limit"):
        clock.reserve(0)  # nothing left at all
    clock.settle(first, ModelReply("x", usage=Usage(prompt_tokens=20, completion_tokens=10), cost_usd=0.1))
    clock.settle(second, None)  # failed call: releases, spends nothing
    assert (clock.spent_tokens, clock.held_tokens, clock.held_usd) == (30, 0, 0.0)
    assert clock.spent_usd == pytest.approx(0.1)
    with pytest.raises(LimitReached) as over_cost:
        clock.reserve(0, 0.95)
    assert over_cost.value.hit.kind == "cost"
    assert clock.reserve(70, 0.9) == Reservation(70, 0.9)


def test_a_spent_cost_limit_refuses_even_a_free_call() -> None:
    clock = LimitClock(Limits(cost_usd=0.2), time.monotonic())
    free = clock.reserve()
    assert free == Reservation(0, 0.0) and (clock.held_tokens, clock.held_usd) == (0, 0.0)
    clock.settle(free, ModelReply("x", cost_usd=0.2))
    with pytest.raises(LimitReached, match="cost limit"):
        clock.reserve()


def test_a_reply_without_a_price_counts_its_tokens_and_no_cost() -> None:
    clock = LimitClock(Limits(tokens=100, cost_usd=1.0), time.monotonic())
    reservation = clock.reserve(30, 0.5)
    clock.settle(reservation, ModelReply("x", usage=Usage(prompt_tokens=12, completion_tokens=3), cost_usd=None))
    assert (clock.spent_tokens, clock.spent_usd, clock.held_tokens, clock.held_usd) == (15, 0.0, 0, 0.0)
    assert clock.reserve(85, 1.0) == Reservation(85, 1.0)  # the whole cost budget is still there


def test_time_left_caps_timeouts_and_the_limit_is_hit_at_zero() -> None:
    now = time.monotonic()
    clock = LimitClock(Limits(time_s=10.0), now - 4.0)
    assert clock.remaining_s() == pytest.approx(6.0, abs=0.5)
    assert clock.cap(2.0) == 2.0
    assert clock.cap(60.0) == pytest.approx(6.0, abs=0.5)
    assert clock.cap(None) == pytest.approx(6.0, abs=0.5)
    assert clock.time_hit() is None
    late = LimitClock(Limits(time_s=10.0), now - 12.0)
    assert late.cap(5.0) == 0.0 and late.cap(None) == 0.0
    hit = late.time_hit()
    assert hit is not None and hit.kind == "time" and hit.value == 10.0 and hit.used >= 12.0
    free = LimitClock(Limits(), now - 1e6)
    assert (free.remaining_s(), free.cap(3.0), free.cap(None), free.time_hit()) == (None, 3.0, None, None)


@pytest.mark.parametrize(
    "name", ["my_api_key", "OPENAI_API_KEY", "github_token", "Db_Password", "aws_region", "x_pwd", "hf_token"]
)
def test_credentials_are_secrets_whatever_their_case_and_never_reach_a_kernel(name: str) -> None:
    assert is_secret(name)
    env = kernel_environment(extra={name: "s3cret"}, base={name: "s3cret"})
    assert "s3cret" not in env.values()


def test_an_allowed_prefix_does_not_let_a_credential_through() -> None:
    env = kernel_environment(base={"SPATIALCLAW_api_key": "s3cret", "CUDA_TOKEN": "s3cret", "SPATIALCLAW_RUN": "1"})
    assert env.get("SPATIALCLAW_RUN") == "1" and "s3cret" not in env.values()


@pytest.mark.parametrize("name", ["PATH", "OMP_NUM_THREADS", "RAY_AUTH_MODE", "ray_auth_mode", "LANG"])
def test_ordinary_settings_are_not_secrets(name: str) -> None:
    assert not is_secret(name)


def test_a_kernel_gets_allowed_host_variables_and_what_the_caller_passes_but_nothing_else() -> None:
    base = {"PATH": "/bin", "OMP_NUM_THREADS": "2", "SPATIALCLAW_X": "1", "EDITOR": "vi", "HOME_DIR": "/h"}
    env = kernel_environment(extra={"MY_SETTING": "on"}, base=base)
    assert env["PATH"] == "/bin" and env["OMP_NUM_THREADS"] == "2" and env["SPATIALCLAW_X"] == "1"
    assert "EDITOR" not in env and "HOME_DIR" not in env
    assert env["MY_SETTING"] == "on"
    assert env["MPLBACKEND"] == "module://spatialclaw.primitives.display.mpl_backend"
    assert env["PYDEVD_DISABLE_FILE_VALIDATION"] == "1" and env["PYTHONUNBUFFERED"] == "1"
    assert kernel_environment(base={"PYTHONUNBUFFERED": "0"})["PYTHONUNBUFFERED"] == "0"


def test_spent_tokens_are_the_sum_of_prompt_and_completion_tokens_of_each_reply() -> None:
    clock = LimitClock(Limits(tokens=100), time.monotonic())
    clock.settle(None, ModelReply("x", usage=Usage(prompt_tokens=7, completion_tokens=5)))
    clock.settle(None, ModelReply("y", usage=Usage(prompt_tokens=6, completion_tokens=3)))
    assert clock.spent_tokens == 21
    held = clock.reserve(3)
    with pytest.raises(LimitReached) as refused:
        clock.reserve(77)  # 21 spent + 3 held + 77 > 100
    assert refused.value.hit.used == 24
    clock.settle(held, None)
    assert clock.reserve(79) == Reservation(79, 0.0)


def test_dollars_held_by_calls_in_flight_count_against_the_cost_limit() -> None:
    clock = LimitClock(Limits(cost_usd=1.0), time.monotonic())
    clock.reserve(0, 0.6)
    with pytest.raises(LimitReached, match="cost limit") as refused:
        clock.reserve(0, 0.5)
    assert refused.value.hit.used == 0.6


def test_a_large_token_limit_is_reached_exactly_at_it_and_beyond() -> None:
    limit = 100_000
    clock = LimitClock(Limits(tokens=limit), time.monotonic())
    hit = clock.spend_hit(Usage(prompt_tokens=60_000, completion_tokens=40_000), None)
    assert hit is not None and hit.used == limit
    beyond = clock.spend_hit(Usage(prompt_tokens=60_000, completion_tokens=40_001), None)
    assert beyond is not None and beyond.used == limit + 1
    assert clock.spend_hit(Usage(prompt_tokens=150), None) is None
    assert LimitClock(Limits(tokens=100), time.monotonic()).spend_hit(Usage(prompt_tokens=150), None) is not None
    clock.settle(None, ModelReply("x", usage=Usage(prompt_tokens=60_000, completion_tokens=40_000)))
    with pytest.raises(LimitReached, match="tokens limit"):
        clock.reserve(0)


def test_costs_are_reported_to_the_micro_dollar() -> None:
    clock = LimitClock(Limits(cost_usd=0.1), time.monotonic())
    hit = clock.spend_hit(Usage(), 0.1234567)
    assert hit is not None and hit.used == 0.123457
    clock.settle(None, ModelReply("x", cost_usd=0.1234567))
    with pytest.raises(LimitReached) as refused:
        clock.reserve()
    assert refused.value.hit.used == 0.123457


def test_time_is_up_only_when_none_is_left_and_not_while_under_a_second_remains() -> None:
    now = time.monotonic()
    assert LimitClock(Limits(time_s=100.0), now - 99.05).time_hit() is None  # about 0.95 s left
    hit = LimitClock(Limits(time_s=100.0), now - 100.5).time_hit()  # half a second over
    assert hit is not None and hit.kind == "time" and hit.used >= 100.5
