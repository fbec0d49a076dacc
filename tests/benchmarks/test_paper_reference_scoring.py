"""The paper's setting, round 2: replies scored as each benchmark's reference scores them (the text given to
``answer()``, quirks included; ``--scoring lenient`` keeps the friendlier reading), the paper's frame geometry
for shown frames and the kernel's copies, 1 fps counted as ffmpeg's ``fps=1``, multiple-choice tasks that always
carry their choices, missing media kept as the reference keeps them, and every archive extracted."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import tests.benchmarks.layouts_blink_to_osibench as fixtures_p2
import tests.benchmarks.layouts_paibench_to_vstibench as fixtures_p3
from spatialclaw.benchmarks.names import PAPER_NAMES
from spatialclaw.benchmarks.registry import find_spec, load_benchmark
from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.benchmarks.spec import DatasetUnavailable, load_tasks
from spatialclaw.primitives.answers import AnswerError, normalise_answer, validate_claim
from spatialclaw.primitives.frames.aspect_fit import aspect_fit, aspect_fit_box
from spatialclaw.primitives.frames.load import load_frames, load_video
from spatialclaw.task import Task

BUILDERS: dict[str, Callable[[Path], Path]] = {
    name.removeprefix("build_fixture_"): builder
    for module in (fixtures_p2, fixtures_p3)
    for name, builder in vars(module).items()
    if name.startswith("build_fixture_") and callable(builder)
}


def _ref(task: Task, reply: Any) -> float:
    return score_answer(
        reply, task.ground_truth, task.answer_type, task.choices, task.meta["metric"], scoring="reference"
    ).value


def _score(metric: str, reply: Any, gt: Any, choices: list[str] | None = None, scoring: str = "reference") -> float:
    kind = "multiple_choice" if choices else "text"
    return score_answer(reply, gt, kind, choices, metric, scoring=scoring).value


# ------------------------------------------------------------------------------------------- scoring


@pytest.mark.parametrize(
    ("metric", "reply", "gt", "choices", "reference", "lenient"),
    [
        # X1/D8: what the reference's extractor reads in the raw text, against our old normalised letter
        ("erqa_paper", "(B)", "B", ["up", "down"], 0.0, 1.0),
        ("erqa_paper", "b.", "B", ["up", "down"], 1.0, 1.0),
        ("mindcube_paper", "c", "C", ["a", "b", "c"], 0.0, 1.0),
        ("videommev2_paper", "b", "B", ["a", "b", "c"], 0.0, 1.0),
        ("vsi_mca", "(C)", "C", ["left", "right", "forward"], 0.0, 1.0),
        ("vsi_mca", "forward", "C", ["left", "right", "forward"], 0.0, 1.0),
        ("blink_paper", "(B)", "(B)", ["first", "second"], 1.0, 1.0),
        ("blink_paper", "second", "(B)", ["first", "second"], 0.0, 1.0),
        # X3/D9: no answer goes through the extractor as "" (OmniSpatial reads A)
        ("omnispatial_paper", "", "A", ["x", "y"], 1.0, 0.0),
        ("omnispatial_paper", None, "B", ["x", "y"], 0.0, 0.0),
        # X2/D12: X. anywhere before (X) before X:, not the first of the three by position
        ("mmsi_paper", "I rule out (A). So B.", "B", ["x", "y"], 1.0, 1.0),
        ("pai_paper", "I rule out (A). So B.", "B", ["x", "y"], 1.0, 1.0),
        ("osibench_mcq", "I rule out (A). So B.", "B", ["x", "y"], 1.0, 1.0),
        # CVBench's last resort keeps only A-D/a-d: "the answer" is A
        ("cvbench_paper", "the answer", "A", ["x", "y"], 1.0, 1.0),
        # SPAR reads a letter before "." without a word boundary: "behind." is D
        ("spar_paper_mca", "behind.", "D", ["w", "x", "y", "z"], 1.0, 1.0),
    ],
)
def test_reference_scoring_reads_the_raw_text_and_lenient_the_structured_letter(
    metric: str, reply: Any, gt: str, choices: list[str], reference: float, lenient: float
) -> None:
    assert _score(metric, reply, gt, choices) == reference
    assert _score(metric, reply, gt, choices, scoring="lenient") == lenient


_RULE_OUT = "I rule out (A). So B."

#: D12, sample by sample: (metric, free-text reply, ground truth, what the reference extracts, its score).
FREE_TEXT_LETTERS = [
    # CVBench, MMSI, OSI, PAI, SpatialTree, SPBench, VSI-debiased: X. anywhere, before (X), before X:
    *(
        pytest.param(metric, _RULE_OUT, "B", "B", 1.0, id=f"{metric}-dot-before-bracket")
        for metric in (
            "cvbench_paper",
            "mmsi_paper",
            "osibench_mcq",
            "pai_paper",
            "spatialtree_paper:choice",
            "spbench_mca",
            "vsi_paper_mca",
        )
    ),
    # CVBench: the last resort keeps only A-D/a-d; yes/no is read only inside a non-empty <answer> block
    pytest.param("cvbench_paper", "the answer", "A", "A", 1.0, id="cvbench-only-a-to-d"),
    pytest.param("cvbench_paper:yesno", "Yes, but <answer>unsure</answer>", "Yes", None, 0.0, id="cvbench-yes-no"),
    # BLINK: no colon in the answer phrase, its letter in any case, the first phrase; (X) counted as words
    pytest.param("blink_paper", "Answer: B", "(B)", "(Z)", 0.0, id="blink-colon"),
    pytest.param("blink_paper", "the answer is b", "(B)", "(B)", 1.0, id="blink-lower-case"),
    pytest.param("blink_paper", "The answer is A; option B is close", "(A)", "(A)", 1.0, id="blink-first-phrase"),
    pytest.param("blink_paper", "(B) is right, not (A).", "(B)", "(B)", 1.0, id="blink-bracket-words"),
    # DSI-Bench: letters after markers and in the 400-character tail in any case; a leading a-d
    pytest.param("dsibench_paper", "the answer is b", "B", "B", 1.0, id="dsibench-marker"),
    pytest.param("dsibench_paper", "It moves away, so c.", "C", "C", 1.0, id="dsibench-tail"),
    pytest.param("dsibench_paper", "b, since it turns", "B", "B", 1.0, id="dsibench-leading"),
    # ViewSpatial: the same, and "option" is no marker
    pytest.param("viewspatial_paper", "the answer is b", "B. right", "B", 1.0, id="viewspatial-marker"),
    pytest.param("viewspatial_paper", "I would say c", "C. front", "C", 1.0, id="viewspatial-tail"),
    pytest.param("viewspatial_paper", "Option A is wrong, so C", "C. front", "C", 1.0, id="viewspatial-no-option"),
    # MindCube, PerceptionComp, SPAR: the first \boxed{} or <answer> of several
    pytest.param("mindcube_paper", "\\boxed{A}, not \\boxed{B}", "A", "A", 1.0, id="mindcube-first-boxed"),
    pytest.param("perceptioncomp_paper", "\\boxed{A}, not \\boxed{B}", "A", "A", 1.0, id="perceptioncomp-boxed"),
    pytest.param(
        "perceptioncomp_paper", "<answer>A</answer> <answer>B</answer>", "A", "A", 1.0, id="perceptioncomp-answer"
    ),
    pytest.param("spar_paper_mca", "\\boxed{A}, not \\boxed{B}", "A", "A", 1.0, id="sparbench-first-boxed"),
    # SPAR: a letter before "." with no word boundary
    pytest.param("spar_paper_mca", "behind.", "D", "D", 1.0, id="sparbench-no-word-boundary"),
]


@pytest.mark.parametrize(("metric", "reply", "gt", "extracted", "score"), FREE_TEXT_LETTERS)
def test_free_text_letters_are_read_as_each_reference_reads_them(
    metric: str, reply: str, gt: str, extracted: str | None, score: float
) -> None:
    choices = ["left", "right", "front", "back"]
    kind = "yes_no" if metric.endswith(":yesno") else "multiple_choice"
    result = score_answer(reply, gt, kind, None if kind == "yes_no" else choices, metric, scoring="reference")
    assert (result.extracted, result.value) == (extracted, score)


def test_numbers_are_read_as_the_references_read_them() -> None:
    # D4/D5: the number-word reader takes unsigned digits: a negative answer is its absolute value
    assert _score("spatialtree_paper:mra", "-1.5", "-1.5") == 0.0 and _score("spatialtree_paper:mra", "1.5", "1.5") == 1
    assert _score("spbench_na", "-1.5", "1.2") == 0.5 and _score("spbench_na", "two chairs", "2") == 1.0
    # D3: quotes only at the two ends of an Omni3D text answer; case-insensitive
    assert _score("omni3d_paper:str", '"Man\'s chair"', "man's chair") == 1.0
    assert (
        _score("omni3d_paper:str", "'chair'", "Chair") == 1.0
        and _score("omni3d_paper:str", "mans chair", "man's chair") == 0
    )
    assert _score("omni3d_paper:int", "3.0", "3") == 1.0 and _score("omni3d_paper:float", "0.2", "0") == 0.6


def test_the_spar_view_change_scores_prediction_against_truth_axis_by_axis() -> None:
    truth = "move_right:0.5,turn_left:30"
    # move_right: |0.8 - 0.5| / 0.5 = 0.6 hits no threshold (swapped, 0.3/0.8 = 0.375 would hit three);
    # turn right-left: -30 vs -30 hits all ten; the three zero axes hit all ten: (0 + 1 + 3) / 5
    assert _score("spar_paper_vci", "move_right:0.8,turn_left:30", truth) == pytest.approx(0.8)
    assert _score("spar_paper_vci", "move_right : 0.5 , turn_left:30, bogus", truth) == 1.0  # spaces, bad pair
    assert _score("spar_paper_vci", "", truth) == pytest.approx(0.6)  # X3: every zero axis of the truth counts
    assert _score("spar_paper_vci", "", truth, scoring="lenient") == 0.0


def test_answer_records_the_text_given_under_reference_scoring() -> None:
    choices = ["left", "right", "front", "back"]
    assert normalise_answer("(b)", choices) == "B" and normalise_answer(" (b) ", choices, keep_text=True) == "(b)"
    assert normalise_answer("B. right", choices, keep_text=True) == "B. right"
    assert normalise_answer(2.50, None, "number", keep_text=True) == "2.5"
    assert normalise_answer("about three metres", None, "number", keep_text=True) == "about three metres"
    assert validate_claim({"value": "(b)"}, choices, keep_text=True) == "(b)"
    with pytest.raises(AnswerError, match="not in normalised form"):
        validate_claim({"value": "(b)"}, choices)  # the lenient reading records "B"
    # a text that names no option is the benchmark extractor's to read, not refused
    assert normalise_answer("sideways", choices, keep_text=True) == "sideways"
    assert validate_claim({"value": "sideways"}, choices, keep_text=True) == "sideways"
    with pytest.raises(AnswerError, match="not one of the options"):
        normalise_answer("sideways", choices)
    with pytest.raises(AnswerError, match="no options to answer from"):
        normalise_answer("B", None, "multiple_choice", keep_text=True)
    for nothing, why in ((None, "needs a value"), ("  ", "empty"), (["B"], "a text or a number"), ("x" * 1001, "1001")):
        with pytest.raises(AnswerError, match=why):
            normalise_answer(nothing, choices, keep_text=True)


#: (what the cell passes to answer(), recorded and MindCube score under reference, the same under lenient;
#: None: refused). MindCube's reader takes "(B)" and "the answer is B", not "b" or an option's text.
KERNEL_ANSWERS = [
    ('"(B)"', ("(B)", 1.0), ("B", 1.0)),
    ('"b"', ("b", 0.0), ("B", 1.0)),
    ('"right"', ("right", 0.0), ("B", 1.0)),
    ('"sideways"', ("sideways", 0.0), None),
    ('"the answer is B"', ("the answer is B", 1.0), None),
]


@pytest.mark.parametrize("scoring", ["reference", "lenient"])
def test_a_kernel_records_the_answer_as_the_scoring_reads_it(scoring: str, tmp_path: Path) -> None:
    from spatialclaw.kernel.kernel import Kernel
    from spatialclaw.runner.episode import score_row

    task = Task(
        "Where is the lamp? A. left B. right",
        choices=["left", "right"],
        ground_truth="B",
        benchmark="mindcube",
        meta={"metric": "mindcube_paper", "scoring": scoring, "options_in_question": True},
    )
    with Kernel(workdir=tmp_path, meta=task.kernel_meta()) as kernel:
        results = [kernel.execute(f"answer({given})") for given, _, _ in KERNEL_ANSWERS]
    for result, (given, reference, lenient) in zip(results, KERNEL_ANSWERS, strict=True):
        expected = reference if scoring == "reference" else lenient
        if expected is None:
            assert not result.answered and result.error is not None, given
            assert "not one of the options" in result.error.message
            continue
        assert result.answered, (given, result.error)
        row = score_row(task, result.answer)
        assert (result.answer, row["score"], row["scoring"]) == (*expected, scoring), given


def test_the_model_is_told_what_answer_records() -> None:
    from spatialclaw.agent.prompting import task_prompt

    def prompt(scoring: str) -> str:
        return task_prompt(Task("Where?", choices=["left", "right"], meta={"scoring": scoring}))

    assert "exactly as given" in prompt("reference") and "exactly as given" not in prompt("lenient")
    assert "option text also works" not in prompt("lenient")  # true under lenient only, so said by neither


# -------------------------------------------------------------------------------- every benchmark


def _load(name: str, root: Path) -> list[Task]:
    spec = find_spec(name)
    assert spec is not None
    return load_benchmark(spec.name, source=BUILDERS[name](root)).tasks


@pytest.mark.parametrize("name", PAPER_NAMES)
def test_every_paper_fixture_is_scored_by_reference_and_its_choices_are_there(name: str, tmp_path: Path) -> None:
    with pytest.warns() if name in ("viewspatial", "dsibench") else _nothing():
        tasks = _load(name, tmp_path)
    assert tasks
    for task in tasks:
        assert task.meta["scoring"] == "reference" and task.meta["frame_geometry"] == "aspect_fit"
        assert task.meta["kernel_frames"] == "aspect_fit" and all(f.aspect_fit == 768 for f in task.inputs)
        if task.answer_type == "multiple_choice":
            assert task.choices, task.task_id  # else answer() refuses every reply and the episode ends 'budget'
            letter = chr(ord("A") + len(task.choices) - 1)
            assert normalise_answer(letter, task.choices, "multiple_choice", keep_text=True) == letter
        assert _ref(task, "") in (0.0, 1.0) or task.meta["metric"].startswith(("spar_paper_vci", "spar_paper_na"))


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def test_spar_and_viewspatial_multiple_choice_answers_go_through_answer(tmp_path: Path) -> None:
    relation = next(t for t in _load("sparbench", tmp_path / "s") if t.category == "obj_spatial_relation_oo")
    assert relation.choices == ["lamp", "monitor", "plant", "keyboard"] and relation.meta["options_in_question"]
    recorded = normalise_answer("(B)", relation.choices, "multiple_choice", keep_text=True)
    assert recorded == "(B)" and _ref(relation, recorded) == 1.0 and _ref(relation, "A") == 0.0
    with pytest.warns(UserWarning, match="dropped 1"):
        tv = _load("viewspatial", tmp_path / "v")[0]
    recorded = normalise_answer("B. right", tv.choices, "multiple_choice", keep_text=True)
    assert recorded == "B. right" and _ref(tv, recorded) == 1.0 and _ref(tv, "(A)") == 0.0


def test_a_blink_record_with_four_images_shows_four(tmp_path: Path) -> None:
    counting = next(t for t in _load("blink", tmp_path) if t.category == "Counting")
    assert len(counting.inputs) == 1 and len(counting.inputs[0].paths) == 4
    assert len(set(counting.inputs[0].paths)) == 4  # four different images, in image_1..image_4 order


def test_missing_media_keep_the_sample_and_a_missing_blink_subtask_is_skipped(tmp_path: Path) -> None:
    folder = BUILDERS["omnispatial"](tmp_path / "o")
    (folder / "OmniSpatial-test" / "Perspective_Taking" / "0.png").unlink()
    spec = find_spec("omnispatial")
    assert spec is not None
    with pytest.warns(UserWarning, match="1 question"):
        tasks = load_tasks(spec, source=folder)
    kept = next(t for t in tasks if t.meta.get("missing_media"))
    assert kept.inputs == [] and kept.meta["missing_media"][0].endswith("Perspective_Taking/0.png")
    assert len(tasks) == 3
    blink = BUILDERS["blink"](tmp_path / "b")
    for parquet in (blink / "Jigsaw").glob("val-*.parquet"):
        parquet.unlink()
    blink_spec = find_spec("blink")
    assert blink_spec is not None
    with pytest.warns(UserWarning, match="skipped 1 subtask.*Jigsaw"):
        names = {t.category for t in load_tasks(blink_spec, source=blink)}
    assert "Jigsaw" not in names and len(names) == 13


def test_a_record_naming_a_missing_file_outside_the_dataset_is_still_refused(tmp_path: Path) -> None:
    folder = BUILDERS["omnispatial"](tmp_path)
    data = folder / "OmniSpatial-test" / "data.json"
    records = json.loads(data.read_text())
    records[0]["task_type"] = "../../elsewhere"
    data.write_text(json.dumps(records))
    spec = find_spec("omnispatial")
    assert spec is not None
    with pytest.raises(DatasetUnavailable, match="outside the dataset's folder"):
        load_tasks(spec, source=folder)


def test_data_download_extracts_every_archive_up_to_three_folders_deep(tmp_path: Path) -> None:
    from spatialclaw.cli import main

    folder = tmp_path / "data" / "PAI-Bench"
    BUILDERS["paibench"](tmp_path / "data")
    for depth, name in ((0, "top.zip"), (2, "a/b/deep.zip"), (4, "a/b/c/d/too_deep.zip")):
        archive = folder / name
        archive.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(archive, "w") as handle:
            handle.writestr(f"inside_{depth}.txt", "x")
    assert main(["data", "download", "paibench", "--root", str(tmp_path / "data"), "--check-only"]) in (0, 1)
    assert (folder / "inside_0.txt").is_file() and (folder / "a" / "b" / "inside_2.txt").is_file()
    assert not (folder / "top.zip").exists() and (folder / "a/b/c/d/too_deep.zip").is_file()


# --------------------------------------------------------------------------------- frame geometry


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        ((640, 480), (768, 576)),
        ((300, 200), (768, 512)),
        ((500, 500), (768, 768)),
        ((1000, 500), (765, 425)),
        ((640, 427), (768, 512)),
        ((1296, 968), (768, 576)),
        ((720, 1280), (512, 768)),
        ((1280, 720), (768, 432)),
    ],
)
def test_the_papers_geometry_crops_to_the_nearest_aspect_and_resizes(
    size: tuple[int, int], shown: tuple[int, int]
) -> None:
    assert aspect_fit_box(*size, 768)[1] == shown
    assert aspect_fit(Image.new("RGB", size), 768).size == shown


def test_the_crop_is_centred(tmp_path: Path) -> None:
    image = Image.new("RGB", (1000, 500), (0, 0, 255))
    image.paste((255, 0, 0), (0, 0, 50, 500))  # a red band exactly as wide as the crop removes on each side
    image.paste((255, 0, 0), (950, 0, 1000, 500))
    assert aspect_fit_box(1000, 500, 768)[0] == (50, 0, 950, 500)
    fitted = aspect_fit(image, 768)
    assert fitted.getpixel((0, 200))[2] > 200 and fitted.getpixel((764, 200))[2] > 200  # no red left
    path = tmp_path / "wide.png"
    image.save(path)
    frames = load_frames({"kind": "images", "paths": [str(path)], "aspect_fit": 768})
    assert frames[0].size == (765, 425) and frames[0].array.shape == (425, 765, 3)
    assert load_frames({"kind": "images", "paths": [str(path)]})[0].size == (1000, 500)


@pytest.mark.parametrize(("frames", "expected"), [(24, 2), (73, 7), (46, 5), (35, 4), (100, 10)])
def test_one_fps_counts_as_ffmpeg_fps_filter(frames: int, expected: int, tmp_path: Path) -> None:
    video = fixtures_p2.write_video(tmp_path / "clip.mp4", frames=frames, fps=10)
    chosen = load_video(video, fps=1.0)
    assert len(chosen) == expected  # round(duration): 2.4 s -> 2, 7.3 s -> 7, 4.6 s -> 5, 3.5 s -> 4
    assert chosen.indices == [10 * i for i in range(expected)]  # the frame nearest 0, 1, 2, ... s


def _png_sizes(request: dict[str, Any]) -> list[tuple[int, int]]:
    sizes = []
    for message in request.get("messages", []):
        for part in message.get("content") or []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                sizes.append(Image.open(io.BytesIO(base64.b64decode(data))).size)
    return sizes


def test_a_provider_receives_the_papers_frame_sizes_from_a_relative_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spatialclaw.cli import main
    from spatialclaw.testing.provider_server import ScriptedProvider

    test = tmp_path / "OmniSpatial" / "OmniSpatial-test"
    records = []
    for number, size in enumerate(((640, 427), (1296, 968), (300, 200))):
        (test / "Perspective_Taking").mkdir(parents=True, exist_ok=True)
        Image.new("RGB", size, (number * 40, 90, 30)).save(test / "Perspective_Taking" / f"{number}.png")
        records.append(
            {
                "id": f"{number}_1",
                "question": f"Question {number}?",
                "options": ["left", "right"],
                "answer": 1,
                "task_type": "Perspective_Taking",
                "sub_task_type": "Allocentric",
            }
        )
    (test / "data.json").write_text(json.dumps(records))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("SPATIALCLAW_CACHE", str(tmp_path / "cache"))
    with ScriptedProvider(lambda request, index: "ANSWER: B") as server:
        code = main(
            ["bench", "--benchmark", "omnispatial", "--source", "OmniSpatial", "--out", "run", "--no-progress"]
            + ["--model", f"openai-compat:scripted@{server.url}", "--interface", "no-tools"]
            + ["--agent-option", "fsync=false", "--model-retries", "1"]
        )
        requests = list(server.requests)
    assert code == 0
    assert [_png_sizes(r) for r in requests] == [[(768, 512)], [(768, 576)], [(768, 512)]]
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert [r["scoring"] for r in rows] == ["reference"] * 3 and [r["score"] for r in rows] == [1.0] * 3
    assert [r["answer"] for r in rows] == ["B"] * 3


# ---------------------------------------------------------------------------- branches, one by one


def test_erqa_image_tags_take_the_first_indices_in_list_order() -> None:
    from spatialclaw.benchmarks.specs.erqa import with_image_tags

    assert with_image_tags("abcdef", [4, 1, 2], 2) == "a<image>bcd<image>ef"  # 4 and 1, not the smallest 1 and 2
    assert with_image_tags("q?", [0, 0], 2) == "<image> <image>\nq?" and with_image_tags("q?", None, 1) == "<image>\nq?"
    assert with_image_tags("q?", [], 0) == "q?"


def test_the_letter_helpers_try_each_kind_in_turn() -> None:
    from spatialclaw.benchmarks.scoring.letters import first_labelled_letter, marked_letter

    assert first_labelled_letter("(A) then b.") == "B" and first_labelled_letter("see (c) or d:") == "C"
    assert first_labelled_letter("x: d:") == "D" and first_labelled_letter("nothing here") is None
    assert marked_letter("(A). So B.", "A-D") == "B" and marked_letter("a:", "A-D") == "A"
    assert marked_letter("Bc. (d)", "A-D") == "D" and marked_letter("abc", "A-D") is None


def test_cvbench_yes_no_reads_only_a_non_empty_answer_block() -> None:
    assert _score("cvbench_paper:yesno", "Yes, but <answer>unsure</answer>", "Yes") == 0.0
    assert _score("cvbench_paper:yesno", "Yes. <answer> </answer>", "Yes") == 1.0  # an empty block: the reply
    assert _score("cvbench_paper:yesno", "<answer>no</answer>", "No") == 1.0


def test_geometry_arguments_are_checked(tmp_path: Path) -> None:
    from spatialclaw.primitives.frames.sources import FrameLoadError

    with pytest.raises(ValueError, match="positive sizes"):
        aspect_fit_box(0, 10, 768)
    Image.new("RGB", (8, 6)).save(tmp_path / "a.png")
    with pytest.raises(FrameLoadError, match="long side"):
        load_frames({"kind": "images", "paths": [str(tmp_path / "a.png")], "aspect_fit": True})


def test_a_question_missing_one_of_its_images_keeps_the_others(tmp_path: Path) -> None:
    folder = BUILDERS["mindcube"](tmp_path)
    spec = find_spec("mindcube")
    assert spec is not None
    whole = load_tasks(spec, source=folder)
    several = next(t for t in whole if len(t.inputs[0].paths) > 1)
    gone = Path(several.inputs[0].paths[0])
    gone.unlink()
    with pytest.warns(UserWarning, match="without some or all of their media"):
        again = {t.task_id: t for t in load_tasks(spec, source=folder)}
    kept = again[several.task_id]
    assert kept.inputs[0].paths == several.inputs[0].paths[1:] and kept.meta["missing_media"] == [str(gone)]


def test_apply_setting_records_full_resolution_kernels_and_lenient_scoring(tmp_path: Path) -> None:
    spec = find_spec("omnispatial")
    assert spec is not None
    loaded = load_benchmark(
        "omnispatial", source=BUILDERS["omnispatial"](tmp_path), kernel_frames="full", scoring="lenient"
    )
    task = loaded.tasks[0]
    assert task.meta["kernel_frames"] == "full" and all(f.aspect_fit is None for f in task.inputs)
    assert task.meta["scoring"] == "lenient" and task.meta["frame_geometry"] == "aspect_fit"
    with pytest.raises(ValueError, match="scoring must be one of"):
        load_benchmark("omnispatial", source=BUILDERS["omnispatial"](tmp_path / "x"), scoring="strict")
    with pytest.raises(ValueError, match="kernel_frames must be one of"):
        load_benchmark("omnispatial", source=BUILDERS["omnispatial"](tmp_path / "y"), kernel_frames="half")


def test_paper_scored_aggregation_leaves_out_unscored_rows_and_counts_a_missing_score_as_zero() -> None:
    from spatialclaw.benchmarks.scoring.aggregation import ScoredRow, aggregate

    rows = [
        ScoredRow("t/1", "around", 1.0, {"paper_scored": True}),
        ScoredRow("t/2", "around", 0.5, {}),  # no flag: scored
        ScoredRow("t/3", "among", None, {"paper_scored": True}),  # a failed episode: no score, counts as 0
        ScoredRow("t/4", "translation", 1.0, {"paper_scored": False}),  # run, left out (MindCube's translation)
        ScoredRow("t/5", "translation", 1.0, {"paper_scored": False}),
    ]
    result = aggregate(rows, "micro_paper_scored")
    assert result.rule == "micro_paper_scored" and result.n == 5
    assert result.overall == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert result.categories == {"among": 0.0, "around": 0.75} and result.counts["unscored"] == 2
    assert aggregate(rows[3:], "micro_paper_scored").overall is None  # nothing scored: no number, not 0


def test_a_media_file_missing_or_too_large_names_the_file_and_the_remedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = BUILDERS["spbench"](tmp_path)
    image = folder / "scene0011_00" / "0.jpg"
    spec = find_spec("spbench-si")  # not the paper's name: a missing file is an error, not a kept sample
    assert spec is not None and spec.paper_name is None
    monkeypatch.setenv("SPATIALCLAW_MAX_MEDIA_MB", "1")
    image.write_bytes(image.read_bytes().ljust(1 << 20, b"\0"))  # exactly the limit: accepted
    assert len(load_tasks(spec, source=folder)) == 2
    image.write_bytes(image.read_bytes().ljust(3 << 20, b"\0"))
    with pytest.raises(DatasetUnavailable, match=r"'scene0011_00/0\.jpg' of 3 MiB, over the limit of 1 MiB"):
        load_tasks(spec, source=folder)
    image.unlink()
    with pytest.raises(
        DatasetUnavailable, match=r"0\.jpg does not exist\. Download hongxingli/SPBench .*Check --source"
    ):
        load_tasks(spec, source=folder)


def test_inline_options_are_the_last_lettered_run_or_the_run_after_the_marker() -> None:
    from spatialclaw.benchmarks.spec import parse_inline_options

    # letters earlier in the question are not options: the run starts at the last "A"
    text = "In photo A: a cup; in photo B: a mug. Which is taller? A. the cup B. the mug"
    assert parse_inline_options(text) == (
        "In photo A: a cup; in photo B: a mug. Which is taller?",
        ["the cup", "the mug"],
    )
    assert parse_inline_options("Options: A. red B. blue", "Options:") == ("", ["red", "blue"])  # marker first
    assert parse_inline_options("Which? A. red B. blue", "Options:") is None  # no marker, no options


def test_a_tall_frame_is_cropped_about_its_middle_and_any_positive_size_is_fitted() -> None:
    # 720x1280 (9:16) is nearest 2:3: its middle 720x1080 is kept, 100 rows cut at the top and at the bottom
    assert aspect_fit_box(720, 1280, 768) == ((0, 100, 720, 1180), (512, 768))
    image = Image.new("RGB", (720, 1280), (0, 0, 255))
    image.paste((255, 0, 0), (0, 0, 720, 100))
    image.paste((255, 0, 0), (0, 1180, 720, 1280))
    fitted = aspect_fit(image)  # the paper's long side, 768, by default
    assert fitted.size == (512, 768) and fitted.getpixel((256, 0))[2] > 200 and fitted.getpixel((256, 767))[2] > 200
    assert aspect_fit(Image.new("RGB", (500, 500))).size == (768, 768)
    # a single pixel, row or column is a positive size: fitted, not refused
    assert aspect_fit_box(1, 1, 1) == ((0, 0, 1, 1), (1, 1))
    assert aspect_fit_box(3, 1, 768) == ((0, 0, 2, 1), (765, 425)) and aspect_fit_box(1, 2, 768)[1] == (512, 768)


def test_micro_is_the_mean_over_questions_and_macro_over_categories() -> None:
    from spatialclaw.benchmarks.scoring.aggregation import ScoredRow, aggregate

    rows = [
        ScoredRow("t/1", "depth", 1.0),
        ScoredRow("t/2", "depth", None),  # no score: counts as 0
        ScoredRow("t/3", "depth", 0.5),
        ScoredRow("t/4", None, 1.0),  # no category
    ]
    micro, macro = aggregate(rows), aggregate(rows, "macro")
    assert (micro.rule, macro.rule, micro.n, macro.n) == ("micro", "macro", 4, 4)
    assert micro.categories == macro.categories == {"depth": 0.5, "uncategorized": 1.0}
    assert micro.counts == {"depth": 3, "uncategorized": 1}
    assert micro.overall == pytest.approx(2.5 / 4) and macro.overall == pytest.approx((0.5 + 1.0) / 2)
    assert aggregate([]).overall is None and aggregate([], "macro").overall is None
    with pytest.raises(ValueError, match="unknown aggregation rule 'median'; use one of micro, macro"):
        aggregate(rows, "median")
