"""Golden tests for answer extraction, metrics and benchmark aggregation rules."""

from __future__ import annotations

import math

import pytest

from spatialclaw.benchmarks.names import normalise_benchmark_name
from spatialclaw.benchmarks.scoring.aggregation import ScoredRow, aggregate
from spatialclaw.benchmarks.scoring.answer_parsing import extract_choice, extract_number, normalize_choice_answer
from spatialclaw.benchmarks.scoring.score import (
    VSI_BENCH_THRESHOLDS,
    exact_match,
    mean_relative_accuracy,
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
    assert (
        num.metric == "mra" and num.extracted == pytest.approx(1.2) and num.value == 0.7
    )  # the official float boundary at 1 - 0.8
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
    # lmms-eval lmms_eval/tasks/vsibench/utils.py vsibench_aggregate_results
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
    # lmms-eval lmms_eval/tasks/cv_bench/utils.py cv_bench_default_aggregate_results (the card's formula)
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
    # 3DSRBench, VLMEvalKit's circular evaluation: variants share index % 1,000,000, all must be right
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


# ------------------------------------------------------------------------ official per-benchmark goldens
# Each set traces one benchmark's published evaluation code on raw replies (the extraction itself, before
# any structured-answer rendering). The expected values are what that code returns, quirks included.

from spatialclaw.benchmarks.scoring.metrics import OFFICIAL_METRICS, render_structured  # noqa: E402


def _official(metric: str, reply: str, gt: object, choices: list[str] | None = None) -> float:
    name, _, param = metric.partition(":")
    return OFFICIAL_METRICS[name][0](reply, gt, choices, param or None)[0]


# EvolvingLMMs-Lab/lmms-eval lmms_eval/tasks/vsibench/utils.py (fuzzy_matching, exact_match, to_float,
# mean_relative_accuracy); VSTI-Bench (VITA-Group/VLM-3R thinking-in-space/lmms_eval/tasks/vstibench/utils.py)
# and SPBench (ZJU-REAL/SpatialLadder eval_spld/evaluator.py -> vsibench_eval) use the same rules.
VSI_GOLDENS = [
    ("vsi_mca", "B", "B", 1.0),
    ("vsi_mca", "b.", "B", 1.0),  # trailing dots stripped, case ignored
    ("vsi_mca", "B. lamp", "B", 1.0),  # first space-separated token
    ("vsi_mca", "The answer is B", "B", 0.0),  # first token "The"
    ("vsi_mca", "(B)", "B", 0.0),  # "(B)" is not "b"
    ("vsi_na", "3.5 meters", 4.0, 0.8),  # float("3.5"); 12.5 % error
    ("vsi_na", "about 4", 4.0, 0.0),  # float("about") fails: the worst case, 0
    ("vsi_na", "4.", 4.0, 1.0),
    ("vsi_na", "2", 4.0, 0.1),
]
# lmms-eval lmms_eval/tasks/cv_bench/utils.py and lmms_eval/tasks/blink/utils.py (_extract_answer_letter,
# the answer's parentheses stripped)
CV_BLINK_GOLDENS = [
    ("cv_letter", "(B) chair", "(B)", 1.0),
    ("cv_letter", "b", "(B)", 1.0),  # re.IGNORECASE, then upper()
    ("cv_letter", "Bed", "(B)", 1.0),  # a leading letter, even when it starts a word
    ("cv_letter", "The answer is B", "(B)", 0.0),  # reads "T"
    ("cv_letter", "", "(A)", 0.0),
]
# lmms-eval lmms_eval/tasks/mmsi_bench/utils.py (extract_single_choice_with_word_boundary)
MMSI_GOLDENS = [
    ("mmsi_choice", "B. chair", "B", 1.0),
    ("mmsi_choice", "A chair is on the left", "A", 0.0),  # "A" followed by a space and a word is skipped
    ("mmsi_choice", "The answer is `C`", "C", 1.0),  # backticks unwrap first
    ("mmsi_choice", "{D}", "D", 1.0),
    ("mmsi_choice", "I think B", "B", 1.0),
    ("mmsi_choice", "b", "B", 0.0),  # capitals only
]
# mll-lab-nu/MindCube src/evaluation/core/extractors.py (extract_answer), as lmms-eval's mindcube task uses it
MINDCUBE_GOLDENS = [
    ("mindcube_choice", "B. Behind the sofa", "B", 1.0),
    ("mindcube_choice", "My answer is C", "C", 1.0),
    ("mindcube_choice", "A. left\nFinal: D.", "D", 1.0),  # the last "X." wins
    ("mindcube_choice", "<Answer> B", "B", 1.0),
    ("mindcube_choice", "E", "A", 0.0),
    ("mindcube_choice", "none", "A", 0.0),
]
# ZJU-REAL/ViewSpatial-Bench evaluate.py (extract_option on the reply's last line)
VIEWSPATIAL_GOLDENS = [
    ("viewspatial_choice", "The chair is right of me.\nB", "B. right", 1.0),
    ("viewspatial_choice", "B\nbecause a chair is there", "B. right", 0.0),  # last line: the word "a" reads A
    ("viewspatial_choice", "the answer: c", "C. front", 1.0),
]
# lmms-eval lmms_eval/tasks/omnispatial/utils.py with _default_template_yaml (eval_type: re)
OMNISPATIAL_GOLDENS = [
    ("omnispatial_choice", "The car turns.\nAnswer: C", "C", 1.0),
    ("omnispatial_choice", "answer: c", "C", 0.0),  # matched case-insensitively, compared case-sensitively
    ("omnispatial_choice", "C", "A", 1.0),  # no "Answer: X": the official default "A"
    ("omnispatial_choice", "C", "C", 0.0),
]
# lmms-eval lmms_eval/tasks/erqa/utils.py with lmms_eval/tasks/_task_utils/mcq_extract.py
ERQA_GOLDENS = [
    ("erqa_choice", "B", "B", 1.0),
    ("erqa_choice", "The answer is C.", "C", 1.0),
    ("erqa_choice", "Answer: A or B", "A", 0.0),  # two alternatives abstain
    ("erqa_choice", "<answer>D</answer>", "D", 1.0),
    ("erqa_choice", "Answer: B. Final answer: Z", "B", 0.0),  # the last declaration names no option
]
# lmms-eval lmms_eval/tasks/perceptioncomp/utils.py (parse_multi_choice_response)
PERCEPTIONCOMP_OPTIONS = ["two", "four", "five", "six", "eight"]
PERCEPTIONCOMP_GOLDENS = [
    ("perceptioncomp_choice", "(B)", "B", 1.0),
    ("perceptioncomp_choice", "B", "B", 1.0),
    ("perceptioncomp_choice", "I counted four chairs around the table", "B", 1.0),  # option text, > 5 words
]
# lmms-eval lmms_eval/tasks/videomme/utils.py and lmms_eval/tasks/videomme_v2/utils.py (extract_characters_regex)
VIDEOMME_GOLDENS = [
    ("videomme_choice", "The best answer is C.", "C", 1.0),
    ("videomme_choice", "Definitely B", "B", 0.0),  # the first capital A-D is the D of "Definitely"
    ("videomme_choice", "c", "C", 0.0),  # capitals only
    ("videomme_v2_choice", "Final Answer: G", "G", 1.0),
    ("videomme_v2_choice", "H", "h", 1.0),
]
# DSI-Bench's official README, "Evaluate model performance" (extract_single_choice_with_word_boundary, pred[0] == GT)
DSI_GOLDENS = [
    ("dsi_choice", "<answer> b </answer>", "B", 1.0),
    ("dsi_choice", "B", "B", 0.0),  # no tag: "E"
]
# InternRobotics/MMSI-Video-Bench evaluation.py (extract_answer)
MMSI_VIDEO_GOLDENS = [
    ("mmsi_video_choice", "\\boxed{C}", "C", 1.0),
    ("mmsi_video_choice", '{"answer": "B", "reason": "it moves"}', "B", 1.0),
    ("mmsi_video_choice", "The answer is A.", "A", 1.0),
    ("mmsi_video_choice", "Answer: D, since it is behind", "D", 1.0),
    ("mmsi_video_choice", "I have no answer", "A", 0.0),  # "no answer": "O"
]
# SHI-Labs/physical-ai-bench reason/models.py (check_answer after the <answer> split)
PAI_GOLDENS = [
    ("pai_choice", "<think>it moves</think>\n<answer>B.</answer>", "B", 1.0),
    ("pai_choice", "B", "B", 0.0),  # no tag: "B N/A"
]
# VLMEvalKit Omni3DBench_acc (extract_answer, int/str/float branches, strict "<" tolerances)
OMNI3D_GOLDENS = [
    ("omni3d:int", "<ans>3</ans>", "3", 1.0),
    ("omni3d:int", "three", "3", 0.0),
    ("omni3d:float", "2.0", "2.5", 0.6),  # 20 % error: tolerances 0.5 .. 0.25 pass, 0.2 does not ("<")
    ("omni3d:float", "2", "4", 0.0),  # 50 % error fails even 0.5 (VSI-Bench's "<=" would give 0.1)
    ("omni3d:str", "False", "no", 1.0),
    ("omni3d:str", "Yes, it is not", "no", 1.0),  # "no" is inside "not"
    ("omni3d:str", "Lamp", "lamp", 1.0),
    ("omni3d:str", "the lamp", "lamp", 0.0),
]
# lmms-eval lmms_eval/tasks/sparbench/utils.py (exact_match, process_na, abs_dist_norm, compute_vci_metric)
SPAR_GOLDENS = [
    ("spar_mca", "Answer: A", "A", 1.0),  # the reply's first character "a" equals the answer
    ("spar_mca", "B", "C", 0.0),
    ("spar_na:depth_prediction_oc", "1 or 2", "2", 0.1),  # the first number
    ("spar_na:depth_prediction_oc_mv", "1 or 2", "2", 1.0),  # multi-view: the last number
    ("spar_na:depth_prediction_oc", "x^2 = 4", "4", 1.0),  # a number after ^ is an exponent
    ("spar_na:depth_prediction_oc", "0.3", "0", 0.5),  # a zero target: absolute error
    ("spar_vci", "move_forward:0.8,rotate_left:30", "move_forward:0.8,rotate_left:30", 1.0),
    ("spar_vci", "move forward", "move_forward:0.8", 0.0),  # unparsable: 0
]
# VLMEvalKit vlmeval/dataset/osibench.py (_apply_osi_na_mra)
OSI_GOLDENS = [
    ("osi_na:absolute_speed", "about 0.2 m/s", "0", 1.0),  # zero speed, prediction under 0.30
    ("osi_na:absolute_distance", "0", "0", 1.0),
    ("osi_na:absolute_distance", "0.1", "0", 0.0),
]
# lmms-eval lmms_eval/tasks/spatialtreebench/metrics/rule_metrics.py (multichoiceeval, meanrelativeacc)
SPATIALTREE_GOLDENS = [
    ("spatialtree_choice", "The answer is B", "B", 1.0),
    ("spatialtree_choice", "answer: b", "B", 0.0),  # no pattern, no capital: nothing (official: random)
    # find_number drops commas *before* its coordinate patterns run, so "(1, 2)" is no pair and 1 is read
    ("spatialtree_mra", "It is (1, 2) then 3.5 m", "3.5", 0.0),
    ("spatialtree_mra", "roughly 3.5 m", "3.5", 1.0),
]


# VLMEvalKit vlmeval/utils/matching_util.py (can_infer_option, then can_infer_text), as 3DSRBench is scored
THREEDSR_OPTIONS = ["higher", "lower", "at the same height", "cannot tell"]
THREEDSR_GOLDENS = [
    ("vlmeval_choice", "The answer is B", "B", 1.0),
    ("vlmeval_choice", "(C).", "C", 1.0),
    ("vlmeval_choice", "A dog stands lower than the car", "B", 1.0),  # "A" as an article: the option text decides
    ("vlmeval_choice", "B or C", "B", 0.0),  # two letters, no option text: the LLM judge's case, scored 0
    ("vlmeval_choice", "Cannot determine the answer", "A", 0.0),  # a refusal reads Z
]


@pytest.mark.parametrize("metric, reply, gt, expected", THREEDSR_GOLDENS)
def test_3dsrbench_goldens(metric: str, reply: str, gt: str, expected: float) -> None:
    assert _official(metric, reply, gt, THREEDSR_OPTIONS) == expected


@pytest.mark.parametrize(
    "metric, reply, gt, expected",
    VSI_GOLDENS
    + CV_BLINK_GOLDENS
    + MMSI_GOLDENS
    + MINDCUBE_GOLDENS
    + VIEWSPATIAL_GOLDENS
    + OMNISPATIAL_GOLDENS
    + ERQA_GOLDENS
    + VIDEOMME_GOLDENS
    + DSI_GOLDENS
    + MMSI_VIDEO_GOLDENS
    + PAI_GOLDENS
    + OMNI3D_GOLDENS
    + SPAR_GOLDENS
    + OSI_GOLDENS,
)
def test_official_extraction_goldens(metric: str, reply: str, gt: object, expected: float) -> None:
    assert _official(metric, reply, gt) == expected


@pytest.mark.parametrize("metric, reply, gt, expected", PERCEPTIONCOMP_GOLDENS)
def test_perceptioncomp_goldens(metric: str, reply: str, gt: str, expected: float) -> None:
    assert _official(metric, reply, gt, PERCEPTIONCOMP_OPTIONS) == expected


@pytest.mark.parametrize("metric, reply, gt, expected", SPATIALTREE_GOLDENS)
def test_spatialtree_goldens(metric: str, reply: str, gt: str, expected: float) -> None:
    assert _official(metric, reply, gt, ["A. the mug", "B. the kettle"]) == expected


def test_blink_overall_is_the_mean_over_subtasks() -> None:
    # zeyofu/BLINK_Benchmark eval/evaluate.py (eval_prediction): accuracy per subtask, then their mean
    rows = [
        ScoredRow("1", "Relative_Depth", 1.0),
        ScoredRow("2", "Relative_Depth", 0.0),
        ScoredRow("3", "Spatial_Relation", 1.0),
    ]
    assert aggregate(rows, "macro").overall == 0.75  # 2/3 over questions


def test_a_structured_answer_is_rendered_in_the_official_reply_format() -> None:
    options = ["left", "right", "behind"]
    assert render_structured("b", options, "<answer>{}</answer>") == "<answer>B</answer>"
    assert render_structured("(C)", options, "Answer: {}") == "Answer: C"
    assert render_structured("Right", options) == "B"  # an option's exact text is that option
    assert render_structured(1, options) == "B"  # a 0-based index
    assert render_structured("It is on the right", options) == "It is on the right"  # free text: unchanged
    assert render_structured(2.5, None, "<ans>{}</ans>") == "<ans>2.5</ans>" and render_structured(3.0, None) == "3"
    # through score_answer: DSI's official extraction needs the tag, a structured "B" gets it
    assert score_answer("B", "B", "multiple_choice", options, "dsi_choice").value == 1.0
    assert score_answer("the answer is B", "B", "multiple_choice", options, "dsi_choice").value == 0.0


@pytest.mark.parametrize("metric", sorted(OFFICIAL_METRICS))
def test_no_answer_scores_zero_under_every_official_metric(metric: str) -> None:
    param = {"spar_na": ":depth_prediction_oc", "omni3d": ":str", "osi_na": ":absolute_distance"}.get(metric, "")
    for missing in (None, "", "   "):
        assert score_answer(missing, "A", "multiple_choice", ["x", "y"], metric + param).value == 0.0


def test_benchmark_names_normalise_to_one_form() -> None:
    assert normalise_benchmark_name("VSI-Bench") == normalise_benchmark_name("vsi_bench") == "vsi_bench"
    assert normalise_benchmark_name("vsi bench") == normalise_benchmark_name(" VSI.Bench ") == "vsi_bench"
    assert normalise_benchmark_name("ThreeDSRBench") == normalise_benchmark_name("3DSRBench") == "3dsrbench"
    assert normalise_benchmark_name("Video-MME-v2") == normalise_benchmark_name("videomme_v2") == "video_mme_v2"
    assert normalise_benchmark_name(None) == ""


def test_the_scoring_examples_in_the_docs_run_as_written() -> None:
    from tests.doc_examples import code_blocks

    blocks = code_blocks("benchmarks.md", "Scoring", "python")
    assert len(blocks) == 2  # the generic scorer and the official per-benchmark metrics
    for block in blocks:
        exec(compile(block, "docs/benchmarks.md", "exec"), {})
