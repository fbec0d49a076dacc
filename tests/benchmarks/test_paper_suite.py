"""The paper's suite end to end: `bench --suite paper --limit 2` from a relative --source-root over all 20 benchmarks'
published-layout fixtures
(built by tests/benchmarks/layouts_blink_to_osibench.py and tests/benchmarks/layouts_paibench_to_vstibench.py), a scripted model, the key frames each request
carried (per input, as each benchmark's frame policy says), the instructions, and `report`'s paper table."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tests.benchmarks.layouts_blink_to_osibench as fixtures_p2
import tests.benchmarks.layouts_paibench_to_vstibench as fixtures_p3
from spatialclaw.benchmarks.names import PAPER_NAMES
from spatialclaw.benchmarks.paper_setting import PAPER_FOLDERS, instruction_bytes, paper_specs
from spatialclaw.benchmarks.registry import find_spec
from spatialclaw.task import Task
from spatialclaw.trajectories.run_dir import RunDir

BUILDERS: dict[str, Callable[[Path], Path]] = {
    name.removeprefix("build_fixture_"): builder
    for module in (fixtures_p2, fixtures_p3)
    for name, builder in vars(module).items()
    if name.startswith("build_fixture_") and callable(builder)
}

#: The notes' section 0: videos at 1 fps for these four, native fps for the others; 64 key frames for MMSI-Video.
ONE_FPS = {"cvbench", "perceptioncomp", "videomme", "videommev2"}


def test_every_paper_name_has_one_spec_and_a_fixture_builder() -> None:
    assert [s.paper_name for s in paper_specs()] == list(PAPER_NAMES)
    assert set(BUILDERS) == set(PAPER_NAMES)
    assert set(PAPER_FOLDERS) == set(PAPER_NAMES)
    for name in PAPER_NAMES:
        spec = find_spec(name)
        assert spec is not None and spec.paper_name == name, name
        assert spec.frames.fps == (1.0 if name in ONE_FPS else None), name
        assert spec.frames.key_frames == (64 if name == "mmsivideo" else 32), name
        assert spec.frames.long_side == 768 and spec.instruction == f"{name}.md" and spec.read_source, name
        assert instruction_bytes(spec.instruction).strip(), name


def _image_count(request: dict[str, Any]) -> int:
    return sum(
        1
        for message in request.get("messages", [])
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )


def _text(request: dict[str, Any]) -> str:
    texts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p.get("text", "") for p in content if p.get("type") == "text"]
    return "\n".join(texts)


def _expected_images(task: Task) -> int:
    """The policy's key frames per input, all of an input's frames when it has fewer."""
    from spatialclaw.primitives.frames.load import load_frames

    return sum(min(int(task.meta["key_frames"]), len(load_frames(spec.to_dict()))) for spec in task.inputs)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]], int, str]:
    from spatialclaw.cli import main
    from spatialclaw.testing.provider_server import ScriptedProvider

    base = tmp_path_factory.mktemp("paper")
    root = base / "data"
    root.mkdir()
    for name, builder in BUILDERS.items():
        folder = builder(root)
        wanted = root / PAPER_FOLDERS[name]
        if folder.resolve() != wanted.resolve():
            wanted.symlink_to(folder.resolve(), target_is_directory=True)
    out = base / "suite"
    patch = pytest.MonkeyPatch()
    patch.setenv("OPENAI_API_KEY", "test-key")
    patch.setenv("HF_DATASETS_CACHE", str(base / "hf-datasets"))
    patch.setenv("SPATIALCLAW_CACHE", str(base / "cache"))
    patch.chdir(base)  # --source-root as users type it: relative to the current directory
    try:
        with ScriptedProvider(lambda request, index: "The answer is A.\nANSWER: A") as server:
            code = main(
                ["bench", "--suite", "paper", "--source-root", "data", "--out", str(out), "--limit", "2"]
                + ["--model", f"openai-compat:scripted@{server.url}", "--interface", "no-tools", "--no-progress"]
                + ["--agent-option", "fsync=false", "--model-retries", "1"]
            )
            requests = list(server.requests)
        report = base / "report"
        assert main(["report", str(out), "--out", str(report)]) == 0
        table = (report / "report.md").read_text()
    finally:
        patch.undo()
    return out, requests, code, table


def test_the_suite_runs_every_benchmark_and_each_request_carries_its_key_frames(suite) -> None:
    out, requests, code, _ = suite
    assert code == 0
    position = 0
    for spec in paper_specs():
        name = spec.paper_name or spec.name
        run = RunDir(out / name)
        rows = run.results.load()
        assert rows and all(r["status"] == "ok" for r in rows.values()), (name, rows)  # no 'budget' endings
        assert all(r["scoring"] == "reference" for r in rows.values()), name
        tasks = run.tasks()
        assert 1 <= len(tasks) <= 2, name
        instruction = instruction_bytes(f"{name}.md").decode().strip()
        for task in tasks:  # one worker, no tools: one request per task, in order
            request = requests[position]
            position += 1
            assert task.question in _text(request) and instruction in _text(request), name
            assert task.meta["key_frames"] == spec.frames.key_frames and task.meta["instruction"] == f"{name}.md"
            assert all(f.fps == spec.frames.fps for f in task.inputs if f.kind == "video" and not f.indices), name
            assert _image_count(request) == _expected_images(task), (name, task.task_id)
            assert 0 < _image_count(request) <= spec.frames.key_frames * len(task.inputs), name
    assert position == len(requests)


def test_the_report_prints_the_papers_table(suite) -> None:
    _, _, _, table = suite
    lines = table.splitlines()
    header = "| model (interface) | " + " | ".join(PAPER_NAMES) + " | Avg |"
    assert header in lines
    row = lines[lines.index(header) + 2]
    assert row.startswith("| openai-compat:scripted") and row.count("|") == len(PAPER_NAMES) + 3
    assert "## Breakdowns" in table and "### blink by category" in table and "### dsibench by aug" in table


def test_the_episode_records_the_instruction_and_its_hash(suite) -> None:
    out = suite[0]
    episode = next((out / "blink" / "episodes").rglob("episode.jsonl"))
    task = next(json.loads(line) for line in episode.read_text().splitlines() if '"task"' in line)["task"]
    assert task["meta"]["instruction"] == "blink.md" and len(task["meta"]["instruction_sha256"]) == 64
