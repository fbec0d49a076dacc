"""The interface ablation: ``bench --interface no-tools|single-pass|tool-calls|code`` end to end on the
synthetic benchmark against the scripted provider (real SDKs over real HTTP, real kernels), tool calls
through both wire formats, and the report's side-by-side comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spatialclaw.chat import ImagePart, Message, TextPart, ToolCall, ToolSpec
from spatialclaw.models.anthropic import AnthropicModel
from spatialclaw.models.openai import OpenAIModel
from spatialclaw.models.replay import ReplayModel
from spatialclaw.runner import RunConfig, run_benchmark
from spatialclaw.runner.report import write_report
from spatialclaw.runner.tool_calls import call_cell, tool_specs
from spatialclaw.testing.provider_server import ScriptedProvider, tool_call
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.run_dir import RunDir
from tests.bench_runs import quiet_run

ANSWER_CELL = "```python\nanswer('B' if meta['choices'] else 2)\n```"
PNG = ImagePart.from_pil(__import__("PIL.Image", fromlist=["Image"]).new("RGB", (4, 3), (255, 0, 0)), label="red")


def _rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]


def _text(request: dict) -> str:
    return json.dumps(request["messages"])


def _run(tmp_path: Path, interface: str, url: str) -> Path:
    config = quiet_run(url, tmp_path / interface, limit=2, seed=2, workers=1, interface=interface)
    run_benchmark(config)
    return config.out


def _script(request: dict, index: int):
    """One scripted model for all four interfaces, deciding from what the request holds."""
    text = _text(request)
    multiple_choice = "Options" in text or "(A)" in text
    value = "B" if multiple_choice else 2
    if "You cannot run code" in text:  # no-tools
        return f"ANSWER: {value}"
    if "exactly one step" in text:  # single-pass
        if "That was the only cell" in text:
            assert "frame count" in text  # the answer call sees the cell's printed output
            return f"The cell printed the frame count.\nANSWER: {value}"
        return "```python\nprint('frame count', len(frames))\n```"
    if request.get("tools"):  # tool-calls: frames_at, then draw on its result, then answer
        done = [m for m in request["messages"] if m["role"] == "tool"]
        if not done:
            return tool_call("frames_at", {"index": 0})
        if len(done) == 1:
            return tool_call("draw", {"frame": "$r1", "boxes": [[1, 1, 20, 20]]})
        return tool_call("answer", {"value": value})
    return ANSWER_CELL


def test_every_interface_runs_the_synthetic_benchmark_and_report_compares_them(tmp_path: Path) -> None:
    with ScriptedProvider(_script) as server:
        runs = {
            interface: _run(tmp_path, interface, server.url)
            for interface in ("no-tools", "single-pass", "tool-calls", "code")
        }
        requests = list(server.requests)
    for interface, run in runs.items():
        manifest = RunDir(run).manifest()
        assert manifest["config"]["interface"] == interface
        rows = _rows(run)
        assert len(rows) == 2 and all(r["status"] == "ok" and r["interface"] == interface for r in rows), rows
        for row in rows:
            episode = load_episode(run / row["trajectory_dir"])
            assert episode.header["interface"] == interface
            assert episode.complete and episode.answer == row["answer"]
    # every interface gave the same answers, so every task scores the same under each
    scores = {i: {r["task_id"]: (r["answer"], r["score"]) for r in _rows(run)} for i, run in runs.items()}
    assert all(s == scores["code"] for s in scores.values()) and all(v[1] is not None for v in scores["code"].values())
    # single-pass: two model calls and one cell per episode; the answer came from the text
    for row in _rows(runs["single-pass"]):
        episode = load_episode(runs["single-pass"] / row["trajectory_dir"])
        assert len(episode.of_type("model_call")) == 2 and len(episode.of_type("cell")) == 1
        assert row["answer_source"] == "text"
    # tool-calls: the tools went over the wire as JSON schema, results came back as JSON with the image attached
    tool_requests = [r for r in requests if r.get("tools")]
    assert tool_requests and all(
        {t["function"]["name"] for t in r["tools"]} >= {"answer", "depth", "frames_at", "geom_distance"}
        for r in tool_requests
    )
    third = next(r for r in tool_requests if sum(m["role"] == "tool" for m in r["messages"]) == 2)
    results = [m for m in third["messages"] if m["role"] == "tool"]
    first = json.loads(results[0]["content"])["result"]
    assert first["type"] == "Frame" and first["ref"] == "$r1"
    after = third["messages"][third["messages"].index(results[1]) + 1]
    assert after["role"] == "user" and any(p["type"] == "image_url" for p in after["content"]), (
        "draw's image is attached"
    )
    for row in _rows(runs["tool-calls"]):
        episode = load_episode(runs["tool-calls"] / row["trajectory_dir"])
        cells = episode.of_type("cell")
        assert [c["tool_call"]["name"] for c in cells] == ["frames_at", "draw", "answer"]
        assert row["answer_source"] == "tool"
        replayed = ReplayModel(runs["tool-calls"] / row["trajectory_dir"])  # a recorded episode replays its tool calls
        assert [replayed.chat([]).tool_calls[0].name for _ in range(3)] == ["frames_at", "draw", "answer"]

    files = write_report(list(runs.values()), tmp_path / "report")
    report = json.loads(files["json"].read_text())
    by_interface = {r["interface"]: r for r in report["runs"]}
    assert set(by_interface) == {"no-tools", "single-pass", "tool-calls", "code"}
    base = by_interface["no-tools"]
    for interface in ("single-pass", "tool-calls", "code"):
        run = by_interface[interface]
        assert run["gain_overall"] == pytest.approx(run["overall"] - base["overall"])
    markdown = files["markdown"].read_text()
    assert "## synthetic: interfaces" in markdown
    section = markdown.split("## synthetic: interfaces", 1)[1].splitlines()
    header = next(line for line in section if line.startswith("| category |"))
    assert header.split("|")[2:6] == [" no-tools ", " single-pass ", " tool-calls ", " code "]


def test_tool_calls_round_trip_through_the_openai_sdk(tmp_path: Path) -> None:
    tools = [
        ToolSpec("geom_distance", "distance in metres", {"type": "object", "properties": {"a": {}}, "required": ["a"]})
    ]
    conversation = [
        Message.text("user", "how far?"),
        Message("assistant", [TextPart("")], tool_calls=[ToolCall("call_1", "geom_distance", {"a": [0, 1]})]),
        Message("tool", [TextPart('{"result": 1.5}'), PNG], tool_call_id="call_1"),
    ]
    with ScriptedProvider(
        [tool_call("answer", {"value": 1.5}, id="call_2"), tool_call("answer", '{"value": ')]
    ) as server:
        model = OpenAIModel("scripted", base_url=server.url, api_key="k", compatible=True)
        reply = model.chat(conversation, tools=tools)
        broken = model.chat(conversation, tools=tools)
        body = server.requests[0]
    assert reply.tool_calls == [ToolCall("call_2", "answer", {"value": 1.5})] and reply.finish_reason == "tool_calls"
    assert broken.tool_calls[0].error and "not valid JSON" in broken.tool_calls[0].error
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "geom_distance",
                "description": "distance in metres",
                "parameters": tools[0].parameters,
            },
        }
    ]
    assistant, tool, images = body["messages"][1:]
    assert assistant["tool_calls"][0]["function"] == {"name": "geom_distance", "arguments": '{"a": [0, 1]}'}
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": '{"result": 1.5}'}
    assert images["role"] == "user" and images["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_tool_calls_round_trip_through_the_anthropic_sdk() -> None:
    tools = [ToolSpec("zoom", "zoom in", {"type": "object", "properties": {"frame": {}}, "required": ["frame"]})]
    conversation = [
        Message.text("system", "sys"),
        Message.text("user", "what is red?"),
        Message("assistant", [TextPart("zooming")], tool_calls=[ToolCall("toolu_1", "zoom", {"frame": "$frames[0]"})]),
        Message("tool", [TextPart('{"result": {"type": "Zoom"}}'), PNG], tool_call_id="toolu_1"),
    ]
    with ScriptedProvider([tool_call("answer", {"value": "A"}, text="done", id="toolu_2")]) as server:
        model = AnthropicModel("scripted", base_url=server.anthropic_url, api_key="k")
        reply = model.chat(conversation, tools=tools)
        body = server.requests[0]
    assert reply.tool_calls == [ToolCall("toolu_2", "answer", {"value": "A"})] and reply.text == "done"
    assert reply.finish_reason == "tool_use"
    assert body["tools"] == [{"name": "zoom", "description": "zoom in", "input_schema": tools[0].parameters}]
    assistant, result = body["messages"][1:]
    assert assistant["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "zoom",
        "input": {"frame": "$frames[0]"},
    }
    block = result["content"][0]
    assert result["role"] == "user" and block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1"
    assert [b["type"] for b in block["content"]] == ["text", "image"]


def test_tool_schemas_come_from_the_primitives_signatures() -> None:
    tools, paths = tool_specs()
    by_name = {t.name: t for t in tools}
    distance = by_name["geom_distance"]
    assert paths["geom_distance"] == "geom.distance"
    assert distance.parameters["required"] == ["a", "b"]
    assert distance.parameters["properties"]["kind"]["enum"] == ["centroid", "closest"]
    assert by_name["frames_at"].parameters["properties"]["index"]["type"] == "integer"
    assert "vlm" not in {p.split(".")[0] for p in paths.values()}  # no side channel in this interface
    assert all(len(t.description) <= 1024 and t.parameters["type"] == "object" for t in tools)


def test_a_tool_call_cannot_inject_code() -> None:
    """The model's arguments travel as a JSON string literal inside the cell; a name that is no tool never runs."""
    hostile = {"value": "'); import os; os.system('touch /tmp/pwned'); ('"}
    cell = call_cell("answer", hostile, "$r1")
    import ast

    tree = ast.parse(cell)
    assert len(tree.body) == 1 and isinstance(tree.body[0].value, ast.Call)
    assert [a.value for a in tree.body[0].value.args] == ["answer", json.dumps(hostile), "$r1"]


def test_tool_calls_interface_end_to_end_over_the_anthropic_sdk(tmp_path: Path) -> None:
    def script(request: dict, index: int):
        results = [
            b
            for m in request["messages"]
            if m["role"] == "user"
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        if not results:
            return tool_call("frames_at", {"index": 0})
        assert json.loads(results[0]["content"][0]["text"])["result"]["ref"] == "$r1"
        return tool_call(
            "answer",
            {
                "value": "B"
                if "(A)" in json.dumps(request["messages"]) or "Options" in json.dumps(request["messages"])
                else 2
            },
        )

    with ScriptedProvider(script) as server:
        config = RunConfig(
            benchmark="synthetic",
            model="anthropic:scripted",
            out=tmp_path / "run",
            limit=1,
            seed=2,
            progress=False,
            interface="tool-calls",
            model_options={"max_attempts": 1, "base_url": server.anthropic_url, "api_key": "k"},
            agent={"fsync": False, "preview_images": 1},
        )
        summary = run_benchmark(config)
        assert server.paths == ["/v1/messages", "/v1/messages"]
        assert all(r["tools"][0]["input_schema"]["type"] == "object" for r in server.requests)
    assert summary.statuses == {"ok": 1}
    [row] = _rows(tmp_path / "run")
    assert row["answer_source"] == "tool" and row["interface"] == "tool-calls"


def test_single_pass_takes_a_cell_answer_at_once_and_answers_without_code_from_text(tmp_path: Path) -> None:
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.benchmarks.synthetic import generate
    from spatialclaw.models.scripted import ScriptedModel
    from spatialclaw.runner.single_pass import NO_CELL, SinglePassAgent

    task = generate(1, seed=2, out_dir=tmp_path / "scenes")[0]
    config = AgentConfig(fsync=False, vlm_side_channel=False, preview_images=1)
    direct = SinglePassAgent(ScriptedModel(["```python\nanswer(2)\n```"]), config).run(task, tmp_path / "a")
    assert (direct.status, direct.answer, direct.answer_source) == ("answered", 2, "cell")
    model = ScriptedModel(["I think it is 3 metres.", "ANSWER: 3"])
    blind = SinglePassAgent(model, config).run(task, tmp_path / "b")
    assert (blind.status, blind.answer, blind.answer_source) == ("answered", 3.0, "text")
    assert NO_CELL in model.calls[1][-1].text_content  # told that no code ran
    episode = load_episode(tmp_path / "b")
    assert not episode.of_type("cell") and len(episode.of_type("format_error")) == 1


def test_single_pass_and_tool_calls_start_their_kernel_in_the_configured_sandbox_mode(tmp_path: Path) -> None:
    """``AgentConfig.sandbox`` reaches the kernel these interfaces start, and their header records it."""
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.benchmarks.synthetic import generate
    from spatialclaw.models.scripted import ScriptedModel
    from spatialclaw.runner.single_pass import SinglePassAgent

    task = generate(1, seed=2, out_dir=tmp_path / "scenes")[0]
    for mode in ("off", "auto"):
        config = AgentConfig(fsync=False, vlm_side_channel=False, preview_images=1, sandbox=mode)
        SinglePassAgent(ScriptedModel(["```python\nimport os\nprint(os.getpid())\nanswer(2)\n```"]), config).run(
            task, tmp_path / mode
        )
        header = load_episode(tmp_path / mode).header
        assert header["sandbox"]["mode"] == mode
        cell_stdout = load_episode(tmp_path / mode).of_type("cell")[0]["result"]["stdout"]
        # the kernel's own pid: small inside a PID namespace, the host's pid without one
        assert (int(cell_stdout.split()[0]) < 10) == (mode == "auto" and header["sandbox"]["active"])
