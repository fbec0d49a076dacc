"""Round trip from the real agent: episodes recorded by ``Agent`` with a scripted model served over real
HTTP (the production OpenAI client path), exported in every format and loaded by the real libraries,
replayed in a fresh kernel, and killed mid-run."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.export import episode_conversation, export_episodes
from spatialclaw.runner.replay import replay_episode
from spatialclaw.testing.provider_server import Reply, ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.episodes import main_model_calls
from tests.agent_helpers import first_or_second, solid_frames

SCRIPTS = {
    "red": [
        Reply(
            "Let me look at the first frame.\n```python\nshow(frames[0])\nprint(frames[0].array[0, 0].tolist())\n```",
            reasoning="The colours tell which is red.",
        ),
        "I believe it is the first one.",
        "```python\nratio = 1 / 0\n```",
        "<think>red channel is high</think>The first frame is red.\n```python\nshow(frames[1], label='other')\nanswer('A')\n```",
    ],
    "blue": [
        "```python\nreds = [int(f.array[..., 0].mean()) for f in frames]\nprint(reds)\n```",
        "```python\nshow(frames[1])\nanswer('B')\n```",
    ],
    "budget": [
        "```python\nprint('looking')\n```",
        "```python\nprint('still looking')\n```",
        "ANSWER: B",
    ],
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A run directory with three real agent episodes (cells, a format error, an exception, extra
    images, a reasoning section, a budget-exhausted fallback)."""
    root = tmp_path_factory.mktemp("agent")
    paths = solid_frames(root, [(220, 30, 30), (30, 30, 220)], (96, 64))
    for name, script in SCRIPTS.items():
        task = first_or_second(paths, f"Which frame is {name}?", "A", name, benchmark="toy")
        config = AgentConfig(max_steps=2 if name == "budget" else 6, fsync=False)
        with ScriptedProvider(script) as server, Agent(f"openai-compat:scripted-model@{server.url}", config) as agent:
            result = agent.run(task, root / "run" / name)
        assert result.status == ("budget" if name == "budget" else "answered")
    return root / "run"


def _expected(directory: Path) -> tuple[int, int, list[str]]:
    """Turns, images and assistant texts of the conversation, read straight from the log: the last
    main call's request plus its reply."""
    episode = load_episode(directory)
    last = main_model_calls(episode)[-1]
    messages = episode.request_messages(last)
    images = sum(1 for m in messages for p in m["content"] if p["type"] == "image")
    assistants = [m["content"][0]["text"] for m in messages if m["role"] == "assistant"]
    return len(messages) + 1, images, assistants


def test_conversation_of_agent_episode_matches_the_logged_requests(recorded):
    for name in SCRIPTS:
        conversation = episode_conversation(load_episode(recorded / name))
        turns, images, assistants = _expected(recorded / name)
        assert len(conversation.turns) == turns and len(conversation.images) == images
        outputs = [t for t in conversation.turns if t.role == "assistant"]
        assert [t.text for t in outputs[:-1]] == assistants
    red = episode_conversation(load_episode(recorded / "red"))
    outputs = [t for t in red.turns if t.role == "assistant"]
    assert [t.weight for t in outputs] == [1, 0, 0, 1]
    assert outputs[-1].text == "The first frame is red.\n```python\nshow(frames[1], label='other')\nanswer('A')\n```"
    assert outputs[0].reasoning == "The colours tell which is red."
    budget = episode_conversation(load_episode(recorded / "budget"))
    assert budget.turns[-1].text == "ANSWER: B" and budget.turns[-1].weight == 1


def test_every_format_loads_in_its_library_with_the_logged_counts(recorded, tmp_path):
    import datasets
    import nbformat
    import pyarrow.parquet as pq

    expected = {name: _expected(recorded / name) for name in SCRIPTS}

    report = export_episodes("openai", [recorded], tmp_path / "sft.jsonl")
    assert report.exported == 3
    for line in (tmp_path / "sft.jsonl").read_text().splitlines():
        messages = json.loads(line)["messages"]
        name = next(n for n in SCRIPTS if f"Which frame is {n}?" in messages[1]["content"][0]["text"])
        turns, images, _ = expected[name]
        assert len(messages) == turns
        assert (
            sum(1 for m in messages if m["role"] == "user" for p in m["content"] if p["type"] == "image_url") == images
        )

    export_episodes("trl", [recorded], tmp_path / "trl")
    for row in datasets.load_from_disk(str(tmp_path / "trl")):
        turns, images, _ = expected[row["episode_id"]]
        assert len(row["messages"]) == turns and len(row["images"]) == images
        assert sum(1 for m in row["messages"] for c in m["content"] if c["type"] == "image") == images

    export_episodes("sharegpt", [recorded], tmp_path / "sharegpt")
    records = json.loads((tmp_path / "sharegpt" / "spatialclaw.json").read_text())
    assert len(records) == 3
    for record in records:
        assert sum(t["value"].count("<image>") for t in record["conversations"]) == len(record["images"])
        assert all((tmp_path / "sharegpt" / p).is_file() for p in record["images"])

    export_episodes("verl", [recorded], tmp_path / "rl.parquet")
    rows = pq.read_table(tmp_path / "rl.parquet").to_pylist()
    assert len(rows) == 3
    for row in rows:
        assert row["prompt"][-1]["content"].count("<image>") == len(row["images"]) >= 1

    export_episodes("ipynb", [recorded], tmp_path / "nb")
    nb = nbformat.read(tmp_path / "nb" / "red.ipynb", as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in code] == [r.code for _, r in load_episode(recorded / "red").cells()]
    assert code[0].outputs[0]["text"] == "[220, 30, 30]\n"
    assert [o["ename"] for c in code for o in c.outputs if o["output_type"] == "error"] == ["ZeroDivisionError"]
    shown = [base64.b64decode(o["data"]["image/png"]) for o in code[2].outputs if o["output_type"] == "display_data"]
    assert len(shown) == 1 and Image.open(io.BytesIO(shown[0])).getpixel((5, 5)) == (30, 30, 220)
    budget = nbformat.read(tmp_path / "nb" / "budget.ipynb", as_version=4)
    assert "ANSWER: B" in "\n".join(c.source for c in budget.cells if c.cell_type == "markdown")


def test_viewer_pages_of_agent_episodes(recorded, tmp_path):
    from spatialclaw.trajectories.episode_viewer import write_views

    result = write_views(recorded, tmp_path / "site")
    assert len(result.pages) == 3
    red = (tmp_path / "site" / "episodes" / "red.html").read_text()
    assert "Which frame is red?" in red and "ZeroDivisionError" in red and red.count('<section class="step"') == 4
    episode = load_episode(recorded / "red")
    previews = len(episode.messages(main_model_calls(episode)[0])[1].images)
    shown = sum(len(result.images) for _, result in episode.cells())
    assert previews >= 1 and shown == 2
    assert red.count("data:image/png;base64,") == previews + shown
    budget = (tmp_path / "site" / "episodes" / "budget.html").read_text()
    assert "Fallback" in budget and "ANSWER: B" in budget
    index = result.index.read_text()
    assert all(f'href="episodes/{name}.html"' in index for name in SCRIPTS)


def test_replay_of_agent_episodes_reproduces_every_cell(recorded):
    for name in SCRIPTS:
        report = replay_episode(recorded / name)
        assert report.cells and report.ok, report.table()


AGENT_UNTIL_KILLED = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.agent.loop import Agent
    from spatialclaw.task import FrameSpec, Task
    from spatialclaw.testing.provider_server import ScriptedProvider

    frame, out = sys.argv[1], Path(sys.argv[2])
    task = Task(question="Count forever?", inputs=[FrameSpec.images([frame])], answer_type="number", ground_truth=1)
    script = lambda request, index: f"```python\\nimport time\\ntime.sleep(0.2)\\nprint({index})\\n```"
    with ScriptedProvider(script) as server, Agent(f"openai-compat:m@{server.url}", AgentConfig(max_steps=200)) as agent:
        agent.run(task, out)
    """
)


def test_agent_killed_mid_episode_leaves_an_incomplete_loadable_log(tmp_path):
    import psutil

    frame = tmp_path / "frame.png"
    Image.new("RGB", (32, 32), (10, 200, 10)).save(frame)
    out = tmp_path / "run" / "killed"
    process = subprocess.Popen([sys.executable, "-c", AGENT_UNTIL_KILLED, str(frame), str(out)], start_new_session=True)
    log = out / "episode.jsonl"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if log.exists() and log.read_text().count('"type": "cell"') >= 3:
                break
            time.sleep(0.1)
        assert process.poll() is None, f"the agent process ended early with code {process.returncode}"
        children = psutil.Process(process.pid).children(recursive=True)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    for child in children:  # the kernel; it is in the killed process group
        try:
            child.wait(timeout=10)
        except psutil.TimeoutExpired:
            child.kill()

    episode = load_episode(out)
    assert not episode.complete and episode.end is None
    cells = episode.cells()
    assert len(cells) >= 3 and cells[0][1].stdout == "0\n"
    assert export_episodes("openai", [out], tmp_path / "a.jsonl").excluded == {"incomplete": 1}
    from spatialclaw.trajectories.episodes import EpisodeFilter

    report = export_episodes(
        "openai", [out], tmp_path / "b.jsonl", episode_filter=EpisodeFilter(include_incomplete=True)
    )
    assert report.exported == 1
