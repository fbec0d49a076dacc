"""Golden tests for answer extraction, metrics and benchmark aggregation rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spatialclaw.benchmarks.scoring import (
    VSI_BENCH_THRESHOLDS,
    ScoredRow,
    aggregate,
    exact_match,
    extract_choice,
    extract_number,
    mean_relative_accuracy,
    normalize_choice_answer,
    score_answer,
)

DIRECTIONS = ["left", "right", "behind"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("B", "B"),
        ("b", "B"),
        ("(B)", "B"),
        ("B.", "B"),
        ("B) right", "B"),
        ("B. right", "B"),
        ("**B**", "B"),
        ("The answer is B", "B"),
        ("Final answer: (C)", "C"),
        ("<answer>C</answer>", "C"),
        ("\\boxed{B}", "B"),
        ("Option B", "B"),
        ("I think it's B", "B"),
        ("Right.", "B"),
        ("right, because the lamp is closer", "B"),
        ("It is on the right side", "B"),
        ("A", "A"),
    ],
)
def test_extract_choice_accepts_the_usual_forms(text: str, expected: str) -> None:
    assert extract_choice(text, DIRECTIONS) == expected


@pytest.mark.parametrize("text", ["", None, "Z", "D", "left or right", "A chair", "I don't know"])
def test_extract_choice_refuses_to_guess(text: str | None) -> None:
    assert extract_choice(text, DIRECTIONS) is None


def test_extract_choice_ignores_option_labels_stored_in_the_choices() -> None:
    vsi_options = ["A. chair", "B. table", "C. sofa", "D. tv"]
    assert extract_choice("table", vsi_options) == "B"
    assert extract_choice("C. sofa", vsi_options) == "C"
    assert normalize_choice_answer("(D)", vsi_options) == "D"
    assert normalize_choice_answer(0, vsi_options) == "A"


def test_extract_choice_prefers_the_longest_matching_option() -> None:
    assert extract_choice("front left", ["left", "front left", "front right"]) == "B"


@pytest.mark.parametrize(
    "text, unit, expected",
    [
        ("2.5", None, 2.5),
        ("about 3 meters", None, 3.0),
        ("150 cm", "m", 1.5),
        ("150 cm", None, 150.0),
        ("1500 mm", "m", 1.5),
        ("2 m", "cm", 200.0),
        ("6 feet", "m", 1.8288),
        ("80 inches", "m", 2.032),
        ("5 ft 6 in", "m", 1.6764),
        ("5'6\"", "ft", 5.5),
        ("three", None, 3.0),
        ("twenty-five chairs", None, 25.0),
        ("one hundred and twenty", None, 120.0),
        ("a dozen", None, 12.0),
        ("2-3 m", "m", 2.5),
        ("between 2 and 3 meters", None, 2.5),
        ("between two and three metres", "m", 2.5),
        ("2 to 3", None, 2.5),
        ("1,250.5", None, 1250.5),
        ("-3.5", None, -3.5),
        (".5 m", "m", 0.5),
        ("There are 2 chairs; the answer is 7", None, 7.0),
        ("<answer>12</answer> (I counted 11 first)", None, 12.0),
        ("10 square feet", "m2", 0.9290304),
    ],
)
def test_extract_number(text: str, unit: str | None, expected: float) -> None:
    assert extract_number(text, unit) == pytest.approx(expected)


@pytest.mark.parametrize("text", [None, "", "no idea", "several"])
def test_extract_number_returns_none_without_a_number(text: str | None) -> None:
    assert extract_number(text) is None


def test_extract_number_rejects_unknown_target_units() -> None:
    with pytest.raises(ValueError, match="unknown unit"):
        extract_number("3 m", "furlongs")


def test_vsi_bench_thresholds_are_the_official_codes_floats() -> None:
    # lmms-eval tasks/vsibench/utils.py: np.linspace(start, end, int((end - start) / interval + 2)) with
    # .5, .95, .05; the float quotient is 8.999..., so 10 points, and numpy's 0.9 is 0.8999999999999999.
    assert VSI_BENCH_THRESHOLDS == (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.8999999999999999, 0.95)


# The official VSI-Bench rule (EvolvingLMMs-Lab/lmms-eval, lmms_eval/tasks/vsibench/utils.py,
# mean_relative_accuracy: abs_dist_norm(pred, gt) <= 1 - conf_intervs, then .mean()); each expected value
# is what that code returns for the pair, compared exactly (the official result is a mean of ten booleans).
@pytest.mark.parametrize(
    "pred, gt, expected",
    [
        (1.0, 1.0, 1.0),
        (0.88, 1.0, 0.8),  # 12 % error: passes 0.50 .. 0.85
        (1.26, 1.0, 0.5),  # 26 %: passes 0.50 .. 0.70
        (0.4, 1.0, 0.0),  # 60 %: passes nothing
        (2, 4, 0.1),  # 50 % lands on 1 - 0.5 and "<=" counts it
        (1.5, 1.0, 0.1),  # the same boundary
        (1.49, 1.0, 0.1),
        (1.04, 1.0, 1.0),
        (1.06, 1.0, 0.9),
        (1.2, 1.0, 0.7),  # float: |1.2 - 1| = 0.19999999999999996 == 1 - 0.8, a hit
        (0.8, 1.0, 0.7),  # the same float boundary from below
        (2.2, 2.0, 0.9),
        (0.7, 1.0, 0.5),
        (3.0, 1.0, 0.0),
        (-1.0, 1.0, 0.0),
        ("about 1.2 m", 1.0, 0.7),  # text predictions are read with extract_number
        (None, 1.0, 0.0),
        ("no idea", 1.0, 0.0),
        (float("nan"), 1.0, 0.0),
        (float("inf"), 1.0, 0.0),
    ],
)
def test_mean_relative_accuracy_is_the_official_rule_bit_for_bit(pred: object, gt: float, expected: float) -> None:
    assert mean_relative_accuracy(pred, gt) == expected


def test_mean_relative_accuracy_takes_other_thresholds() -> None:
    assert mean_relative_accuracy(1.3, 1.0, thresholds=(0.5, 0.9)) == 0.5
    assert mean_relative_accuracy(1.3, 1.0, thresholds=(0.7,)) == 1.0  # 0.30000000000000004 <= 0.30000000000000004


def test_mean_relative_accuracy_zero_ground_truth_policy() -> None:
    assert mean_relative_accuracy(0.0, 0.0) == 1.0
    assert mean_relative_accuracy("zero", 0) == 1.0
    assert mean_relative_accuracy(0.01, 0.0) == 0.0
    assert mean_relative_accuracy(-1.0, 0.0) == 0.0


def test_mean_relative_accuracy_needs_a_numeric_ground_truth() -> None:
    with pytest.raises(ValueError, match="ground truth"):
        mean_relative_accuracy(1.0, "n/a")


def test_exact_match_normalises_case_and_punctuation() -> None:
    assert exact_match("  The Chair. ", "the chair") == 1.0
    assert exact_match("chair", "table") == 0.0
    assert exact_match(None, "chair") == 0.0


def test_score_answer_by_answer_type() -> None:
    mc = score_answer("The answer is (C)", "C", "multiple_choice", DIRECTIONS)
    assert (mc.value, mc.metric, mc.extracted) == (1.0, "choice", "C")
    assert score_answer("left", "(B)", "multiple_choice", DIRECTIONS).value == 0.0
    num = score_answer("120 cm", 1.0, "number", unit="m")
    assert num.metric == "mra" and num.extracted == pytest.approx(1.2) and num.value == 0.7  # the official float boundary at 1 - 0.8
    assert score_answer("3", 3, "number", metric="number_exact").value == 1.0
    assert score_answer("three chairs", 4, "number", metric="number_exact").value == 0.0
    assert score_answer("Yes, it is.", "yes", "yes_no").value == 1.0
    assert score_answer("No", "yes", "yes_no").value == 0.0
    assert score_answer("<answer>red cube</answer>", "Red cube", "text").value == 1.0


def test_score_answer_rejects_ground_truth_outside_the_choices() -> None:
    with pytest.raises(ValueError, match="matches none of the choices"):
        score_answer("A", "E", "multiple_choice", DIRECTIONS)
    with pytest.raises(ValueError, match="unknown metric"):
        score_answer("A", "A", metric="bleu")


def _rows(spec: list[tuple[str, float]], **meta: object) -> list[ScoredRow]:
    return [ScoredRow(f"t{i}", cat, score, dict(meta)) for i, (cat, score) in enumerate(spec)]


def test_micro_and_macro_aggregation() -> None:
    rows = _rows([("a", 1.0), ("a", 1.0), ("a", 0.0), ("b", 0.0)])
    micro = aggregate(rows, "micro")
    assert micro.overall == pytest.approx(0.5)
    assert micro.categories == {"a": pytest.approx(2 / 3), "b": 0.0}
    assert micro.counts == {"a": 3, "b": 1}
    assert aggregate(rows, "macro").overall == pytest.approx((2 / 3 + 0.0) / 2)


def test_unscored_rows_count_as_wrong() -> None:
    rows = [ScoredRow("t0", "a", 1.0), ScoredRow("t1", "a", None)]
    assert aggregate(rows, "micro").overall == 0.5


def test_vsi_bench_aggregation_merges_the_direction_difficulties() -> None:
    rows = _rows(
        [
            ("object_counting", 0.5),
            ("object_counting", 1.0),
            ("object_rel_direction_easy", 1.0),
            ("object_rel_direction_medium", 0.0),
            ("object_rel_direction_hard", 0.0),
            ("object_rel_direction_hard", 1.0),
            ("route_planning", 0.0),
        ]
    )
    result = aggregate(rows, "vsi_bench")
    # direction = mean(1.0, 0.0, 0.5) = 0.5; overall = mean(0.75, 0.5, 0.0)
    assert result.categories == {"object_counting": 0.75, "object_rel_direction": 0.5, "route_planning": 0.0}
    assert result.overall == pytest.approx((0.75 + 0.5 + 0.0) / 3)


def test_cv_bench_aggregation_averages_2d_sources_then_2d_and_3d() -> None:
    rows = (
        _rows([("Count", 1.0), ("Count", 1.0), ("Relation", 0.0), ("Relation", 1.0)], source="ADE20K")
        + _rows([("Count", 0.0), ("Relation", 0.0)], source="COCO")
        + _rows([("Depth", 1.0), ("Distance", 0.0)], source="Omni3D")
    )
    result = aggregate(rows, "cv_bench")
    two_d = (0.75 + 0.0) / 2
    assert result.categories["2D"] == pytest.approx(two_d)
    assert result.categories["3D"] == pytest.approx(0.5)
    assert result.overall == pytest.approx((two_d + 0.5) / 2)
    # The micro mean would differ (4/8): the rule matters.
    assert not math.isclose(result.overall, 0.5)


def test_circular_aggregation_needs_every_variant_right() -> None:
    rows = [
        ScoredRow("q1-0", "height", 1.0, {"circular_group": "q1"}),
        ScoredRow("q1-1", "height", 1.0, {"circular_group": "q1"}),
        ScoredRow("q2-0", "height", 1.0, {"circular_group": "q2"}),
        ScoredRow("q2-1", "height", 0.0, {"circular_group": "q2"}),
    ]
    result = aggregate(rows, "circular")
    assert result.overall == 0.5 and result.n == 2


def test_unknown_aggregation_rule_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown aggregation rule"):
        aggregate([], "median")
