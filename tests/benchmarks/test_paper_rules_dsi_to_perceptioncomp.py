"""The paper's rules of DSI-Bench, MindCube, OSI-Bench, PAI-Bench and PerceptionComp, one rule at a time: which of
several answers in a reply counts (the last number, letter or boxed answer, or the first), how the published
options are split, and what a loader does with a field outside its documented range. Each case is a reply or a
record the benchmark's own evaluation reads one way, which a neighbouring rule would read another."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from spatialclaw.benchmarks.registry import find_spec
from spatialclaw.benchmarks.spec import RecordContext, load_tasks
from spatialclaw.benchmarks.specs.dsi_bench import CATEGORIES, dsibench_extract, dsibench_paper, parse_options
from spatialclaw.task import Task

# ---------------------------------------- DSI-Bench


def test_dsibench_options_are_split_at_each_semicolon_and_capital_colon_only() -> None:
    # the published form: a letter's text may itself hold "A." or "B." (points of a path), kept whole
    assert parse_options("A: From A. to B.; B: From B. to A.; C: Stays at A.; D: Circles") == [
        "From A. to B.",
        "From B. to A.",
        "Stays at A.",
        "Circles",
    ]
    assert parse_options("A: From A. to B.; B: Stays at B.") == ["From A. to B.", "Stays at B."]  # two options
    assert parse_options("A. Left B. Right C. Up") == ["Left", "Right", "Up"]  # the other form read too


@pytest.mark.parametrize("text", ["A: Left", "A: Left; C: Right", "B: Left; A: Right", "Left or right", ""])
def test_dsibench_options_without_a_run_from_a_are_refused_naming_them(text: str) -> None:
    with pytest.raises(ValueError, match="cannot read the options"):
        parse_options(text)


def _dsi_rows(root: Path, rows: list[dict[str, Any]]) -> Path:
    folder = root / "DSI-Bench"
    (folder / "metadatas").mkdir(parents=True)
    for aug in ("std", "reverse", "hflip", "reverse_hflip"):
        pd.DataFrame(rows).to_csv(folder / "metadatas" / f"{aug}.csv", index=False)
        for row in rows:
            video = folder / "videos" / aug / row["relative_path"]
            video.parent.mkdir(parents=True, exist_ok=True)
            video.write_bytes(b"\x00")
    return folder


def _dsi_row(cate: int, gt: str = "A") -> dict[str, Any]:
    return {
        "cate": cate,
        "relative_path": f"clips/clip_{cate}.mp4",
        "video_type": "real",
        "question": "  How does the camera move?  ",
        "options": "A: Left; B: Right; C: Forward; D: Still",
        "GT": gt,
        "others": "",
    }


def test_dsibench_categories_are_the_six_indices_and_an_unknown_index_is_named_not_wrapped(tmp_path: Path) -> None:
    spec = find_spec("dsibench")
    assert spec is not None
    rows = [_dsi_row(c, gt) for c, gt in zip([0, 5, 6, 7, -1, 3], ["b", " c ", "D", "d", "a", "B"], strict=True)]
    tasks = load_tasks(spec, source=_dsi_rows(tmp_path, rows))
    std = tasks[: len(rows)]
    assert [t.category for t in std] == [
        CATEGORIES[0],
        CATEGORIES[5],
        "category 6",
        "category 7",
        "category -1",
        CATEGORIES[3],
    ]
    assert [t.ground_truth for t in std] == ["B", "C", "D", "D", "A", "B"]  # GT upper-cased and stripped
    assert std[0].question == "How does the camera move?"
    assert [t.meta["sample_id"] for t in tasks[len(rows) :: len(rows)]] == [
        "reverse__row_000000",
        "hflip__row_000000",
        "reverse_hflip__row_000000",
    ]
    assert tasks[len(rows) + 5].meta == {
        "metric": "dsibench_paper",
        "sample_id": "reverse__row_000005",
        "base_id": "row_5",
        "aug": "reverse",
    }
    assert tasks[-1].inputs[0].paths[0].endswith("videos/reverse_hflip/clips/clip_3.mp4")


def test_dsibench_reads_the_last_boxed_answer_then_the_last_marker_then_the_last_letter_token() -> None:
    assert dsibench_extract("First \\boxed{A}, but on reflection \\boxed{c}") == "C"
    assert dsibench_extract("The answer is A at first sight; the final answer: (d)") == "D"
    assert dsibench_extract("I first thought A. Then I saw it turn, so it is D.") == "D"
    assert dsibench_extract("b) and then\nd)") == "D"
    # a boxed letter wins over a later marker, a marker over a later letter token
    assert dsibench_extract("\\boxed{B} is my answer: C") == "B"
    assert dsibench_extract("Answer: B\nA.") == "B"
    # only the final 400 characters are searched for a letter token; else a leading a-d
    assert dsibench_extract("C.\n" + "the camera keeps moving " * 20) == "C"  # leading letter
    assert dsibench_extract("x C.\n" + "the camera keeps moving " * 20) == ""
    assert dsibench_extract("e. none of these") == "" and dsibench_extract("") == ""
    # the tail is exactly 400 characters: a token at its first character counts, one a character earlier does not
    filler = ("the camera keeps moving " * 17)[:398]
    assert dsibench_extract("I would say xC." + filler) == "C"
    assert dsibench_extract("I would say C." + filler + "s") == ""


def test_dsibench_a_record_read_without_its_variant_is_named_by_the_row_it_came_in(tmp_path: Path) -> None:
    from spatialclaw.benchmarks.specs.dsi_bench import to_task

    spec = find_spec("dsibench")
    assert spec is not None
    (tmp_path / "clips").mkdir()
    (tmp_path / "clips" / "x.mp4").write_bytes(b"\x00")
    ctx = RecordContext(spec=spec, media_cache=tmp_path / "cache", media_root=tmp_path, index=3)
    record = {"relative_path": "clips/x.mp4", "question": "Where?", "options": "A: up; B: down", "GT": "a", "cate": 4}
    task = to_task(record, ctx)
    assert task.task_id == "dsi-bench/row_000003" and task.category == CATEGORIES[4]
    assert task.meta == {"metric": "dsibench_paper", "sample_id": "row_000003", "base_id": "row_3"}
    assert task.inputs[0].paths[0].endswith("clips/x.mp4") and task.choices == ["up", "down"]
    assert to_task({**record, "_row": 12}, ctx).meta["sample_id"] == "row_000012"


def test_dsibench_an_empty_extraction_is_wrong_even_against_an_empty_answer() -> None:
    assert dsibench_paper("no idea", "") == (0.0, "")
    assert dsibench_paper("it moves left, so b", " b ") == (1.0, "B")
    assert dsibench_paper("it moves left, so b", "A") == (0.0, "B")


# ---------------------------------------- MindCube


def _png(path: Path) -> str:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (4, 4), (200, 10, 10)).save(path)
    return str(path)


def _mindcube(root: Path, records: list[dict[str, Any]]) -> list[Task]:
    spec = find_spec("mindcube")
    assert spec is not None
    folder = root / "MindCube"
    _png(folder / "other_all_image" / "view_0.png")
    (folder / "MindCube.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return load_tasks(spec, source=folder)


def _mc_record(sample_id: str, question: str, answer: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": sample_id,
        "question": question,
        "images": ["other_all_image/view_0.png"],
        "gt_answer": answer,
        **extra,
    }


def test_mindcube_offers_the_letters_up_to_the_answer_when_the_question_lists_no_options(tmp_path: Path) -> None:
    tasks = _mindcube(
        tmp_path,
        [
            _mc_record("around_1", "Which view shows the chair? A. front B. left C. back", " b ", category=["x"]),
            _mc_record("around_2", "Which of the six views shows the chair?", "F"),
            _mc_record("around_3", "Which view shows the chair?", "b"),
            _mc_record("around_4", "Which of the eight views shows the chair?", "h"),
        ],
    )
    listed, six, two, eight = tasks
    assert listed.choices == ["front", "left", "back"] and listed.ground_truth == "B"
    assert listed.meta == {
        "metric": "mindcube_paper",
        "sample_id": "around_1",
        "options_in_question": True,
        "tags": ["x"],
    }
    assert six.choices == ["A", "B", "C", "D", "E", "F"] and six.meta["tags"] == []
    assert two.choices == ["A", "B", "C", "D"]  # at least A-D
    assert eight.choices == list("ABCDEFGH") and eight.ground_truth == "H"


def test_mindcube_setting_is_the_first_of_around_rotation_translation_among_in_the_id() -> None:
    from spatialclaw.benchmarks.specs.mindcube import setting

    assert setting("rotation_around_q1") == "around"  # around is checked first, wherever it stands
    assert setting("among_ROTATION_q1") == "rotation"
    assert setting("among_translation_q1") == "translation"
    assert setting("Among_group_2") == "among" and setting("misc_7") == "other" and setting(12) == "other"


def test_mindcube_reads_the_first_boxed_the_last_dotted_then_the_tag_then_the_last_phrase() -> None:
    from spatialclaw.benchmarks.specs.mindcube import mindcube_paper, mindcube_paper_extract

    assert mindcube_paper_extract("\\boxed{C} though some would say \\boxed{A}") == "C"  # the first boxed
    assert mindcube_paper_extract("A. is out, so C. it is") == "C"  # the last X.
    assert mindcube_paper_extract("<answer>\nB or rather\nD\n</answer> E") == "D"  # the tag spans lines
    assert mindcube_paper_extract("<ANSWER>B</ANSWER> but E") == "B"  # any case of the tag
    assert mindcube_paper_extract("<answer>none</answer> so E") == "E"  # an empty tag falls through
    assert mindcube_paper_extract("My answer is B, and the answer is D") == "D"  # the last phrase
    assert mindcube_paper_extract("The answer is b; Answer: C") == "C"
    assert mindcube_paper_extract("first B then D and E") == "E"  # the last standalone letter
    assert mindcube_paper_extract("nothing fits") is None
    assert mindcube_paper("  \\boxed{d}  ", " d ") == (1.0, "D")
    assert mindcube_paper("nothing fits", "") == (0.0, None)


# ---------------------------------------- OSI-Bench


def test_osibench_options_are_put_in_letter_order_whatever_form_the_parquet_holds() -> None:
    from spatialclaw.benchmarks.specs.osi_bench import option_texts

    assert option_texts(["B. south", "A. north", "C. east"]) == ["north", "south", "east"]  # by their letter
    assert option_texts(["north", "south"]) == ["north", "south"]  # plain ones in turn
    assert option_texts(["", "north", None, "  ", "south"]) == ["north", "south"]  # blanks take no letter
    assert option_texts("['A. north', 'B. south']") == ["north", "south"]  # the list's text form
    assert option_texts("  A. north\nB. south  ") == ["north", "south"]  # one option per line
    assert option_texts("[A. north\nB. south") == ["[A. north", "south"]  # not a list after all: lines
    assert option_texts(["A.  the far\nside ", "B .near"]) == ["the far\nside", "near"]
    assert option_texts(None) == [] and option_texts([]) == []


def test_osibench_loads_mcq_in_any_case_and_numbers_with_their_category(tmp_path: Path) -> None:
    from tests.benchmarks.layouts_blink_to_osibench import _parquet, write_video

    folder = tmp_path / "OSI-Bench"
    write_video(folder / "clips" / "a.mp4")
    base = {"file_name": "clips/a.mp4", "video_length": 4.5, "options": None}
    rows = [
        {**base, "index": 7, "question": "Which?", "question_type": "MCQ", "options": ["B. y", "A. x"],
         "answer": " b ", "category": "relative_direction"},
        {**base, "index": 8, "question": "How fast?", "question_type": "numerical", "answer": "-2.5",
         "category": "absolute_speed"},
    ]  # fmt: skip
    _parquet(folder / "data.parquet", rows)
    spec = find_spec("osibench")
    assert spec is not None
    mcq, number = load_tasks(spec, source=folder)
    assert mcq.answer_type == "multiple_choice" and mcq.choices == ["x", "y"] and mcq.ground_truth == "b"
    assert mcq.meta == {"sample_id": "7", "video_length_s": 4.5, "metric": "osibench_mcq"}
    assert number.answer_type == "number" and number.ground_truth == -2.5 and number.choices is None
    assert number.meta == {"sample_id": "8", "video_length_s": 4.5, "metric": "osibench_na:absolute_speed"}
    assert number.task_id == "osi-bench/8" and number.category == "absolute_speed"
    assert number.inputs[0].paths[0].endswith("clips/a.mp4")


def test_osibench_mcq_takes_the_first_boxed_then_the_first_label_then_a_lone_first_letter() -> None:
    from spatialclaw.benchmarks.specs.osi_bench import osibench_mcq

    choices = ["north", "south", "east", "west"]
    assert osibench_mcq("\\boxed{b} first, then \\boxed{C}", "B", choices) == (1.0, "B")
    assert osibench_mcq("c. east, then D. west", "C", choices) == (1.0, "C")
    assert osibench_mcq("d is it, as (A) is wrong", "D", choices) == (0.0, "A")  # a label beats a lone letter
    assert osibench_mcq("d is it", " d ", choices) == (1.0, "D")
    assert osibench_mcq("  East.  ", "C", choices) == (1.0, "C")  # an option's exact text
    assert osibench_mcq("Eastwards I think", "C", choices) == (0.0, "Eastwards")  # else the first token
    assert osibench_mcq("   ", "", choices) == (0.0, "")  # nothing read is wrong, even against nothing


def test_osibench_numbers_boxed_then_first_then_a_first_token_and_zero_answers_by_category() -> None:
    from spatialclaw.benchmarks.specs.osi_bench import osibench_na, osibench_number

    assert osibench_number("maybe 3, but \\boxed{ 5.5 } m") == 5.5
    assert osibench_number("between 12.4 and 20 m") == 12.4  # the first number, not the last
    assert osibench_number("-4 m/s") == -4.0 and osibench_number("inf") == float("inf")
    assert osibench_number("") is None and osibench_number("far away") is None
    assert osibench_na("between 12.4 and 20 m", 10) == (0.6, 12.4)  # |12.4-10|/10 = 0.24: six thresholds
    assert osibench_na("-12.4", -10.0, None, "absolute_distance")[0] == 0.6  # |g| in the denominator
    assert osibench_na("inf", 10) == (0.0, float("inf")) and osibench_na("7", "nan") == (0.0, 7.0)
    assert osibench_na("far", 10) == (0.0, None) and osibench_na("7", "?") == (0.0, 7.0)
    # a zero answer: below the category's threshold scores 1, else MRA against the threshold
    assert osibench_na("0.29", 0, None, "absolute_speed")[0] == 1.0
    assert osibench_na("0.372", 0, None, "absolute_displacement")[0] == 0.6  # 0.24 off 0.30
    assert osibench_na("1.9", 0, None, "trajectory_length")[0] == 1.0
    assert osibench_na("2.48", "0", None, "trajectory_length")[0] == 0.6
    # other categories (and none) need an exact zero
    assert osibench_na("0.1", 0, None, "absolute_distance")[0] == 0.0 and osibench_na("0", 0)[0] == 1.0
    assert osibench_na("0.29", 0)[0] == 0.0 and osibench_na("-1", 0, None, "absolute_distance")[0] == 0.0
    # a non-zero answer is scored by MRA in those categories too, a negative one included
    assert osibench_na("-1.24", -1, None, "absolute_displacement")[0] == 0.6
    assert osibench_na("0.248", 0.2, None, "absolute_speed")[0] == 0.6
    # no digits: the first token as a number
    assert osibench_number("inf metres") == float("inf") and osibench_number("nan, no idea") is None


def test_osi_na_reads_the_first_number_with_thousands_separators_and_exponents() -> None:
    from spatialclaw.benchmarks.specs.osi_bench import first_number, osi_na

    assert first_number("about 1,200.5 m, or 900") == 1200.5 and first_number("1.5e3 m") == 1500.0
    assert first_number("-3 then 4") == -3.0 and first_number("no number") is None
    assert osi_na("12.4 or 20", 10) == (0.6, 12.4) and osi_na("none", 10) == (0.0, None)
    assert osi_na("0.2", 0, None, "absolute_speed") == (1.0, 0.2)
    assert osi_na("0.372", 0, None, "absolute_speed")[0] == 0.6
    assert osi_na("0.2", 0, None, "absolute_distance")[0] == 0.0 and osi_na("0", "0")[0] == 1.0
    assert osi_na("-1", 0, None, "absolute_distance")[0] == 0.0 and osi_na("-1.24", -1)[0] == 0.6
    assert osi_na("-1.24", -1, None, "absolute_displacement")[0] == 0.6
    assert osi_na("5", "nan") == (0.0, 5.0) and osi_na("5", None) == (0.0, 5.0)


# ---------------------------------------- PAI-Bench and PerceptionComp: records one at a time


def _context(paper_name: str, root: Path, index: int = 0) -> RecordContext:
    spec = find_spec(paper_name)
    assert spec is not None
    return RecordContext(spec=spec, media_cache=root / "cache", media_root=root, index=index)


def test_paibench_offers_the_non_null_options_in_letter_order_and_refuses_a_gap(tmp_path: Path) -> None:
    from spatialclaw.benchmarks.specs.pai_bench import to_task
    from tests.benchmarks.layouts_blink_to_osibench import write_video

    write_video(tmp_path / "videos" / "arm" / "0.mp4")
    record = {
        "question": "Where does the arm move?",
        "index2ans": '{" b ": "away", "a": "toward", "C": "up", "D": null}',
        "answer": " c ",
        "video_path": "videos/arm/0.mp4",
        "category": None,
        "subcategory": "Robotics",
    }
    task = to_task(record, _context("paibench", tmp_path, index=9))
    assert task.choices == ["toward", "away", "up"] and task.ground_truth == "C"
    assert task.task_id == "pai-bench/9" and task.category == "unknown"  # no _row: the context's index
    assert task.meta == {"metric": "pai_paper", "subcategory": "Robotics", "sample_id": "9"}
    assert task.inputs[0].paths[0].endswith("videos/arm/0.mp4")
    row = to_task({**record, "_row": 4, "index2ans": {"A": "x", "B": "y"}, "category": "Common Sense"},
                  _context("paibench", tmp_path, index=9))  # fmt: skip
    assert row.task_id == "pai-bench/4" and row.meta["sample_id"] == "4" and row.category == "Common Sense"
    assert row.choices == ["x", "y"]
    for gap in ({"A": "x", "C": "y"}, {"B": "x", "C": "y"}, {"0": "x", "1": "y"}, {"1": "x", "A": "y"}):
        with pytest.raises(ValueError, match="are not A, B, C"):
            to_task({**record, "index2ans": gap}, _context("paibench", tmp_path))


def test_paibench_chain_backticks_then_last_boxed_then_first_label_then_a_lone_capital() -> None:
    from spatialclaw.benchmarks.specs.pai_bench import mmsi_chain_letter, pai_paper_choice

    assert mmsi_chain_letter("`A` at first, ```\nsurely B\n```") == "B"  # triple backticks are read first
    assert mmsi_chain_letter("`the cup` and `D`, \\boxed{A}") == "D"  # the first backticked letter
    assert mmsi_chain_letter("`x`, so \\boxed{a} no, \\boxed{(c)}") == "C"  # the last boxed
    assert mmsi_chain_letter("(A) is out; b. it rolls") == "B"  # X. anywhere before (X)
    assert mmsi_chain_letter("not a: but (d)") == "D" and mmsi_chain_letter("it is c: rolls") == "C"
    assert mmsi_chain_letter("A ball, so C") == "C"  # a capital followed by a word is not the answer
    assert mmsi_chain_letter("-d-") == "D" and mmsi_chain_letter("E.") == "" and mmsi_chain_letter("ok") == ""
    assert mmsi_chain_letter("E.", "ABCDE") == "E"
    assert pai_paper_choice("  \\boxed{b}", " b ") == (1.0, "B") and pai_paper_choice("no idea", "") == (0.0, "")


def test_perceptioncomp_letters_the_present_choices_and_refuses_an_answer_outside_them(tmp_path: Path) -> None:
    from spatialclaw.benchmarks.specs.perceptioncomp import to_task

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "v1.webm").write_bytes(b"\x1aE\xdf\xa3")
    record = {
        "question": "Which shop?",
        "video_id": "v1",
        "answer_choice_0": "bakery",
        "answer_choice_1": None,
        "answer_choice_2": "bookshop",
        "answer_choice_3": 7,
        "answer_choice_4": "florist",
        "answer_id": 2,
        "category": None,
        "difficulty": 2,
    }
    task = to_task(record, _context("perceptioncomp", tmp_path, index=5))
    assert task.choices == ["bakery", "bookshop", "7", "florist"] and task.ground_truth == "C"
    assert task.task_id == "perceptioncomp/5" and task.category == "unknown"  # no key: the context's index
    assert task.meta == {"metric": "perceptioncomp_paper", "difficulty": 2, "sample_id": "5"}
    assert task.inputs[0].paths[0].endswith("data/v1.webm")  # the first extension present
    assert to_task({**record, "question_id": "q9"}, _context("perceptioncomp", tmp_path)).task_id == "perceptioncomp/q9"
    keyed = to_task(
        {**record, "key": "pc_1", "question_id": "q9", "answer_id": "0"}, _context("perceptioncomp", tmp_path)
    )
    assert keyed.task_id == "perceptioncomp/pc_1" and keyed.ground_truth == "A"
    shop = to_task({**record, "category": "shopping"}, _context("perceptioncomp", tmp_path))
    assert shop.category == "shopping"
    # five-way: the paper's extractor reads A-E only, so a sixth field is not offered
    six = to_task({**record, "answer_choice_5": "cafe"}, _context("perceptioncomp", tmp_path))
    assert six.choices == ["bakery", "bookshop", "7", "florist"]
    assert to_task({**record, "answer_id": 3}, _context("perceptioncomp", tmp_path)).ground_truth == "D"
    for outside in (4, -1):
        with pytest.raises(ValueError, match=f"answer_id {outside} is outside the 4 options"):
            to_task({**record, "answer_id": outside}, _context("perceptioncomp", tmp_path))


def test_perceptioncomp_first_tag_then_first_boxed_then_first_answer_phrase_then_last_standalone() -> None:
    from spatialclaw.benchmarks.specs.perceptioncomp import perceptioncomp_paper_choice as choice

    assert choice("<answer>b</answer> or <answer>(C).</answer>", "B") == (1.0, "B")  # the first tag
    assert choice("\\boxed{A} but <ANSWER> e </ANSWER>", "E") == (1.0, "E")  # a tag before a boxed letter
    assert choice("\\boxed{d} then \\boxed{A}, answer: B", "D") == (1.0, "D")  # the first boxed
    assert choice("The answer: (c), not answer e, so a", "C") == (1.0, "C")  # the first answer phrase
    assert choice("It is b, maybe e", "E") == (1.0, "E")  # the last standalone letter
    assert choice("(b2)", "B") == (1.0, "B")  # a single letter left
    assert choice("no idea", "") == (0.0, "") and choice("it is f", "F") == (0.0, "")
