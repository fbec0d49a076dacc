"""Specifications of an episode's training conversation: which calls make it, the loss weight of each
output by the call's purpose, the kinds of user turns, trimmed history, and merging same-role turns."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.export.conversation import EMPTY_REPLY, Turn, episode_conversation, merge_consecutive
from spatialclaw.kernel.cell import CellError, CellResult
from spatialclaw.trajectories.episode_log import TrajectoryWriter, load_episode
from spatialclaw.trajectories.synthetic import solid_png

SYSTEM = "You write Python cells."
PROMPT = "Is the cube left or right of the chair?\nA. left\nB. right"


class Script:
    """Writes an episode log the way the agent does: each main-loop call's request is the history so far."""

    def __init__(self, directory: Path) -> None:
        self.log = TrajectoryWriter(directory, fsync=False)
        self.log.write("header", format_version=1, config={"model": "scripted"})
        self.log.write("task", task={"question": PROMPT, "ground_truth": "A"})
        frame = ImagePart(solid_png((200, 10, 10), (8, 6)), 8, 6, label="frame 0")
        self.history = [Message.text("system", SYSTEM), Message("user", [TextPart(PROMPT), frame])]

    def call(self, step: int, text: str | None, purpose: str | None = "step", reasoning: str | None = None) -> None:
        """A model call; ``text=None`` is a call that failed (no response); ``purpose=None`` an older log's call."""
        fields: dict[str, Any] = {
            "step": step,
            "model": "scripted",
            "request": {"messages": self.log.messages(self.history)},
        }
        if purpose is not None:
            fields["purpose"] = purpose
        response = None if text is None else {"text": text, "reasoning": reasoning, "finish_reason": "stop"}
        self.log.write("model_call", response=response, error=None if text else "HTTP 500", **fields)
        if text is not None and purpose not in ("vlm.ask", "vlm.locate"):
            self.history.append(Message.text("assistant", text))

    def cell(self, step: int, ok: bool = True) -> None:
        error = None if ok else CellError(type="ZeroDivisionError", message="division by zero", line=1)
        result = CellResult(code="x = 1", stdout=f"out {step}\n", status="ok" if ok else "error", error=error)
        self.log.write("cell", step=step, code="x = 1", result=self.log.cell_result(result))
        self.history.append(Message.text("user", result.to_text()))

    def format_error(self, step: int) -> None:
        self.log.write("format_error", step=step, response="no code", message="Write one ```python``` cell.")
        self.history.append(Message.text("user", "Write one ```python``` cell."))

    def end(self, score: float = 1.0) -> Path:
        self.log.write("answer", value="A", source="cell")
        self.log.write("score", score=score, ground_truth="A", details={"correct": score == 1.0})
        self.log.write("end", reason="answered", steps=2)
        self.log.close()
        return self.log.directory


def _outputs(directory: Path, mask_failed: bool = True) -> list[Turn]:
    return [t for t in episode_conversation(load_episode(directory), mask_failed).turns if t.role == "assistant"]


def test_a_fallback_answer_after_a_failed_last_step_has_weight_one_and_the_failed_step_weight_zero(tmp_path):
    s = Script(tmp_path)
    s.call(0, "look\n```python\nx = 1\n```")
    s.cell(0)
    s.call(1, "divide\n```python\nx = 1 / 0\n```")
    s.cell(1, ok=False)
    s.call(1, "The answer is A.", purpose="fallback")  # logged with the last step's number
    episode = load_episode(s.end())
    outputs = [t for t in episode_conversation(episode).turns if t.role == "assistant"]  # masked by default
    assert [(t.step, t.weight) for t in outputs] == [(0, 1), (1, 0), (1, 1)]
    assert outputs[-1].text == "The answer is A."
    assert all(t.weight == 1 for t in _outputs(tmp_path, mask_failed=False))


def test_only_step_calls_are_masked_and_an_older_log_without_purpose_counts_as_steps(tmp_path):
    s = Script(tmp_path)
    s.call(0, "Plan: look first.", purpose="plan")
    s.format_error(0)
    s.call(0, "no code here", purpose=None)  # a log written before calls carried a purpose: a step
    s.format_error(0)
    s.call(0, "Checked: no code needed.", purpose="verify")  # any main-loop purpose but "step" is never masked
    s.format_error(0)
    s.call(1, "```python\nanswer('A')\n```")
    s.cell(1)
    outputs = _outputs(s.end())
    assert [t.weight for t in outputs] == [1, 0, 1, 1]


def test_side_calls_and_calls_without_a_response_are_not_part_of_the_conversation(tmp_path):
    s = Script(tmp_path)
    s.call(0, "look\n```python\nvlm.ask('where?')\n```")
    s.call(0, "It is on the left.", purpose="vlm.ask")
    s.cell(0)
    s.call(1, "```python\nanswer('A')\n```")
    s.cell(1)
    s.call(1, "a side question", purpose="vlm.locate")  # after the last main call: still not the final turn
    s.call(2, None)  # failed call: no response
    conversation = episode_conversation(load_episode(s.end()))
    outputs = [t for t in conversation.turns if t.role == "assistant"]
    assert [t.text for t in outputs] == ["look\n```python\nvlm.ask('where?')\n```", "```python\nanswer('A')\n```"]
    assert [t.step for t in outputs] == [0, 1]
    assert "It is on the left." not in "".join(t.text for t in conversation.turns)


def test_an_episode_without_a_main_call_response_is_refused_naming_its_directory(tmp_path):
    s = Script(tmp_path)
    s.call(0, None)
    s.call(0, "side", purpose="vlm.ask")
    with pytest.raises(ValueError, match=re.escape(str(tmp_path))):
        episode_conversation(load_episode(s.end()))


def test_user_turns_are_prompt_before_the_first_output_then_format_error_or_observation(tmp_path):
    s = Script(tmp_path)
    s.history.append(Message.text("user", "A second prompt turn."))
    s.call(0, "no code")
    s.format_error(0)
    s.call(1, "```python\nx = 1\n```")
    s.cell(1)
    s.call(2, "still no code")
    s.format_error(2)
    s.call(3, "```python\nanswer('A')\n```")
    s.cell(3)
    conversation = episode_conversation(load_episode(s.end()))
    kinds = [t.kind for t in conversation.turns]
    assert kinds == ["system", "prompt", "prompt"] + ["output", "format_error", "output", "observation"] * 1 + [
        "output",
        "format_error",
        "output",
    ]
    assert conversation.system == SYSTEM
    assert len(conversation.images) == 1 and conversation.turns[1].images == conversation.images


def test_trimmed_history_matches_outputs_to_calls_from_the_end(tmp_path):
    s = Script(tmp_path)
    for step in range(4):
        s.call(step, f"step {step}\n```python\nx = {step}\n```")
        s.cell(step, ok=step != 2)
    # The agent keeps the system prompt, the task and only the two most recent outputs with their observations.
    s.history = s.history[:2] + s.history[-4:]
    s.call(4, "```python\nanswer('A')\n```")
    s.cell(4)
    outputs = _outputs(s.end())
    assert [t.step for t in outputs] == [2, 3, 4]
    assert [t.weight for t in outputs] == [0, 1, 1]
    assert outputs[0].text.startswith("step 2")


def test_the_final_output_drops_reasoning_sections_and_an_empty_one_reads_as_empty_reply(tmp_path):
    s = Script(tmp_path)
    s.call(0, "<think>hmm</think>look\n```python\nx = 1\n```", reasoning="")
    s.cell(0)
    s.call(1, "<think>only thinking</think>", reasoning="separate thoughts")
    outputs = _outputs(s.end(score=0.0))
    assert outputs[0].reasoning is None  # an empty reasoning text is no reasoning
    assert outputs[-1].text == EMPTY_REPLY and outputs[-1].reasoning == "separate thoughts"
    conversation = episode_conversation(load_episode(tmp_path))
    assert conversation.score == 0.0 and conversation.correct is False
    assert conversation.task["ground_truth"] == "A" and conversation.episode_id == tmp_path.name


def test_merging_same_role_turns_keeps_the_lowest_weight_and_the_last_known_step():
    turns = [
        Turn("user", [TextPart("observation")], "observation"),
        Turn("user", [ImagePart(solid_png((0, 0, 0), (4, 4)), 4, 4)], "observation"),
        Turn("user", [TextPart("format")], "format_error"),
        Turn("assistant", [TextPart("a")], "output", step=3, weight=1, reasoning="r1"),
        Turn("assistant", [TextPart("b")], "output", step=None, weight=0, reasoning=None),
        Turn("assistant", [TextPart("c")], "output", step=5, weight=1, reasoning="r3"),
    ]
    merged = merge_consecutive(turns)
    assert [t.role for t in merged] == ["user", "assistant"]
    user, assistant = merged
    assert user.kind == "observation" and user.text == "observation\n\nformat"  # no separator next to an image
    assert len(user.parts) == 4 and len(user.images) == 1
    assert assistant.text == "a\n\nb\n\nc" and assistant.weight == 0 and assistant.step == 5
    assert assistant.reasoning == "r1\n\nr3"
    alone = merge_consecutive([Turn("assistant", [TextPart("x")], "output", step=2, weight=1)])
    assert alone[0].step == 2 and alone[0].reasoning is None
    tail = merge_consecutive([Turn("assistant", [TextPart("x")], "output", step=2), Turn("assistant", [], "output")])
    assert tail[0].step == 2 and tail[0].parts == [TextPart("x")]


def test_merging_leaves_turns_that_already_alternate_as_they_are():
    turns = [
        Turn("system", [TextPart("sys")], "system"),
        Turn("user", [TextPart("task")], "prompt"),
        Turn("assistant", [TextPart("a")], "output", step=0),
        Turn("user", [TextPart("out 0")], "observation"),
        Turn("assistant", [TextPart("b")], "output", step=1, weight=0),
    ]
    assert merge_consecutive(turns) == turns


def test_merging_compares_roles_by_name_so_turns_read_back_from_a_file_merge_too():
    roles = json.loads('["user", "user"]')  # equal names, but not the module's own string objects
    merged = merge_consecutive(
        [Turn(roles[0], [TextPart("a")], "observation"), Turn(roles[1], [TextPart("b")], "observation")]
    )
    assert len(merged) == 1 and merged[0].text == "a\n\nb"
