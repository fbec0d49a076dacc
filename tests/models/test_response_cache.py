"""The response cache (``RUN/cache/``) through the real CLI against the scripted provider server: a resumed
run pays nothing for requests it already made, repeats of a task never share an answer, ``--no-cache``
turns it off, and a corrupt or linked entry is counted and ignored, never trusted."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.models import load_model
from spatialclaw.models.response_cache import ResponseCache, request_key
from spatialclaw.testing.provider_server import ScriptedProvider
from tests.runner.test_repeats import bench, rows, tasks_file


def lose_rows(run: Path) -> None:
    """What a kill after the model replied but before any row was written leaves: no rows."""
    (run / "results.jsonl").write_text("")


def test_a_resumed_run_makes_no_model_call_for_cached_requests(tmp_path: Path) -> None:
    tasks, run = tasks_file(tmp_path), tmp_path / "run"
    with ScriptedProvider(lambda request, index: f"ANSWER: {'yes' if index % 2 == 0 else 'no'}") as server:
        assert bench(server.url, tasks, run, "--repeats", "3") == 0
        assert server.calls == 6
    first = {(r["task_id"], r["repeat"]): r["answer"] for r in rows(run)}
    assert sorted(first.values()) == ["no"] * 3 + ["yes"] * 3
    assert len(list((run / "cache").glob("*.json"))) == 6, "one entry per (task, repeat) request"
    lose_rows(run)
    with ScriptedProvider(lambda request, index: "ANSWER: maybe") as again:
        assert bench(again.url, tasks, run, "--resume") == 0
        assert again.calls == 0, "every request of the resumed episodes was answered from RUN/cache/"
    resumed = rows(run)
    assert {(r["task_id"], r["repeat"]): r["answer"] for r in resumed} == first, "each repeat got its own reply back"
    assert all(r["cache"] == {"hits": 1, "misses": 0, "corrupt": 0, "unwritable": 0} for r in resumed)

    lose_rows(run)
    with ScriptedProvider(lambda request, index: "ANSWER: yes") as uncached:
        assert bench(uncached.url, tasks, run, "--resume", "--no-cache") == 0
        assert uncached.calls == 6, "--no-cache asks the model every time"
    assert all("cache" not in r for r in rows(run))


def test_a_corrupt_or_linked_entry_is_counted_and_never_trusted(tmp_path: Path) -> None:
    tasks, run = tasks_file(tmp_path, count=3), tmp_path / "run"
    with ScriptedProvider(lambda request, index: "ANSWER: yes") as server:
        assert bench(server.url, tasks, run) == 0
    entries = sorted((run / "cache").glob("*.json"))
    assert len(entries) == 3
    entries[0].write_text('{"format": 1, "key": "tr')  # torn
    forged = json.loads(entries[1].read_text())  # a well-formed entry whose reply was edited in place
    forged["reply"]["text"] = "ANSWER: no"
    entries[1].write_text(json.dumps(forged))
    planted = json.loads(entries[2].read_text())  # a valid entry for the same key, reached through a link
    planted["reply"]["text"] = "ANSWER: no"
    planted["reply_sha256"] = hashlib.sha256(
        json.dumps(planted["reply"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    outside = tmp_path / "planted.json"
    outside.write_text(json.dumps(planted))
    entries[2].unlink()
    entries[2].symlink_to(outside)
    lose_rows(run)
    with ScriptedProvider(lambda request, index: "ANSWER: yes") as again:
        assert bench(again.url, tasks, run, "--resume") == 0
        assert again.calls == 3, "no entry was trusted: each request went to the model"
    got = rows(run)
    assert [r["answer"] for r in got] == ["yes"] * 3
    assert sum(r["cache"]["corrupt"] for r in got) == 3 and sum(r["cache"]["unwritable"] for r in got) == 1
    assert entries[2].is_symlink() and "ANSWER: no" in outside.read_text(), "the link was not written through"
    for entry in entries[:2]:  # the two corrupt entries were replaced by the model's real replies
        assert json.loads(entry.read_text())["reply"]["text"] == "ANSWER: yes"


def test_the_key_is_the_exact_request(tmp_path: Path) -> None:
    red, blue = ImagePart(png=b"\x89PNG red"), ImagePart(png=b"\x89PNG blue")
    ask = [Message("user", [TextPart("How far?"), red])]
    base = request_key("openai-compat:m@http://a:1/v1", ask, "step", {"temperature": 0.0}, {"repeat": 0})
    assert base == request_key(
        "openai-compat:m@http://b:2/v1", ask, "step", {"temperature": 0.0, "timeout_s": 3}, {"repeat": 0}
    )
    others = [
        request_key("openai-compat:m@http://a:1/v1", ask, "step", {"temperature": 0.0}, {"repeat": 1}),
        request_key(
            "openai-compat:m@http://a:1/v1",
            [Message("user", [TextPart("How far?"), blue])],
            "step",
            {"temperature": 0.0},
            {"repeat": 0},
        ),
        request_key("openai-compat:m@http://a:1/v1", ask, "step", {"temperature": 0.7}, {"repeat": 0}),
        request_key(
            "openai-compat:m@http://a:1/v1",
            ask,
            "step",
            {"temperature": 0.0, "tools": [{"name": "depth"}]},
            {"repeat": 0},
        ),
        request_key("openai-compat:other@http://a:1/v1", ask, "step", {"temperature": 0.0}, {"repeat": 0}),
    ]
    assert len({base, *others}) == 6

    with ScriptedProvider(lambda request, index: f"reply {index}") as server:
        cached = ResponseCache(load_model(f"openai-compat:m@{server.url}"), tmp_path)
        cached.scope = {"task_id": "t", "repeat": 0}
        assert [cached.chat(ask).text for _ in range(2)] == ["reply 0", "reply 0"]
        cached.scope = {"task_id": "t", "repeat": 1}
        assert cached.chat(ask).text == "reply 1"
        assert server.calls == 2 and cached.take_counts() == {"hits": 1, "misses": 2, "corrupt": 0, "unwritable": 0}
        cached.close()
