"""Replay re-executes a recorded episode's cells in a fresh kernel and reports, cell by cell, whether
stdout, the error type, the number of images and the answer are reproduced."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from spatialclaw.cli import main
from spatialclaw.runner.replay import replay_episode
from spatialclaw.runner.rl_env import SpatialEnv
from spatialclaw.task import FrameSpec, Task
from tests.agent_helpers import first_or_second, solid_frames

CELLS = [
    "import numpy as np\nmeans = [float(f.array.mean()) for f in frames]\nprint([round(m, 2) for m in means])",
    "show(frames[1], label='second')\nshow(np.zeros((10, 20, 3), dtype=np.uint8))",
    "brightest = int(np.argmax(means))\nprint('brightest', brightest, frames[brightest].index)\nundefined_name",
    "import sys\nprint('to stderr', file=sys.stderr)\nanswer('AB'[brightest])",
]


@pytest.fixture
def recorded(tmp_path):
    """An episode recorded by running real cells in a real kernel (through the RL environment)."""
    paths = solid_frames(tmp_path, [(value, value // 2, 10) for value in (40, 200)], (64, 48))
    task = first_or_second(paths, "Which frame is brighter?", "B", "bright")
    with SpatialEnv(max_steps=10, record_dir=tmp_path / "run") as env:
        env.reset(task)
        for cell in CELLS:
            env.step(cell)
    return tmp_path / "run" / "bright-1"


def test_replay_reproduces_every_cell(recorded):
    report = replay_episode(recorded)
    assert len(report.cells) == len(CELLS)
    assert [c.code for c in report.cells] == CELLS
    assert report.ok, report.table()
    assert report.cells[1].replayed["images"] == 2
    assert report.cells[2].replayed["error"] == "NameError"
    assert report.cells[3].replayed["answer"] == (True, "B")
    assert "4 of 4 cell(s) reproduced" in report.table()


def test_replay_reports_the_cells_that_differ(recorded):
    log = recorded / "episode.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    cells = [e for e in events if e["type"] == "cell"]
    cells[0]["result"]["stdout"] = "[1.0, 2.0]\n"
    cells[1]["result"]["images"] = cells[1]["result"]["images"][:1]
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    report = replay_episode(recorded)
    assert [c.ok for c in report.cells] == [False, False, True, True]
    assert report.cells[0].matches == {"stdout": False, "error": True, "images": True, "answer": True}
    assert report.cells[1].matches["images"] is False
    assert "stdout: recorded '[1.0, 2.0]\\n'" in report.table()


def test_replay_command_exit_codes(recorded, tmp_path, capsys):
    assert main(["replay", str(recorded)]) == 0
    assert "4 of 4 cell(s) reproduced" in capsys.readouterr().out
    (tmp_path / "frame_0.png").unlink()
    assert main(["replay", str(recorded)]) == 1
    assert "input files are not on this machine" in capsys.readouterr().err


def test_replay_answers_vlm_side_questions_from_the_log(tmp_path):
    from spatialclaw.agent.config import AgentConfig
    from spatialclaw.agent.loop import Agent
    from spatialclaw.testing.provider_server import ScriptedProvider

    frame = tmp_path / "frame.png"
    Image.new("RGB", (48, 32), (200, 20, 20)).save(frame)
    task = Task(
        question="What colour is the frame?",
        inputs=[FrameSpec.images([frame])],
        choices=["red", "blue"],
        ground_truth="A",
        task_id="colour",
    )
    script = [
        "```python\ncolour = vlm.ask(frames[0], 'What colour is this frame?')\nprint(colour)\n```",
        "It is red.",  # the side question, asked from inside the cell
        "```python\nanswer('A' if 'red' in colour else 'B')\n```",
    ]
    with (
        ScriptedProvider(script) as server,
        Agent(f"openai-compat:m@{server.url}", AgentConfig(max_steps=4, fsync=False)) as agent,
    ):
        result = agent.run(task, tmp_path / "run" / "colour")
    assert result.answer == "A"
    episode_dir = tmp_path / "run" / "colour"

    report = replay_episode(episode_dir)
    assert report.ok, report.table()
    assert report.cells[0].replayed["stdout"] == "It is red.\n"

    log = episode_dir / "episode.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(e) + "\n" for e in events if e.get("purpose") != "vlm.ask"))
    report = replay_episode(episode_dir)
    assert report.cells[0].matches["stdout"] is False and report.cells[0].replayed["error"] is not None
