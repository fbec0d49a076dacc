"""Our exports train: one real SFT step with TRL's ``SFTTrainer`` (default ``max_length``, assistant-only loss,
failed steps masked) on a tiny random Idefics3 built from a config, fed by the TRL export of an episode the
real agent recorded against a scripted model over HTTP; the ShareGPT export against LLaMA-Factory's
``dataset_info.json`` schema and the verl export against verl's ``RLHFDataset`` row schema, field by field."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.export import export_episodes
from spatialclaw.testing.provider_server import ScriptedProvider
from spatialclaw.testing.tiny_models import build_tiny_vlm
from tests.agent_helpers import first_or_second, solid_frames

SCRIPT = [
    "Look at the first frame.\n```python\nshow(frames[0])\nprint(frames[0].array[0, 0].tolist())\n```",
    "```python\nratio = 1 / 0\n```",
    "The first frame is red.\n```python\nanswer('A')\n```",
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A run directory with one real agent episode (an image shown, a failing cell, an answer)."""
    root = tmp_path_factory.mktemp("sft")
    paths = solid_frames(root, [(220, 30, 30), (30, 30, 220)], (96, 64))
    task = first_or_second(paths, "Which frame is red?", "A", "red", benchmark="toy")
    with (
        ScriptedProvider(SCRIPT) as server,
        Agent(f"openai-compat:scripted@{server.url}", AgentConfig(max_steps=5, fsync=False)) as agent,
    ):
        assert agent.run(task, root / "run" / "red").status == "answered"
    return root / "run"


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory) -> Path:
    return build_tiny_vlm(tmp_path_factory.mktemp("tiny-vlm"))


def test_one_sft_step_on_the_trl_export_with_default_max_length(recorded, tiny_vlm, tmp_path):
    import datasets
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from trl import SFTConfig, SFTTrainer
    from trl.chat_template_utils import idefics3_chat_template

    from spatialclaw.export.trl import step_masked_chat_template

    max_length = SFTConfig.__dataclass_fields__["max_length"].default  # TRL's default budget (1024 tokens)
    report = export_episodes(
        "trl", [recorded], tmp_path / "trl", system="none", tokenizer=str(tiny_vlm), max_tokens=max_length
    )
    assert report.exported == 1 and max(report.lengths.tokens) <= max_length
    dataset = datasets.load_from_disk(str(tmp_path / "trl"))
    weights = [m["weight"] for m in dataset[0]["messages"] if m["role"] == "assistant"]
    assert 0 in weights and 1 in weights, "the failed cell's step is in the row, masked"

    processor = AutoProcessor.from_pretrained(tiny_vlm)
    processor.chat_template = idefics3_chat_template  # what SmolVLM/Idefics3 checkpoints ship
    processor.chat_template = step_masked_chat_template(processor)
    model = AutoModelForImageTextToText.from_pretrained(tiny_vlm)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    args = SFTConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=1,
        learning_rate=1e-2,
        assistant_only_loss=True,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        use_cpu=True,
        bf16=False,
        dataloader_num_workers=0,
    )
    assert args.max_length == max_length, "the trainer's default budget"
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=processor)

    batch = trainer.data_collator([dataset[0]])
    image_token = processor.tokenizer.convert_tokens_to_ids("<image>")
    assert int((batch["input_ids"] == image_token).sum()) == len(dataset[0]["images"]), "no image was cut"
    trained = processor.tokenizer.decode(batch["input_ids"][0][batch["labels"][0] != -100])
    assert "answer('A')" in trained and "ratio = 1 / 0" not in trained and "Which frame is red?" not in trained

    result = trainer.train()
    assert math.isfinite(result.training_loss) and result.training_loss > 0
    changed = [name for name, p in model.named_parameters() if not torch.equal(before[name], p.detach())]
    assert changed, "one optimiser step moved the weights"


def test_sharegpt_export_matches_llamafactory_dataset_info_schema(recorded, tmp_path):
    report = export_episodes("sharegpt", [recorded], tmp_path / "lf", name="spatial_sft")
    assert report.exported == 1
    info = json.loads((tmp_path / "lf" / "dataset_info.json").read_text())
    entry = info["spatial_sft"]
    # LLaMA-Factory's data/README: sharegpt entries name the file, the formatting, the columns and the tags
    assert set(entry) == {"file_name", "formatting", "columns", "tags"} and entry["formatting"] == "sharegpt"
    assert entry["columns"] == {"messages": "conversations", "system": "system", "images": "images"}
    assert entry["tags"] == {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt"}
    records = json.loads((tmp_path / "lf" / entry["file_name"]).read_text())
    for record in records:
        assert set(record) == set(entry["columns"].values())
        turns = record[entry["columns"]["messages"]]
        roles = [t[entry["tags"]["role_tag"]] for t in turns]
        # human at odd positions, gpt at even ones (1-based), ending with gpt
        assert roles == ["human", "gpt"] * (len(roles) // 2) and len(roles) % 2 == 0
        assert all(isinstance(t[entry["tags"]["content_tag"]], str) for t in turns)
        tokens = sum(t["value"].count("<image>") for t in turns)
        assert tokens == len(record["images"]) and all((tmp_path / "lf" / p).is_file() for p in record["images"])
        assert isinstance(record["system"], str)


def test_verl_export_matches_rlhf_dataset_schema(recorded, tmp_path):
    import pyarrow.parquet as pq

    from spatialclaw.task import Task as TaskType

    export_episodes("verl", [recorded], tmp_path / "rl.parquet")
    table = pq.read_table(tmp_path / "rl.parquet")
    # verl RLHFDataset: prompt_key="prompt" (chat messages), image_key="images", reward_model.ground_truth,
    # data_source for the reward function, extra_info.tools_kwargs for tool creation, extra_info.index
    row = table.to_pylist()[0]
    assert all(set(m) == {"role", "content"} and isinstance(m["content"], str) for m in row["prompt"])
    assert sum(m["content"].count("<image>") for m in row["prompt"]) == len(row["images"]) == 2
    assert all(set(image) == {"bytes", "path"} and image["bytes"][:4] == b"\x89PNG" for image in row["images"])
    assert row["reward_model"] == {"style": "rule", "ground_truth": "A"} and row["data_source"] == "toy"
    assert row["extra_info"]["index"] == 0 and row["extra_info"]["need_tools_kwargs"] is True
    create = row["extra_info"]["tools_kwargs"]["spatialclaw_cell"]["create_kwargs"]
    assert TaskType.from_dict(json.loads(create["task_json"])).question == "Which frame is red?"
