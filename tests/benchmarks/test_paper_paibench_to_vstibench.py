"""The paper's setting for paibench .. vstibench: each loaded from its published layout (built by
``paper_fixtures_p3``) through ``load_tasks(spec, source=DIR)`` alone, checked for ids, fields, categories and
frame policy, and scored on goldens wherever the paper's rules differ from the adapters' earlier ones."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import tests.benchmarks.layouts_paibench_to_vstibench as fixtures
from spatialclaw.benchmarks.scoring.aggregation import ScoredRow, aggregate
from spatialclaw.benchmarks.scoring.numbers import abs_mra, signed_mra
from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, load_tasks
from spatialclaw.benchmarks.specs import SPECS
from spatialclaw.task import Task
from tests.paths import REPO_ROOT

P3 = {
    "paibench": "pai-bench",
    "perceptioncomp": "perceptioncomp",
    "sparbench": "spar-bench",
    "spatialtree": "spatialtree-bench",
    "spbench": "spbench",
    "videomme": "video-mme",
    "videommev2": "video-mme-v2",
    "viewspatial": "viewspatial-bench",
    "vsibench_unbiased": "vsi-bench-debiased",
    "vstibench": "vsti-bench",
}
ONE_FPS = {"perceptioncomp", "videomme", "videommev2"}


@pytest.fixture(autouse=True)
def _caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPATIALCLAW_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))


def _load(paper_name: str, root: Path) -> tuple[BenchmarkSpec, list[Task]]:
    spec = SPECS[P3[paper_name]]
    folder = getattr(fixtures, f"build_fixture_{paper_name}")(root)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="viewspatial: dropped")  # checked in its own test
        return spec, load_tasks(spec, source=folder)


def _score(task: Task, answer: Any) -> float:
    return score_answer(answer, task.ground_truth, task.answer_type, task.choices, task.meta["metric"]).value


def _rows(tasks: list[Task], answers: list[Any]) -> list[ScoredRow]:
    return [ScoredRow(t.task_id, t.category, _score(t, a), dict(t.meta)) for t, a in zip(tasks, answers, strict=True)]


@pytest.mark.parametrize("paper_name", sorted(P3))
def test_spec_declares_the_papers_setting(paper_name: str, tmp_path: Path) -> None:
    spec = SPECS[P3[paper_name]]
    assert spec.paper_name == paper_name and spec.read_source is not None and spec.paper_order
    assert spec.frames.key_frames == 32 and spec.frames.long_side == 768
    assert spec.frames.fps == (1.0 if paper_name in ONE_FPS else None)
    assert spec.instruction == f"{paper_name}.md" and spec.expected_files
    instruction = REPO_ROOT / "prompts" / "benchmarks" / spec.instruction
    assert instruction.read_text().strip()
    spec, tasks = _load(paper_name, tmp_path)
    assert tasks and len({t.task_id for t in tasks}) == len(tasks)
    for task in tasks:
        assert task.benchmark == spec.name and task.task_id == f"{spec.name}/{task.meta['sample_id']}"
        assert task.category and all(Path(p).is_file() for s in task.inputs for p in s.paths)
        assert all(s.count is None and s.fps is None for s in task.inputs)  # the policy sets fps, not the adapter
        right = task.ground_truth
        if task.answer_type == "multiple_choice":
            assert _score(task, right) == 1.0 or not task.meta.get("paper_scored", True)


def test_missing_file_and_column_name_the_folder(tmp_path: Path) -> None:
    with pytest.raises(DatasetUnavailable, match=r"test\.json is missing from .*empty.*Journey9ni/vstibench"):
        (tmp_path / "empty").mkdir()
        load_tasks(SPECS["vsti-bench"], source=tmp_path / "empty")
    folder = fixtures.build_fixture_spatialtree(tmp_path)
    import pyarrow.parquet as pq

    table = pq.read_table(folder / "annotations_plain.parquet").drop(["extra_info"])
    pq.write_table(table, folder / "annotations_plain.parquet")
    with pytest.raises(DatasetUnavailable, match=r"annotations_plain\.parquet has no column 'extra_info'"):
        load_tasks(SPECS["spatialtree-bench"], source=folder)


def test_paibench_understanding_track_and_letter_chain(tmp_path: Path) -> None:
    spec, (arm, ball) = _load("paibench", tmp_path)
    assert spec.hub_id == "shi-labs/physical-ai-bench-understanding" and spec.breakdowns == ("category", "subcategory")
    assert [arm.task_id, ball.task_id] == ["pai-bench/0", "pai-bench/1"]  # the row index
    assert arm.choices == ["toward the cup", "away from the cup", "it stays still"]  # the null D is not offered
    assert ball.ground_truth == "B" and ball.meta["subcategory"] == "Physics" and ball.category == "Common Sense"
    assert _score(ball, "The answer is B") == 1.0  # the reason track's tag rule read "the answer is b n/a"
    assert _score(ball, "b.") == 1.0 and _score(ball, "\\boxed{B}") == 1.0 and _score(ball, "`B`") == 1.0
    assert _score(ball, "I pick A. it floats") == 0.0 and _score(ball, "no idea") == 0.0


def test_perceptioncomp_questions_json_key_and_last_letter(tmp_path: Path) -> None:
    spec, (shop, chairs) = _load("perceptioncomp", tmp_path)
    assert shop.task_id == "perceptioncomp/pc_0001" and len(shop.choices or []) == 5 and shop.ground_truth == "C"
    assert chairs.meta["difficulty"] == 3 and spec.breakdowns == ("category", "difficulty")
    assert _score(shop, "<answer>C</answer>") == 1.0 and _score(shop, "Answer: c") == 1.0
    assert _score(shop, "It is the bookshop, so c") == 1.0  # the last standalone letter, any case
    assert _score(shop, "C fits better than a") == 0.0  # ... so a trailing article reads A, as in the paper


def test_sparbench_keeps_questions_whole_and_scores_view_change_by_turn_axes(tmp_path: Path) -> None:
    spec, tasks = _load("sparbench", tmp_path)
    depth, view, relation, distance_mv, motion = tasks
    assert [t.task_id for t in tasks] == [f"spar-bench/{i}" for i in range(11, 16)]  # shards in name order
    assert relation.meta["options_in_question"] and "A. lamp B. monitor" in relation.question  # options stay inline
    assert relation.choices == ["lamp", "monitor", "plant", "keyboard"]  # read from it, so answer("B") is accepted
    assert relation.answer_type == "multiple_choice" and relation.meta["metric"] == "spar_paper_mca"
    assert _score(relation, "The answer is B.") == 1.0  # the letter is read first (old: reply vs letter, 0)
    assert _score(motion, "(D) down") == 1.0 and _score(motion, "\\boxed{D}") == 1.0 and _score(motion, "A") == 0.0
    assert _score(view, "move_forward : 0.8, turn_left : 30") == 1.0  # spaces removed (old: malformed, 0.8)
    assert _score(view, "move_forward:0.8,oops,turn_left:30") == 1.0  # a malformed pair is skipped
    assert _score(view, "move_forward:0.8") == pytest.approx(0.8)  # the turn axis 0 against 30 scores 0
    assert _score(distance_mv, "from 1.0 to 1.6 m") == 1.0 and _score(distance_mv, "far") == 0.0
    assert _score(depth, "2.35 m, not 5") == 1.0
    result = aggregate(_rows(tasks, ["2.35", "move_forward:0.8", "B", "0", "D"]), spec.aggregation)
    assert result.categories["level:Low"] == 0.5 and result.categories["level:Middle"] == pytest.approx(0.9)
    assert result.categories["level:High"] == 1.0 and result.overall == pytest.approx((1 + 0.8 + 1 + 0 + 1) / 5)


def test_spatialtree_runs_every_record_and_scores_the_scored_ones(tmp_path: Path) -> None:
    spec, tasks = _load("spatialtree", tmp_path)
    mc, mra, judge, gpt, other = tasks  # nothing is skipped at load any more
    assert mc.choices == ["the sofa", "the lamp"] and mc.meta["spatree"] == ["L1", "Geometry", "Size"]
    assert mra.inputs[0].kind == "video" and mra.inputs[0].count is None  # the whole video, native fps
    assert gpt.meta["paper_scored"] is False and mc.meta["paper_scored"] is True and mc.meta["hint"]
    assert _score(mc, "\\boxed{A}") == 1.0 and _score(mc, "A. the sofa") == 1.0
    assert _score(mc, "The answer is A") == 0.0  # the first token is "The" (old lmms-eval patterns: 1)
    assert _score(mra, "roughly 2.5 meters") == 1.0 and _score(mra, "one door, 2.5 m away") == 0.0  # words first
    assert _score(judge, "No... on reflection, yes") == 1.0 and _score(judge, "yes? no.") == 0.0
    assert _score(other, "kitchen") == 1.0 and _score(other, "a kitchen") == 0.0
    result = aggregate(_rows(tasks, ["A", "2.5", "no", "walk", "Kitchen"]), spec.aggregation)
    assert result.overall == 0.75 and result.counts["unscored"] == 1  # micro over the four scored rows
    assert result.categories["level:L1"] == 1.0 and result.categories["question_type:judge"] == 0.0
    assert result.categories["level/category:L2/Semantics"] == 1.0 and result.categories["metricfunc:accuracy"] == 0.0


def test_spbench_is_one_benchmark_of_both_tracks(tmp_path: Path) -> None:
    spec, tasks = _load("spbench", tmp_path)
    size, side, count, nearest = tasks
    assert [t.task_id for t in tasks] == ["spbench/SI_1", "spbench/SI_2", "spbench/MV_1", "spbench/MV_2"]
    assert side.choices == ["left", "right"] and nearest.choices == ["sofa", "table", "tv"]  # JSON string or list
    assert count.inputs[0].paths[1].endswith("scene0020_01/20.jpg") and count.meta["subset"] == "MV"
    assert _score(count, "three") == 1.0  # number words first (old: float of the first token, 0)
    assert _score(count, "3 chairs, one of them broken") == 0.0  # "one" is found before the digits
    assert _score(size, "150 cm") == 1.0 and _score(nearest, "table") == 1.0 and _score(nearest, "(b)") == 1.0
    assert _score(nearest, "The answer is B") == 0.0
    assert score_answer("0", "0", "number", metric="spbench_na").value == 0.0  # a zero answer scores 0
    assert signed_mra(5.0, -2.0) == 1.0 and abs_mra(5.0, -2.0) == 0.0  # the signed denominator
    result = aggregate(_rows(tasks, ["150", "B", "3", "B"]), spec.aggregation)
    assert "object_rel_direction_easy" in result.categories and result.overall == 0.75  # no merging
    assert spec.breakdowns == ("category", "subset")


def test_videomme_base_extractor_and_breakdowns(tmp_path: Path) -> None:
    spec, (planets, keeper) = _load("videomme", tmp_path)
    assert planets.task_id == "video-mme/001-1" and planets.choices == ["5.", "6.", "8.", "9."]
    assert planets.meta["duration"] == "short" and keeper.meta["domain"] == "Sports Competition"
    assert spec.breakdowns == ("category", "duration", "domain")
    assert _score(planets, "C. 8.") == 1.0 and _score(planets, "\\boxed{C}") == 1.0 and _score(planets, "c") == 1.0
    assert _score(planets, "The best answer is C.") == 1.0
    assert _score(planets, "Answer: C") == 0.0  # "r:" comes first and reads R, as in the paper (old: C)


def test_videommev2_videos_folder_groups_and_heads(tmp_path: Path) -> None:
    spec, tasks = _load("videommev2", tmp_path)
    assert tasks[0].inputs[0].paths[0].endswith("videos/001.mp4") and len(tasks[0].choices or []) == 8
    assert _score(tasks[4], "Answer: \\boxed{D}") == 1.0 and _score(tasks[4], "Answer: D") == 1.0
    right = [t.ground_truth for t in tasks]
    answers = [*right[:3], "A", right[4], "A", right[6], "A"]  # relevance 3 of 4; logic 1 and 3 right
    result = aggregate(_rows(tasks, answers), spec.aggregation)
    cats = result.categories
    assert cats["relevance_score"] == 9 / 16 and cats["relevance_linear_score"] == 0.75
    assert cats["logic_score"] == 4 / 12 and cats["level_1"] == 9 / 16 and cats["level_2"] == 4 / 12
    assert cats["second_head:Perception"] == 9 / 16 and cats["third_head:Causal"] == 4 / 12
    assert result.overall == pytest.approx((9 / 16 + 4 / 12) / 2) and result.counts["groups"] == 2


def test_viewspatial_drops_missing_images_and_keeps_options_in_the_question(tmp_path: Path) -> None:
    spec = SPECS["viewspatial-bench"]
    folder = fixtures.build_fixture_viewspatial(tmp_path)
    with pytest.warns(UserWarning, match="dropped 1 of 4"):
        tasks = load_tasks(spec, source=folder)
    assert [t.task_id for t in tasks] == ["viewspatial-bench/0", "viewspatial-bench/1", "viewspatial-bench/3"]
    tv = tasks[0]
    assert tv.choices == ["left", "right", "front", "back"] and tv.meta["options_in_question"]
    assert tv.question.endswith("sofa?\n\nA. left\nB. right\nC. front\nD. back")
    assert tv.ground_truth == "B" and tasks[1].inputs[0].paths[0].endswith("val2017/000000000404.jpg")
    assert _score(tv, "The correct answer is B, since the tv is right of the sofa") == 1.0
    assert _score(tv, "B\nBecause the tv is to the right") == 1.0  # old: the last line only, which has no letter
    assert _score(tv, "<answer>B</answer>") == 1.0 and _score(tv, "(A) or maybe (B)") == 1.0


def test_vsibench_unbiased_letter_chain_and_zero_answer(tmp_path: Path) -> None:
    spec, (stove, room, tables) = _load("vsibench_unbiased", tmp_path)
    assert spec.aggregation == "vsi_bench" and stove.inputs[0].paths[0].endswith("scannet/scene0011_00.mp4")
    assert _score(stove, "(C) back-left") == 1.0 and _score(stove, "back-left") == 1.0  # old first token: 0
    assert _score(stove, "The stove is back-left") == 0.0
    assert _score(room, 22.5 * 1.26) == 0.5 and _score(room, "about 22") == 0.0
    assert _score(tables, "0") == 0.0  # a zero answer scores 0 (old: 1.0 for an exact 0)


def test_vstibench_hub_id_mc_by_options_and_signed_mra(tmp_path: Path) -> None:
    spec, tasks = _load("vstibench", tmp_path)
    moved, direction, change = tasks
    assert spec.hub_id == "Journey9ni/vstibench" and direction.ground_truth == "A" and moved.ground_truth == 1.8
    assert moved.inputs[0].paths[0].endswith("ScanNet/videos/val/scene0011_00.mp4")
    assert _score(direction, "a. forward") == 1.0 and _score(direction, "It moved forward") == 0.0
    assert _score(direction, "forward") == 1.0  # a structured answer naming the option text is its letter
    assert _score(moved, "1.8 m") == 1.0 and _score(moved, "about 1.8") == 0.0
    assert _score(change, "5") == 1.0 and _score(change, "n/a") == 0.0  # a negative answer: any number scores 1
    assert score_answer("0", 0.0, "number", metric="vsti_na").value == 0.0
    text = (REPO_ROOT / "prompts" / "benchmarks" / "vstibench.md").read_text()
    assert '"frame X of N"' in text and "not an index into the frames you were given" in text
    result = aggregate(_rows(tasks, ["1.8", "A", "1"]), spec.aggregation)
    assert result.rule == "macro" and result.overall == 1.0


def test_paper_names_load_with_the_frame_policy(tmp_path: Path) -> None:
    from spatialclaw.benchmarks.registry import load_benchmark

    for paper_name in ("videomme", "vstibench"):
        folder = getattr(fixtures, f"build_fixture_{paper_name}")(tmp_path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = load_benchmark(paper_name, source=folder)
        assert loaded.name == P3[paper_name]
        for task in loaded.tasks:
            assert task.meta["key_frames"] == 32 and task.meta["instruction"] == f"{paper_name}.md"
            assert task.inputs[0].fps == (1.0 if paper_name in ONE_FPS else None)


def test_spbench_offers_options_only_to_choice_questions(tmp_path: Path) -> None:
    from tests.benchmarks.layouts_paibench_to_vstibench import _parquet

    folder = fixtures.build_fixture_spbench(tmp_path)
    keys = ("id", "question", "question_type", "scene_name", "images", "options", "ground_truth")
    rows = [
        (1, "Is the lamp left or right of the tv? A. left B. right", "object_rel_direction", None, "B"),
        (2, "Which is nearer the bed?", "object_rel_distance", "[not json", "A"),
        (3, "What colour is the sofa?", "object_colour", json.dumps(["A. red", "B. blue"]), "B"),
        (4, "Name the room.", "room_name", None, "kitchen"),
        (5, "How far is the door, in meters?", "object_abs_distance", None, "2.0"),
    ]
    records = [dict(zip(keys, (i, q, t, "scene0011_00", ["0.jpg"], o, g), strict=True)) for i, q, t, o, g in rows]
    _parquet(folder / "SPBench-SI.parquet", records)
    inline, unreadable, other_mc, other_text, distance = load_tasks(SPECS["spbench-si"], source=folder)
    # A choice type whose record has no options (null, or a string that is not JSON, read as none as the
    # reference does) keeps them in the question and accepts the letters A-D, so answer("B") is possible.
    for task in (inline, unreadable):
        assert task.answer_type == "multiple_choice" and task.choices == ["A", "B", "C", "D"]
        assert task.meta["options_in_question"] is True and task.meta["metric"] == "spbench_mca"
    assert _score(inline, "B") == 1.0 and _score(unreadable, "(a)") == 1.0
    # A type the paper's scorer does not know is still asked: with its options as a choice, else as text.
    assert other_mc.answer_type == "multiple_choice" and other_mc.choices == ["red", "blue"]
    assert "options_in_question" not in other_mc.meta and other_mc.meta["metric"] == "spbench_other"
    assert (
        other_text.answer_type == "text" and other_text.choices is None and "options_in_question" not in other_text.meta
    )
    assert _score(other_mc, "B") == 0.0 and _score(other_text, "kitchen") == 0.0  # scored 0, as in the paper
    # A numeric type gets no options and no note that they are in the question.
    assert distance.answer_type == "number" and distance.choices is None
    assert "options_in_question" not in distance.meta and _score(distance, "2") == 1.0


def test_spatialtree_task_types_follow_the_record(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from tests.benchmarks.layouts_paibench_to_vstibench import _parquet

    folder = fixtures.build_fixture_spatialtree(tmp_path)
    rows = pq.read_table(folder / "annotations_plain.parquet").to_pylist()
    base = {k: v for k, v in rows[0].items() if k not in ("session_id", "question", "option", "answer")}
    rows += [
        {
            **base,
            "session_id": "st_mc_6",
            "question": "Which is wider? A. door B. window",
            "option": None,
            "answer": "B",
        },
        {
            **base,
            "session_id": "st_open_7",
            "question": "How many steps to the door?",
            "question_type": "open",
            "option": None,
            "answer": "2.0",
            "extra_info": json.dumps({"metricfunc": "accuracy", "spatree0": "L3", "spatree1": "Simulation"}),
        },
    ]
    _parquet(folder / "annotations_plain.parquet", rows)
    tasks = load_tasks(SPECS["spatialtree-bench"], source=folder)
    mc, mra, judge, _gpt, room, inline, steps = tasks
    # The category is the ability tree's leaf; the level is its root (the spatree_level breakdown).
    assert (mc.category, mc.meta["spatree_level"]) == ("Size", "L1") and room.category == "Room"
    assert (steps.category, steps.meta["spatree_level"]) == ("Simulation", "L3")
    # A multiple-choice record without options keeps them in the question and accepts A-D.
    assert inline.choices == ["A", "B", "C", "D"] and inline.meta["options_in_question"] is True
    assert _score(inline, "B.") == 1.0
    for task in (mc, mra, judge, room, steps):
        assert "options_in_question" not in task.meta
    # An open answer that is a number is asked as a number, a word as text.
    assert (room.answer_type, steps.answer_type, mra.answer_type) == ("text", "number", "number")
    # Outside the MRA metricfuncs, two numbers are compared by MRA (so "2" is "2.0"), words by equality.
    assert _score(steps, "2") == 1.0 and _score(steps, "2.0") == 1.0 and _score(steps, "two") == 0.0
    assert score_answer("0", "0", "number", metric="spatialtree_paper:other").value == 1.0  # a 0 answer: equality


def test_sparbench_skips_unnamed_view_change_pairs_and_matches_letters_leniently(tmp_path: Path) -> None:
    _, (_, view, relation, *_) = _load("sparbench", tmp_path)
    result = score_answer(
        "move_forward:0.8, :5, turn_left:x, turn_left:30", view.ground_truth, "text", metric=view.meta["metric"]
    )
    assert result.value == 1.0 and result.extracted == {"move_forward": 0.8, "turn_left": 30.0}  # what was read
    # a numeric task whose answer is not a number is scored against 0: |p - 0| within the thresholds
    assert score_answer("0", "none", "number", metric="spar_paper_na:depth_prediction_oc").value == 1.0
    assert score_answer("0.3", "none", "number", metric="spar_paper_na:depth_prediction_oc").value == 0.5
    assert score_answer("x^2 = 2.35", "2.35", "number", metric="spar_paper_na:depth_prediction_oc").value == 1.0
    # SPAR's lenient match: a reply read as text scores when its first character is the answer's letter
    assert _score(relation, "b, the monitor") == 1.0 and _score(relation, "behind the lamp") == 1.0  # as the paper
    assert _score(relation, "a monitor") == 0.0
