"""The no-tools baseline: the model answers from the frames directly, in one call, without a kernel.

It sees the same question text and the same preview frames (count and size from
:class:`~spatialclaw.agent.config.AgentConfig`: ``preview_images``, ``preview_max_side``) as the agent's first
step, so the difference between the two runs is what the tools add. The episode is logged in the
trajectory format (``header``, ``task``, one ``model_call``, ``answer``, ``end``). A time limit
(``AgentConfig.limits.time_s``) is the call's timeout; a call cut by it ends with status ``timeout``.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from string import Template

from spatialclaw import __version__
from spatialclaw.agent.config import AgentConfig
from spatialclaw.agent.direct_answer import parse_direct_answer
from spatialclaw.agent.limits import LimitHit
from spatialclaw.agent.prompting import choices_text, inputs_text, question_text
from spatialclaw.agent.result import EpisodeResult
from spatialclaw.agent.task_inputs import checked_inputs, preview_frames
from spatialclaw.chat import Message, TextPart, Usage
from spatialclaw.models import Model, ModelError, ModelTimeoutError
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import FORMAT_VERSION, TrajectoryWriter, config_hash

__all__ = ["DirectAnswerer", "direct_prompt"]

_HINTS = {
    "multiple_choice": "the letter of one option, e.g. ANSWER: B",
    "number": "a plain number in the unit the question asks for, e.g. ANSWER: 2.5",
    "yes_no": "yes or no",
    "text": "a few words",
}


def direct_prompt(task: Task, preview: str) -> str:
    """The baseline's user message text (``benchmarks/direct_answer.md`` filled for ``task``)."""
    text = resources.files("spatialclaw.benchmarks").joinpath("direct_answer.md").read_text(encoding="utf-8")
    return (
        Template(text)
        .substitute(
            question=question_text(task),
            choices=choices_text(task),
            inputs=inputs_text(task),
            preview=preview,
            answer_hint=_HINTS.get(task.answer_type, "a short answer"),
        )
        .strip()
        + "\n"
    )


class DirectAnswerer:
    """Answers tasks with one model call each; ``run`` mirrors :meth:`spatialclaw.agent.loop.Agent.run`."""

    def __init__(self, model: Model, config: AgentConfig | None = None) -> None:
        self.model = model
        self.config = config or AgentConfig()

    def run(self, task: Task, out_dir: str | Path) -> EpisodeResult:
        started = time.perf_counter()
        out_dir = Path(out_dir)
        settings = {
            "baseline": "no-tools",
            "preview_images": self.config.preview_images,
            "preview_max_side": self.config.preview_max_side,
            "model_params": self.config.model_params,
        }
        usage, cost, answer, status, error, source, model_s = Usage(), None, None, "error", None, None, 0.0
        time_s = self.config.limits.time_s
        limit: LimitHit | None = None
        with TrajectoryWriter(out_dir, fsync=self.config.fsync) as writer:
            writer.write(
                "header",
                format_version=FORMAT_VERSION,
                package_version=__version__,
                prompt_version="direct-1",
                interface="no-tools",
                model=self.model.describe(),
                config=settings,
                config_hash=config_hash({"model": self.model.spec, **settings}),
            )
            files, unreadable = checked_inputs(task)  # before any read: a FIFO or /dev/zero never ends one
            writer.write("task", task=task.to_dict(), files=files)
            messages: list[Message] = []
            try:
                if unreadable is not None:
                    raise unreadable
                images, preview_text = preview_frames(task, self.config.preview_images, self.config.preview_max_side)
                messages = [Message("user", [TextPart(direct_prompt(task, preview_text)), *images])]
                call_started = time.perf_counter()
                timeout = {} if time_s is None else {"timeout_s": max(time_s - (call_started - started), 0.001)}
                reply = self.model.chat(messages, purpose="step", **self.config.model_params, **timeout)
                model_s = time.perf_counter() - call_started
                usage, cost = reply.usage, reply.cost_usd
                writer.model_call(
                    step=1,
                    purpose="step",
                    model=self.model.spec,
                    params=self.config.model_params,
                    messages=messages,
                    reply=reply,
                )
                answer = parse_direct_answer(reply.text, task)
                status, source = "answered", "direct"
                writer.write("answer", value=answer, source=source)
            except ModelError as failure:
                error = str(failure)
                if isinstance(failure, ModelTimeoutError) and time_s is not None:
                    status, limit = "timeout", LimitHit("time", time_s, round(time.perf_counter() - started, 3))
                writer.model_call(
                    step=1,
                    purpose="step",
                    model=self.model.spec,
                    params=self.config.model_params,
                    messages=messages,
                    error=error,
                    latency_s=0.0,
                )
            except Exception as failure:  # recorded, never raised: the runner turns it into an error row
                error = f"{type(failure).__name__}: {failure}"
            duration = time.perf_counter() - started
            timing = {"model_s": model_s, "cell_s": 0.0, "loop_s": max(duration - model_s, 0.0)}
            writer.write(
                "end",
                reason=status,
                steps=1,
                usage=asdict(usage),
                cost_usd=cost,
                duration_s=duration,
                error=error,
                timing=timing,
                limit=limit.to_dict() if limit is not None else None,
            )
        return EpisodeResult(
            answer=answer,
            status=status,
            steps=1,
            usage=usage,
            cost_usd=cost,
            duration_s=duration,
            trajectory_dir=out_dir,
            answer_source=source,
            error=error,
            timing=timing,
            limit=limit,
        )
