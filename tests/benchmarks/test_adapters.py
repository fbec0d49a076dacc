"""Dataset adapters on small local fixtures written in each dataset's real record layout."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from spatialclaw.benchmarks.data.local import load_local_tasks, write_local_tasks
from spatialclaw.benchmarks.registry import benchmark_names, load_benchmark
from spatialclaw.benchmarks.scoring.answer_parsing import normalize_choice_answer
from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.benchmarks.spec import DatasetUnavailable, load_tasks, parse_inline_options
from spatialclaw.benchmarks.specs import SPECS
from tests import paths

FIXTURES = paths.FIXTURES / "benchmarks"


@pytest.fixture(autouse=True)
def _datasets_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep ``datasets``' processed-record cache out of the user's home."""
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf-datasets")))


def _write_video(path: Path, frames: int = 4) -> None:
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=2)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((32, 32, 3), 40 * i, np.uint8), format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def _check_tasks(tasks: list, benchmark: str) -> None:
    assert tasks, benchmark
    for task in tasks:
        assert task.benchmark == benchmark and task.task_id.startswith(f"{benchmark}/")
        assert task.category
        for spec in task.inputs:
            assert spec.paths and all(Path(p).is_file() for p in spec.paths)
        if task.choices:
            assert task.answer_type == "multiple_choice"
            assert normalize_choice_answer(task.ground_truth, task.choices) is not None
            # The right answer's letter scores 1, another letter 0.
            # by the benchmark's own (official) metric, as the runner scores it
            right = normalize_choice_answer(task.ground_truth, task.choices)
            wrong = "A" if right != "A" else "B"
            metric = task.meta.get("metric")
            assert score_answer(right, task.ground_truth, task.answer_type, task.choices, metric).value == 1.0
            assert score_answer(wrong, task.ground_truth, task.answer_type, task.choices, metric).value == 0.0
        else:
            assert task.answer_type in ("number", "text", "yes_no")
            metric = task.meta.get("metric")
            assert score_answer(str(task.ground_truth), task.ground_truth, task.answer_type, metric=metric).value == 1.0
        assert "ground_truth" not in task.kernel_meta()


def test_every_public_benchmark_has_a_spec() -> None:
    assert set(SPECS) == {
        "vsi-bench",
        "vsi-bench-debiased",
        "mmsi-bench",
        "mindcube",
        "blink",
        "cv-bench-2d3d",
        "cvbench",
        "erqa",
        "spar-bench",
        "viewspatial-bench",
        "omnispatial",
        "3dsrbench",
        "dsi-bench",
        "osi-bench",
        "pai-bench",
        "perceptioncomp",
        "spatialtree-bench",
        "spbench",
        "spbench-si",
        "spbench-mv",
        "video-mme",
        "video-mme-v2",
        "vsti-bench",
        "mmsi-video-bench",
        "omni3d-bench",
    }
    assert {"synthetic", "local", *SPECS} == set(benchmark_names())
    for spec in SPECS.values():
        assert spec.source and spec.all_splits and spec.metric, spec.name  # what bench --list shows
        assert spec.hub_id or spec.name == "vsti-bench", spec.name  # the hub id is the default path for users
        assert "Scoring:" in (importlib.import_module(spec.to_task.__module__).__doc__ or ""), spec.name


def test_benchmark_names_are_normalised_in_the_registry(tmp_path: Path) -> None:
    tasks = load_tasks(SPECS["spar-bench"], source=FIXTURES / "spar-bench" / "test.jsonl", media_cache=tmp_path)
    for spelling in ("SPAR-Bench", "spar_bench", "Spar Bench"):
        loaded = load_benchmark(spelling, source=FIXTURES / "spar-bench" / "test.jsonl")
        assert loaded.name == "spar-bench" and [t.task_id for t in loaded.tasks] == [t.task_id for t in tasks]
    assert load_benchmark("Synthetic", limit=2).name == "synthetic"
    with pytest.raises(ValueError, match="unknown benchmark 'spar-bench-3'"):
        load_benchmark("spar-bench-3")


def test_vsi_bench(tmp_path: Path) -> None:
    for scene in ("arkitscenes/41069025", "scannet/scene0011_00"):
        _write_video(tmp_path / f"{scene}.mp4")
    tasks = load_tasks(
        SPECS["vsi-bench"],
        source=FIXTURES / "vsi-bench" / "test.jsonl",
        media_root=tmp_path,
        media_cache=tmp_path / "m",
    )
    _check_tasks(tasks, "vsi-bench")
    by_type = {t.category: t for t in tasks}
    assert by_type["object_counting"].ground_truth == 4.0 and by_type["object_counting"].meta["metric"] == "vsi_na"
    assert by_type["object_abs_distance"].meta["unit"] == "m"
    assert by_type["object_size_estimation"].meta["unit"] == "cm"
    assert by_type["room_size_estimation"].meta["unit"] == "m2"
    direction = by_type["object_rel_direction_hard"]
    assert direction.choices[2] == "back-left" and direction.ground_truth == "C"  # the stored "C. " label dropped
    assert (
        score_answer("back-left", direction.ground_truth, "multiple_choice", direction.choices, "vsi_mca").value == 1.0
    )
    assert (
        score_answer("C. back-left", direction.ground_truth, "multiple_choice", direction.choices, "vsi_mca").value
        == 1.0
    )
    # free text goes through the official first-token rule: "It is back-left" reads "It"
    assert (
        score_answer("It is back-left", direction.ground_truth, "multiple_choice", direction.choices, "vsi_mca").value
        == 0.0
    )
    assert direction.inputs[0].kind == "video"
    assert direction.inputs[0].paths[0].endswith("scannet/scene0011_00.mp4")


def test_vsi_bench_without_videos_says_where_to_get_them(tmp_path: Path) -> None:
    with pytest.raises(DatasetUnavailable, match=r"arkitscenes\.zip"):
        load_tasks(SPECS["vsi-bench"], source=FIXTURES / "vsi-bench" / "test.jsonl", media_root=tmp_path)


def test_mmsi_bench_parses_inline_options(tmp_path: Path) -> None:
    tasks = load_tasks(SPECS["mmsi-bench"], source=FIXTURES / "mmsi-bench" / "test.jsonl", media_cache=tmp_path)
    _check_tasks(tasks, "mmsi-bench")
    first = tasks[0]
    assert first.choices == ["front-left", "behind", "right", "directly ahead"]
    assert first.question.endswith("D: directly ahead") and first.meta["options_in_question"]  # kept as published
    assert len(first.inputs[0].paths) == 2


def test_mindcube(tmp_path: Path) -> None:
    tasks = load_tasks(
        SPECS["mindcube"],
        source=FIXTURES / "mindcube" / "raw" / "MindCube_tinybench.jsonl",
        media_root=FIXTURES / "mindcube",
        media_cache=tmp_path,
    )
    _check_tasks(tasks, "mindcube")
    assert [t.category for t in tasks] == ["rotation", "among"]
    assert tasks[0].choices == ["a sofa", "a window", "a door"] and tasks[0].ground_truth == "B"


def test_blink_spatial_subsets(tmp_path: Path) -> None:
    tasks = load_tasks(SPECS["blink"], source=FIXTURES / "blink" / "val.jsonl", media_cache=tmp_path)
    _check_tasks(tasks, "blink")
    assert [len(t.inputs[0].paths) for t in tasks] == [1, 2]
    assert tasks[0].ground_truth == "(B)" and normalize_choice_answer("(B)", tasks[0].choices) == "B"
    assert set(SPECS["blink"].configs) >= {"Relative_Depth", "Spatial_Relation", "Multi-view_Reasoning"}


def test_cv_bench_keeps_the_source_for_its_aggregation(tmp_path: Path) -> None:
    tasks = load_tasks(SPECS["cv-bench-2d3d"], source=FIXTURES / "cv-bench" / "test.jsonl", media_cache=tmp_path)
    _check_tasks(tasks, "cv-bench-2d3d")
    assert [t.meta["source"] for t in tasks] == ["ADE20K", "COCO", "Omni3D"]
    assert SPECS["cv-bench-2d3d"].aggregation == "cv_bench"


def test_cv_bench_from_a_local_copy_with_real_image_features(tmp_path: Path) -> None:
    """A local copy of the hub repository (parquet with ``datasets.Image`` columns), loaded by directory."""
    import datasets
    from PIL import Image

    features = datasets.Features(
        {
            "idx": datasets.Value("int64"),
            "type": datasets.Value("string"),
            "task": datasets.Value("string"),
            "image": datasets.Image(),
            "question": datasets.Value("string"),
            "choices": datasets.Sequence(datasets.Value("string")),
            "answer": datasets.Value("string"),
            "source": datasets.Value("string"),
        }
    )
    picture = Image.new("RGB", (20, 10), (255, 0, 0))
    rows = {
        "idx": [0, 1],
        "type": ["2D", "3D"],
        "task": ["Count", "Depth"],
        "image": [picture, picture],
        "question": ["How many?", "Which is closer?"],
        "choices": [["1", "2"], ["lamp", "bed"]],
        "answer": ["(A)", "(B)"],
        "source": ["COCO", "Omni3D"],
    }
    (tmp_path / "repo" / "data").mkdir(parents=True)
    datasets.Dataset.from_dict(rows, features=features).to_parquet(
        str(tmp_path / "repo" / "data" / "test-00000-of-00001.parquet")
    )
    tasks = load_tasks(SPECS["cv-bench-2d3d"], source=tmp_path / "repo", media_cache=tmp_path / "media")
    assert [t.task_id for t in tasks] == ["cv-bench-2d3d/0", "cv-bench-2d3d/1"]
    stored = Image.open(tasks[0].inputs[0].paths[0])
    assert stored.size == (20, 10) and stored.getpixel((5, 5)) == (255, 0, 0)
    # The same picture is stored once (content-addressed).
    assert tasks[0].inputs[0].paths == tasks[1].inputs[0].paths


def test_erqa(tmp_path: Path) -> None:
    tasks = load_tasks(SPECS["erqa"], source=FIXTURES / "erqa" / "test.jsonl", media_cache=tmp_path)
    _check_tasks(tasks, "erqa")
    assert tasks[0].choices[:2] == ["the mug", "the shelf"]
    assert tasks[0].task_id == "erqa/erqa_0" and tasks[1].choices == ["first", "second"]


def test_spar_bench_scores_by_task_as_the_paper(tmp_path: Path) -> None:
    tasks = load_tasks(SPECS["spar-bench"], source=FIXTURES / "spar-bench" / "test.jsonl", media_cache=tmp_path)
    depth, view_change, relation, distance_mv = tasks
    assert depth.meta["metric"] == "spar_paper_na:depth_prediction_oc" and depth.answer_type == "number"
    assert (
        view_change.meta["metric"] == "spar_paper_vci" and view_change.ground_truth == "move_forward:0.8,rotate_left:30"
    )
    # the paper shows the question as it is (options inline) and reads a letter before SPAR's lenient match
    assert relation.choices == ["lamp", "monitor", "plant", "keyboard"] and relation.question.endswith("D. keyboard")
    assert relation.meta["metric"] == "spar_paper_mca" and score_answer("B", "B", metric="spar_paper_mca").value == 1.0
    # the multi-view distance task reads the reply's last number, the single-view depth its first
    assert (
        score_answer("from 1.0 to 1.6 m", distance_mv.ground_truth, "number", metric=distance_mv.meta["metric"]).value
        == 1.0
    )
    assert score_answer("2.35 m, not 5", depth.ground_truth, "number", metric=depth.meta["metric"]).value == 1.0
    # the paper's axes are turn_*, so a rotate_* amount is not compared (both sides read 0 on the turn axes)
    assert score_answer("move_forward:0.8", view_change.ground_truth, "text", metric="spar_paper_vci").value == 1.0


def test_viewspatial_bench(tmp_path: Path) -> None:
    tasks = load_tasks(
        SPECS["viewspatial-bench"],
        source=FIXTURES / "viewspatial-bench" / "ViewSpatial-Bench.json",
        media_cache=tmp_path,
    )
    # the paper appends the options to the question as published and scores the answer's first letter
    assert tasks[0].choices == ["left", "right", "front", "back"] and tasks[0].meta["options_in_question"]
    assert tasks[0].question.endswith("\n\nA. left\nB. right\nC. front\nD. back")
    assert [t.ground_truth for t in tasks] == ["B", "A"] and all(Path(t.inputs[0].paths[0]).is_file() for t in tasks)
    assert score_answer("B", "B", metric="viewspatial_paper").value == 1.0


def test_omnispatial_answer_index(tmp_path: Path) -> None:
    tasks = load_tasks(SPECS["omnispatial"], source=FIXTURES / "omnispatial" / "data.json", media_cache=tmp_path)
    _check_tasks(tasks, "omnispatial")
    assert [t.ground_truth for t in tasks] == ["C", "A", "B"]
    assert tasks[0].inputs[0].paths[0].endswith("Complex_Logic/0.png")  # image named by the id's prefix
    assert tasks[0].inputs[0].paths == tasks[2].inputs[0].paths
    assert tasks[2].choices == ["A", "B", "C", "D"] and tasks[2].meta["options_in_question"]  # drawn in the image
    assert tasks[2].question == "Which of the unfolded nets folds into the cube shown?"  # no sentence added


def test_3dsrbench_circular_groups(tmp_path: Path) -> None:
    source = tmp_path / "3dsr"
    shutil.copytree(FIXTURES / "3dsrbench", source)
    tasks = load_tasks(
        SPECS["3dsrbench"], source=source / "test.jsonl", media_root=source / "coco_images", media_cache=tmp_path
    )
    _check_tasks(tasks, "3dsrbench")
    assert [t.meta["circular_group"] for t in tasks] == ["3", "3", "7"]
    assert tasks[0].choices == ["cup", "plate"]


def test_bad_records_name_the_fields_present(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"idx": 0, "question": "?"}\n')
    with pytest.raises(ValueError, match=r"expected layout.*fields present"):
        load_tasks(SPECS["cv-bench-2d3d"], source=bad, media_cache=tmp_path)


def test_hub_unavailable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(DatasetUnavailable, match=r"nyu-visionx/CV-Bench.*--source"):
        load_tasks(SPECS["cv-bench-2d3d"])


def test_parse_inline_options() -> None:
    assert parse_inline_options("Q? Options: A: red, B: blue", marker="Options:") == ("Q?", ["red", "blue"])
    assert parse_inline_options("Which? A. one B. two C. three") == ("Which?", ["one", "two", "three"])
    assert parse_inline_options("No options here") is None


def test_local_jsonl_format_round_trip(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "img" / "view0.png", tmp_path / "a.png")
    _write_video(tmp_path / "clip.mp4")
    source = tmp_path / "tasks.jsonl"
    source.write_text(
        '{"task_id": "one", "question": "How far?", "images": ["a.png"], "answer": 1.5, "unit": "m", "category": "distance"}\n'
        '{"question": "Which side?", "video": "clip.mp4", "fps": 1, "choices": ["left", "right"], "answer": "right"}\n'
    )
    tasks = load_benchmark(str(source)).tasks
    assert [t.task_id for t in tasks] == ["one", "line-2"]
    assert tasks[0].answer_type == "number" and tasks[0].meta["unit"] == "m"
    assert tasks[1].inputs[0].kind == "video" and tasks[1].inputs[0].fps == 1
    copy = tmp_path / "copy.jsonl"
    write_local_tasks(tasks, copy)
    again = load_local_tasks(copy)
    assert [t.to_dict() for t in again] == [t.to_dict() for t in tasks]


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"question": "x"}', "give 'images'"),
        ('{"question": "x", "images": ["missing.png"]}', "does not exist"),
        ('{"question": "x", "images": [], "colour": 1}', "unknown field"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_local_format_errors_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text("\n" + line + "\n")
    with pytest.raises(ValueError, match=rf"tasks.jsonl:2: .*{message}"):
        load_local_tasks(source)
