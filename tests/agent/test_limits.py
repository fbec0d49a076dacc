"""Episode limits (time, tokens, cost) with a real kernel and real SDK clients over a local server: the limit
bounds the episode, and the one that ended it is recorded in the result and in the ``end`` event."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spatialclaw import Kernel
from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.limits import LimitHit, Limits
from spatialclaw.agent.loop import Agent
from spatialclaw.chat import Message
from spatialclaw.models import ModelTimeoutError, RetryPolicy, load_model
from spatialclaw.models.pricing import Price
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.task import Task
from spatialclaw.testing import Reply, ScriptedProvider, delayed, rate_limited
from spatialclaw.trajectories.episode_log import load_episode
from tests.agent_helpers import anthropic, cell, openai_compat, openai_text, photo
from tests.bench_runs import synthetic_run

QUICK = {"fsync": False, "vlm_side_channel": False}


@pytest.fixture(scope="module")
def kernel():
    with Kernel() as k:
        yield k


@pytest.fixture
def task():
    return Task("What is 6 times 7?", answer_type="number", task_id="arithmetic")


def test_a_cell_that_runs_past_the_time_limit_is_cut_at_the_time_left(task, kernel, tmp_path):
    script = [cell("import time\ntime.sleep(60)\nprint('never')")]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(limits=Limits(time_s=3), **QUICK)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "timeout" and result.answer is None and result.answer_source is None
    assert result.limit.kind == "time" and result.limit.value == 3 and result.limit.used >= 3
    assert result.duration_s < 60  # the sleep was interrupted, not waited out
    assert server.calls == 1  # no step after the limit, and no fallback without a grace
    episode = load_episode(result.trajectory_dir)
    assert episode.complete and episode.end["reason"] == "timeout"
    assert episode.end["limit"] == {"kind": "time", "value": 3, "used": result.limit.used}
    ((_, cut),) = episode.cells()
    assert cut.status == "timeout" and "never" not in cut.stdout
    given = float(re.search(r"ran longer than ([0-9.]+) s", cut.error.message).group(1))
    assert given < 3  # the cell's timeout was the time left, not cell_timeout_s (120 s)
    print(f"cell timeout given: {given:.2f} s; episode {result.duration_s:.2f} s")


@pytest.mark.parametrize("backend", [openai_compat, anthropic], ids=["openai", "anthropic"])
def test_a_slow_model_reply_is_cut_by_the_time_left(task, kernel, tmp_path, backend):
    with ScriptedProvider([delayed(30, cell("answer(42)"))]) as server:
        result = Agent(backend(server), AgentConfig(limits=Limits(time_s=2), **QUICK)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "timeout" and result.answer is None
    assert result.limit.kind == "time" and result.limit.value == 2
    assert result.duration_s < 30
    assert server.calls == 1  # no retry once the time is spent
    episode = load_episode(result.trajectory_dir)
    (call,) = episode.of_type("model_call")
    assert call["error"] and call["response"] is None
    assert episode.end["reason"] == "timeout" and episode.end["limit"]["kind"] == "time"
    assert episode.cells() == []


def test_a_fallback_grace_gets_a_direct_answer_after_the_time_limit(task, kernel, tmp_path):
    script = [delayed(30, cell("answer(42)")), "Six sevens.\nANSWER: 42"]
    limits = Limits(time_s=2, fallback_grace_s=20)
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(limits=limits, **QUICK)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "timeout" and result.limit.kind == "time"
    assert result.answer == 42.0 and result.answer_source == "fallback"
    episode = load_episode(result.trajectory_dir)
    assert [e["purpose"] for e in episode.of_type("model_call")] == ["step", "fallback"]
    assert episode.answer == 42.0 and episode.end["limit"]["kind"] == "time"
    assert "time limit of 2 s for this question is reached" in openai_text(server.requests[-1])


def test_the_token_limit_ends_the_episode_between_steps_without_a_fallback(task, kernel, tmp_path):
    spend = {"prompt_tokens": 600, "completion_tokens": 100}
    script = [Reply(cell(f"print({i})"), usage=spend) for i in range(5)]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(limits=Limits(tokens=1000), **QUICK)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "budget" and result.answer is None
    assert result.limit == LimitHit("tokens", 1000, 1400)
    assert server.calls == 2 and result.steps == 2  # the third step found the limit spent and did not start
    episode = load_episode(result.trajectory_dir)
    assert [c.stdout for _, c in episode.cells()] == ["0\n", "1\n"]  # the reply that crossed the limit still ran
    assert episode.end["reason"] == "budget" and episode.end["limit"] == {"kind": "tokens", "value": 1000, "used": 1400}


def test_the_cost_limit_ends_the_episode_with_the_cost_recorded(task, kernel, tmp_path):
    spend = {"prompt_tokens": 600, "completion_tokens": 100}
    script = [Reply(cell(f"print({i})"), usage=spend) for i in range(5)]
    prices = {"scripted": Price(input=1000.0, output=2000.0)}  # 0.6 + 0.2 = 0.8 USD per call
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server, prices=prices), AgentConfig(limits=Limits(cost_usd=1.5), **QUICK)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "budget" and server.calls == 2
    assert result.limit == LimitHit("cost", 1.5, 1.6) and result.cost_usd == pytest.approx(1.6)
    assert load_episode(result.trajectory_dir).end["limit"] == {"kind": "cost", "value": 1.5, "used": 1.6}


def test_a_cost_limit_on_a_model_without_a_price_is_an_error_that_says_so(task, kernel, tmp_path):
    with ScriptedProvider([cell("print(1)")]) as server:
        result = Agent(openai_compat(server), AgentConfig(limits=Limits(cost_usd=1.0), **QUICK)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "error" and "no known price" in result.error and "prices=" in result.error


def test_the_step_budget_is_recorded_as_a_limit_too(task, kernel, tmp_path):
    script = [cell("print(1)"), "ANSWER: 42"]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(max_steps=1, **QUICK)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert result.status == "budget" and result.answer == 42.0 and result.answer_source == "fallback"
    assert result.limit == LimitHit("steps", 1, 1)
    assert load_episode(result.trajectory_dir).end["limit"] == {"kind": "steps", "value": 1, "used": 1}


@pytest.mark.parametrize("bad, message", [({"time_s": 0}, "time_s must be above 0"), ({"seconds": 5}, "unknown limit")])
def test_bad_limits_are_refused_with_a_clear_message(bad, message):
    with pytest.raises(ValueError, match=message):
        AgentConfig(limits=bad)


def test_the_local_runner_turns_the_episode_timeout_into_timeout_rows_that_resume_retries(tmp_path: Path) -> None:
    state = {"slow": True}

    def script(request: dict, index: int) -> str:
        return cell("import time\ntime.sleep(60)") if state["slow"] else cell("answer('B' if meta['choices'] else 2)")

    def config(resume: bool) -> RunConfig:
        return synthetic_run(
            server.url,
            tmp_path / "run",
            limit=2,
            workers=2,
            episode_timeout_s=3,
            resume=resume,
            model_options={"max_attempts": 1, "api_key": "test-key"},
            agent={**QUICK, "preview_images": 1},
        )

    with ScriptedProvider(script) as server:
        first = run_benchmark(config(False))
        assert first.statuses == {"timeout": 2}
        rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
        assert all(
            r["end_reason"] == "timeout" and r["limit"]["kind"] == "time" and r["limit"]["value"] == 3 for r in rows
        )
        for row in rows:
            episode = load_episode(tmp_path / "run" / row["trajectory_dir"])
            assert episode.header["config"]["limits"]["time_s"] == 3 and episode.end["reason"] == "timeout"
        state["slow"] = False
        second = run_benchmark(config(True))
    assert second.ran == 2 and second.statuses == {"ok": 2}
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["attempt"] for r in rows) == [2, 2]


def test_a_call_timeout_stops_the_retries_that_would_end_past_it():
    with ScriptedProvider([rate_limited(retry_after=5), "too late to matter"]) as server:
        model = load_model(f"openai-compat:scripted@{server.url}", retry=RetryPolicy(max_attempts=4, base_delay_s=0.01))
        with pytest.raises(ModelTimeoutError, match="no time left to retry"):
            model.chat([Message.text("user", "hi")], timeout_s=1.0)
        model.close()
    assert server.calls == 1  # waiting the server's 5 s Retry-After would have passed the 1 s


def test_spatialclaw_run_time_limit_ends_the_episode_and_says_which_limit(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SPATIALCLAW_MODEL"}
    with ScriptedProvider([cell("import time\ntime.sleep(60)")]) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "spatialclaw.cli",
                "run",
                "--model",
                f"openai-compat:scripted@{server.url}",
                "--frames",
                str(photo(tmp_path)),
                "--question",
                "Left or right?",
                "--choices",
                "left",
                "right",
                "--time-limit",
                "3",
                "--out",
                str(tmp_path / "ep"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    assert done.returncode == 1, done.stderr  # no answer
    lines = done.stdout.splitlines()
    assert lines[-1] == "answer: None"
    assert any(line.startswith("status: timeout") for line in lines)
    # "(used 3.0 s ...": a loaded machine may take a few tenths more to cut the cell; the point is which limit
    assert any(line.startswith("limit: the time limit of 3 s was reached (used ") for line in lines), lines
    assert load_episode(tmp_path / "ep").end["limit"]["kind"] == "time"
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "spatialclaw.cli",
            "run",
            "--model",
            "openai-compat:m@http://127.0.0.1:9/v1",
            "--frames",
            str(photo(tmp_path)),
            "--question",
            "q",
            "--token-limit",
            "0",
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert refused.returncode == 2 and "Limits.tokens must be above 0" in refused.stderr


def test_the_no_tools_baseline_under_the_local_episode_timeout_gives_a_timeout_row(tmp_path: Path) -> None:
    with ScriptedProvider(lambda request, index: delayed(30, "ANSWER: B")) as server:
        summary = run_benchmark(
            synthetic_run(
                server.url,
                tmp_path / "run",
                limit=1,
                baseline="no-tools",
                episode_timeout_s=2,
                model_options={"max_attempts": 1, "api_key": "test-key"},
                agent={"fsync": False, "preview_images": 1},
            )
        )
    assert summary.statuses == {"timeout": 1}
    (row,) = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert row["end_reason"] == "timeout" and row["limit"]["kind"] == "time" and row["limit"]["value"] == 2
    assert row["duration_s"] < 30


def test_a_local_hf_model_stops_generating_at_the_call_timeout(tmp_path):
    from spatialclaw.testing.tiny_models import build_tiny_vlm

    model = load_model(f"hf:{build_tiny_vlm(tmp_path / 'tiny')}")
    request = [Message.text("user", "Where is the chair?")]
    free = model.chat(request, max_tokens=200)
    cut = model.chat(request, max_tokens=200, timeout_s=1e-6)
    assert free.usage.completion_tokens == 200  # random weights never stop by themselves here
    assert cut.usage.completion_tokens < 200 and cut.finish_reason == "time"


def test_side_channel_calls_count_toward_the_token_limit_and_are_refused_once_it_is_spent(task, kernel, tmp_path):
    script = [Reply(cell("print(vlm.ask([], 'anything?'))"), usage={"prompt_tokens": 900, "completion_tokens": 200})]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(limits=Limits(tokens=1000), fsync=False)).run(
            task, tmp_path / "ep", kernel=kernel
        )
    assert server.calls == 1  # the side-channel call was refused before any request
    ((_, refused),) = load_episode(result.trajectory_dir).cells()
    assert "the tokens limit of 1000 tokens was reached" in refused.error.message
    assert result.status == "budget" and result.limit == LimitHit("tokens", 1000, 1100)
