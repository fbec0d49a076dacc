"""Questions as written: the option styles of the benchmarks we adapt, parsed into choices and a type.

Each case is a question in the form a benchmark publishes it (its records in ``tests/fixtures/benchmarks``
or its public prompt format), with the choices and the answer type it must become.
"""

from __future__ import annotations

import json

import pytest

from spatialclaw.agent.prompting import task_prompt
from spatialclaw.agent.question import make_task, parse_question
from spatialclaw.primitives.answers import AnswerError, normalise_answer
from tests import paths

FIXTURES = paths.FIXTURES / "benchmarks"


def _first(path: str) -> dict:
    return json.loads((FIXTURES / path).read_text(encoding="utf-8").splitlines()[0])


CASES = [
    # (benchmark, question as written, choices given separately, expected choices, expected type)
    (
        "MMSI-Bench",
        _first("mmsi-bench/test.jsonl")["question"],
        None,
        ["front-left", "behind", "right", "directly ahead"],
        "multiple_choice",
    ),
    (
        "MindCube",
        json.loads((FIXTURES / "mindcube/raw/MindCube_tinybench.jsonl").read_text().splitlines()[0])["question"],
        None,
        ["a sofa", "a window", "a door"],
        "multiple_choice",
    ),
    (
        "ERQA",
        _first("erqa/test.jsonl")["question"],
        None,
        ["the mug", "the shelf", "nothing", "the bottle"],
        "multiple_choice",
    ),
    (
        "SPAR-Bench select",
        "How did the camera move from image 1 to image 2? A. moved left B. moved right C. moved forward D. moved backward",
        None,
        ["moved left", "moved right", "moved forward", "moved backward"],
        "multiple_choice",
    ),
    ("SPAR-Bench fill", _first("spar-bench/test.jsonl")["question"], None, None, "number"),
    ("VSI-Bench counting", _first("vsi-bench/test.jsonl")["question"], None, None, "number"),
    (
        "VSI-Bench distance",
        "Measuring from the closest point of each object, what is the direct distance between the table and the sofa (in meters)?",
        None,
        None,
        "number",
    ),
    (
        "VSI-Bench size",
        "What is the length of the longest dimension (length, width, or height) of the bed, measured in centimeters?",
        None,
        None,
        "number",
    ),
    (
        "VSI-Bench direction",
        "If I am standing by the bed and facing the door, is the lamp to my front-left, front-right, back-left, or back-right?",
        ["A. front-left", "B. front-right", "C. back-left", "D. back-right"],
        ["front-left", "front-right", "back-left", "back-right"],
        "multiple_choice",
    ),
    (
        "BLINK prompt",
        "Which point is closer to the camera?\nSelect from the following choices.\n(A) A is closer\n(B) B is closer",
        ["A is closer", "B is closer"],
        ["A is closer", "B is closer"],
        "multiple_choice",
    ),
    (
        "CV-Bench prompt",
        "How many pictures are in the image? Select from the following choices.\n(A) 0\n(B) 3\n(C) 2\n(D) 1",
        None,
        ["0", "3", "2", "1"],
        "multiple_choice",
    ),
    (
        "ViewSpatial-Bench",
        "From the camera's perspective, where is the tv relative to the sofa?",
        "A. left\nB. right\nC. front\nD. back",
        ["left", "right", "front", "back"],
        "multiple_choice",
    ),
    (
        "OmniSpatial",
        "From the driver's seat, is the cyclist on the left or the right?",
        ["left", "right"],
        ["left", "right"],
        "multiple_choice",
    ),
    (
        "3DSRBench prompt",
        "Question: Which object is higher in the 3D world space, the cup or the plate?\nOptions:\nA. cup\nB. plate\n"
        "Please select the correct answer from the options above.",
        None,
        ["cup", "plate"],
        "multiple_choice",
    ),
    ("yes/no", "Is the mug on the table?", None, None, "yes_no"),
    ("either/or is not yes/no", _first("3dsrbench/test.jsonl")["question"], None, None, "text"),
    ("free text", "Which object is on top of the desk?", None, None, "text"),
]


@pytest.mark.parametrize("benchmark,question,given,choices,answer_type", CASES, ids=[c[0] for c in CASES])
def test_benchmark_questions_parse_into_their_choices_and_answer_type(benchmark, question, given, choices, answer_type):
    parsed = parse_question(question, given)
    assert parsed.choices == choices
    assert parsed.answer_type == answer_type
    assert any("answer type" in note for note in parsed.notes)
    # no option is shown twice: the list left the displayed question (zip stops at the last of up to four options)
    for letter, option in zip("ABCD", choices or [], strict=False):
        assert not any(f"{form}{option}" in parsed.text for form in (f"{letter}. ", f"({letter}) ", f"{letter}: "))
    assert "following choices" not in parsed.text


def test_the_stem_and_trailing_instruction_survive_and_options_are_shown_once():
    erqa = _first("erqa/test.jsonl")["question"]
    task = make_task(erqa)
    assert task.question.startswith("If the robot moves the gripper up, which object will it hit first?")
    assert "Please answer directly" in task.question and "the mug" not in task.question
    assert task.meta["question_as_written"] == erqa
    prompt = task_prompt(task)
    assert prompt.count("the mug") == 1 and "A. the mug" in prompt
    assert "4 options (A, B, C, D) were read from the question text" in prompt


def test_a_caller_set_answer_type_wins_and_is_not_inferred():
    parsed = parse_question("How many chairs are there?", answer_type="text")
    assert parsed.answer_type == "text" and not any("inferred" in n for n in parsed.notes)
    with pytest.raises(ValueError, match="needs options"):
        parse_question("Which is it?", answer_type="multiple_choice")


def test_letters_inside_prose_are_not_options():
    parsed = parse_question("Is point A. closer to the camera than point B?")
    assert parsed.choices is None and parsed.answer_type == "yes_no"


def test_duplicate_options_are_reported_and_their_text_is_not_accepted_as_an_answer():
    task = make_task("Which way did it turn? A. left B. right C. left")
    assert task.choices == ["left", "right", "left"]
    assert any("options A and C have the same text" in note for note in task.inferred)
    with pytest.raises(AnswerError, match="several options"):
        normalise_answer("left", task.choices)
    assert normalise_answer("C", task.choices) == "C"


@pytest.mark.parametrize(
    "value",
    ["A", "a", "(A)", "A.", "A:", "A)", "A. Smoking machine", "(A) smoking machine", "Smoking machine", "option A"],
)
def test_answer_accepts_the_forms_a_question_asks_for(value):
    assert normalise_answer(value, ["Smoking machine", "Kettle"]) == "A"


def test_answer_rejects_a_letter_whose_text_names_another_option():
    with pytest.raises(AnswerError, match="names option A"):
        normalise_answer("A. Kettle", ["Smoking machine", "Kettle"])


def test_local_benchmark_records_go_through_the_same_parser(tmp_path):
    from spatialclaw.benchmarks.data.local import load_local_tasks

    (tmp_path / "a.png").write_bytes((FIXTURES / "img" / "view0.png").read_bytes())
    records = [
        {
            "task_id": "mc",
            "question": "Where is the sofa? Options: A: Southwest, B: East",
            "images": ["a.png"],
            "answer": "B",
        },
        {"task_id": "count", "question": "How many chairs are there?", "images": ["a.png"]},
    ]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    mc, count = load_local_tasks(tmp_path / "tasks.jsonl")
    assert (
        mc.choices == ["Southwest", "East"]
        and mc.answer_type == "multiple_choice"
        and mc.question == "Where is the sofa?"
    )
    assert count.answer_type == "number" and count.inferred


def test_the_agent_guide_example_runs_as_written():
    from tests.doc_examples import code_blocks

    blocks = code_blocks("agent.md", "Questions as written", "python")
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/agent.md", "exec"), {})


@pytest.mark.parametrize(
    "value", ['{"distance_m": 1.0, "sigma": 0.3}', "[1.0, 2.0]", "between 1.0 and 2.0", "The sofa is 2 m from the door"]
)
def test_a_number_answer_refuses_text_that_is_not_one_number(value):
    with pytest.raises(AnswerError, match="number"):
        normalise_answer(value, answer_type="number")
    with pytest.raises(AnswerError, match="short text"):
        normalise_answer({"distance_m": 1.0}, answer_type="text")
    assert normalise_answer("about 3.2 m", answer_type="number") == 3.2
    assert normalise_answer("12 m^2", answer_type="number") == 12.0


def test_unlettered_option_lines_are_choices():
    parsed = parse_question("Where is the door?\nOptions:\nleft\nright\nbehind")
    assert (parsed.text, parsed.choices, parsed.answer_type) == (
        "Where is the door?",
        ["left", "right", "behind"],
        "multiple_choice",
    )
    assert normalise_answer("right", parsed.choices) == "B"


def test_short_lines_that_are_not_options_stay_text():
    for question in ("Describe the room.\nIt is big.\nReally big.", "How far is the bed?\nGive your answer in metres."):
        assert parse_question(question).choices is None


def test_a_letter_named_before_the_options_does_not_hide_them():
    # "image B:" is a B marker before the A. B. run: the run is A then the B after it, not the B before it
    parsed = parse_question("In image B: a kitchen. Which object is nearest the camera? A. the sofa B. the table")
    assert parsed.choices == ["the sofa", "the table"]
    assert parsed.text == "In image B: a kitchen. Which object is nearest the camera?"


def test_inline_options_after_a_marker_without_colon_or_with_no_stem():
    parsed = parse_question("Which object is nearer to the camera? Choices A. the chair B. the table")
    assert (parsed.text, parsed.choices) == ("Which object is nearer to the camera?", ["the chair", "the table"])
    # choices given as one string on one line (the options and nothing before them)
    assert parse_question("Where is the lamp?", choices="A. left B. right").choices == ["left", "right"]


def test_letters_repeated_in_the_instruction_do_not_hide_the_options():
    parsed = parse_question("Which is nearer? (A) the chair (B) the table. Answer with one of: (A), (B).")
    assert parsed.choices == ["the chair", "the table"] and parsed.answer_type == "multiple_choice"
    assert parsed.text == "Which is nearer?\nAnswer with one of: (A), (B)."


def test_given_choices_that_are_fewer_than_the_listed_options_leave_the_text_as_written():
    question = "Where is the lamp?\nA. left\nB. right\nC. behind"
    parsed = parse_question(question, choices=["left", "right"])
    assert parsed.choices == ["left", "right"] and parsed.text == question  # "C. behind" is still shown
    assert any("differ from the given choices" in note for note in parsed.notes)


def test_an_empty_choices_string_is_no_choices():
    parsed = parse_question("How far is the chair, in meters?", choices="")
    assert (parsed.choices, parsed.answer_type) == (None, "number")


def test_inline_options_on_the_line_after_an_instruction():
    parsed = parse_question("Which object is nearest the door? Look at both images.\nA. the sofa B. the table")
    assert (parsed.text, parsed.choices) == (
        "Which object is nearest the door? Look at both images.",
        ["the sofa", "the table"],
    )
