"""Request building without a kernel: image budget, condensation, fallback answer parsing."""

from __future__ import annotations

import pytest
from PIL import Image

from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.context import (
    StepRecord,
    TaskRecord,
    apply_image_budget,
    build_messages,
    condensed_code,
    fit_image,
)
from spatialclaw.agent.direct_answer import parse_direct_answer
from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.kernel.cell import CellError, CellResult
from spatialclaw.task import Task


def image(label: str, width: int = 4) -> ImagePart:
    return ImagePart.from_pil(Image.new("RGB", (width, 3)), label=label)


def test_image_budget_keeps_the_newest_and_is_deterministic():
    messages = [
        Message("user", [TextPart("task"), image("a"), image("b")]),
        Message.text("assistant", "x"),
        Message("user", [TextPart("obs"), image("c"), image("d")]),
    ]
    once = apply_image_budget(messages, 3)
    again = apply_image_budget(messages, 3)
    assert [m.to_dict() for m in once] == [m.to_dict() for m in again]
    assert [p.label for m in once for p in m.images] == ["b", "c", "d"]
    assert once[0].content[1] == TextPart("[image omitted (request limit of 3 images): a, 4x3]")
    assert [p.label for m in messages for p in m.images] == ["a", "b", "c", "d"]  # inputs untouched
    assert apply_image_budget(messages, 10) is messages
    assert sum(len(m.images) for m in apply_image_budget(messages, 0)) == 0


def test_image_byte_budget_drops_everything_older_than_the_first_image_over_it():
    big = ImagePart(png=b"x" * 600, width=10, height=10, label="big")
    small = [ImagePart(png=b"y" * 100, width=2, height=2, label=f"s{i}") for i in range(3)]
    messages = [Message("user", [small[0], big, small[1], small[2]])]
    kept = apply_image_budget(messages, max_images=10, max_bytes=500)
    assert [p.label for p in kept[0].images] == ["s1", "s2"]
    assert kept[0].content[0] == TextPart("[image omitted (request limit of 10 images / 0.0005 MB): s0, 2x2]")


def test_condensation_applies_to_older_failures_only():
    error = CellError("ValueError", "bad value\nmore", "Traceback ...", line=2, source="y = f(x)")
    failed = StepRecord(
        1, "reply one", "x = 1\ny = f(x)\nz = 3", CellResult(code="", status="error", error=error), "full observation"
    )
    ok = StepRecord(2, "reply two", "print(1)", CellResult(code="print(1)", stdout="1\n"), "Step 2: 1")
    latest_failed = build_messages("sys", [TaskRecord("task"), failed], max_images=5)
    assert latest_failed[-1].text_content == "full observation"
    later = build_messages("sys", [TaskRecord("task"), failed, ok], max_images=5)
    assert (
        later[2].text_content
        == "```python\nx = 1\ny = f(x)\n# ... 1 more line(s) not run: the cell failed at line 2\n```"
    )
    assert later[3].text_content == "Step 1: [error] ValueError: bad value (cell line 2) [condensed]"
    kept = build_messages("sys", [TaskRecord("task"), failed, ok], max_images=5, condense_errors=False)
    assert kept[3].text_content == "full observation"


def test_condensed_code_without_later_lines():
    assert condensed_code("a\nb", 2) == "a\nb"


def test_final_note_goes_into_the_last_user_turn():
    messages = build_messages("sys", [TaskRecord("task", [image("f")])], max_images=5, final_note="LAST step")
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[-1].text_content.endswith("LAST step") and len(messages[-1].images) == 1


def test_large_observation_images_are_downscaled_keeping_the_aspect_ratio():
    big = ImagePart.from_pil(Image.new("RGB", (3000, 1500)))
    small = fit_image(big.png, 3000, 1500, 1000, "big")
    assert (small.width, small.height) == (1000, 500) and small.label == "big"
    assert fit_image(big.png, 3000, 1500, 4000).png is big.png


@pytest.mark.parametrize(
    "answer_type, choices, text, expected",
    [
        ("multiple_choice", ["left", "right"], "Reasoning...\nANSWER: B", "B"),
        ("multiple_choice", ["left", "right"], "ANSWER: right", "B"),
        ("multiple_choice", ["left", "right"], "I cannot tell.", None),
        ("number", None, "ANSWER: 2.5 m", 2.5),
        ("number", None, "About 3 metres apart.", 3.0),
        ("yes_no", None, "ANSWER: No, it is not.", "no"),
        ("text", None, "ANSWER: the red chair", "the red chair"),
    ],
)
def test_fallback_answers_are_parsed_for_each_answer_type(answer_type, choices, text, expected):
    task = Task("q", choices=choices, answer_type=answer_type)
    assert parse_direct_answer(text, task) == expected


def test_config_rejects_impossible_budgets():
    with pytest.raises(ValueError, match="max_steps"):
        AgentConfig(max_steps=0)


def test_the_preview_shows_every_frame_when_there_are_fewer_than_its_budget(tmp_path):
    from spatialclaw.agent.task_inputs import preview_frames
    from spatialclaw.task import FrameSpec

    paths = []
    for i in range(3):
        paths.append(tmp_path / f"{i}.png")
        Image.new("RGB", (30, 20), (i * 80, 0, 0)).save(paths[-1])
    images, text = preview_frames(Task("q", inputs=[FrameSpec.images(paths)]), count=8, max_side=16)
    assert [i.label for i in images] == ["frame 0", "frame 1", "frame 2"]
    assert (images[0].width, images[0].height) == (16, 11)
    assert text == "`frames` holds 3 frame(s) (absolute indices 0 to 2); attached below: frame(s) 0, 1, 2, downscaled."
    images, _ = preview_frames(Task("q", inputs=[FrameSpec.images(paths)]), count=2, max_side=100)
    assert [i.label for i in images] == ["frame 0", "frame 2"]
