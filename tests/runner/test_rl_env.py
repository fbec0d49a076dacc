"""The RL environment drives a real kernel cell by cell and pays the benchmark score as the reward."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from spatialclaw.runner.rl_env import SpatialEnv
from spatialclaw.task import FrameSpec, Task
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.episodes import episode_steps


def _frames(tmp_path):
    paths = []
    for i, colour in enumerate([(255, 0, 0), (0, 0, 255)]):
        path = tmp_path / f"frame_{i}.png"
        Image.new("RGB", (80, 60), colour).save(path)
        paths.append(path)
    return paths


def _choice_task(tmp_path) -> Task:
    return Task(
        question="Which frame is red?",
        inputs=[FrameSpec.images(_frames(tmp_path))],
        choices=["the first", "the second"],
        ground_truth="A",
        task_id="red",
        benchmark="toy",
    )


def _number_task(tmp_path) -> Task:
    return Task(
        question="How wide is frame 0, in pixels?",
        inputs=[FrameSpec.images(_frames(tmp_path))],
        answer_type="number",
        ground_truth=80.0,
        task_id="width",
        benchmark="toy",
    )


def test_rollout_observes_cells_and_rewards_the_answer(tmp_path):
    with SpatialEnv(max_steps=5, record_dir=tmp_path / "rollouts") as env:
        observation = env.reset(_choice_task(tmp_path))
        assert "Which frame is red?" in observation.text and "the first" in observation.text
        assert len(observation.images) == 2, "both frames are previewed with the task, as the agent does"
        assert Image.open(io.BytesIO(observation.images[0])).getpixel((3, 3)) == (255, 0, 0)
        assert "answer(" in env.system_prompt

        observation, done, reward, info = env.step("show(frames[0])\nprint(frames[0].array[0, 0].tolist())")
        assert (done, reward, info["status"], info["step"]) == (False, 0.0, "ok", 1)
        assert "[255, 0, 0]" in observation.text and len(observation.images) == 1
        assert Image.open(io.BytesIO(observation.images[0])).getpixel((3, 3)) == (255, 0, 0)

        observation, done, reward, info = env.step(
            "red = [i for i, f in enumerate(frames) if f.array[0, 0, 0] > 200]\n1 / 0"
        )
        assert not done and info["status"] == "error" and "ZeroDivisionError" in observation.text

        observation, done, reward, info = env.step("answer('AB'[red[0]])")
        assert done and reward == 1.0 and info["answer"] == "A" and not info["truncated"]
        with pytest.raises(RuntimeError, match="call reset"):
            env.step("print(1)")
        recorded = env.record_dir / "red-1"

    episode = load_episode(recorded)
    assert episode.complete and episode.answer == "A" and episode.score == 1.0 and episode.end["reason"] == "answered"
    assert [s.cell.status for s in episode_steps(episode)] == ["ok", "error", "ok"]


def test_reward_uses_benchmark_scoring_and_budget_truncates(tmp_path):
    with SpatialEnv(max_steps=2) as env:
        env.reset(_number_task(tmp_path))
        _, done, reward, info = env.step("answer(frames[0].width * 1.1)")
        assert done and info["score_details"]["metric"] == "mra"
        assert reward == pytest.approx(0.9)  # 10% error equals 1 - 0.9 in floats; the official MRA's <= counts it

        observation = env.reset(json.dumps(_choice_task(tmp_path).to_dict()))  # verl's task_json works too
        assert "Which frame is red?" in observation.text
        _, done, _, _ = env.step("x = 1")
        assert not done
        _, done, reward, info = env.step("print(x)")
        assert done and reward == 0.0 and info["truncated"]


def test_reset_gives_a_fresh_namespace_and_rejects_tasks_without_ground_truth(tmp_path):
    with SpatialEnv(max_steps=3) as env:
        env.reset(_choice_task(tmp_path))
        env.step("leftover = 42")
        env.reset(_number_task(tmp_path))
        observation, _, _, _ = env.step("print('leftover' in globals(), meta['question'])")
        assert observation.result.stdout == "False How wide is frame 0, in pixels?\n"
        task = _choice_task(tmp_path)
        task.ground_truth = None
        with pytest.raises(ValueError, match="no ground truth"):
            env.reset(task)


def test_rollouts_with_policy_outputs_export_as_training_conversations(tmp_path):
    from spatialclaw.export import export_episodes

    outputs = [
        "Check the colours first.\n```python\nshow(frames[0])\nprint(frames[0].array[0, 0].tolist())\n```",
        "The first frame is red.\n```python\nanswer('A')\n```",
    ]
    with SpatialEnv(max_steps=4, record_dir=tmp_path / "rollouts") as env:
        first = env.reset(_choice_task(tmp_path))
        for output in outputs:
            cell = output.split("```python\n", 1)[1].split("```", 1)[0]
            _, done, reward, _ = env.step(cell, output=output)
        assert done and reward == 1.0
        env.reset(_choice_task(tmp_path))  # a second rollout of the same task gets its own directory
        env.step("answer('B')")
    assert sorted(p.name for p in (tmp_path / "rollouts").iterdir()) == ["red-1", "red-2"]

    report = export_episodes("openai", [tmp_path / "rollouts" / "red-1"], tmp_path / "sft.jsonl")
    assert report.exported == 1
    messages = json.loads((tmp_path / "sft.jsonl").read_text())["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == outputs
    assert messages[1]["content"][0]["text"] == first.text
    observation_parts = messages[3]["content"]
    assert "[255, 0, 0]" in observation_parts[0]["text"]
    assert sum(1 for p in observation_parts if p["type"] == "image_url") == 1
    # the rollout without policy outputs has no model call, so it is reported, not exported
    report = export_episodes("openai", [tmp_path / "rollouts" / "red-2"], tmp_path / "b.jsonl")
    assert report.exported == 0 and report.excluded == {"no model output": 1}
