"""Run configuration: ``bench --config FILE`` (flags override it, the run keeps ``RUN/config.toml``), ``--limit``
as a fraction, per-provider concurrency and rate limits over real HTTP, and the live view of a run."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.models import RetryPolicy, limit_model, load_model
from spatialclaw.models.throttle import ProviderLimit, TokenBucket, parse_provider_limits
from spatialclaw.testing.provider_server import ScriptedProvider, delayed
from spatialclaw.trajectories.live_view import LiveRunView


def _tasks(folder: Path, count: int) -> Path:
    """A local task file of ``count`` multiple-choice questions on one small image."""
    Image.new("RGB", (32, 24), "red").save(folder / "red.png")
    lines = [
        {"task_id": f"t{i:02d}", "question": f"Which colour? ({i})", "images": ["red.png"], "choices": ["red", "blue"]}
        for i in range(count)
    ]
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _replies(folder: Path, count: int, text: str = "ANSWER: A") -> str:
    path = folder / "replies.txt"
    path.write_text((text + "\n") * count)
    return f"scripted:replies={path}"


def _rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_a_config_file_sets_the_options_flags_override_it_and_the_run_keeps_what_it_ran_with(tmp_path, capsys):
    tasks = _tasks(tmp_path, 6)
    config = tmp_path / "bench.toml"
    config.write_text(
        f'benchmark = "{tasks}"\nmodel = "{_replies(tmp_path, 20)}"\ninterface = "no-tools"\nlimit = 4\n'
        'no_progress = true\nagent-option = ["max_steps=3"]\n[max-concurrency]\nopenai = 2\n'
    )
    run = tmp_path / "run"
    assert main(["bench", "--config", str(config), "--out", str(run), "--limit", "2"]) == 0
    assert len(_rows(run)) == 2  # the flag, not the file's 4
    kept = (run / "config.toml").read_text()
    assert 'interface = "no-tools"' in kept and "limit = 2" in kept and 'max-concurrency = ["openai=2"]' in kept
    session = json.loads((run / "manifest.json").read_text())["sessions"][0]
    assert session["options"]["agent-option"] == ["max_steps=3"]
    assert session["provider_limits"] == {"openai": {"max_concurrency": 2, "per_second": None}}
    # the kept file is a configuration: it runs the same again
    again = tmp_path / "again"
    assert main(["bench", "--config", str(run / "config.toml"), "--out", str(again)]) == 0
    assert [r["task_id"] for r in _rows(again)] == [r["task_id"] for r in _rows(run)]


def test_a_config_file_with_an_unknown_key_or_a_bad_value_is_refused_naming_it(tmp_path, capsys):
    config = tmp_path / "bench.toml"
    config.write_text('model = "scripted:look-and-answer"\nworkerz = 2\n')
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--config", str(config), "--benchmark", "synthetic", "--out", str(tmp_path / "r")])
    assert exit_.value.code == 2
    assert f"{config}: unknown key 'workerz'" in capsys.readouterr().err
    config.write_text("no-cache = 3\n")
    with pytest.raises(SystemExit):
        main(["bench", "--config", str(config), "--benchmark", "synthetic", "--out", str(tmp_path / "r")])
    assert "no-cache is a switch" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_limit_as_a_fraction_takes_evenly_spaced_tasks_the_same_every_time(tmp_path, capsys):
    tasks = _tasks(tmp_path, 20)
    chosen = []
    for name in ("a", "b"):
        run = tmp_path / name
        code = main(
            ["bench", "--benchmark", str(tasks), "--model", _replies(tmp_path, 10), "--interface", "no-tools"]
            + ["--out", str(run), "--limit", "0.1", "--no-progress"]
        )
        assert code == 0
        chosen.append([json.loads(line)["task_id"] for line in (run / "tasks.jsonl").read_text().splitlines()])
    assert chosen[0] == chosen[1] == ["t00", "t10"]
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["config"]["limit"] == 0.1
    with pytest.raises(SystemExit):
        main(
            ["bench", "--benchmark", str(tasks), "--model", "scripted:x", "--out", str(tmp_path / "c")]
            + ["--limit", "1.5"]
        )
    assert "a fraction between 0 and 1" in capsys.readouterr().err


def _concurrent_chats(server: ScriptedProvider, limits: dict, threads: int = 4) -> None:
    """``threads`` workers, each with its own model client (as bench's workers have), one request each."""
    from spatialclaw.chat import Message

    models = [limit_model(load_model(f"openai-compat:m@{server.url}"), limits) for _ in range(threads)]
    workers = [threading.Thread(target=lambda m=m: m.chat([Message.text("user", "hi")], max_tokens=5)) for m in models]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    for model in models:
        model.close()


def test_max_concurrency_is_shared_by_the_workers_of_a_process():
    with ScriptedProvider(lambda body, i: delayed(0.4, "ok")) as free:
        _concurrent_chats(free, {})
    assert free.max_in_flight == 4  # without a limit the server sees all four at once
    with ScriptedProvider(lambda body, i: delayed(0.4, "ok")) as server:
        _concurrent_chats(server, parse_provider_limits(["openai-compat=2"], []))
    assert server.calls == 4 and server.max_in_flight == 2


def test_rate_limit_spaces_requests_evenly():
    with ScriptedProvider(lambda body, i: "ok") as server:
        _concurrent_chats(server, parse_provider_limits([], ["openai-compat=10/s"]))
    gaps = [b - a for a, b in zip(server.arrivals, server.arrivals[1:], strict=False)]
    assert len(server.arrivals) == 4 and min(gaps) > 0.07, gaps


def test_token_bucket_waits_for_the_next_token_and_limits_read_from_text():
    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    bucket = TokenBucket(2.0, clock=lambda: now[0], sleep=sleep)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.5, 0.5]
    now[0] += 10  # idle: the bucket holds one token, not ten seconds' worth
    assert [bucket.take(), bucket.take()] == [0.0, 0.5]
    assert parse_provider_limits(["openai=4"], ["openai=60/min", "anthropic=2/s"]) == {
        "anthropic": ProviderLimit(None, 2.0),
        "openai": ProviderLimit(4, 1.0),
    }
    for bad, message in ((["nope=4"], "unknown provider 'nope'"), (["openai=0"], "at least 1")):
        with pytest.raises(ValueError, match=message):
            parse_provider_limits(bad, [])
    with pytest.raises(ValueError, match="N/s, N/min or N/hour"):
        parse_provider_limits([], ["openai=60/fortnight"])


def test_bench_keeps_its_requests_under_the_limit_over_real_http(tmp_path, capsys):
    tasks = _tasks(tmp_path, 6)
    with ScriptedProvider(lambda body, i: delayed(0.2, "ANSWER: A")) as server:
        code = main(
            ["bench", "--benchmark", str(tasks), "--model", f"openai-compat:m@{server.url}", "--interface", "no-tools"]
            + [
                "--out",
                str(tmp_path / "run"),
                "--workers",
                "3",
                "--max-concurrency",
                "openai-compat=1",
                "--no-progress",
            ]
        )
    assert code == 0 and server.calls == 6
    assert server.max_in_flight == 1


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def test_the_live_view_serves_the_run_with_its_progress_read_anew_on_each_request(tmp_path, capsys):
    tasks = _tasks(tmp_path, 3)
    run = tmp_path / "run"
    assert main(["bench", "--benchmark", str(tasks), "--model", _replies(tmp_path, 5)] + [
        "--interface", "no-tools", "--out", str(run), "--no-progress"
    ]) == 0  # fmt: skip
    with LiveRunView(run, refresh_s=2) as view:
        page = _get(view.url)
        assert '<meta http-equiv="refresh" content="2">' in page and "3 of 3 row(s) written (ok 3)" in page
        lines = (run / "results.jsonl").read_text().splitlines()
        (run / "results.jsonl").write_text(lines[0] + "\n")  # as early in the run: one row written
        assert "1 of 3 row(s) written" in _get(view.url)
        assert json.loads(_get(view.url + "progress.json")) == {"done": 1, "total": 3, "statuses": {"ok": 1}}
    assert not (run / "index.html").exists()  # a reader: it writes nothing into the run


def test_view_live_on_a_folder_that_is_no_run_says_so(tmp_path, capsys):
    assert main(["view", str(tmp_path), "--live"]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_the_throttle_counts_each_retry_as_a_request():
    from spatialclaw.testing.provider_server import rate_limited

    script = [rate_limited(retry_after=0), "ok"]
    with ScriptedProvider(script) as server:
        from spatialclaw.chat import Message

        model = limit_model(
            load_model(f"openai-compat:m@{server.url}", retry=RetryPolicy(2, base_delay_s=0.0)),
            parse_provider_limits([], ["openai-compat=5/s"]),
        )
        started = time.monotonic()
        model.chat([Message.text("user", "hi")], max_tokens=5)
        model.close()
    assert server.calls == 2 and time.monotonic() - started > 0.15
