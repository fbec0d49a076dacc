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
from spatialclaw.benchmarks.spec import load_tasks
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
