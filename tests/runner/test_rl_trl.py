"""TRL's GRPOTrainer drives the spatialclaw kernel: one real rollout and optimiser step through
``environment_factory`` with a tiny tool-calling model, the reward scored on the host."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.runner.rl_env import TRLSpatialEnvironment, grpo_dataset
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing.tiny_models import build_tiny_tool_lm, teach
from spatialclaw.trajectories.episode_log import iter_episode_dirs, load_episode

SYSTEM = "Answer by calling run_cell with one Python cell; call answer(value) in it."
REPLY = '<tool_call>\n{"name": "run_cell", "arguments": {"code": "answer(\'A\')"}}\n</tool_call><|im_end|>'


def _task(tmp_path: Path, ground_truth: object = "A") -> Task:
    paths = []
    for i, colour in enumerate([(255, 0, 0), (0, 0, 255)]):
        path = tmp_path / f"frame_{i}.png"
        Image.new("RGB", (40, 30), colour).save(path)
        paths.append(path)
    return Task(
        question="Which frame is red?",
        inputs=[FrameSpec.images(paths)],
        choices=["the first", "the second"],
        ground_truth=ground_truth,
        task_id="red",
        benchmark="toy",
    )


def test_environment_rewards_from_the_host_and_keeps_the_truth_from_the_kernel(tmp_path):
    environment = TRLSpatialEnvironment(max_steps=3)
    try:
        row = grpo_dataset([_task(tmp_path, ground_truth="A")], max_steps=3, system=SYSTEM)[0]
        assert "Which frame is red?" in environment.reset(**row)
        leaked = environment.run_cell(
            "import os\nprint(repr(meta), sorted(k for k in globals() if 'truth' in k.lower()),"
            " [k for k, v in os.environ.items() if 'truth' in k.lower()])"
        )
        assert "ground_truth" not in leaked and "[] []" in leaked, "the kernel cannot see the ground truth"
        environment.run_cell("reward = 1.0\nglobals()['score'] = 1.0")
        assert environment.get_reward() == 0.0, "a cell cannot set its reward"
        environment.run_cell("answer('B')")
        assert environment.get_reward() == 0.0 and environment.done
        assert "episode is over" in environment.run_cell("answer('A')"), "no second answer after the end"
        assert environment.get_reward() == 0.0
        environment.reset(**row)
        environment.run_cell("answer('A')")
        assert environment.get_reward() == 1.0
    finally:
        TRLSpatialEnvironment.close_all()


def test_grpo_rollout_calls_run_cell_and_scores_the_answer(tmp_path):
    pytest.importorskip("trl")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import get_json_schema
    from trl import GRPOConfig, GRPOTrainer

    model_dir = build_tiny_tool_lm(tmp_path / "model")
    task = _task(tmp_path)
    dataset = grpo_dataset([task], max_steps=3, system=SYSTEM)
    factory = functools.partial(
        TRLSpatialEnvironment, max_steps=3, observation_chars=400, record_dir=tmp_path / "rollouts"
    )

    # Overfit the tiny model on the prompt TRL will render (row prompt + reset text, the tool schema), so the
    # rollout makes the tool call deterministically.
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    probe = TRLSpatialEnvironment(max_steps=3)
    prompt = [dict(m) for m in dataset[0]["prompt"]]
    prompt[-1]["content"] += probe.reset(**dataset[0])
    prompt_ids = tokenizer.apply_chat_template(
        prompt, tools=[get_json_schema(probe.run_cell)], add_generation_prompt=True, tokenize=True, return_dict=False
    )
    probe.env.close()
    teach(model_dir, list(prompt_ids), REPLY)

    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=96,
        max_tool_calling_iterations=1,
        temperature=0.2,
        learning_rate=1e-4,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir),
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=factory,
    )
    try:
        trainer.train()
    finally:
        TRLSpatialEnvironment.close_all()

    logged = {k: v for entry in trainer.state.log_history for k, v in entry.items()}
    assert logged["tools/call_frequency"] >= 1.0, "every rollout called run_cell"
    assert logged["reward"] == pytest.approx(1.0), "the host scored answer('A') against the ground truth"
    rollouts = [load_episode(d) for d in iter_episode_dirs(tmp_path / "rollouts")]
    assert len(rollouts) == 2 and all(r.answer == "A" and r.score == 1.0 for r in rollouts)
    assert all(r.task["task_id"] == "red" and r.end["reason"] == "answered" for r in rollouts)
