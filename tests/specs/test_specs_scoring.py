"""Specifications of official-metric extraction and scoring: the last answer wins, the answer part decides."""

from __future__ import annotations

import json

import pytest

from spatialclaw.benchmarks.scoring.score import exact_match, mean_relative_accuracy, score_answer
from spatialclaw.benchmarks.specs.cv_bench import leading_letter
from spatialclaw.benchmarks.specs.omnispatial import omnispatial_choice
from spatialclaw.benchmarks.specs.viewspatial_bench import viewspatial_choice


def test_omnispatial_reads_the_last_answer_line_any_case_and_defaults_to_a() -> None:
    assert omnispatial_choice("Answer: B\nOn reflection...\nAnswer: C", "C") == (1.0, "C")
    assert omnispatial_choice("Answer: B\nOn reflection...\nAnswer: C", "B") == (0.0, "C")
    assert omnispatial_choice("answer : d", "D") == (0.0, "d")  # case-sensitive comparison, as official
    assert omnispatial_choice("no idea", "A") == (1.0, "A")
    assert omnispatial_choice("Answer: E", "B") == (0.0, "A")


def test_viewspatial_reads_only_the_last_line() -> None:
    assert viewspatial_choice("A is tempting\nso (b)", "B. left") == (1.0, "B")
    assert viewspatial_choice("B\nnone", "B") == (0.0, None)


def test_viewspatial_scores_only_the_same_option_not_a_later_or_earlier_letter() -> None:
    assert viewspatial_choice("C. behind", "B. left") == (0.0, "C")
    assert viewspatial_choice("A. right", "B. left") == (0.0, "A")
    assert viewspatial_choice("B. left", "B. left") == (1.0, "B")


@pytest.mark.parametrize(("reply", "letter"), [("(B) chair", "B"), ("  c.", "C"), ("The answer is B", "T"), ("", "")])
def test_leading_letter_is_the_first_letter_of_the_reply(reply: str, letter: str) -> None:
    assert leading_letter(reply) == letter


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("no wait, the answer is yes", 1.0), ("Yes at first; final answer: no", 0.0), ("<answer>yes</answer> no", 1.0)],
)
def test_a_yes_no_reply_is_read_from_its_answer_part(reply: str, expected: float) -> None:
    assert score_answer(reply, "yes", answer_type="yes_no").value == expected


def test_a_yes_no_reply_without_yes_or_no_scores_zero_and_bad_ground_truth_is_an_error() -> None:
    assert score_answer("perhaps", "no", answer_type="yes_no").value == 0.0
    assert score_answer(True, "yes", answer_type="yes_no").value == 1.0
    assert score_answer(False, "yes", answer_type="yes_no").value == 0.0
    with pytest.raises(ValueError, match="neither yes nor no"):
        score_answer("yes", "maybe", answer_type="yes_no")


@pytest.mark.parametrize(
    ("pred", "gt", "mra"),
    [(10.0, 10.0, 1.0), (9.5, 10.0, 1.0), (-10.0, 10.0, 0.0), (15.0, 10.0, 0.1), ("7 m", 10.0, 0.5), (None, 10.0, 0.0)],
)
def test_mean_relative_accuracy_counts_the_thresholds_the_relative_error_passes(
    pred: object, gt: float, mra: float
) -> None:
    assert mean_relative_accuracy(pred, gt) == pytest.approx(mra)


def test_mean_relative_accuracy_of_zero_ground_truth_needs_zero_and_bad_ground_truth_is_an_error() -> None:
    assert mean_relative_accuracy(0.0, 0) == 1.0 and mean_relative_accuracy(0.01, 0) == 0.0
    assert mean_relative_accuracy(float("nan"), 3.0) == 0.0
    with pytest.raises(ValueError, match="ground truth"):
        mean_relative_accuracy(1.0, "many")


def test_exact_match_ignores_case_punctuation_and_spaces_but_not_words() -> None:
    assert exact_match("  The Chair. ", "the chair") == 1.0
    assert exact_match("the chairs", "the chair") == 0.0
    assert exact_match(None, "the chair") == 0.0


def test_a_number_answer_scores_by_its_sign_and_number_exact_needs_the_same_count() -> None:
    assert score_answer("-2.5 m", -2.5, answer_type="number").value == 1.0
    assert score_answer("2.5 m", -2.5, answer_type="number").value == 0.0
    assert score_answer("3", 3, answer_type="number", metric="number_exact").value == 1.0
    assert score_answer("4", 3, answer_type="number", metric="number_exact").value == 0.0
    with pytest.raises(ValueError):
        score_answer("3", None, answer_type="number")


def test_number_exact_needs_the_same_number_within_1e_6_inclusive_not_a_multiple() -> None:
    assert score_answer("6", 3, answer_type="number", metric="number_exact").value == 0.0
    assert score_answer(1e-6, 0, answer_type="number", metric="number_exact").value == 1.0
    assert score_answer(2e-6, 0, answer_type="number", metric="number_exact").value == 0.0


def test_zero_ground_truth_accepts_a_prediction_up_to_1e_9_inclusive() -> None:
    assert mean_relative_accuracy(1e-9, 0) == 1.0 and mean_relative_accuracy(-1e-9, 0.0) == 1.0
    assert mean_relative_accuracy(2e-9, 0) == 0.0


def test_a_choice_scores_only_the_same_letter_and_no_letter_scores_zero() -> None:
    choices = ["left", "right", "behind"]
    assert score_answer("C", "B", answer_type="multiple_choice", choices=choices).value == 0.0
    assert score_answer("A", "B", answer_type="multiple_choice", choices=choices).value == 0.0
    assert score_answer("I cannot tell", "B", answer_type="multiple_choice", choices=choices).value == 0.0
    assert score_answer("B", "B", answer_type="multiple_choice", choices=choices).value == 1.0


def test_a_metric_name_read_from_a_task_file_means_what_the_literal_means() -> None:
    choice, mra, number_exact, yes_no = json.loads('["choice", "mra", "number_exact", "yes_no"]')
    assert score_answer("right", "B", choices=["left", "right"], metric=choice).value == 1.0  # not exact text
    assert score_answer("9", 10, metric=mra).value == pytest.approx(0.9)
    assert score_answer("3 chairs", 3, metric=number_exact).value == 1.0
    assert score_answer("yes, it is", "yes", metric=yes_no).value == 1.0  # exact text would score 0


@pytest.mark.parametrize("metric", ["mra:x", "choice:strict", "exact:lower", "yes_no:1"])
def test_a_parameter_on_a_metric_that_takes_none_is_refused_naming_it(metric: str) -> None:
    with pytest.raises(ValueError, match=f"metric '{metric}'"):
        score_answer("3", 3, answer_type="number", choices=["x", "y"], metric=metric)
