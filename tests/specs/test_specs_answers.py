"""Specifications of answer normalisation and question parsing: signs, boundaries and letter order.

These are the behaviours benchmarks/perf/mutation.py found unspecified (a change to them went unnoticed).
"""

from __future__ import annotations

import json

import pytest

from spatialclaw.agent.question import infer_answer_type, parse_question
from spatialclaw.primitives.answers import AnswerError, normalise_answer


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("-2.5 m", -2.5),
        ("+4", 4.0),
        ("about -0.75 metres", -0.75),
        ("1,250 cm", 1250.0),
        ("3.2 m^2", 3.2),
        ("1e-3", 0.001),
    ],
)
def test_a_number_answer_keeps_its_sign_and_reads_thousands_and_unit_powers(text: str, number: float) -> None:
    assert normalise_answer(text, answer_type="number") == number


@pytest.mark.parametrize("value", [-7, -7.0, 0, 0.0])
def test_a_negative_or_zero_number_is_a_number_not_an_error(value: float) -> None:
    assert normalise_answer(value, answer_type="number") == float(value)


@pytest.mark.parametrize(
    "text", ["", "no number here", "3 or 4 m", '{"value": 3}', "[3]", "the chair is 2 m from the table"]
)
def test_a_text_without_exactly_one_number_or_with_a_sentence_around_it_is_refused(text: str) -> None:
    with pytest.raises(AnswerError):
        normalise_answer(text, answer_type="number")


@pytest.mark.parametrize("value", [float("inf"), float("nan"), "inf", True, None, [1.0]])
def test_non_finite_booleans_and_structures_are_not_numbers(value: object) -> None:
    with pytest.raises(AnswerError):
        normalise_answer(value, answer_type="number")


@pytest.mark.parametrize(("value", "expected"), [("Yes", "yes"), (" n ", "no"), ("TRUE", "yes"), (False, "no")])
def test_yes_no_answers_read_words_and_booleans(value: object, expected: str) -> None:
    assert normalise_answer(value, answer_type="yes_no") == expected


@pytest.mark.parametrize("value", ["maybe", "yes and no", 1, None])
def test_anything_else_is_not_a_yes_no_answer(value: object) -> None:
    with pytest.raises(AnswerError):
        normalise_answer(value, answer_type="yes_no")


CHOICES = ["the chair", "the table", "the lamp"]


@pytest.mark.parametrize(
    ("value", "letter"),
    [("C", "C"), ("c", "C"), ("(B)", "B"), ("B. the table", "B"), ("the LAMP.", "C"), ("option a", "A")],
)
def test_a_choice_is_recorded_as_its_letter_from_a_letter_form_or_the_option_text(value: str, letter: str) -> None:
    assert normalise_answer(value, CHOICES) == letter


@pytest.mark.parametrize("value", ["D", 0, 2, True, None, "A. the table", "the sofa", ["A"]])
def test_a_letter_outside_the_options_a_position_or_a_letter_naming_another_option_is_refused(value: object) -> None:
    with pytest.raises(AnswerError):
        normalise_answer(value, CHOICES)


def test_an_option_text_shared_by_two_options_must_be_given_as_a_letter() -> None:
    with pytest.raises(AnswerError, match="several options"):
        normalise_answer("left", ["left", "right", "left"])
    assert normalise_answer("C", ["left", "right", "left"]) == "C"


def test_a_position_past_the_last_option_is_read_as_text_and_refused_as_no_option() -> None:
    with pytest.raises(AnswerError, match="not one of the options"):
        normalise_answer(3, CHOICES)


def test_given_choices_lose_their_letters_only_when_each_carries_its_own_letter_in_order() -> None:
    assert parse_question("Where is it?", ["A. left", "B. right"]).choices == ["left", "right"]
    assert parse_question("Where is it?", ["B. left", "A. right"]).choices == ["B. left", "A. right"]
    assert parse_question("Where is it?", ["A. left", "right"]).choices == ["A. left", "right"]
    assert parse_question("Where is it?", ["A. left", "A. right"]).choices == ["A. left", "A. right"]


def test_options_listed_one_per_line_are_read_when_they_run_a_b_c_in_order() -> None:
    parsed = parse_question("Which is closest?\nA. chair\nB. table\nC. lamp")
    assert parsed.choices == ["chair", "table", "lamp"]
    assert parsed.text == "Which is closest?"
    skipped = parse_question("Which is closest?\nA. chair\nC. table")
    assert skipped.choices == ["A. chair", "C. table"]  # not lettered options: read as two unlettered lines


def test_the_last_block_of_lettered_lines_wins_and_text_after_it_stays() -> None:
    question = "Notes:\nA. first\nB. second\nWhich is nearer?\nA. chair\nB. table\nC. lamp\nAnswer with the letter."
    parsed = parse_question(question)
    assert parsed.choices == ["chair", "table", "lamp"]
    assert parsed.text.endswith("Which is nearer?\nAnswer with the letter.")


def test_a_block_of_lettered_lines_must_start_at_a() -> None:
    # Not lettered options: the lines are kept whole as unlettered options.
    assert parse_question("Which is it?\nX. the red one\nB. the blue one").choices == [
        "X. the red one",
        "B. the blue one",
    ]
    # A later "C., B." pair is no block, so the A-B block stays the last one.
    parsed = parse_question("Which is it?\nA. red\nB. blue\nAnd also:\nC. x\nB. y")
    assert parsed.choices == ["red", "blue"]
    assert parsed.text.endswith("And also:\nC. x\nB. y")


def test_an_options_marker_line_before_the_lettered_lines_leaves_the_question() -> None:
    parsed = parse_question("Which is closest?\nOptions:\nA. chair\nB. table")
    assert parsed.text == "Which is closest?"
    assert parse_question("Which is closest? Options:\nA. chair\nB. table").text == "Which is closest?"


@pytest.mark.parametrize(
    ("question", "answer_type"),
    [
        ("How many chairs are there?", "number"),
        ("How far is the lamp from the bed, in meters?", "number"),
        ("Is the lamp left of the bed?", "yes_no"),
        ("Is the lamp left or right of the bed?", "text"),
        ("What colour is the lamp?", "text"),
    ],
)
def test_the_answer_type_is_inferred_from_counting_measuring_and_auxiliary_verb_wording(
    question: str, answer_type: str
) -> None:
    assert infer_answer_type(question)[0] == answer_type
    assert infer_answer_type(question, ["x", "y"])[0] == "multiple_choice"


def test_the_answer_type_reason_quotes_the_wording_that_decided_it() -> None:
    assert infer_answer_type("How MANY chairs are there?") == ("number", "the question asks 'how many'")
    assert infer_answer_type("What is the distance from the bed?")[1] == "the question asks 'what is the distance'"
    assert infer_answer_type("  Is the lamp on?") == (
        "yes_no",
        "the question asks 'Is ...?' and offers no alternatives",  # the verb may stand anywhere (issue 32)
    )
    assert infer_answer_type("Which?", ["x", "y", "z"])[1] == "it has 3 options"


def test_a_text_with_several_numbers_is_refused_as_holding_more_than_one() -> None:
    with pytest.raises(AnswerError, match="ONE number; '3 4' holds 2"):
        normalise_answer("3 4", answer_type="number")


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_number_answer_is_asked_for_a_number_not_called_a_structure(text: str) -> None:
    with pytest.raises(AnswerError, match="needs a number; got ") as refused:
        normalise_answer(text, answer_type="number")
    assert "structure" not in str(refused.value)


@pytest.mark.parametrize("text", ['{"value": 3}', "[3]", " [1, 2]"])
def test_a_json_object_or_list_is_refused_as_a_structure(text: str) -> None:
    with pytest.raises(AnswerError, match="got a structure"):
        normalise_answer(text, answer_type="number")


def test_number_errors_quote_the_first_60_or_80_characters_and_the_first_four_numbers() -> None:
    structure = "[" + ", ".join(str(i) for i in range(40)) + "]"
    with pytest.raises(AnswerError) as refused:
        normalise_answer(structure, answer_type="number")
    assert f"got a structure {structure[:60]!r}." in str(refused.value)
    with pytest.raises(AnswerError) as refused:
        normalise_answer("1 2 3 4 5 6", answer_type="number")
    assert "'1 2 3 4 5 6' holds 6 (1, 2, 3, 4)." in str(refused.value)
    sentence = "3 metres, measured along the floor from the left leg of the chair to the wall behind it"
    with pytest.raises(AnswerError) as refused:
        normalise_answer(sentence, answer_type="number")
    assert f"got the text {sentence[:80]!r}." in str(refused.value)


def test_an_answer_type_read_from_a_task_file_means_what_the_literal_means() -> None:
    number, yes_no, multiple_choice, text = json.loads('["number", "yes_no", "multiple_choice", "text"]')
    assert normalise_answer("3.5 m", answer_type=number) == 3.5
    assert normalise_answer("Yes", answer_type=yes_no) == "yes"
    assert normalise_answer("a chair", answer_type=text) == "a chair"
    with pytest.raises(AnswerError, match="no options"):
        normalise_answer("A", answer_type=multiple_choice)


def test_without_options_or_a_type_an_answer_is_text_and_multiple_choice_needs_options() -> None:
    assert normalise_answer("the red chair") == "the red chair"
    assert normalise_answer("B", []) == "B"
    with pytest.raises(AnswerError, match="no options to answer from"):
        normalise_answer("A", answer_type="multiple_choice")


@pytest.mark.parametrize("value", [0, 0.0, 1])
def test_a_number_is_not_a_yes_no_answer_not_even_0_or_1(value: float) -> None:
    with pytest.raises(AnswerError, match="needs 'yes' or 'no'"):
        normalise_answer(value, answer_type="yes_no")


def test_a_letter_followed_by_a_text_that_is_no_option_is_refused_as_no_option() -> None:
    with pytest.raises(AnswerError, match="not one of the options"):
        normalise_answer("B. the sofa", CHOICES)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "not a position"),
        (2, "not a position"),
        (3, "not one of the options"),
        (4, "not one of the options"),
        (-1, "not one of the options"),
        (True, "got True"),
        (False, "got False"),
        (None, "got None"),
    ],
)
def test_a_position_from_0_to_the_last_option_is_refused_as_a_position_and_a_boolean_as_itself(
    value: object, message: str
) -> None:
    with pytest.raises(AnswerError, match=message):
        normalise_answer(value, CHOICES)


def test_given_choices_keep_their_letters_when_a_letter_is_skipped_or_they_run_backwards() -> None:
    assert parse_question("Where is it?", ["A. left", "C. right"]).choices == ["A. left", "C. right"]
    assert parse_question("Where is it?", "B. right\nA. left").choices == ["B. right", "A. left"]
    assert parse_question("Where is it?", "A. left\nB. right").choices == ["left", "right"]


def test_a_repeated_letter_ends_a_block_of_lettered_lines() -> None:
    parsed = parse_question("Which colour?\nA. red\nB. blue\nB. green")
    assert parsed.choices == ["red", "blue"]
    assert parsed.text == "Which colour?\nB. green"


def test_options_on_the_first_lines_are_read_and_the_question_after_them_stays() -> None:
    parsed = parse_question("A. the chair\nB. the table\nWhich one is nearer to the door?")
    assert parsed.choices == ["the chair", "the table"]
    assert parsed.text == "Which one is nearer to the door?"


def test_options_after_a_long_question_are_read_however_many_lines_it_has() -> None:
    context = "\n".join(f"Frame {i}: nothing new." for i in range(300))
    parsed = parse_question(f"{context}\nWhich is closest?\nA. chair\nB. table")
    assert parsed.choices == ["chair", "table"]
    assert parsed.text.endswith("Frame 299: nothing new.\nWhich is closest?")


def test_only_the_marker_line_before_the_options_leaves_and_every_line_above_it_stays() -> None:
    parsed = parse_question("In the kitchen.\nWhich is closest?\nOptions:\nA. chair\nB. table")
    assert parsed.text == "In the kitchen.\nWhich is closest?"
    headed = parse_question("Choices\nWhich one is nearer to the door? Options:\nA. chair\nB. table")
    assert headed.text == "Choices\nWhich one is nearer to the door?"
