"""The paper's rules of MMSI-Bench, MMSI-Video-Bench, OmniSpatial, Video-MME, Video-MME-v2, ViewSpatial-Bench,
VSI-Bench (debiased) and VSTI-Bench, one rule at a time: which of several answers in a reply counts (the first or
the last letter, boxed answer or marker), which letters a question offers, how the published fields become a task
and what a loader does with a field outside its documented range. Each case is a reply or a record the
benchmark's own evaluation reads one way, which a neighbouring rule would read another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spatialclaw.benchmarks.spec import BenchmarkSpec, DatasetUnavailable, RecordContext
from spatialclaw.benchmarks.specs import (
    mmsi_bench,
    mmsi_video_bench,
    omnispatial,
    video_mme,
    video_mme_v2,
    vsi_bench_debiased,
    vsti_bench,
)
from spatialclaw.task import Task


def _context(spec: BenchmarkSpec, root: Path, files: list[str], index: int = 0) -> RecordContext:
    """A record context whose media root holds ``files`` (empty stand-ins)."""
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x00")
    return RecordContext(spec=spec, media_cache=root / "cache", media_root=root, index=index)


# ---------------------------------------- MMSI-Bench


def _mmsi(root: Path, **fields: Any) -> Task:
    record = {
        "id": 7,
        "images": ["a.jpg", "b.jpg"],
        "question": "Where is the sofa? Options: A: left, B: right, C: behind, D: ahead",
        "question_type": "Positional Relationship (Cam.-Obj.)",
        "answer": "B",
        **fields,
    }
    return mmsi_bench.to_task(record, _context(mmsi_bench.SPEC, root, ["a.jpg", "b.jpg"]))


@pytest.mark.parametrize(
    ("kind", "subset"),
    [
        ("Positional Relationship (Obj.-Obj.)", "Positional Relationship"),
        ("  Motion (Cam.)", "Motion"),  # leading spaces are not part of the prefix
        ("Attribute (Meas.)", "Attribute"),
        ("MSR", "MSR"),
        ("Attr", "Other"),  # a prefix of a subset's name is not that subset
        ("Camera Motion", "Other"),  # the subset must lead
    ],
)
def test_mmsi_subset_is_the_question_types_leading_name(kind: str, subset: str) -> None:
    assert mmsi_bench.subset(kind) == subset


def test_mmsi_task_keeps_the_question_and_reads_the_options_after_the_marker(tmp_path: Path) -> None:
    task = _mmsi(tmp_path, answer=" b ", difficulty="hard")
    assert task.question == "Where is the sofa? Options: A: left, B: right, C: behind, D: ahead"
    assert task.choices == ["left", "right", "behind", "ahead"] and task.ground_truth == "B"
    assert task.task_id == "mmsi-bench/7" and task.benchmark == "mmsi-bench" and task.answer_type == "multiple_choice"
    assert task.category == "Positional Relationship (Cam.-Obj.)" and len(task.inputs[0].paths) == 2
    assert task.meta == {
        "metric": "mmsi_paper",
        "sample_id": "7",
        "options_in_question": True,
        "subset": "Positional Relationship",
        "difficulty": "hard",
    }
    assert _mmsi(tmp_path / "n").meta["difficulty"] is None  # the field is optional


def test_mmsi_options_without_the_marker_are_read_from_the_question(tmp_path: Path) -> None:
    task = _mmsi(tmp_path, question="Which is nearer?\nA. the lamp\nB. the door\nC. the bed")
    assert task.choices == ["the lamp", "the door", "the bed"]


@pytest.mark.parametrize(("answer", "letters"), [("F", 6), ("E", 5), ("A", 4), ("", 4), ("c", 4)])
def test_mmsi_a_question_without_readable_options_offers_the_letters_up_to_its_answer(
    answer: str, letters: int, tmp_path: Path
) -> None:
    task = _mmsi(tmp_path, question="Which picture shows the kitchen?", answer=answer)
    assert task.choices == [chr(ord("A") + i) for i in range(letters)]
    assert task.ground_truth == answer.upper()


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("```\nB\n```\nA. is wrong", "B"),  # a code block spanning lines: its first standalone A-D
        ("``C``", "C"),
        ("`the pick` so D", "D"),  # a quoted span without a letter: the next rules
        ("\\boxed{C} first, then \\boxed{B}", "C"),  # the first boxed letter
        ("\\boxed{(b)}", "B"),
        ("I rule out (A). So B.", "B"),  # X. anywhere before (X)
        ("(c) is nearer", "C"),  # (X) in any case
        ("d: four steps", "D"),  # X: in any case
        ("A chair, then B", "B"),  # a standalone letter followed by a word is skipped
        ("e", "E"),  # the one letter left, whatever it is
        ("  (e)!  ", "E"),
        ("?", None),
        ("", None),
        ("answer: d", None),  # a lower-case letter stands alone only as X. (X) X:
    ],
)
def test_mmsi_paper_extraction_order(reply: str, letter: str | None) -> None:
    assert mmsi_bench.mmsi_paper_extract(reply) == letter


def test_mmsi_paper_scores_against_the_upper_cased_answer() -> None:
    assert mmsi_bench.mmsi_paper("(b)", " b ") == (1.0, "B")
    assert mmsi_bench.mmsi_paper("(b)", "C") == (0.0, "B")
    assert mmsi_bench.mmsi_paper("(c)", "B") == (0.0, "C")  # a later letter is as wrong as an earlier one
    assert mmsi_bench.mmsi_paper("no idea at all", "C") == (0.0, None)
    assert mmsi_bench.mmsi_paper("", "") == (0.0, None)  # nothing read is wrong, even against an empty answer


# ---------------------------------------- MMSI-Video-Bench


@pytest.mark.parametrize(
    ("kind", "main"),
    [
        ("(Spatial Construction) Camera-Scene Spatial Relationship", "Spatial Construction"),
        ("Motion Understanding - Camera Motion", "Motion Understanding"),  # the name without brackets too
        ("  (Cross-Video) Memoery Update", "Cross-Video"),
        ("(Planning) Route", "Planning"),
        ("Planning", "Planning"),
        ("Prediction of the next move", "Planning"),  # Prediction counts as Planning
        ("(Prediction) Next view", "Planning"),
        ("Spatial", "Other"),
        ("Object Counting", "Other"),
    ],
)
def test_mmsivideo_main_category_is_the_types_leading_name(kind: str, main: str) -> None:
    assert mmsi_video_bench.main_category(kind) == main


def test_mmsivideo_image_tags_become_numbered_references_only_when_they_match_the_images() -> None:
    two = {"ori_question": "Is <image> left of <image>?", "ref_images": ["r1.jpg", "r2.jpg"]}
    assert mmsi_video_bench.question_text(two) == "Is [reference image #1] left of [reference image #2]?"
    one = {"ori_question": "Is <image> left of <image>?", "ref_images": ["r1.jpg"]}
    assert mmsi_video_bench.question_text(one) == "Is <image> left of <image>?"  # counts differ: kept
    none = {"ori_question": "What is <image>?", "ref_images": None}
    assert mmsi_video_bench.question_text(none) == "What is <image>?"


def _mmsivideo_record(**fields: Any) -> dict[str, Any]:
    return {
        "id": 12,
        "type": "(Motion Understanding) Camera Motion",
        "frames_list": [["c1/0.jpg", "c1/1.jpg"], [], ["c2/0.jpg"]],
        "video_list": [
            {"path": "c1.mp4", "start": 1.5, "end": 4.0, "base_fps": 2.0},
            {"path": "c2.mp4", "start": 0, "end": None, "base_fps": 30},
        ],
        "options": ["left", "right", 3],
        "ground_truth": " c ",
        "ori_question": "Where does <image> go?",
        "ref_images": ["r/1.jpg"],
        **fields,
    }


def test_mmsivideo_task_has_one_input_per_clip_then_the_reference_images(tmp_path: Path) -> None:
    files = ["frames/c1/0.jpg", "frames/c1/1.jpg", "c2/0.jpg", "ref_images/r/1.jpg"]
    ctx = _context(mmsi_video_bench.SPEC, tmp_path, files)
    task = mmsi_video_bench.to_task(_mmsivideo_record(), ctx)
    assert [len(f.paths) for f in task.inputs] == [2, 1, 1]  # the empty clip has no input
    assert task.inputs[1].paths[0].endswith("c2/0.jpg")  # a frame path outside frames/ is read as it is
    assert task.inputs[2].paths[0].endswith("ref_images/r/1.jpg")
    assert task.meta["reference_images_input"] == 2
    assert task.meta["clips"] == [
        {"name": "c1.mp4", "fps": 2.0, "duration_s": 2.5},
        {"name": "c2.mp4", "fps": 30, "duration_s": None},
    ]
    assert task.question == "Where does [reference image #1] go?" and task.choices == ["left", "right", "3"]
    assert task.ground_truth == "C" and task.task_id == "mmsi-video-bench/12" and task.meta["sample_id"] == "12"
    assert task.category == "(Motion Understanding) Camera Motion"
    assert task.meta["main_category"] == "Motion Understanding" and task.meta["metric"] == "mmsivideo_paper"
    bare = mmsi_video_bench.to_task(_mmsivideo_record(ref_images=[], video_list=None), ctx)
    assert len(bare.inputs) == 2 and "reference_images_input" not in bare.meta and bare.meta["clips"] == []


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("<answer>B</answer>", "B"),
        ("I have no answer", "O"),  # the official refusal marker
        ("\\boxed{ 'C' } then boxed{D}", "C"),  # the first boxed, cleaned of spaces and quotes
        ('{"answer": "D", "reason": "it moves"}', "D"),
        ("The answer is A. No, the answer is C.", "C"),  # after the last marker
        ("Answer: C, since it turns", "C"),
        ("Answer: \n'B'", "B"),  # newlines and quotes are cleaned
        ("The answer is: E.", "E"),  # and colons
        ("B. because it turns", "B"),  # a bare first sentence
        ("F", "F"),
        ("G. beyond the options", "O"),
        ("Maybe", "O"),
    ],
)
def test_mmsivideo_official_extraction(reply: str, letter: str) -> None:
    assert mmsi_video_bench.mmsi_video_extract(reply) == letter


def test_mmsivideo_paper_reads_the_base_extractor_against_the_upper_cased_answer() -> None:
    assert mmsi_video_bench.mmsivideo_paper("(d) in front", " d ") == (1.0, "D")
    assert mmsi_video_bench.mmsivideo_paper("Answer: D", "D") == (0.0, "R")  # the first letter before ':'
    assert mmsi_video_bench.mmsivideo_paper("", "") == (0.0, "")  # nothing read is wrong


# ---------------------------------------- OmniSpatial


def _omni_record(**fields: Any) -> dict[str, Any]:
    return {
        "id": "3_2",
        "question": "Which way should the driver turn?",
        "options": ["left", "right", "straight", "back"],
        "answer": 2,
        "task_type": "Perspective_Taking",
        "sub_task_type": "Egocentric",
        **fields,
    }


def test_omnispatial_reads_data_json_in_its_folder_or_at_the_root(tmp_path: Path) -> None:
    import json

    (tmp_path / "data.json").write_text(json.dumps([_omni_record()]))
    (record,) = omnispatial.read_source(tmp_path)
    assert record["_folder"] == str(tmp_path) and record["answer"] == 2
    (tmp_path / "OmniSpatial-test").mkdir()
    (tmp_path / "OmniSpatial-test" / "data.json").write_text(json.dumps([_omni_record(answer=1)]))
    (inside,) = omnispatial.read_source(tmp_path)  # the extracted folder wins
    assert inside["_folder"] == str(tmp_path / "OmniSpatial-test") and inside["answer"] == 1
    (tmp_path / "OmniSpatial-test" / "data.json").write_text(json.dumps({"records": []}))
    with pytest.raises(DatasetUnavailable, match="should hold a JSON list, not dict"):
        list(omnispatial.read_source(tmp_path))
    (tmp_path / "OmniSpatial-test" / "data.json").write_text(json.dumps([{"id": 1, "question": "q"}]))
    with pytest.raises(DatasetUnavailable, match="options"):
        list(omnispatial.read_source(tmp_path))


def test_omnispatial_task_from_a_record(tmp_path: Path) -> None:
    folder = tmp_path / "OmniSpatial-test"
    ctx = _context(omnispatial.SPEC, tmp_path, ["OmniSpatial-test/Perspective_Taking/3.png"])
    task = omnispatial.to_task({**_omni_record(), "_folder": str(folder)}, ctx)
    assert task.inputs[0].paths[0].endswith("OmniSpatial-test/Perspective_Taking/3.png")  # id before the first _
    assert task.ground_truth == "C" and task.choices == ["left", "right", "straight", "back"]
    assert task.task_id == "omnispatial/Perspective_Taking_Egocentric_3_2" and task.category == "Perspective_Taking"
    assert task.meta == {
        "metric": "omnispatial_paper",
        "sample_id": "Perspective_Taking_Egocentric_3_2",
        "sub_task_type": "Egocentric",
    }
    first = omnispatial.to_task({**_omni_record(answer="0"), "_folder": str(folder)}, ctx)
    assert first.ground_truth == "A"
    drawn = omnispatial.to_task({**_omni_record(options=[], answer=3), "_folder": str(folder)}, ctx)
    assert drawn.choices == ["A", "B", "C", "D"] and drawn.ground_truth == "D" and drawn.meta["options_in_question"]
    five = omnispatial.to_task({**_omni_record(options=None, answer=4), "_folder": str(folder)}, ctx)
    assert five.ground_truth == "E" and five.choices == ["A", "B", "C", "D", "E"]
    six = omnispatial.to_task({**_omni_record(options=None, answer=5), "_folder": str(folder)}, ctx)
    assert six.ground_truth == "F" and six.choices == ["A", "B", "C", "D", "E", "F"]


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("Answer: B. On reflection, answer: c", "C"),  # the last marker, any case
        ("answer : d", "D"),
        ("The answer: Bear", "A"),  # no letter standing alone after the marker, no label: the default
        ("answer: E", "A"),  # E is no option; the base extractor reads R; the first character, a
        ("(c) yellow", "C"),  # the base extractor
        ("b and e) both fit", "B"),  # the base extractor reads E, not an option: the first character
        ("  b is it", "B"),
        ("nothing fits", "A"),
        ("", "A"),
    ],
)
def test_omnispatial_paper_extraction_order(reply: str, letter: str) -> None:
    assert omnispatial.omnispatial_paper(reply, letter) == (1.0, letter)
    other = "B" if letter != "B" else "C"
    assert omnispatial.omnispatial_paper(reply, other)[0] == 0.0


def test_omnispatial_paper_compares_with_the_answer_in_any_case() -> None:
    assert omnispatial.omnispatial_paper("Answer: c", " c ") == (1.0, "C")


# ---------------------------------------- Video-MME


def _videomme_record(**fields: Any) -> dict[str, Any]:
    return {
        "question_id": "001-2",
        "videoID": "fFjv93ACGo8",
        "question": "What is the keeper holding?",
        "options": ["A. A ball.", "B. A hat.", "C. A glove.", "D. Nothing."],
        "answer": " c ",
        "task_type": "Object Recognition",
        "duration": "short",
        "domain": "Sports",
        **fields,
    }


def test_videomme_task_from_a_record(tmp_path: Path) -> None:
    ctx = _context(video_mme.SPEC, tmp_path, ["data/fFjv93ACGo8.mp4", "data/other.mkv"])
    task = video_mme.to_task(_videomme_record(), ctx)
    assert task.inputs[0].paths[0].endswith("data/fFjv93ACGo8.mp4")
    assert task.choices == ["A ball.", "A hat.", "A glove.", "Nothing."] and task.ground_truth == "C"
    assert task.task_id == "video-mme/001-2" and task.category == "Object Recognition"
    assert task.meta == {"metric": "videomme_paper", "duration": "short", "domain": "Sports", "sample_id": "001-2"}
    mkv = video_mme.to_task(_videomme_record(videoID="other"), ctx)
    assert mkv.inputs[0].paths[0].endswith("data/other.mkv")


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("\\boxed{ (b). }", "B"),
        ("Answer: B", "R"),  # the first letter before ':' (the paper's evaluation)
        ("e.g. B", "E"),
        ("(c) the glove", "C"),
        ("  c  ", "C"),  # the one letter left
        ("It is B", "It is B"),  # no label, several letters: the text itself
        ("", ""),
        ("\\boxed{A}, no: \\boxed{C}", "A"),  # one base extractor, as MMSI-Video's and OmniSpatial's: the first
    ],
)
def test_videomme_reads_the_base_extractors_letter(reply: str, letter: str) -> None:
    assert video_mme.videomme_paper_choice(reply, letter)[1] == letter  # what it read


def test_videomme_paper_choice_against_the_upper_cased_answer() -> None:
    assert video_mme.videomme_paper_choice("(b)", " b ") == (1.0, "B")
    assert video_mme.videomme_paper_choice("Answer: B", "B") == (0.0, "R")
    assert video_mme.videomme_paper_choice("the hat", "B") == (0.0, "the hat")
    assert video_mme.videomme_paper_choice("A.", "B") == (0.0, "A")  # an earlier letter is as wrong as a later one


# ---------------------------------------- Video-MME-v2


def test_videommev2_options_are_one_per_line_lettered_from_a() -> None:
    text = "A. a cat\n(B) a dog\nC: two birds\n  continued on a line without a letter\nD) none"
    assert video_mme_v2.split_options(text) == ["a cat", "a dog", "two birds", "none"]
    eight = "\n".join(f"{chr(ord('A') + i)}. option {i}" for i in range(8))
    assert video_mme_v2.split_options(eight + "\nI. not an option") == [f"option {i}" for i in range(8)]


@pytest.mark.parametrize("text", ["B. x\nC. y", "A. x\nC. y", "", "a. x\nb. y", "no options"])
def test_videommev2_options_without_a_run_from_a_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="cannot read the options"):
        video_mme_v2.split_options(text)


def _v2_record(**fields: Any) -> dict[str, Any]:
    return {
        "question_id": "7-2",
        "video_id": 7,
        "question": "What falls first?",
        "options": "A. the cup\nB. the plate",
        "answer": " b ",
        "group_type": "logic",
        "group_structure": "[1, [2, 3], 4]",
        "level": 2,
        "second_head": "Reasoning",
        "third_head": "Causal",
        **fields,
    }


def test_videommev2_task_from_a_record(tmp_path: Path) -> None:
    ctx = _context(video_mme_v2.SPEC, tmp_path, ["videos/007.mp4", "videos/123.MP4"])
    task = video_mme_v2.to_task(_v2_record(), ctx)
    assert task.inputs[0].paths[0].endswith("videos/007.mp4")  # an integer id is zero-padded to three digits
    assert task.choices == ["the cup", "the plate"] and task.ground_truth == "B" and task.category == "logic"
    assert task.task_id == "video-mme-v2/7-2"
    assert task.meta == {
        "metric": "videommev2_paper",
        "video_id": "007",
        "question_id": "7-2",
        "group_type": "logic",
        "group_structure": "[1, [2, 3], 4]",
        "level": 2,
        "second_head": "Reasoning",
        "third_head": "Causal",
        "sample_id": "7-2",
    }
    text_id = video_mme_v2.to_task(_v2_record(video_id="123", group_type=None), ctx)
    assert text_id.inputs[0].paths[0].endswith("videos/123.MP4") and text_id.category == "unknown"


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("Final Answer: C", "C"),  # the prefix goes first, or its F would be read
        ("Best option: G", "G"),
        ("\\boxed{ (H). }", "H"),
        ("I think D", "D"),  # I is no option letter
        ("Answer: b", None),  # capitals only
        ("the video shows a cat, a dog, a bird and a fish at the end", None),
        ("", None),
    ],
)
def test_videommev2_letter(reply: str, letter: str | None) -> None:
    assert video_mme_v2.videommev2_letter(reply) == letter


def test_videommev2_paper_choice() -> None:
    assert video_mme_v2.videommev2_paper_choice("The answer is C", " c ") == (1.0, "C")
    assert video_mme_v2.videommev2_paper_choice("The answer is C", "D") == (0.0, "C")
    assert video_mme_v2.videommev2_paper_choice("none", "") == (0.0, None)  # nothing read is wrong


@pytest.mark.parametrize(
    ("structure", "right", "value"),
    [
        ("[1, [2, 3], 4]", [True, True, True, True], 1.0),
        ([1, [2, 3], 4], [True, False, False, False], 1 / 12),
        ([1, [2, 3], 4], [True, False, True, False], 4 / 12),  # the second branch counts for the first
        ([1, [2, 3], 4], [True, True, True, False], 7 / 12),
        ([1, [2, 3], 4], [False, True, True, True], 0.0),  # the chain starts at the first
        ([1, [2, 3], 4], [True, False], 1 / 12),  # a short group has no third answer to count
        ([[1, 2], 3, 4], [False, True, False, False], 1 / 10),  # either of the first two starts it
        ([[1, 2], 3, 4], [True, True, False, True], 2 / 10),
        ([[1, 2], 3, 4], [True, True, True, False], 5 / 10),
        ([[1, 2], 3, 4], [False, False, True, True], 0.0),
        ([[1, 2], 3, 4], [False], 0.0),
        ([1, 2, 3, 4], [True, True, False, True], 4 / 16),
        ([1, 2, 3, 4], [True, True, True, True], 1.0),
    ],
)
def test_videommev2_logic_chain(structure: Any, right: list[bool], value: float) -> None:
    assert video_mme_v2._logic(right, structure) == pytest.approx(value)


class _Row:
    def __init__(self, task_id: str, score: float | None, **meta: Any) -> None:
        self.task_id, self.category, self.score, self.meta = task_id, meta.get("group_type"), score, meta


def test_videommev2_position_is_the_number_after_the_last_dash() -> None:
    assert video_mme_v2._position(_Row("t", 1.0, question_id="12-3-10")) == (10, "")
    assert video_mme_v2._position(_Row("t", 1.0, question_id="q-b")) == (0, "b")
    assert video_mme_v2._position(_Row("v/5-4", 1.0)) == (4, "")  # no question id: the task id


def test_videommev2_groups_score_relevance_by_count_and_logic_by_chain() -> None:
    relevance = dict(video_id="001", group_type="relevance", level=1, second_head="Perception", third_head="")
    logic = dict(video_id="002", group_type="logic", group_structure="[1, [2, 3], 4]", level=3, second_head=None)
    rows = [
        _Row("a", 1.0, question_id="1-1", **relevance),
        _Row("b", 0.0, question_id="1-2", **relevance),
        _Row("c", 1.0, question_id="1-3", **relevance),
        _Row("d", 1.0, question_id="1-4", **relevance),
        # listed out of order: the chain follows the question numbers (4 after 2, not 10 before 2)
        _Row("h", 1.0, question_id="2-10", **logic),
        _Row("e", 1.0, question_id="2-1", **logic),
        _Row("g", 1.0, question_id="2-3", **logic),
        _Row("f", 0.0, question_id="2-2", **logic),
    ]
    result = video_mme_v2.videommev2_groups(rows)
    assert result["overall"] == pytest.approx((9 / 16 + 4 / 12) / 2)
    cats = result["categories"]
    assert cats["relevance_score"] == pytest.approx(9 / 16) and cats["relevance_linear_score"] == 0.75
    assert cats["logic_score"] == pytest.approx(4 / 12)
    assert cats["level_1"] == pytest.approx(9 / 16) and cats["level_3"] == pytest.approx(4 / 12)
    assert cats["second_head:Perception"] == pytest.approx(9 / 16)
    assert not any(k.startswith("third_head") or k == "second_head:None" for k in cats)  # empty heads are skipped
    assert cats["relevance"] == 0.75 and cats["logic"] == 0.75  # per-question means
    assert result["counts"]["groups"] == 2 and result["counts"]["logic"] == 4


def test_videommev2_group_metadata_comes_from_its_last_question() -> None:
    rows = [
        _Row("b", 1.0, question_id="3-2", video_id="3", group_type="logic", group_structure="[[1, 2], 3, 4]"),
        _Row("a", 0.0, question_id="3-1", video_id="3", group_type="relevance", level=9),
    ]
    result = video_mme_v2.videommev2_groups(rows)
    assert result["overall"] == pytest.approx(1 / 10) and "level_9" not in result["categories"]


# ---------------------------------------- VSI-Bench (debiased)


def _vsi_record(**fields: Any) -> dict[str, Any]:
    return {
        "id": 40,
        "dataset": "scannet",
        "scene_name": "scene0011_00",
        "question_type": "object_rel_distance",
        "question": "Which is closer to the bed?",
        "ground_truth": " B ",
        "options": ["A. the lamp", "B. the door", "C. the sofa"],
        **fields,
    }


def test_vsi_debiased_task_from_a_record(tmp_path: Path) -> None:
    ctx = _context(vsi_bench_debiased.SPEC, tmp_path, ["scannet/scene0011_00.mp4"])
    task = vsi_bench_debiased.to_task(_vsi_record(), ctx)
    assert task.inputs[0].paths[0].endswith("scannet/scene0011_00.mp4")
    assert task.choices == ["the lamp", "the door", "the sofa"] and task.ground_truth == "B"
    assert task.answer_type == "multiple_choice" and task.task_id == "vsi-bench-debiased/40"
    assert task.category == "object_rel_distance"
    assert task.meta == {"scene": "scene0011_00", "dataset": "scannet", "sample_id": "40", "metric": "vsi_paper_mca"}
    for options in (None, []):
        size = _vsi_record(question_type="object_size_estimation", ground_truth="85", options=options)
        number = vsi_bench_debiased.to_task(size, ctx)
        assert number.answer_type == "number" and number.ground_truth == 85.0 and number.choices is None
        assert number.meta["metric"] == "vsi_paper_na" and number.meta["unit"] == "cm"
    count = vsi_bench_debiased.to_task(_vsi_record(question_type="object_counting", ground_truth=3, options=None), ctx)
    assert count.meta["unit"] is None


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("\\boxed{a} or rather \\boxed{b}", "B"),  # the last boxed
        ("b. the door", "B"),
        ("I rule out (a). So c.", "C"),  # X. anywhere before (X)
        ("(c) the sofa", "C"),
        ("it is c: the sofa", "C"),
        ("c is closest", "C"),  # the first token
        ("d", ""),  # three options: D is none of them
        ("the door.", "B"),  # an option's text, trailing period and case ignored
        ("The Sofa", "C"),
        ("no idea", ""),
        ("", ""),
    ],
)
def test_vsi_debiased_letter_chain(reply: str, letter: str) -> None:
    choices = ["the lamp", "the door", "the sofa"]
    assert vsi_bench_debiased.vsi_paper_letter(reply, choices) == letter


def test_vsi_debiased_letters_default_to_a_to_d_and_labelled_options_match_by_their_text() -> None:
    assert vsi_bench_debiased.vsi_paper_letter("d", None) == "D"
    assert vsi_bench_debiased.vsi_paper_letter("e", None) == ""
    assert vsi_bench_debiased.vsi_paper_letter("the sofa", ["A. the lamp", "B. the sofa"]) == "B"


def test_vsi_debiased_scores() -> None:
    choices = ["the lamp", "the door", "the sofa"]
    assert vsi_bench_debiased.vsi_paper_mca("(b)", " b ", choices) == (1.0, "B")
    assert vsi_bench_debiased.vsi_paper_mca("(b)", "C", choices) == (0.0, "B")
    assert vsi_bench_debiased.vsi_paper_mca("(c)", "b", choices) == (0.0, "C")  # a later letter is wrong too
    assert vsi_bench_debiased.vsi_paper_mca("no idea", "", choices) == (0.0, "")  # nothing read is wrong
    assert vsi_bench_debiased.vsi_paper_na("3.0 m", 3) == (1.0, 3.0)
    assert vsi_bench_debiased.vsi_paper_na("-3.", -3) == (1.0, -3.0)  # |g|: a negative answer is compared too
    assert vsi_bench_debiased.vsi_paper_na("-2", -3)[0] == pytest.approx(0.4)  # 1/3 off: 4 of 10
    assert vsi_bench_debiased.vsi_paper_na("about 3", 3) == (0.0, None)  # the first token only
    assert vsi_bench_debiased.vsi_paper_na("0", 0) == (0.0, 0.0)  # a zero answer scores 0


# ---------------------------------------- VSTI-Bench


def _vsti_record(**fields: Any) -> dict[str, Any]:
    return {
        "id": 5,
        "question_type": "camera_movement_direction",
        "video_path": "ScanNet/videos/val/scene0011_00.mp4",
        "question": "Which way does the camera move?",
        "options": ["A. left", "B. right", "C. forward"],
        "mc_answer": " c ",
        "ground_truth": "forward",
        **fields,
    }


def test_vsti_task_is_multiple_choice_exactly_when_it_has_options(tmp_path: Path) -> None:
    ctx = _context(vsti_bench.SPEC, tmp_path, ["ScanNet/videos/val/scene0011_00.mp4"], index=9)
    choice = vsti_bench.to_task(_vsti_record(), ctx)
    assert choice.answer_type == "multiple_choice" and choice.choices == ["left", "right", "forward"]
    assert choice.ground_truth == "c" and choice.meta == {"metric": "vsi_mca", "sample_id": "5"}
    assert choice.task_id == "vsti-bench/5" and choice.category == "camera_movement_direction"
    assert choice.inputs[0].paths[0].endswith("ScanNet/videos/val/scene0011_00.mp4")
    empty = vsti_bench.to_task(_vsti_record(options=[]), ctx)  # an empty list is not null: still a choice
    assert empty.answer_type == "multiple_choice"
    moved = {**_vsti_record(question_type="camera_displacement", options=None, ground_truth="1.8")}
    del moved["id"]
    number = vsti_bench.to_task(moved, ctx)
    assert number.answer_type == "number" and number.ground_truth == 1.8 and number.choices is None
    assert number.meta == {"metric": "vsti_na", "unit": "m", "sample_id": "9"}  # no id: the record's position
    assert number.task_id == "vsti-bench/9"
    odd = vsti_bench.to_task(_vsti_record(options=None, ground_truth="n/a"), ctx)
    assert odd.ground_truth == "n/a"  # kept as text (it then scores 0)


def test_vsti_numbers_read_the_first_token_with_the_signed_denominator() -> None:
    assert vsti_bench.vsti_paper_na("1.8. metres", 1.8) == (1.0, 1.8)
    assert vsti_bench.vsti_paper_na("2.7", 1.8)[0] == pytest.approx(0.0)
    assert vsti_bench.vsti_paper_na("2.0", 1.8)[0] == pytest.approx(0.8)  # 1/9 off: 8 of 10
    assert vsti_bench.vsti_paper_na("40", -1.0) == (1.0, 40.0)  # negative answer: any readable number
    assert vsti_bench.vsti_paper_na("0", 0.0) == (0.0, 0.0)
    assert vsti_bench.vsti_paper_na("about 2", 1.8) == (0.0, None)
    assert vsti_bench.vsti_paper_na("2", "n/a") == (0.0, 2.0)
