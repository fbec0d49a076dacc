"""Exported rows are compact and fit a trainer's budget: the system prompt is chosen, rows are measured in
a real tokenizer's tokens (images expanded) and fitted by whole turns, failed steps stay masked in TRL, and
an export that keeps nothing writes nothing and says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spatialclaw.agent.prompting import system_prompt
from spatialclaw.benchmarks.names import normalise_benchmark_name
from spatialclaw.chat import TextPart
from spatialclaw.export import episode_conversation, export_episodes
from spatialclaw.export.conversation import Turn
from spatialclaw.export.length import TokenCounter, fit_to_budget
from spatialclaw.export.system import compact_system_prompt, system_rewriter
from spatialclaw.testing.tiny_models import build_tiny_vlm
from spatialclaw.trajectories.episode_log import load_episode
from spatialclaw.trajectories.episodes import EpisodeFilter
from spatialclaw.trajectories.synthetic import write_synthetic_episode


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory) -> Path:
    return build_tiny_vlm(tmp_path_factory.mktemp("tiny-vlm"))


def _with_full_system_prompt(directory: Path, max_steps: int) -> None:
    """Rewrite a synthetic episode as if it had run with the agent's full manual (as every run did)."""
    full = system_prompt(max_steps, api_detail="full")
    log = directory / "episode.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    for event in events:
        if event["type"] == "header":
            event["config"]["max_steps"] = max_steps
        if event["type"] == "model_call":
            event["request"]["messages"][0]["content"] = [{"type": "text", "text": full}]
    log.write_text("".join(json.dumps(e) + "\n" for e in events))


def test_system_choice_replaces_a_long_recorded_prompt_and_keeps_a_compact_one(tmp_path):
    long = write_synthetic_episode(tmp_path / "long", steps=3, seed=1)
    _with_full_system_prompt(long.directory, max_steps=12)
    short = write_synthetic_episode(tmp_path / "short", steps=3, seed=2)
    long_conversation = episode_conversation(load_episode(long.directory))
    short_conversation = episode_conversation(load_episode(short.directory))
    core = compact_system_prompt(12)
    assert len(core) < len(long_conversation.system) / 2, "the compact manual is much shorter than the full one"
    assert "at most 12 steps" in core, "it is the manual for the episode's own step budget"

    assert system_rewriter("core")(long_conversation).system == core
    assert system_rewriter("core")(short_conversation).system == short_conversation.system, (
        "already compact: kept exactly"
    )
    assert system_rewriter("full")(short_conversation).system == system_prompt(3, api_detail="full")
    stripped = system_rewriter("none")(long_conversation)
    assert stripped.system is None and stripped.turns == long_conversation.turns[1:]
    custom = tmp_path / "mine.txt"
    custom.write_text("Answer with code.")
    assert system_rewriter(str(custom))(long_conversation).system == "Answer with code."
    with pytest.raises(FileNotFoundError, match="neither one of core, full, none nor a text file"):
        system_rewriter("tiny")


def test_default_export_rows_start_with_the_compact_manual(tmp_path):
    episode = write_synthetic_episode(tmp_path / "run" / "e", steps=3, seed=1)
    _with_full_system_prompt(episode.directory, max_steps=12)
    full = export_episodes("openai", [tmp_path / "run"], tmp_path / "full.jsonl", system="full")
    default = export_episodes("openai", [tmp_path / "run"], tmp_path / "core.jsonl")
    full_row = json.loads((tmp_path / "full.jsonl").read_text())
    core_row = json.loads((tmp_path / "core.jsonl").read_text())
    assert core_row["messages"][0]["content"] == compact_system_prompt(12)
    assert core_row["messages"][1:] == full_row["messages"][1:], "only the system turn differs"
    assert default.lengths.chars[0] < full.lengths.chars[0] - 20_000


def test_token_counter_counts_image_tokens_and_fitting_removes_whole_turns(tmp_path, tiny_vlm):
    episode = write_synthetic_episode(tmp_path / "e", steps=5, seed=1, images_per_step=1)
    conversation = system_rewriter("none")(episode_conversation(load_episode(episode.directory)))
    counter = TokenCounter(str(tiny_vlm))
    with_images = counter.count(conversation.turns[:1])
    assert conversation.turns[0].images, "the task turn holds the frames"
    task_turn = conversation.turns[0]
    text_only = counter.count([Turn("user", [p for p in task_turn.parts if isinstance(p, TextPart)], "prompt")])
    assert with_images - text_only >= 2 * len(task_turn.images), "each image becomes its image tokens"

    total = counter.count(conversation.turns)
    fitted = fit_to_budget(conversation, counter, total - 1)
    assert fitted.trimmed and fitted.tokens <= total - 1
    kept = fitted.conversation.turns
    assert kept == conversation.turns[: len(kept)], "a prefix of whole turns"
    assert kept[-1].role == "assistant" and kept[-1].weight == 1, "it ends with an output to learn"
    assert counter.count(kept) == fitted.tokens

    first_output = next(i for i, t in enumerate(conversation.turns) if t.role == "assistant")
    assert fit_to_budget(conversation, counter, counter.count(conversation.turns[:first_output])).conversation is None


def test_max_tokens_fits_rows_reports_lengths_and_needs_a_tokenizer(tmp_path, tiny_vlm):
    import datasets

    write_synthetic_episode(tmp_path / "run" / "short", steps=2, seed=1)
    write_synthetic_episode(tmp_path / "run" / "long", steps=8, seed=2, images_per_step=2)
    counter = TokenCounter(str(tiny_vlm))
    lengths = {
        name: counter.count(episode_conversation(load_episode(tmp_path / "run" / name)).turns)
        for name in ("short", "long")
    }
    budget = (lengths["short"] + lengths["long"]) // 2
    report = export_episodes("trl", [tmp_path / "run"], tmp_path / "trl", tokenizer=str(tiny_vlm), max_tokens=budget)
    assert report.exported == 2 and report.lengths.trimmed == 1 and report.lengths.dropped == 0
    assert max(report.lengths.tokens) <= budget
    line = report.lengths.summary()
    assert f"tokens ({tiny_vlm})" in line and f"1 row(s) over {budget} tokens: 1 trimmed" in line
    rows = {row["episode_id"]: row for row in datasets.load_from_disk(str(tmp_path / "trl"))}
    placeholders = sum(1 for m in rows["long"]["messages"] for c in m["content"] if c["type"] == "image")
    assert placeholders == len(rows["long"]["images"]), "images and placeholders still match after trimming"
    assert rows["long"]["messages"][-1]["role"] == "assistant"

    report = export_episodes("openai", [tmp_path / "run"], tmp_path / "x.jsonl", tokenizer=str(tiny_vlm), max_tokens=20)
    assert report.exported == 0 and report.excluded == {"longer than 20 tokens": 2}
    assert not (tmp_path / "x.jsonl").exists()
    with pytest.raises(ValueError, match="--max-tokens needs --tokenizer"):
        export_episodes("openai", [tmp_path / "run"], tmp_path / "y.jsonl", max_tokens=100)
    with pytest.raises(ValueError, match="could not be loaded"):
        export_episodes("openai", [tmp_path / "run"], tmp_path / "y.jsonl", tokenizer=str(tmp_path / "no-model"))


def test_trl_rows_carry_step_weights_and_the_template_masks_failed_steps(tmp_path, tiny_vlm):
    import datasets
    from transformers import AutoProcessor
    from trl.chat_template_utils import idefics3_chat_template
    from trl.data_utils import prepare_multimodal_messages

    episode = write_synthetic_episode(tmp_path / "run" / "e", steps=4, seed=1, error_steps=(1,))
    export_episodes("trl", [tmp_path / "run"], tmp_path / "trl")
    row = datasets.load_from_disk(str(tmp_path / "trl"))[0]
    assert [m["weight"] for m in row["messages"]] == [None, None, 1, None, 0, None, 1, None, 1]

    from spatialclaw.export.trl import step_masked_chat_template

    processor = AutoProcessor.from_pretrained(tiny_vlm)
    processor.chat_template = idefics3_chat_template  # the template SmolVLM/Idefics3 checkpoints ship
    template = step_masked_chat_template(processor)
    messages = prepare_multimodal_messages(row["messages"], row["images"])
    output = processor.apply_chat_template(
        messages, chat_template=template, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    ids, mask = output["input_ids"][0], output["assistant_masks"][0]
    trained = processor.tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
    for i, text in enumerate(episode.assistant_texts):
        assert (text in trained) == (i != 1), f"step {i}: trained only when it did not fail"
    rendered = processor.apply_chat_template(messages, chat_template=template, tokenize=False)
    assert rendered == processor.apply_chat_template(messages, tokenize=False), "the text is the model's own template"


def test_empty_export_writes_nothing_and_names_filters_and_benchmarks(tmp_path):
    write_synthetic_episode(tmp_path / "run" / "a", steps=2, seed=1, benchmark="vsi_bench", correct=False)
    write_synthetic_episode(tmp_path / "run" / "b", steps=2, seed=2, benchmark="mmsi")
    for fmt, out in [("openai", "o.jsonl"), ("trl", "trl"), ("sharegpt", "sg"), ("verl", "v.parquet"), ("ipynb", "nb")]:
        report = export_episodes(
            fmt,
            [tmp_path / "run"],
            tmp_path / out,
            episode_filter=EpisodeFilter(correct_only=True, benchmarks=("VSI-Bench",)),
        )
        assert report.exported == 0
        assert not (tmp_path / out).exists(), f"{fmt}: nothing written"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
        message = report.why_empty()
        assert "other benchmark: 1" in message and "incorrect: 1" in message
        assert "benchmarks seen: mmsi (1), vsi_bench (1)" in message


def test_benchmark_names_compare_normalised(tmp_path):
    assert normalise_benchmark_name("VSI-Bench") == normalise_benchmark_name("vsi_bench") == "vsi_bench"
    assert (
        normalise_benchmark_name(" MMSI bench ") == "mmsi_bench" and normalise_benchmark_name("VSIBench") == "vsi_bench"
    )
    write_synthetic_episode(tmp_path / "run" / "a", steps=2, seed=1, benchmark="vsi_bench")
    report = export_episodes(
        "openai", [tmp_path / "run"], tmp_path / "o.jsonl", episode_filter=EpisodeFilter(benchmarks=("vsi-bench",))
    )
    assert report.exported == 1
