"""Question forms models met on real benchmark items (issue 32, item 1): numbered options answered by
number, allowed-value lists that stay text answers, yes/no wherever the verb stands. Each form is
checked from the parsed question through the prompt to the answer a real kernel records."""

from __future__ import annotations

import pytest

from spatialclaw import Kernel
from spatialclaw.agent.prompting import choices_text, fallback_prompt, task_prompt
from spatialclaw.agent.question import find_allowed, find_options, infer_answer_type, make_task, parse_question
from spatialclaw.interactive.session_prompt import build_session_prompt
from spatialclaw.primitives.answers import AnswerError, normalise_answer, normalise_for, validate_claim

CAMERA = (
    "How does the camera move in this clip?\n0. pan left\n1. pan right\n2. dolly in\n3. static\n"
    "Answer with the option's number."
)
COMPASS = "Which direction is the door from the bed? Choose from N, NE, E, SE, S, SW, W, NW."
BOTH = "In both videos, does the person pick up the cup?\nYes.\nNo.\nPlease answer with 'Yes' or 'No'."


@pytest.fixture(scope="module")
def kernel():
    with Kernel() as k:
        yield k


# numbered options -----------------------------------------------------------------------------------
def test_numbered_option_lines_are_options_answered_by_number():
    parsed = parse_question(CAMERA)
    assert parsed.choices == ["pan left", "pan right", "dolly in", "static"]
    assert parsed.labels == ["0", "1", "2", "3"] and parsed.answer_type == "multiple_choice"
    assert parsed.text == "How does the camera move in this clip?\nAnswer with the option's number."
    assert any("(0, 1, 2, 3)" in note and "number" in note for note in parsed.notes)


@pytest.mark.parametrize(
    "question, labels",
    [
        ("How does it move?\n1. left\n2. right\n3. up", ["1", "2", "3"]),
        ("How does it move?\n(0) left\n(1) right", ["0", "1"]),
        ("How does it move?\n0) left\n1) right", ["0", "1"]),
        ("How does it move?\n0: left\n1: right", ["0", "1"]),
        ("How does it move? 0. left 1. right 2. up", ["0", "1", "2"]),
        ("Options:\n0. left\n1. right", ["0", "1"]),
    ],
)
def test_numbered_options_in_every_form(question, labels):
    parsed = parse_question(question)
    assert parsed.labels == labels and parsed.choices is not None and len(parsed.choices) == len(labels)
    assert parsed.choices[0] == "left"


@pytest.mark.parametrize(
    "question",
    [
        "Steps:\n1. go left\n2. turn right\nWhere are you now?",  # a numbered list inside the question
        "Do this\n1. go left\n2. turn right",  # nothing asks or introduces them
        "How far is it?\n0.5 m\n1.5 m",  # decimals, not numbers with a dot
        "How does it move?\n0. left",  # one item is no run
        "How does it move?\n0. left\n2. right",  # not consecutive
        "Move 1. then 2. done",
    ],
)
def test_numbers_that_are_not_options(question):
    assert parse_question(question).labels is None


def test_lettered_options_win_over_numbers_and_keep_letters():
    parsed = parse_question("Which way?\nA. 0. left\nB. 1. right")
    assert parsed.labels is None and parsed.choices == ["0. left", "1. right"]


def test_given_choices_keep_the_numbers_only_when_the_text_numbers_the_same_options():
    same = parse_question(CAMERA, choices=["pan left", "pan right", "dolly in", "static"])
    assert same.labels == ["0", "1", "2", "3"]
    other = parse_question(CAMERA, choices=["up", "down"])
    assert other.labels is None and other.choices == ["up", "down"]
    assert find_options(CAMERA) == (
        "How does the camera move in this clip?",
        ["pan left", "pan right", "dolly in", "static"],
        "Answer with the option's number.",
    )


def test_numbers_set_as_another_answer_type_are_shown_for_reference_only():
    parsed = parse_question(CAMERA, answer_type="text")
    assert parsed.labels is None and parsed.answer_type == "text"


@pytest.mark.parametrize("value", [2, "2", "2.", "(2)", "2)", "option 2", "2. dolly in", " Dolly In ", 2.0])
def test_a_numbered_option_is_recorded_as_its_number(value):
    parsed = parse_question(CAMERA)
    normalised = normalise_answer(value, parsed.choices, parsed.answer_type, parsed.labels)
    assert normalised == 2 and type(normalised) is int
    assert validate_claim({"value": 2}, parsed.choices, parsed.answer_type, parsed.labels) == 2


@pytest.mark.parametrize(
    "value, message",
    [
        ("C", "not one of the options"),
        (7, "not one of the options"),
        (True, "number"),
        (None, "number"),
        (2.5, "number"),
        ([2], "number"),
        ("2. pan left", "another text"),
    ],
)
def test_a_numbered_option_refuses_what_is_not_one_of_its_numbers(value, message):
    parsed = parse_question(CAMERA)
    with pytest.raises(AnswerError, match=message) as error:
        normalise_answer(value, parsed.choices, parsed.answer_type, parsed.labels)
    assert "0. pan left" in str(error.value)
    with pytest.raises(AnswerError, match="normalised form"):
        validate_claim({"value": "2"}, parsed.choices, parsed.answer_type, parsed.labels)


def test_numbered_options_counted_from_one_and_shared_texts():
    parsed = parse_question("Which?\n1. left\n2. right\n3. left")
    assert parsed.duplicates == [["1", "3"]] and any("answer with the number" in n for n in parsed.notes)
    with pytest.raises(AnswerError, match="several options"):
        normalise_answer("left", parsed.choices, parsed.answer_type, parsed.labels)
    with pytest.raises(AnswerError, match="not one of the options"):
        normalise_answer(0, parsed.choices, parsed.answer_type, parsed.labels)
    assert normalise_answer("2", parsed.choices, parsed.answer_type, parsed.labels) == 2
    with pytest.raises(AnswerError, match="do not fit"):
        normalise_answer(1, ["a", "b"], "multiple_choice", ["1"])


def test_the_prompt_lists_numbered_options_and_asks_for_the_number():
    task = make_task(CAMERA)
    assert choices_text(task) == "Options:\n0. pan left\n1. pan right\n2. dolly in\n3. static"
    prompt = task_prompt(task)
    assert "answer(2)" in prompt and "letter" not in prompt.split("Answer type:")[1].split("\n")[0]
    assert "ANSWER: 3" in fallback_prompt(task, "You have used all 30 steps")


# allowed-value lists --------------------------------------------------------------------------------
def test_an_allowed_value_list_stays_a_text_answer_checked_against_the_list():
    parsed = parse_question(COMPASS)
    assert parsed.choices is None and parsed.answer_type == "text"
    assert parsed.allowed == ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
    assert parsed.text == COMPASS  # the instruction stays in the question the model reads
    assert normalise_answer("W", None, "text", None, parsed.allowed) == "W"
    assert normalise_answer(" nw. ", None, "text", None, parsed.allowed) == "NW"  # spelt as listed
    with pytest.raises(AnswerError, match="N, NE, E, SE, S, SW, W, NW"):
        normalise_answer("G", None, "text", None, parsed.allowed)
    with pytest.raises(AnswerError, match="allowed"):
        normalise_answer(None, None, "text", None, parsed.allowed)


def test_allowed_numbers_and_lists_in_other_wordings():
    assert find_allowed("Where is the lamp? Answer with one of: left, right, or behind") == ["left", "right", "behind"]
    assert normalise_answer(2, None, "text", None, ["1", "2", "3"]) == "2"
    assert find_allowed("Where is it? Choose from the kitchen.") is None  # one item is no list
    assert find_allowed("Where is it? Choose from a, this is a long sentence that is no option at all") is None


def test_a_clause_after_a_comma_is_no_allowed_value():
    question = "Which room is the cat in? Pick one of the rooms, and say why you think so."
    assert find_allowed(question) is None  # "and say why you think so" is short but no value: five words or more
    parsed = parse_question(question)
    assert (parsed.allowed, parsed.answer_type) == (None, "text")


def test_an_allowed_list_ending_in_and_or_or_keeps_the_last_value_bare():
    # "and behind" was an allowed value: the model's "behind" was refused
    parsed = parse_question("Where is the lamp? Choose from left, right, and behind.")
    assert parsed.allowed == ["left", "right", "behind"]
    assert normalise_answer("behind", None, "text", None, parsed.allowed) == "behind"
    assert find_allowed("Where is the lamp? Choose from left, right, or behind.") == ["left", "right", "behind"]


def test_an_allowed_list_of_yes_and_no_is_a_yes_no_question():
    parsed = parse_question("Is the lamp on? Answer with one of: yes, no.")
    assert (parsed.answer_type, parsed.allowed) == ("yes_no", None)


def test_an_allowed_list_of_yes_and_no_makes_yes_no_without_an_auxiliary_verb():
    parsed = parse_question("The lamp by the bed: on? Answer with one of: yes, no.")
    assert (parsed.answer_type, parsed.allowed) == ("yes_no", None)
    assert any("answer type yes/no" in note for note in parsed.notes)


def test_a_set_text_answer_type_keeps_yes_and_no_as_its_allowed_values():
    # the caller's type wins; the notes must not claim a yes/no answer type the task does not have
    parsed = parse_question("Is the lamp on? Answer with one of: yes, no.", answer_type="text")
    assert (parsed.answer_type, parsed.allowed) == ("text", ["yes", "no"])
    assert not any("yes/no" in note for note in parsed.notes)
    assert normalise_answer("Yes", None, "text", None, parsed.allowed) == "yes"
    line = task_prompt(make_task("Is the lamp on? Answer with one of: yes, no.", answer_type="text"))
    assert "Allowed: yes, no." in line.split("Answer type:")[1].split("\n")[0]


def test_an_allowed_list_keeps_a_text_answer_whatever_the_wording_would_infer():
    turn = parse_question("Does the camera turn? Choose from left, right, not at all.")  # reads as yes/no
    assert (turn.answer_type, turn.allowed) == ("text", ["left", "right", "not at all"])
    far = parse_question("How far is the chair? Choose from near, middle, far.")  # reads as a number
    assert (far.answer_type, far.allowed) == ("text", ["near", "middle", "far"])


def test_an_allowed_list_yields_to_given_choices_and_to_a_set_answer_type():
    assert parse_question(COMPASS, choices=["N", "S"]).allowed is None
    assert parse_question(COMPASS, answer_type="number").allowed is None
    assert parse_question(COMPASS, answer_type="text").allowed == ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]


def test_the_prompt_names_the_allowed_values():
    task = make_task(COMPASS)
    assert task.allowed_answers and task.choices is None
    line = task_prompt(task).split("Answer type:")[1].split("\n")[0]
    assert "Allowed: N, NE, E, SE, S, SW, W, NW." in line and 'answer("W")' in line
    assert "ANSWER: N" in fallback_prompt(task, "You have used all 30 steps")


# yes / no ------------------------------------------------------------------------------------------
def test_yes_and_no_option_lines_make_a_yes_no_question_wherever_the_verb_stands():
    parsed = parse_question(BOTH)
    assert (parsed.answer_type, parsed.choices) == ("yes_no", None)
    assert parsed.text == "In both videos, does the person pick up the cup?\nPlease answer with 'Yes' or 'No'."


@pytest.mark.parametrize(
    "question",
    [
        "In both videos, does the person pick up the cup?",
        "Looking at the two frames: is the door open?",
        "Tell me whether the lamp is on. Answer 'Yes' or 'No'.",
        "Does the camera turn left? Reply with yes/no.",
        "The lamp (yes or no): on?",
        "Is the lamp on or not?",
        "Is point A. closer to the camera than point B?",
    ],
)
def test_yes_no_questions(question):
    assert parse_question(question).answer_type == "yes_no"


@pytest.mark.parametrize(
    "question",
    [
        "In both videos, is the cup left or right of the plate?",  # an alternative in the asking sentence
        "Where is the lamp, is it far?",  # a wh-question
        "In both videos, the person picks up the cup.",
        "What does the sign say?",
    ],
)
def test_not_yes_no_questions(question):
    assert parse_question(question).answer_type != "yes_no"


def test_lettered_yes_and_no_stay_multiple_choice_and_a_set_type_keeps_the_lines():
    assert parse_question("Is the lamp on?\nA. Yes\nB. No").choices == ["Yes", "No"]
    kept = parse_question("Is the lamp on?\nYes.\nNo.", answer_type="multiple_choice")
    assert kept.choices == ["Yes", "No"] and kept.answer_type == "multiple_choice"
    assert parse_question("Is it on?\nAnswer yes or no.").choices is None  # an instruction is no option


def test_unlettered_option_lines_of_up_to_five_words():
    parsed = parse_question("How does the camera move?\nOptions:\nit pans to the left\nit pans to the right")
    assert parsed.choices == ["it pans to the left", "it pans to the right"]
    assert parsed.text == "How does the camera move?"
    longer = "How does the camera move?\nOptions:\nthe camera pans to the left\nthe camera pans to the right"
    assert parse_question(longer).choices is None  # six words a line read as sentences, not options


def test_numbered_yes_and_no_stay_options_answered_by_number():
    parsed = parse_question("Is the lamp on?\n0. Yes\n1. No")
    assert (parsed.choices, parsed.labels, parsed.answer_type) == (["Yes", "No"], ["0", "1"], "multiple_choice")


def test_option_lines_after_a_question_that_ends_in_options():
    # "...? Options:" then one option a line: the options are read and the marker leaves the question
    parsed = parse_question("Where is the door? Options:\nleft\nright\nbehind")
    assert (parsed.text, parsed.choices) == ("Where is the door?", ["left", "right", "behind"])
    both = parse_question("Did the person pick up the cup? Options:\nYes.\nNo.")
    assert (both.text, both.choices, both.answer_type) == ("Did the person pick up the cup?", None, "yes_no")
    assert parse_question("Look at the room. Options:\nleft\nright").choices is None  # nothing asks


def test_yes_and_no_lines_under_a_set_answer_type():
    yes_no = parse_question("Is the lamp on?\nYes.\nNo.", answer_type="yes_no")
    assert (yes_no.text, yes_no.choices, yes_no.answer_type) == ("Is the lamp on?", None, "yes_no")
    text = parse_question("Is the lamp on?\nYes.\nNo.", answer_type="text")  # the caller's type is kept
    assert (text.choices, text.answer_type) == (["Yes", "No"], "text")


def test_an_explicit_yes_no_instruction_wins_over_measuring_words():
    assert infer_answer_type("Is the table longer than 2 m, in meters? Answer yes or no.")[0] == "yes_no"
    assert infer_answer_type("How far is the table, in meters?")[0] == "number"


# the recorded answer, in a real kernel and in the session prompt ----------------------------------------
def test_a_real_kernel_records_numbers_allowed_values_and_yes_no_as_the_benchmark_asks(kernel):
    for question, code, recorded in (
        (CAMERA, "answer(2)", 2),
        (CAMERA, "answer('2')", 2),
        (COMPASS, "answer('W')", "W"),
        (BOTH, "answer('Yes')", "yes"),
    ):
        kernel.reset(meta=make_task(question).kernel_meta())
        result = kernel.execute(code)
        assert result.answered and result.answer == recorded and type(result.answer) is type(recorded), code
    kernel.reset(meta=make_task(COMPASS).kernel_meta())
    refused = kernel.execute("answer('G')")
    assert not refused.answered and "N, NE, E, SE, S, SW, W, NW" in refused.error.message


def test_the_session_host_checks_with_the_same_spec():
    meta = make_task(CAMERA).kernel_meta()
    assert normalise_for("1", meta) == 1 and normalise_for("W", make_task(COMPASS).kernel_meta()) == "W"
    assert normalise_for("Yes", None) == "Yes"  # no spec: a text answer


def test_the_session_prompt_asks_for_the_number(tmp_path):
    prompt = build_session_prompt(make_task(CAMERA), "s1", tmp_path / "s1", 30, vlm_available=False)
    assert "This question numbers its options" in prompt and "0. pan left" in prompt
    assert "options labelled A, B, C" not in prompt
