"""The paper-setting machinery on a made-up spec: --source DIR read by the spec's read_source, media under DIR and
its extracted archives, the frame policy (fps, key frames per input, long side) and its overrides, the
instruction in the prompt and the episode, --seed 42 --limit N, names, and `data download` offline and after."""

from __future__ import annotations

import hashlib
import io
import json
import random
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from spatialclaw.benchmarks.data.download import download_repo, format_checks, prepare_folder
from spatialclaw.benchmarks.names import PAPER_NAMES, normalise_benchmark_name
from spatialclaw.benchmarks.registry import find_spec, load_benchmark
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, FramePolicy, RecordContext, load_tasks
from spatialclaw.benchmarks.specs import SPECS
from spatialclaw.task import FrameSpec, Task


def write_video(path: Path, frames: int, fps: int = 10, size: tuple[int, int] = (64, 48)) -> Path:
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for i in range(frames):
            pixels = np.full((size[1], size[0], 3), (7 * i) % 255, np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        container.mux(stream.encode())
    return path


def _read_source(folder: Path) -> list[dict[str, Any]]:
    path = folder / "data" / "questions.json"
    if not path.is_file():
        raise DatasetUnavailable(f"toy: {path} is missing from {folder}")
    return list(json.loads(path.read_text()))


def _to_task(record: dict[str, Any], ctx: RecordContext) -> Task:
    return Task(
        question=record["question"],
        inputs=[FrameSpec.video(ctx.media(v)) for v in record["videos"]],
        choices=["left", "right"],
        answer_type="multiple_choice",
        ground_truth="A",
        task_id=f"toy/{record['id']}",
        benchmark="toy",
        category=record["kind"],
        meta={"level": record["level"]},
    )


TOY = BenchmarkSpec(
    name="toy",
    description="two-video questions in a published-layout folder",
    to_task=_to_task,
    hub_id="someone/toy",
    read_source=_read_source,
    frames=FramePolicy(fps=2.0, key_frames=3, long_side=32),
    instruction="toy.md",
    archives=("Toy.zip",),
    expected_files=(("data/questions.json", 1), ("Toy/**/*.mp4", 3)),
    breakdowns=("category", "level"),
)


INSTRUCTION = "Reply with the letter of the right option only.\n"


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy spec registered, its instruction readable (without writing into the package), and its folder as
    `data download` leaves it."""
    import spatialclaw.agent.prompting as prompting
    import spatialclaw.benchmarks.paper_setting as paper_setting

    folder = tmp_path / "Toy-Bench"
    (folder / "data").mkdir(parents=True)
    records = [
        {"id": i, "question": f"Which side, {i}?", "videos": ["a/one.mp4", "b/two.mp4"], "kind": k, "level": lv}
        for i, (k, lv) in enumerate([("near", "easy"), ("far", "hard"), ("near", "hard"), ("far", "easy")])
    ]
    (folder / "data" / "questions.json").write_text(json.dumps(records))
    write_video(folder / "Toy" / "a" / "one.mp4", frames=30)  # 3 s at 10 fps: 6 frames at 2 fps
    write_video(folder / "Toy" / "b" / "two.mp4", frames=10)  # 1 s: 2 frames at 2 fps
    text = INSTRUCTION.encode()
    real_bytes, real_text = paper_setting.instruction_bytes, prompting._template_text
    monkeypatch.setattr(paper_setting, "instruction_bytes", lambda name: text if name == "toy.md" else real_bytes(name))
    monkeypatch.setattr(
        prompting, "_template_text", lambda name: INSTRUCTION if name == "benchmarks/toy.md" else real_text(name)
    )
    monkeypatch.setitem(SPECS, "toy", TOY)
    return folder


def test_a_directory_source_is_read_by_read_source_and_media_resolve_under_it(toy: Path, tmp_path: Path) -> None:
    tasks = load_tasks(TOY, source=toy, media_cache=tmp_path / "cache")
    assert [t.task_id for t in tasks] == ["toy/0", "toy/1", "toy/2", "toy/3"]
    # "a/one.mp4" is not at DIR/a/one.mp4 but inside the folder the archive Toy.zip extracts to
    assert tasks[0].inputs[0].paths == [str((toy / "Toy" / "a" / "one.mp4").resolve())]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetUnavailable, match=r"questions\.json is missing from .*empty"):
        load_tasks(TOY, source=tmp_path / "empty")
    (toy / "Toy" / "b" / "two.mp4").unlink()
    with pytest.raises(DatasetUnavailable, match=r"two\.mp4 does not exist.*--source .*Toy-Bench"):
        load_tasks(TOY, source=toy, media_cache=tmp_path / "cache")


def test_the_frame_policy_and_instruction_reach_the_task_and_its_overrides_apply(toy: Path) -> None:
    from spatialclaw.benchmarks.paper_setting import instruction_bytes

    task = load_benchmark("toy", source=toy).tasks[0]
    assert [f.fps for f in task.inputs] == [2.0, 2.0]
    assert task.meta["key_frames"] == 3 and task.meta["frame_long_side"] == 32 and task.meta["frame_fps"] == 2.0
    assert task.meta["instruction"] == "toy.md"
    assert task.meta["instruction_sha256"] == hashlib.sha256(instruction_bytes("toy.md")).hexdigest()
    changed = load_benchmark("toy", source=toy, frames={"fps": 5, "key_frames": 8, "long_side": 16}).tasks[0]
    assert [f.fps for f in changed.inputs] == [5, 5]
    assert changed.meta["key_frames"] == 8 and changed.meta["frame_long_side"] == 16


def test_key_frames_are_per_input_evenly_spaced_and_resized(toy: Path) -> None:
    from spatialclaw.agent.prompting import task_prompt
    from spatialclaw.agent.task_inputs import preview_frames

    task = load_benchmark("toy", source=toy).tasks[0]
    images, text = preview_frames(task, count=8, max_side=768)  # the task's policy wins over the config's
    # video 1: 6 sampled frames -> 3 shown at positions round(i*5/2) = 0, 2, 5 (indices 0, 10, 25 at 2 fps of 10)
    # video 2: 2 sampled frames -> both shown
    assert [i.label for i in images] == [
        "input 1 frame 0",
        "input 1 frame 10",
        "input 1 frame 25",
        "input 2 frame 0",
        "input 2 frame 5",
    ]
    assert all(max(i.width, i.height) == 32 for i in images)
    assert "`videos[0]` holds 6 frame(s)" in text and "`videos[1]` holds 2 frame(s)" in text
    prompt = task_prompt(task, text)
    assert "Which side, 0?\n\nReply with the letter of the right option only.\nOptions:" in prompt


def test_seed_42_limit_n_is_the_papers_subsample(toy: Path) -> None:
    full = [t.task_id for t in load_benchmark("toy", source=toy).tasks]
    expected = list(full)
    random.seed(42)
    random.shuffle(expected)
    assert [t.task_id for t in load_benchmark("toy", source=toy, seed=42, limit=3).tasks] == expected[:3]
    assert [t.task_id for t in load_benchmark("toy", source=toy, limit=3).tasks] == full[:3]


def test_paper_names_resolve_and_cv_bench_2d3d_is_the_single_image_one() -> None:
    assert find_spec("CV-Bench") is SPECS["cv-bench-2d3d"] and find_spec("cambrian_cvbench") is SPECS["cv-bench-2d3d"]
    assert normalise_benchmark_name("cvbench") == "cvbench"
    for name in PAPER_NAMES:
        spec = find_spec(name)
        if spec is not None and spec.paper_name:
            assert spec.paper_name == name, name


def test_bench_reads_a_source_folder_without_media_root(toy: Path, tmp_path: Path, monkeypatch) -> None:
    from spatialclaw.cli import main
    from spatialclaw.testing.provider_server import ScriptedProvider

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with ScriptedProvider(lambda request, index: "ANSWER: A") as server:
        code = main(
            ["bench", "--benchmark", "toy", "--source", str(toy), "--interface", "no-tools", "--no-progress"]
            + ["--model", f"openai-compat:scripted@{server.url}", "--out", str(tmp_path / "run"), "--limit", "2"]
            + ["--key-frames", "2", "--agent-option", "fsync=false"]
        )
        requests = list(server.requests)
    assert code == 0
    images = [[p for m in r["messages"] for p in _parts(m) if p.get("type") == "image_url"] for r in requests]
    assert [len(i) for i in images] == [4, 4]  # 2 key frames per video, two videos
    episode = next((tmp_path / "run" / "episodes").rglob("*.jsonl"))
    assert '"instruction": "toy.md"' in episode.read_text() and "instruction_sha256" in episode.read_text()


def test_the_agents_first_request_keeps_all_key_frames_within_the_default_image_budget(
    toy: Path, tmp_path: Path
) -> None:
    """40 key frames (two videos at their native 10 fps: 30 and 10 frames, up to 32 each) reach the model's first
    request in the code interface: the default budget (100 images, 22 MB) holds them."""
    from spatialclaw.runner import RunConfig, run_benchmark
    from spatialclaw.testing.provider_server import ScriptedProvider

    with ScriptedProvider(lambda request, index: "```python\nanswer('A')\n```") as server:
        summary = run_benchmark(
            RunConfig(
                benchmark="toy",
                model=f"openai-compat:scripted@{server.url}",
                out=tmp_path / "run",
                source=str(toy),
                limit=1,
                progress=False,
                frames={"fps": 10, "key_frames": 32},
                model_options={"max_attempts": 1, "api_key": "test-key"},
                agent={"fsync": False, "vlm_side_channel": False},
            )
        )
        first = server.requests[0]
    assert summary.statuses == {"ok": 1}
    assert sum(1 for m in first["messages"] for p in _parts(m) if p.get("type") == "image_url") == 40
    assert "image omitted" not in json.dumps(first)


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _zip(path: Path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, data in files.items():
            bundle.writestr(name, data)


def test_data_download_extracts_nested_archives_in_place_and_checks_counts(tmp_path: Path) -> None:
    spec = BenchmarkSpec(
        name="packed",
        description="",
        to_task=_to_task,
        archives=("*.zip", "**/*.tar.gz"),
        expected_files=(("**/*.mp4", 3), ("data/*.parquet", 1)),
    )
    folder = tmp_path / "Packed"
    folder.mkdir()
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w:gz") as bundle:
        info = tarfile.TarInfo("videos/c/3.mp4")
        info.size = 3
        bundle.addfile(info, io.BytesIO(b"mp4"))
    _zip(folder / "videos.zip", {"videos/a/1.mp4": b"x", "videos/b/2.mp4": b"y", "more/inner.tar.gz": inner.getvalue()})
    checks = prepare_folder(spec, folder)
    assert (folder / "more" / "videos" / "c" / "3.mp4").read_bytes() == b"mp4"  # where its archive sat
    assert not (folder / "videos.zip").exists() and not (folder / "more" / "inner.tar.gz").exists()
    assert [(c.pattern, c.expected, c.found, c.ok) for c in checks] == [
        ("**/*.mp4", 3, 3, True),
        ("data/*.parquet", 1, 0, False),
    ]
    table = format_checks(checks)
    assert "**/*.mp4" in table and "NO" in table.splitlines()[-1]
    _zip(folder / "evil.zip", {"../outside.txt": b"no"})
    with pytest.raises(DatasetUnavailable, match="outside its folder"):
        prepare_folder(spec, folder)
    assert not (tmp_path / "outside.txt").exists()


def test_data_download_offline_fails_within_seconds_naming_the_cause(tmp_path: Path, monkeypatch, capsys) -> None:
    from spatialclaw.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    assert main(["data", "download", "cv-bench-2d3d", "--root", str(tmp_path)]) == 1
    assert "HF_HUB_OFFLINE" in capsys.readouterr().err
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: as without network
    with pytest.raises(DatasetUnavailable, match="no network"):
        download_repo(SPECS["cv-bench-2d3d"], tmp_path / "CV-Bench")
    assert time.monotonic() - started < 10
