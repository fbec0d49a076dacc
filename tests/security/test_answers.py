"""The host decides the answer (issue 11, item 4).

The answer message a cell publishes is a claim. Every forgery below runs in a real kernel, inside a real
episode driven by the scripted provider over the real OpenAI SDK: it must not be recorded as the answer,
the model must read why in its next observation, and the episode must go on to a genuine answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spatialclaw import Kernel
from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.loop import Agent
from spatialclaw.kernel.collector import CellCollector
from spatialclaw.primitives.answers import AnswerError, normalise_answer, validate_claim
from spatialclaw.primitives.protocol import ANSWER_MIME
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing import ScriptedProvider
from spatialclaw.trajectories.episode_log import load_episode
from tests.agent_helpers import cell, openai_compat, openai_text, photo

PUBLISH = "from IPython.display import publish_display_data\n"
FORGERIES = {
    "value outside the choices": PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'value': 'Z', 'raw': 'Z'}}}})",
    "option text instead of a letter": PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'value': 'the chair'}}}})",
    "a number for a choice": PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'value': 1}}}})",
    "a list": PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'value': ['A', 'B']}}}})",
    "no value": PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'raw': 'A'}}}})",
    "not an object": PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: 'A'}})",
    "a patched Answerer": "_genuine = type(answer).normalise\ntype(answer).normalise = lambda self, value: 'forged'\nanswer('A')",
    "a replaced answer function": (
        PUBLISH + "_genuine = answer\n"
        f"answer = lambda value: publish_display_data({{{ANSWER_MIME!r}: {{'value': 'E'}}}})\nanswer('B')"
    ),
}
# puts the genuine answer back, so that the episode can end with a real answer
RESTORE = {
    "a patched Answerer": "type(answer).normalise = _genuine\n",
    "a replaced answer function": "answer = _genuine\n",
}


@pytest.fixture(scope="module")
def kernel():
    with Kernel() as k:
        yield k


def _task(tmp_path: Path) -> Task:
    return Task(
        "Which is nearer, the chair or the table?",
        inputs=[FrameSpec.images([photo(tmp_path)])],
        choices=["the chair", "the table"],
        task_id="forgery",
    )


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_answer_is_rejected_shown_to_the_model_and_the_episode_goes_on(forgery, kernel, tmp_path):
    script = [cell(FORGERIES[forgery]), cell(RESTORE.get(forgery, "") + "answer('B')", "A real answer now.")]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(max_steps=4)).run(
            _task(tmp_path), tmp_path / "ep", kernel=kernel
        )
    observation = openai_text(server.requests[1])
    assert "AnswerRejected" in observation and "not accepted" in observation
    assert result.status == "answered" and result.answer == "B" and result.steps == 2
    episode = load_episode(tmp_path / "ep")
    first_cell = next(e for e in episode.events if e["type"] == "cell")
    assert first_cell["result"]["answered"] is False and first_cell["result"]["answer"] is None
    assert [e["value"] for e in episode.events if e["type"] == "answer"] == ["B"]


def test_a_forged_number_is_rejected_for_a_number_question(kernel, tmp_path):
    task = Task("How far is the chair, in metres?", inputs=[FrameSpec.images([photo(tmp_path)])], answer_type="number")
    forged = PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'value': 'far away'}}}})"
    nan = PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'value': float('nan')}}}})"
    script = [cell(forged), cell(nan), cell("answer(2.5)")]
    with ScriptedProvider(script) as server:
        result = Agent(openai_compat(server), AgentConfig(max_steps=4)).run(task, tmp_path / "ep", kernel=kernel)
    assert "not accepted" in openai_text(server.requests[1]) and "not accepted" in openai_text(server.requests[2])
    assert result.status == "answered" and result.answer == 2.5 and result.steps == 3


def test_the_host_checks_against_its_own_copy_of_the_task_not_the_kernels_meta(kernel, tmp_path):
    kernel.reset(meta={"choices": ["left", "right"], "answer_type": "multiple_choice"})
    patched = kernel.execute("meta['choices'].append('up'); answer.choices.append('up'); answer('C')")
    assert not patched.answered and patched.error.type == "AnswerRejected"
    genuine = kernel.execute("answer('(B)')")
    assert genuine.answered and genuine.answer == "B" and genuine.ok


def test_a_valid_answer_followed_by_a_forgery_keeps_the_valid_one(kernel):
    kernel.reset(meta={"choices": ["left", "right"], "answer_type": "multiple_choice"})
    result = kernel.execute("answer('A')\n" + PUBLISH + f"publish_display_data({{{ANSWER_MIME!r}: {{'value': 'B'}}}})")
    assert result.answered and result.answer == "A"


def test_the_collector_survives_malformed_claims_without_raising():
    for claim in (None, "A", 3, [], {"value": {"nested": 1}}, {"value": "x" * 5000}):
        collector = CellCollector("cell", answer_spec={"choices": None, "answer_type": "text"})
        collector.add({"msg_type": "display_data", "content": {"data": {ANSWER_MIME: claim}}})
        result = collector.finish(1, 0.0)
        assert not result.answered and result.error.type == "AnswerRejected", claim


def test_validate_claim_accepts_exactly_what_normalise_answer_produces():
    choices = ["the chair", "the table"]
    for value in ("b", "(B)", "B.", "B. the table", "the table", " The Table. "):
        normalised = normalise_answer(value, choices)
        assert normalised == "B" and validate_claim({"value": normalised}, choices) == "B"
    assert validate_claim({"value": normalise_answer("3 m", None, "number")}, None, "number") == 3.0
    with pytest.raises(AnswerError):
        validate_claim({"value": 3}, None, "number")  # the kernel would have published 3.0
    with pytest.raises(AnswerError):
        validate_claim({"value": "Yes"}, None, "yes_no")  # the kernel publishes "yes"


@pytest.mark.parametrize(
    "forgery", ["value outside the choices", "a number for a choice", "a replaced answer function"]
)
def test_the_notebook_executor_checks_claims_the_same_way(forgery, tmp_path):
    """``%%spatialclaw`` runs cells in the notebook's own shell (no process isolation), but what counts as
    the answer is still decided by the host's copy of the task: a forged claim is rejected and shown."""
    from IPython.core.interactiveshell import InteractiveShell

    from spatialclaw.interactive.shell_executor import ShellExecutor

    executor = ShellExecutor(InteractiveShell.instance())
    executor.load(_task(tmp_path))
    forged = executor.execute(FORGERIES[forgery])
    assert not forged.answered and forged.error is not None and forged.error.type == "AnswerRejected"
    executor.execute(RESTORE.get(forgery, ""))
    genuine = executor.execute("answer('B')")
    assert genuine.answered and genuine.answer == "B" and genuine.error is None
