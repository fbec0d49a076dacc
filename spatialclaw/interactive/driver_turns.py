"""A session's driver turns, recorded as the agent's conversation so that sessions export as SFT rows.

A harness that drives a session (``spatialclaw session exec``, the MCP tools) may pass its model's
words with each cell (``--reasoning TEXT`` / ``reasoning``). :class:`DriverTranscript` then writes, before
the cell, a main-loop ``model_call`` event exactly like the agent's: its request is the conversation so
far in the agent's own form (the agent's default system prompt for the session's step budget, the task prompt
with the frame previews, every earlier turn and ``Step N/M`` observation with its images), its response
is the reasoning followed by the cell as a ```python block. Exports read these events as they read an
agent episode (:mod:`spatialclaw.export.conversation`); a session driven without reasoning has no
``model_call`` and is skipped by exports with a reason that says so.

Every executed cell joins the history, with or without reasoning, so later turns see what the driver
saw; give reasoning with every cell for a row that holds every step. :class:`SessionTurns` builds the
transcript only when the first reasoning arrives (replaying the cells before it), so sessions driven
without reasoning pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spatialclaw.chat import Message, TextPart
from spatialclaw.kernel.cell import CellResult
from spatialclaw.task import Task

__all__ = ["DRIVER_MODEL", "DriverTranscript", "SessionTurns", "driver_output"]

DRIVER_MODEL = "session-driver"
"""The model name of the ``model_call`` events written for a driver's turns."""


def driver_output(reasoning: str, code: str) -> str:
    """The driver's turn as the agent's output format: its words, then the cell as a python block."""
    return f"{reasoning.strip()}\n```python\n{code.strip()}\n```"


class DriverTranscript:
    """The agent-form history of one session, with ``write(event_type, **fields)`` appending events and
    ``store(messages)`` serialising messages into the trajectory (the writer's ``messages``). Sizes as
    :class:`spatialclaw.agent.config.AgentConfig`'s defaults (pixels, characters)."""

    def __init__(
        self,
        task: Task,
        max_steps: int,
        write: Callable[..., Any],
        store: Callable[[list[Message]], Any],
        preview_images: int = 8,
        preview_max_side: int = 768,
        observation_chars: int = 8000,
        max_image_side: int = 1568,
    ) -> None:
        from spatialclaw.agent.config import AgentConfig
        from spatialclaw.agent.prompting import system_prompt, task_prompt
        from spatialclaw.agent.task_inputs import preview_frames

        self.max_steps = max_steps
        self._write, self._store = write, store
        self._observation_chars, self._max_image_side = observation_chars, max_image_side
        preview, preview_text = preview_frames(task, preview_images, preview_max_side)
        self.history: list[Message] = [
            Message.text("system", system_prompt(max_steps, api_detail=AgentConfig().api_detail)),
            Message("user", [TextPart(task_prompt(task, preview_text)), *preview]),
        ]

    def turn(self, step: int, code: str, reasoning: str | None) -> str:
        """Record the driver's turn for ``step`` (1-based) before its cell runs; returns the output text.
        Without ``reasoning`` nothing is logged and the cell alone stands for the turn."""
        if reasoning is None or not reasoning.strip():
            output = f"```python\n{code.strip()}\n```"
        else:
            output = driver_output(reasoning, code)
            self._write(
                "model_call",
                step=step,
                purpose="step",
                model=DRIVER_MODEL,
                params={},
                request={"messages": self._store(self.history)},
                response={"text": output, "reasoning": None, "finish_reason": "stop", "raw": None},
                usage={},
                cost_usd=None,
                latency_s=None,
                error=None,
            )
        self.history.append(Message.text("assistant", output))
        return output

    def observe(self, step: int, result: CellResult) -> None:
        """Add the cell's observation, rendered as the agent shows it to a model."""
        from spatialclaw.agent.context import observation_parts

        text, images = observation_parts(
            step, self.max_steps, result, self._observation_chars, self._max_image_side, []
        )
        self.history.append(Message("user", [TextPart(text), *images]))


class SessionTurns:
    """What the session daemon calls around each cell: :meth:`before_cell` with the driver's reasoning
    (or ``None``), :meth:`after_cell` with the result. Arguments as :class:`DriverTranscript`."""

    def __init__(
        self, task: Task, max_steps: int, write: Callable[..., Any], store: Callable[[list[Message]], Any]
    ) -> None:
        self._args = (task, max_steps, write, store)
        self._transcript: DriverTranscript | None = None
        self._executed: list[tuple[int, str, CellResult]] = []

    def before_cell(self, step: int, code: str, reasoning: str | None) -> None:
        if self._transcript is None and reasoning is not None and reasoning.strip():
            self._transcript = DriverTranscript(*self._args)
            for old_step, old_code, old_result in self._executed:
                self._transcript.turn(old_step, old_code, None)
                self._transcript.observe(old_step, old_result)
            self._executed.clear()
        if self._transcript is not None:
            self._transcript.turn(step, code, reasoning)

    def after_cell(self, step: int, code: str, result: CellResult) -> None:
        if self._transcript is not None:
            self._transcript.observe(step, result)
        else:
            self._executed.append((step, code, result))
