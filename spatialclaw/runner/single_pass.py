"""The ``single-pass`` interface: one cell written without seeing any output, then an answer from it.

Call 1 (purpose ``step``) gets the code interface's system prompt (the same tool manual) and the task
with its preview frames, plus the single-pass rule: write the whole program in one block, printing what
the answer needs. The first code block runs once. If the cell called ``answer(...)`` the episode ends
with that answer (source ``cell``). Otherwise call 2 (purpose ``answer``) shows the cell's output (text
and images) and asks for the answer in text (``ANSWER: ...``, source ``text``). A first reply without
code is answered the same way, with a note that no cell ran. Two model calls at most, one cell at most.
"""

from __future__ import annotations

from typing import Any

from spatialclaw.agent.context import observation_parts
from spatialclaw.agent.direct_answer import parse_direct_answer
from spatialclaw.agent.extraction import extract_cell
from spatialclaw.agent.prompting import system_prompt, task_prompt
from spatialclaw.agent.task_inputs import preview_frames
from spatialclaw.chat import Message, TextPart
from spatialclaw.kernel.own_primitives import primitive_functions
from spatialclaw.runner.kernel_episode import EpisodeContext, KernelInterface

__all__ = ["ANSWER_REQUEST", "SINGLE_PASS_RULE", "SinglePassAgent"]

SINGLE_PASS_RULE = (
    "This episode has exactly one step: write the complete program in one ```python block now. You will "
    "not see any output before it runs, so do not wait for results: compute everything you need and print "
    "the values you will answer from. After it runs, its output is shown to you once and you answer in "
    "text. If the program itself can decide, it may call answer(value)."
)
ANSWER_REQUEST = (
    "That was the only cell. Answer the question now from its output, without code: end your reply with "
    "a line `ANSWER: <your answer>`."
)
NO_CELL = "Your reply held no ```python block, so no code ran."


class SinglePassAgent(KernelInterface):
    """Episodes of the ``single-pass`` interface (see the module docstring)."""

    interface = "single-pass"
    prompt_version = "single-pass-1"

    def play(self, episode: EpisodeContext) -> tuple[str, Any, str | None]:
        config, task = self.config, episode.task
        images, preview_text = preview_frames(task, config.preview_images, config.preview_max_side)
        own = primitive_functions(episode.kernel)  # the manual lists your own primitives too
        system = Message.text("system", system_prompt(1, config.api_detail, primitives=own))
        question = Message("user", [TextPart(task_prompt(task, preview_text) + "\n\n" + SINGLE_PASS_RULE), *images])
        episode.step = 1
        reply = episode.call([system, question], "step")
        extraction = extract_cell(reply.text)
        if extraction.found:
            result = episode.execute(extraction.code or "")
            if result.answered:
                return "answered", result.answer, "cell"
            text, shown = observation_parts(1, 1, result, config.observation_chars, config.max_image_side, [])
        else:
            episode.writer.write("format_error", step=1, response=reply.text, message=NO_CELL)
            text, shown = NO_CELL, []
        episode.step = 2
        follow_up = Message("user", [TextPart(text + "\n\n" + ANSWER_REQUEST), *shown])
        answer_reply = episode.call([system, question, Message.text("assistant", reply.text), follow_up], "answer")
        answer = parse_direct_answer(extract_cell(answer_reply.text).visible or answer_reply.text, task)
        return "answered", answer, "text"
