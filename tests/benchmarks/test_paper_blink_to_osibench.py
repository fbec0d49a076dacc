"""Ten benchmarks in the paper's setting, loaded from their published layouts (``load_tasks(spec, source=DIR)``):
files, ids, fields, categories, frame policy and loader order, and their scores where the paper's rules
differ from what spatialclaw did before, both from free-text replies and from structured answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tests.benchmarks.layouts_blink_to_osibench as fixtures
from spatialclaw.benchmarks.paper_setting import instruction_bytes
from spatialclaw.benchmarks.registry import find_spec
from spatialclaw.benchmarks.scoring.aggregation import ScoredRow, aggregate
from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, load_tasks
from spatialclaw.benchmarks.specs.erqa import erqa_paper
from spatialclaw.task import Task

PAPER_NAMES = (
    "blink",
    "cvbench",
    "dsibench",
    "erqa",
    "mindcube",
    "mmsi",
    "mmsivideo",
    "omni3d",
    "omnispatial",
    "osibench",
)


def _load(paper_name: str, root: Path) -> tuple[BenchmarkSpec, list[Task]]:
    spec = find_spec(paper_name)
    assert spec is not None and spec.paper_name == paper_name
    folder = getattr(fixtures, f"build_fixture_{paper_name}")(root)
    return spec, load_tasks(spec, source=folder)


def _score(task: Task, answer: Any) -> float:
    return score_answer(answer, task.ground_truth, task.answer_type, task.choices, task.meta["metric"]).value


def _rows(tasks: list[Task], answers: list[Any]) -> list[ScoredRow]:
    return [ScoredRow(t.task_id, t.category, _score(t, a), dict(t.meta)) for t, a in zip(tasks, answers, strict=True)]


@pytest.mark.parametrize("paper_name", PAPER_NAMES)
def test_every_benchmark_loads_its_published_layout_with_the_paper_setting(paper_name: str, tmp_path: Path) -> None:
    spec, tasks = _load(paper_name, tmp_path)
    assert tasks and spec.paper_order and spec.read_source is not None
    assert spec.instruction == f"{paper_name}.md" and instruction_bytes(spec.instruction).strip()
    for task in tasks:
        assert task.benchmark == spec.name and task.task_id == f"{spec.name}/{task.meta['sample_id']}"
        assert task.category and "ground_truth" not in task.kernel_meta()
        assert all(Path(p).is_file() for frames in task.inputs for p in frames.paths)
        for key in spec.breakdowns:
            assert key == "category" or key in task.meta, (paper_name, key)
        # the right answer as answer() records it scores 1 under the paper's metric
        right = str(task.ground_truth).strip("()") if task.choices else task.ground_truth
        assert _score(task, right) == 1.0, task.task_id
        if task.choices:
            assert _score(task, "A" if right != "A" else "B") == 0.0, task.task_id


@pytest.mark.parametrize("paper_name", PAPER_NAMES)
def test_a_missing_file_is_named_with_the_folder(paper_name: str, tmp_path: Path) -> None:
    spec = find_spec(paper_name)
    assert spec is not None
    with pytest.raises(DatasetUnavailable, match=str(tmp_path)):
        load_tasks(spec, source=tmp_path)


def test_blink_reads_all_14_subtasks_in_the_paper_order_and_averages_over_subtasks(tmp_path: Path) -> None:
    spec, tasks = _load("blink", tmp_path)
    from spatialclaw.benchmarks.specs.blink import SUBTASKS

    assert len(SUBTASKS) == 14 and len(tasks) == 15  # the test split is not read
    assert list(dict.fromkeys(t.category for t in tasks)) == list(SUBTASKS)
    two = next(t for t in tasks if t.task_id == "blink/val_Relative_Depth_2")
    assert len(two.inputs[0].paths) == 2 and two.ground_truth == "(B)" and spec.frames.key_frames == 32
    # free text: the paper reads "The answer is B" as B (the leading-letter rule read T)
    assert _score(two, "The answer is B") == 1.0 and _score(two, "(B)") == 1.0 and _score(two, "B") == 1.0
    assert _score(two, "Looking closely, \\boxed{B}") == 1.0
    assert _score(two, "I compared (A) with (B).\n\nSo the closer one is (B)") == 1.0  # the last paragraph's one
    assert _score(two, "Between (A) and (B), hmm (A) first, then (B)") == 1.0  # else the last (X)
    assert _score(two, "no idea") == 0.0
    answers = ["(A)"] * len(tasks)
    result = aggregate(_rows(tasks, answers), spec.aggregation)  # all right except Relative_Depth's second
    assert result.categories["Relative_Depth"] == 0.5 and result.overall == pytest.approx(13.5 / 14)


def test_cvbench_is_the_cross_video_benchmark_with_one_input_per_video_at_1_fps(tmp_path: Path) -> None:
    spec, tasks = _load("cvbench", tmp_path)
    assert spec.name == "cvbench" and spec.hub_id == "Dongyh35/CVBench" and spec.aggregation == "micro"
    assert spec.frames.fps == 1.0 and spec.frames.key_frames == 32
    objects, counting, order = tasks
    assert [len(t.inputs) for t in tasks] == [2, 3, 4]
    assert all(f.kind == "video" and f.fps == 1.0 for t in tasks for f in t.inputs)
    assert objects.question == "Which object appears in both videos?\nA. a cup\nB. a dog\nC. a lamp\nD. a car"
    assert objects.meta["options_in_question"] and objects.choices == ["a cup", "a dog", "a lamp", "a car"]
    assert counting.answer_type == "yes_no" and counting.choices is None and counting.question.endswith("Yes.\nNo.")
    assert [t.category for t in tasks] == [
        "Cross-video Object Recognition",
        "Joint-video Counting",
        "Multi-video Temporal Reasoning",
    ]
    # yes/no: the first yes/no word, in the last <answer> block if there is one
    assert _score(counting, "no") == 1.0 and _score(counting, "No, one has two people.") == 1.0
    assert _score(counting, "Yes at first, but <answer>NO</answer>") == 1.0
    assert _score(counting, "I cannot tell") == 0.0
    # letters: boxed, X./(X)/X:, a leading letter, a single letter, the option's text
    assert _score(objects, "C") == 1.0 and _score(objects, "\\boxed{C}") == 1.0
    assert _score(objects, "It must be (c) since the lamp shows twice") == 1.0
    assert _score(objects, "a lamp") == 1.0 and _score(objects, "<answer>C.</answer>") == 1.0
    assert _score(order, "Video 1 comes first") == 0.0  # no letter, no option text


def test_dsibench_pools_the_four_variants_in_order_and_keeps_a_sample_without_video(tmp_path: Path) -> None:
    spec, tasks = _load("dsibench", tmp_path)
    assert [t.meta["sample_id"] for t in tasks[:3]] == ["std__row_000000", "std__row_000001", "reverse__row_000000"]
    assert len(tasks) == 8 and [t.meta["aug"] for t in tasks[::2]] == ["std", "reverse", "hflip", "reverse_hflip"]
    assert tasks[0].meta["base_id"] == tasks[6].meta["base_id"] == "row_0"
    car, camera = tasks[:2]
    assert car.choices == ["Left", "Right", "Toward the camera", "Away from the camera"] and car.ground_truth == "B"
    assert car.inputs[0].paths[0].endswith("videos/std/CameraBench/clip_01.mp4") and car.inputs[0].fps is None
    missing = next(t for t in tasks if t.meta["sample_id"] == "hflip__row_000001")
    assert missing.inputs == [] and missing.meta["missing_media"][0].endswith("videos/hflip/CameraBench/clip_02.mp4")
    assert [t.category for t in tasks[:2]] == ["Obj:static cam", "Cam:static scene"]
    # free text (the <answer> tag alone was read before)
    assert _score(camera, "The camera moves forward, so the answer is C.") == 1.0
    assert _score(camera, "Option A is wrong. **Final answer: (C)**") == 1.0
    assert _score(camera, "Motion looks forward.\nC") == 1.0  # the last letter token near the end
    assert _score(camera, "C") == 1.0 and _score(camera, "\\boxed{C}") == 1.0 and _score(camera, "nothing") == 0.0
    result = aggregate(_rows(tasks, ["B", "A"] * 4), spec.aggregation)
    assert result.overall == 0.5 and spec.breakdowns == ("category", "aug")


def test_erqa_keeps_inline_options_with_image_tags_and_scores_strictly(tmp_path: Path) -> None:
    spec, tasks = _load("erqa", tmp_path)
    one, two, unnamed = tasks
    assert one.question.startswith("<image>\nWhere will the gripper go? A. up")
    assert two.question.startswith("Compare the first view<image> and the second view<image>. Which")
    assert unnamed.task_id == "erqa/erqa_0002" and unnamed.question.startswith("<image> <image>\nIs the drawer")
    assert [t.meta["images"] for t in tasks] == ["single-image", "multi-image", "multi-image"]
    assert one.meta["options_in_question"] and one.choices == ["up", "down", "left", "right"]
    assert spec.breakdowns == ("category", "images")
    # strict: only the bare letter, any case, dots removed
    assert _score(one, "B") == 1.0 and _score(one, "b.") == 1.0
    assert _score(one, "Answer: B") == 0.0 and _score(one, "B) down") == 0.0
    assert erqa_paper("(B)", "B")[0] == 0.0  # as a reply; answer("(B)") records the letter B, which scores
    assert _score(one, "(B)") == 1.0


def test_mindcube_prefers_the_full_file_and_leaves_translation_out_of_the_score(tmp_path: Path) -> None:
    spec, tasks = _load("mindcube", tmp_path)
    assert len(tasks) == 5  # MindCube.jsonl, not the tiny bench
    assert [t.category for t in tasks] == ["around", "rotation", "translation", "among", "other"]
    assert tasks[0].ground_truth == "B" and tasks[0].meta["options_in_question"]
    assert tasks[0].question.endswith("A. a sofa B. a window C. a door")
    translation = tasks[2]
    assert translation.meta["paper_scored"] is False
    around = tasks[0]
    assert _score(around, "\\boxed{B}") == 1.0 and _score(around, "B. a window") == 1.0 and _score(around, "B") == 1.0
    assert _score(around, "Looking again, my answer is B") == 1.0
    assert _score(around, "I think it is C. No wait, my answer is B") == 0.0  # the last "X." comes first: C
    result = aggregate(_rows(tasks, ["B", "C", "B", "A", "B"]), spec.aggregation)
    assert result.overall == 1.0 and "translation" not in result.categories and result.counts["unscored"] == 1


def test_mmsi_keeps_the_question_and_reads_letters_in_any_case(tmp_path: Path) -> None:
    spec, tasks = _load("mmsi", tmp_path)
    sofa, steps = tasks
    assert sofa.question == "Where was the sofa? Options: A: front-left, B: behind, C: right, D: ahead"
    assert sofa.ground_truth == "A" and len(sofa.inputs[0].paths) == 2
    assert [t.meta["subset"] for t in tasks] == ["Positional Relationship", "MSR"]
    assert _score(steps, "d. 4 steps") == 1.0  # case-insensitive "X." (the old rule wanted a capital)
    assert _score(steps, "`D`") == 1.0 and _score(steps, "\\boxed{D}") == 1.0 and _score(steps, "D") == 1.0
    assert _score(steps, "D is right") == 0.0  # a standalone letter followed by a word is not taken
    result = aggregate(_rows(tasks, ["A", "B"]), spec.aggregation)
    assert result.overall == 0.5 and spec.breakdowns == ("category", "subset")


def test_mmsivideo_question_from_ori_question_clips_and_reference_images(tmp_path: Path) -> None:
    spec, tasks = _load("mmsivideo", tmp_path)
    assert spec.frames.key_frames == 64
    where, later, _next = tasks
    assert where.question == "The object in [reference image #1] is seen in the video. Where is it at the end?"
    assert where.choices == ["left", "right", "behind", "in front"] and where.ground_truth == "D"
    assert [len(f.paths) for f in where.inputs] == [3, 1] and where.meta["reference_images_input"] == 1
    assert [len(f.paths) for f in later.inputs] == [2, 1] and "reference_images_input" not in later.meta
    assert later.meta["clips"][0] == {"name": "scene02.mp4", "fps": 1.0, "duration_s": 2.0}
    assert later.category == "(Cross-Video) Memoery Update"
    assert [t.meta["main_category"] for t in tasks] == ["Spatial Construction", "Cross-Video", "Planning"]
    assert _score(where, "D") == 1.0 and _score(where, "\\boxed{D}") == 1.0 and _score(where, "(D) in front") == 1.0
    assert _score(where, "Answer: D") == 0.0  # the first letter before ':' is the r of "Answer"


def test_omni3d_reads_annotations_json_and_scores_by_answer_type(tmp_path: Path) -> None:
    spec, tasks = _load("omni3d", tmp_path)
    count, height, word, yes_no, zero = tasks
    assert [t.category for t in tasks] == ["int", "float", "str", "str", "float"]
    assert count.inputs[0].paths[0].endswith("images/omni_0001.jpg") and count.ground_truth == 3
    assert _score(count, 3.0) == 1.0 and _score(count, "3.0") == 1.0 and _score(count, "2.6") == 1.0  # rounded
    assert _score(count, "I count 2 then 3") == 1.0  # the last number
    assert _score(height, "\\boxed{0.75}") == 1.0 and _score(height, 0.75 * 1.3) == 0.4  # 0.3 < t: strict
    assert _score(word, "lamp") == 1.0 and _score(word, "Lamp") == 1.0  # case-insensitive (a capital GT failed)
    assert _score(yes_no, "no") == 1.0 and _score(yes_no, "I don't know") == 0.0
    assert _score(zero, 0.0) == 1.0 and _score(zero, 0.12) == 0.8  # |p| against the thresholds
    result = aggregate(_rows(tasks, [3, 0.75, "lamp", "no", 1.0]), spec.aggregation)
    assert result.overall == pytest.approx(0.8) and result.categories["float"] == 0.5


def test_omnispatial_ids_are_unique_and_answers_any_case(tmp_path: Path) -> None:
    spec, tasks = _load("omnispatial", tmp_path)
    assert [t.meta["sample_id"] for t in tasks] == [
        "Complex_Logic_Pattern_Recognition_0_1",
        "Perspective_Taking_Allocentric_0_1",
        "Complex_Logic_Geometric_Reasoning_0_2",
    ]
    cube, _driver, net = tasks
    assert cube.inputs[0].paths == net.inputs[0].paths and cube.inputs[0].paths[0].endswith("Complex_Logic/0.png")
    assert net.question == "Which net folds into the cube shown?" and net.meta["options_in_question"]
    assert net.choices == ["A", "B", "C", "D"] and net.ground_truth == "B"
    assert _score(cube, "answer: c") == 1.0 and _score(cube, "C") == 1.0  # any case now
    assert _score(cube, "The colour is (C) yellow") == 1.0  # the base extractor
    assert _score(net, "nothing fits") == 0.0 and _score(tasks[1], "nothing fits") == 1.0  # else A
    assert spec.breakdowns == ("category", "sub_task_type")


def test_osibench_reads_data_parquet_and_file_name(tmp_path: Path) -> None:
    _spec, tasks = _load("osibench", tmp_path)
    closer, walk, distance, speed = tasks
    assert closer.task_id == "osi-bench/11" and closer.inputs[0].paths[0].endswith("videos/plaza.mp4")
    assert speed.inputs[0].paths[0].endswith("videos/road.mp4") and speed.inputs[0].fps is None
    assert closer.choices == ["object 1", "object 2"] and walk.choices == ["north", "south", "east"]
    assert distance.meta["metric"] == "osibench_na:absolute_distance" and distance.ground_truth == 7.5
    assert _score(closer, "B") == 1.0 and _score(closer, "I pick (b) object 2") == 1.0  # was first token only
    assert _score(walk, "east") == 1.0 and _score(walk, "\\boxed{C}") == 1.0
    assert _score(distance, "\\boxed{7.5} metres, not 3") == 1.0 and _score(distance, 7.5 * 0.88) == 0.8
    assert _score(speed, 0.2) == 1.0 and _score(speed, 0.44) == 0.1 and _score(speed, 5.0) == 0.0


def test_erqa_records_without_parsed_options_or_ids_are_still_answerable(tmp_path: Path) -> None:
    from tests.benchmarks.layouts_blink_to_osibench import _embedded, _parquet

    folder = tmp_path / "ERQA"
    rows = [
        {"question_id": None, "question": "Which gripper pose is stable?", "question_type": "Task Reasoning",
         "answer": "F", "images": [], "visual_indices": []},
        {"question_id": None, "question": "Is it open?", "question_type": None,
         "answer": "b", "images": [_embedded(1, "0.png")], "visual_indices": [5]},
    ]  # fmt: skip
    _parquet(folder / "data" / "test-00000-of-00002.parquet", rows[:1])
    _parquet(folder / "data" / "test-00001-of-00002.parquet", rows[1:])
    six, small = load_tasks(find_spec("erqa"), source=folder)
    # ids count the rows over every file, in name order
    assert [six.task_id, small.task_id] == ["erqa/erqa_0000", "erqa/erqa_0001"]
    # options that do not parse: letters up to the answer's, at least A-D, so answer("F") is accepted
    assert six.choices == ["A", "B", "C", "D", "E", "F"] and small.choices == ["A", "B", "C", "D"]
    assert six.question == "Which gripper pose is stable?" and six.meta["images"] == "single-image"
    assert small.question == "Is it<image> open?" and small.category == "uncategorized"
    assert _score(small, "B") == 1.0 and _score(six, "F.") == 1.0


def test_omni3d_reads_the_last_of_several_numbers_and_scores_a_non_number_as_wrong(tmp_path: Path) -> None:
    _, (count, height, *_) = _load("omni3d", tmp_path)
    assert _score(count, "1 chair, then 2, then 3 in all") == 1.0 and _score(count, "3 chairs, 2 stools, 1 bed") == 0.0
    assert _score(height, "from 0.2 to 0.5, so 0.75") == 1.0
    for reply in ("inf", "nan", "-inf", "about none"):  # read, but no finite number: wrong, never an error
        assert _score(count, reply) == 0.0 and _score(height, reply) == 0.0
    assert score_answer("3", "three", "number", metric="omni3d_paper:int").value == 0.0  # an answer that is no number
    assert score_answer("0.5", "half", "number", metric="omni3d_paper:float").value == 0.0
