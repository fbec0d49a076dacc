"""Exports of recorded episodes load, first time, in the libraries people train with, with the right
number of turns and images in the right places."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from spatialclaw.export import episode_conversation, export_episodes
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.episodes import EpisodeFilter
from spatialclaw.trajectories.synthetic import SyntheticEpisode, write_synthetic_episode


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, list[SyntheticEpisode]]:
    """A run directory with three complete episodes: one with a format error and a failing cell, one
    wrong answer (another benchmark), one short correct one; plus an incomplete (killed) episode."""
    root = tmp_path / "run"
    episodes = [
        write_synthetic_episode(
            root / "ep-a", steps=5, seed=1, format_error_steps=(1,), error_steps=(2,), images_per_step=2
        ),
        write_synthetic_episode(root / "ep-b", steps=3, seed=2, correct=False, benchmark="other"),
        write_synthetic_episode(root / "ep-c", steps=2, seed=3, frame_count=3),
        write_synthetic_episode(root / "ep-d", steps=4, seed=4, complete=False),
    ]
    return root, episodes


def _complete(episodes: list[SyntheticEpisode]) -> list[SyntheticEpisode]:
    return [e for e in episodes if e.directory.name != "ep-d"]


def test_conversation_maps_outputs_to_assistant_and_observations_to_user(run):
    _, episodes = run
    ep = episodes[0]
    conversation = episode_conversation(load_episode(ep.directory))
    roles = [t.role for t in conversation.turns]
    assert roles == ["system", "user"] + ["assistant", "user"] * 4 + ["assistant"]
    kinds = [t.kind for t in conversation.turns]
    assert kinds[:2] == ["system", "prompt"]
    assert kinds[3] == "observation" and kinds[5] == "format_error" and kinds[7] == "observation"
    outputs = [t for t in conversation.turns if t.role == "assistant"]
    assert [t.text for t in outputs] == ep.assistant_texts
    assert [t.step for t in outputs] == [0, 1, 2, 3, 4]
    assert [t.weight for t in outputs] == [1, 0, 0, 1, 1]  # format error and failing cell are masked
    assert [t.reasoning for t in outputs] == [f"Thinking about step {i}." for i in range(5)]
    assert [i.png for i in conversation.images] == ep.frames + [png for imgs in ep.cell_images[:-1] for png in imgs]
    unmasked = episode_conversation(load_episode(ep.directory), mask_failed=False)
    assert all(t.weight == 1 for t in unmasked.turns if t.role == "assistant")


def test_openai_jsonl_has_images_in_user_turns_and_weights(run, tmp_path):
    root, episodes = run
    out = tmp_path / "sft.jsonl"
    report = export_episodes("openai", [root], out)
    assert report.exported == 3 and report.excluded == {"incomplete": 1}
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 3
    by_first_text = {r["messages"][1]["content"][0]["text"].split(":")[0]: r for r in records}
    for ep in _complete(episodes):
        record = by_first_text[ep.task.question.split(":")[0]]
        messages = record["messages"]
        assert messages[0]["role"] == "system" and isinstance(messages[0]["content"], str)
        assistants = [m for m in messages if m["role"] == "assistant"]
        assert [m["content"] for m in assistants] == ep.assistant_texts
        assert all(m["weight"] in (0, 1) for m in assistants)
        urls = [
            p["image_url"]["url"]
            for m in messages
            if m["role"] == "user"
            for p in m["content"]
            if p["type"] == "image_url"
        ]
        assert len(urls) == ep.image_count
        first_frame = base64.b64decode(urls[0].split(",", 1)[1])
        assert urls[0].startswith("data:image/png;base64,") and first_frame == ep.frames[0]
        assert messages[-1]["role"] == "assistant"


def _local_tokenizer():
    """A word-level tokenizer built here (no hub download) with a chat template that renders content
    lists the way vision chat templates do: one ``<image>`` token per image part."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "<image>": 1, "<|user|>": 2, "<|assistant|>": 3, "<|system|>": 4, "<|end|>": 5}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]")
    tokenizer.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>"
        "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
        "<|end|>\n{% endfor %}"
    )
    return tokenizer


def test_trl_dataset_loads_from_disk_with_one_image_per_placeholder(run, tmp_path):
    datasets = pytest.importorskip("datasets")
    root, episodes = run
    out = tmp_path / "trl"
    report = export_episodes("trl", [root], out)
    assert report.exported == 3
    dataset = datasets.load_from_disk(str(out))
    assert len(dataset) == 3 and {"messages", "images"} <= set(dataset.column_names)
    expected = {ep.directory.name: ep for ep in _complete(episodes)}
    for row in dataset:
        ep = expected[row["episode_id"]]
        placeholders = sum(1 for m in row["messages"] for c in m["content"] if c["type"] == "image")
        assert placeholders == len(row["images"]) == ep.image_count
        assert len(row["messages"]) == 2 + 2 * len(ep.assistant_texts) - 1
        assert [m["content"][0]["text"] for m in row["messages"] if m["role"] == "assistant"] == ep.assistant_texts
        assert row["images"][0].size == (64, 48)
        assert row["images"][0].convert("RGB").getpixel((5, 5)) == tuple(
            Image.open(io.BytesIO(ep.frames[0])).getpixel((5, 5))
        )


def test_trl_chat_template_preprocessing_accepts_the_dataset(run, tmp_path):
    datasets = pytest.importorskip("datasets")
    data_utils = pytest.importorskip("trl.data_utils", reason="TRL is not installed (pip install trl)")
    root, episodes = run
    out = tmp_path / "trl"
    export_episodes("trl", [root], out)
    dataset = datasets.load_from_disk(str(out))
    tokenizer = _local_tokenizer()
    expected = {ep.directory.name: ep for ep in _complete(episodes)}
    for row in dataset:
        assert data_utils.is_conversational(row)
        filled = data_utils.prepare_multimodal_messages(row["messages"], row["images"])
        assert sum(1 for m in filled for c in m["content"] if c["type"] == "image" and "image" in c) == len(
            row["images"]
        )
        text = data_utils.apply_chat_template({"messages": row["messages"]}, tokenizer)["text"]
        ep = expected[row["episode_id"]]
        assert text.count("<image>") == ep.image_count
        assert text.count("<|assistant|>") == len(ep.assistant_texts)
        assert ep.task.question in text


def test_sharegpt_image_tokens_match_images_and_dataset_info(run, tmp_path):
    root, episodes = run
    out = tmp_path / "llamafactory"
    out.mkdir()
    (out / "dataset_info.json").write_text(json.dumps({"existing": {"file_name": "x.json"}}))
    report = export_episodes("sharegpt", [root], out, name="spatial_sft")
    assert report.exported == 3
    info = json.loads((out / "dataset_info.json").read_text())
    assert "existing" in info, "other entries of dataset_info.json are kept"
    entry = info["spatial_sft"]
    assert entry["formatting"] == "sharegpt" and entry["columns"]["images"] == "images"
    records = json.loads((out / entry["file_name"]).read_text())
    assert len(records) == 3
    for record, ep in zip(records, _complete(episodes), strict=True):
        turns = record["conversations"]
        assert [t["from"] for t in turns] == ["human", "gpt"] * (len(turns) // 2) + ["human"] * (len(turns) % 2)
        assert turns[-1]["from"] == "gpt"
        tokens = sum(t["value"].count("<image>") for t in turns)
        assert tokens == len(record["images"]) == ep.image_count
        assert all((out / p).is_file() for p in record["images"])
        assert (out / record["images"][0]).read_bytes() == ep.frames[0]
        assert record["system"].startswith("You answer spatial questions")
    # LLaMA-Factory reads the data file with datasets' JSON loader
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset(
        "json", data_files=str(out / entry["file_name"]), split="train", cache_dir=str(tmp_path / "hf-cache")
    )
    assert loaded.num_rows == 3 and set(loaded.column_names) == {"conversations", "system", "images"}


def test_verl_parquet_rows_hold_prompt_images_reward_and_tool_kwargs(run, tmp_path):
    import pyarrow.parquet as pq

    from spatialclaw.task import Task

    root, episodes = run
    out = tmp_path / "rl" / "train.parquet"
    report = export_episodes("verl", [root], out)
    assert report.exported == 3
    table = pq.read_table(out)
    assert {"data_source", "prompt", "images", "ability", "reward_model", "extra_info"} <= set(table.column_names)
    rows = table.to_pylist()
    for row, ep in zip(rows, _complete(episodes), strict=True):
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["prompt"][1]["content"].count("<image>") == len(row["images"]) == len(ep.frames)
        assert row["images"][0]["bytes"] == ep.frames[0]
        assert row["reward_model"] == {"style": "rule", "ground_truth": "A"}
        assert row["data_source"] == ep.task.benchmark
        task = Task.from_dict(
            json.loads(row["extra_info"]["tools_kwargs"]["spatialclaw_cell"]["create_kwargs"]["task_json"])
        )
        assert task.question == ep.task.question and task.choices == ep.task.choices


def test_verl_skips_episodes_without_ground_truth_and_says_so(tmp_path):
    ep = write_synthetic_episode(tmp_path / "run" / "e0", steps=2)
    lines = (ep.directory / "episode.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    events[1]["task"]["ground_truth"] = None
    (ep.directory / "episode.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    report = export_episodes("verl", [tmp_path / "run"], tmp_path / "out.parquet")
    assert report.exported == 0 and report.excluded == {"no ground truth": 1}
    assert "1 no ground truth" in report.summary()


def test_ipynb_notebooks_validate_and_hold_exact_outputs(run, tmp_path):
    import nbformat

    root, episodes = run
    out = tmp_path / "notebooks"
    report = export_episodes("ipynb", [root], out)
    assert report.exported == 3
    ep = episodes[0]
    nb = nbformat.read(out / f"{ep.directory.name}.ipynb", as_version=4)
    nbformat.validate(nb)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code_cells) == 4  # five steps, one of them a format error without code
    assert code_cells[0].source == "show(frames[0])\nprint('step 0')\n"
    assert code_cells[0].outputs[0] == {"output_type": "stream", "name": "stdout", "text": "step 0\n"}
    pngs = [
        base64.b64decode(o["data"]["image/png"])
        for c in code_cells
        for o in c.outputs
        if o["output_type"] == "display_data"
    ]
    assert pngs == [png for images in ep.cell_images for png in images]
    errors = [o for c in code_cells for o in c.outputs if o["output_type"] == "error"]
    assert [(e.ename, e.evalue) for e in errors] == [("ZeroDivisionError", "division by zero")]
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert ep.task.question in markdown and "Thinking about step 3." in markdown
    assert "print('step 0')" not in markdown and "Step 0: look at frame 0." in markdown, (
        "code is in cells, prose in markdown"
    )
    first = nb.cells[0]
    assert base64.b64decode(first.attachments["frame-0.png"]["image/png"]) == ep.frames[0]


@pytest.mark.parametrize(
    ("episode_filter", "kept", "reasons"),
    [
        (EpisodeFilter(), {"ep-a", "ep-b", "ep-c"}, {"incomplete": 1}),
        (EpisodeFilter(correct_only=True), {"ep-a", "ep-c"}, {"incomplete": 1, "incorrect": 1}),
        (EpisodeFilter(min_score=0.5), {"ep-a", "ep-c"}, {"incomplete": 1, "score below minimum": 1}),
        (EpisodeFilter(max_steps=3), {"ep-b", "ep-c"}, {"incomplete": 1, "too many steps": 1}),
        (EpisodeFilter(benchmarks=("other",)), {"ep-b"}, {"incomplete": 1, "other benchmark": 2}),
        (EpisodeFilter(include_incomplete=True), {"ep-a", "ep-b", "ep-c", "ep-d"}, {}),
    ],
)
def test_filters_select_episodes_and_count_every_exclusion(run, tmp_path, episode_filter, kept, reasons):
    import datasets

    root, _ = run
    report = export_episodes("trl", [root], tmp_path / "out", episode_filter=episode_filter)
    assert dict(report.excluded) == reasons
    assert set(datasets.load_from_disk(str(tmp_path / "out"))["episode_id"]) == kept


def test_incomplete_episode_exports_up_to_its_last_output(run, tmp_path):
    _root, episodes = run
    killed = episodes[3]
    conversation = episode_conversation(load_episode(killed.directory))
    outputs = [t for t in conversation.turns if t.role == "assistant"]
    assert [t.text for t in outputs] == killed.assistant_texts
    assert len(conversation.images) == killed.image_count


def test_export_rejects_wrong_out_kind_and_empty_inputs(run, tmp_path):
    root, _ = run
    with pytest.raises(ValueError, match="is a directory"):
        export_episodes("openai", [root], tmp_path)
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        export_episodes("ipynb", [root], tmp_path / "file.txt")
    with pytest.raises(ValueError, match="unknown export format"):
        export_episodes("csv", [root], tmp_path / "x")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no episode"):
        export_episodes("openai", [tmp_path / "empty"], tmp_path / "x.jsonl")


def test_runner_layout_names_attempts_and_skips_errored_attempts(tmp_path):
    import datasets

    root = tmp_path / "bench-run"
    failed = write_synthetic_episode(root / "episodes" / "t1" / "attempt-1", steps=2, seed=1)
    log = failed.directory / "episode.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    events[-1]["reason"] = "error"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    write_synthetic_episode(root / "episodes" / "t1" / "attempt-2", steps=2, seed=2)
    write_synthetic_episode(root / "episodes" / "t2" / "attempt-1", steps=2, seed=3)
    report = export_episodes("trl", [root], tmp_path / "trl")
    assert report.excluded == {"ended with error": 1}
    assert sorted(datasets.load_from_disk(str(tmp_path / "trl"))["episode_id"]) == ["t1-attempt-2", "t2-attempt-1"]
    export_episodes("ipynb", [root], tmp_path / "nb")
    assert sorted(p.name for p in (tmp_path / "nb").iterdir()) == ["t1-attempt-2.ipynb", "t2-attempt-1.ipynb"]


def test_literal_placeholder_tokens_skip_the_episode_in_token_counting_formats(tmp_path):
    write_synthetic_episode(tmp_path / "run" / "plain", steps=2, seed=1)
    write_synthetic_episode(tmp_path / "run" / "tricky", steps=2, seed=2, question="Is the <image> tag visible?")
    report = export_episodes("sharegpt", [tmp_path / "run"], tmp_path / "sg")
    assert report.exported == 1 and report.excluded == {"literal <image> in text": 1}
    report = export_episodes("verl", [tmp_path / "run"], tmp_path / "rl.parquet")
    assert report.exported == 1 and report.excluded == {"literal <image> in text": 1}
    assert export_episodes("openai", [tmp_path / "run"], tmp_path / "a.jsonl").exported == 2
