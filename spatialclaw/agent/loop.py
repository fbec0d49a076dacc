"""The agent loop: a model writes one Python cell per step until a cell calls ``answer(...)``.

>>> from spatialclaw.agent.loop import Agent
>>> from spatialclaw.task import Task, FrameSpec
>>> agent = Agent("openai:gpt-4.1")                                                  # doctest: +SKIP
>>> task = Task("How far is the chair from the table, in metres?",
...             inputs=[FrameSpec.images(["a.jpg", "b.jpg"])], answer_type="number")   # doctest: +SKIP
>>> result = agent.run(task, "runs/chair")                                          # doctest: +SKIP
>>> result.answer, result.status, result.steps, result.cost_usd                     # doctest: +SKIP

Each step: build the request from the prompt and the memory (:mod:`spatialclaw.agent.context`), call the
model, extract one cell (:mod:`spatialclaw.agent.extraction`), execute it in the kernel, turn the
:class:`~spatialclaw.kernel.cell.CellResult` into an observation (text plus images), repeat. A reply without
code is a format error: it costs a step, and ``max_format_errors`` of them in a row end the episode.
The step before the last carries a warning; when the budget runs out a fallback call asks for a
direct answer, parsed from its text. :class:`~spatialclaw.agent.limits.Limits` (``AgentConfig.limits``) bound
the episode's wall-clock time, tokens and cost; the limit that ends an episode is recorded in the
``end`` event and in :attr:`~spatialclaw.agent.result.EpisodeResult.limit`. Everything is logged to the
episode directory in the format of :mod:`spatialclaw.trajectories.episode_log`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spatialclaw import __version__
from spatialclaw.agent.config import AgentConfig, sandbox_record
from spatialclaw.agent.context import PlanRecord, StepRecord, TaskRecord, build_messages, observation_parts
from spatialclaw.agent.direct_answer import parse_direct_answer
from spatialclaw.agent.extraction import extract_cell
from spatialclaw.agent.limits import LimitClock, LimitHit, LimitReached
from spatialclaw.agent.prompting import (
    answer_rules_key,
    fallback_prompt,
    prompt_version,
    render,
    system_prompt,
    task_prompt,
)
from spatialclaw.agent.result import EpisodeResult, StepEvent, episode_error, finish_episode
from spatialclaw.agent.task_inputs import checked_inputs, preview_frames
from spatialclaw.chat import Message, ModelReply, Usage
from spatialclaw.models import Model, ModelError, ModelTimeoutError, load_model
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import EPISODE_FILE, FORMAT_VERSION, TrajectoryWriter, config_hash

__all__ = ["Agent"]

log = logging.getLogger(__name__)


class _Episode:
    """The mutable state of one run (an :class:`Agent` can run several episodes, also in parallel)."""

    def __init__(self, writer: TrajectoryWriter, clock: LimitClock) -> None:
        self.writer = writer
        self.clock = clock
        self.limit: LimitHit | None = None
        self.lock = threading.Lock()
        self.usage = Usage()
        self.cost: float | None = None
        self.step = 0
        self.model_s = 0.0
        self.cell_s = 0.0
        self.kernel_setup_s = 0.0

    def write(self, event_type: str, **fields: Any) -> dict[str, Any]:
        with self.lock:
            return self.writer.write(event_type, **fields)

    def account(self, reply: ModelReply) -> None:
        with self.lock:
            self.usage = self.usage + reply.usage
            if reply.cost_usd is not None:
                self.cost = (self.cost or 0.0) + reply.cost_usd


class Agent:
    """Runs episodes with one model. ``model`` is a spec string (see :func:`spatialclaw.models.load_model`)
    or a :class:`~spatialclaw.models.Model`. A context manager; :meth:`close` releases the model when
    the agent loaded it from a spec."""

    def __init__(self, model: str | Model, config: AgentConfig | None = None) -> None:
        self._owns_model = isinstance(model, str)
        self.model = load_model(model) if isinstance(model, str) else model
        self.config = config or AgentConfig()
        self._vlm_server: Any = None
        self._vlm_lock = threading.Lock()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the side-channel server; release the model if the agent loaded it."""
        if self._vlm_server is not None:
            self._vlm_server.stop()
            self._vlm_server = None
        if self._owns_model:
            self.model.close()

    def _vlm_channel(self, episode: _Episode) -> dict[str, Any]:
        """A side channel for one episode on the agent's server (started on first use, shared by episodes)."""
        with self._vlm_lock:
            if self._vlm_server is None:
                from spatialclaw.agent.vlm_server import VLMServer

                self._vlm_server = VLMServer().start()
        channel: dict[str, Any] = self._vlm_server.open_channel(
            lambda messages, purpose: self._call(episode, messages, purpose)
        )
        return channel

    # -- one episode ---------------------------------------------------------------------------------
    def run(
        self,
        task: Task,
        out_dir: Path | str,
        kernel: Any = None,
        on_step: Callable[[StepEvent], None] | None = None,
    ) -> EpisodeResult:
        """Run ``task`` to an end and log it to ``out_dir`` (which must not hold an episode yet).

        ``kernel``: a :class:`~spatialclaw.kernel.kernel.Kernel` to use (it is ``reset`` for this task and left
        running); without one, a kernel is started and shut down. ``on_step`` is called after each step.
        Model failures that survive the retries end the episode with status ``error``; they do not raise.
        """
        started = time.perf_counter()
        clock = LimitClock(self.config.limits, time.monotonic())
        out_dir = Path(out_dir)
        if (out_dir / EPISODE_FILE).exists() and (out_dir / EPISODE_FILE).stat().st_size > 0:
            raise FileExistsError(f"{out_dir} already holds an episode; give an empty or new directory")
        config = self.config
        with TrajectoryWriter(out_dir, fsync=config.fsync) as writer:
            episode = _Episode(writer, clock)
            settings = config.to_dict()
            episode.write(
                "header",
                format_version=FORMAT_VERSION,
                package_version=__version__,
                prompt_version=prompt_version(),
                interface="code",
                model=self.model.describe(),
                config=settings,
                config_hash=config_hash({"model": self.model.spec, **settings, "prompt_version": prompt_version()}),
                sandbox=sandbox_record(config, kernel),
            )
            files, unreadable = checked_inputs(task)  # missing or not a regular file: raised below
            episode.write("task", task=task.to_dict(), files=files)
            vlm = None
            interrupted = False
            own_kernel = kernel is None
            status, answer, source, error = "error", None, None, None
            try:
                if unreadable is not None:
                    raise unreadable
                if config.vlm_side_channel:
                    vlm = self._vlm_channel(episode)
                setup_started = time.perf_counter()
                if own_kernel:
                    from spatialclaw.kernel.kernel import Kernel

                    kernel = Kernel(
                        videos=task.inputs,
                        meta=task.kernel_meta(),
                        vlm=vlm,  # no workdir: the kernel's own private one, never inside out_dir
                        **{"sandbox": config.sandbox, **config.kernel_options},
                    )
                else:
                    kernel.reset(videos=task.inputs, meta=task.kernel_meta(), vlm=vlm)
                episode.kernel_setup_s = time.perf_counter() - setup_started
                status, answer, source = self._loop(task, kernel, episode, on_step)
            except Exception as failure:  # the episode ends with a recorded reason instead of a traceback
                error = episode_error(failure, task.task_id)
            except KeyboardInterrupt:
                status, error, interrupted = "interrupted", "interrupted by the user (Ctrl-C)", True
            finally:
                if vlm is not None:
                    self._vlm_server.close_channel(vlm)
                if own_kernel and kernel is not None:
                    kernel.shutdown()
            result = finish_episode(
                episode.write,
                episode,
                status=status,
                answer=answer,
                source=source,
                error=error,
                started=started,
                kernel_setup_s=episode.kernel_setup_s,
                out_dir=out_dir,
            )
        if interrupted:  # logged as an ended episode; the caller still sees the interrupt
            raise KeyboardInterrupt
        return result

    def _loop(
        self, task: Task, kernel: Any, episode: _Episode, on_step: Callable[[StepEvent], None] | None
    ) -> tuple[str, Any, str | None]:
        config = self.config
        from spatialclaw.kernel.own_primitives import primitive_functions

        own = primitive_functions(kernel)
        system = system_prompt(config.max_steps, config.api_detail, _tool_report(kernel), answer_rules_key(task), own)
        preview, preview_text = preview_frames(task, config.preview_images, config.preview_max_side)
        memory: list[TaskRecord | PlanRecord | StepRecord] = [TaskRecord(task_prompt(task, preview_text), preview)]
        try:
            if config.plan:
                plan_messages = [
                    Message.text("system", system),
                    Message.text("user", task_prompt(task, "") + "\n" + render("plan.md")),
                ]
                plan = self._call(episode, plan_messages, "plan")
                memory.append(PlanRecord(extract_cell(plan.text).visible or plan.text))
                _notify(on_step, StepEvent(step=0, kind="plan", reply=plan.text))
            format_errors = 0
            for step in range(1, config.max_steps + 1):
                _check_limits(episode)  # a step that cannot start is not counted
                episode.step = step
                note = render("last_step.md") if step == config.max_steps else None
                messages = build_messages(system, memory, final_note=note, **config.request_limits())
                reply = self._call(episode, messages, "step")
                extraction = extract_cell(reply.text)
                if not extraction.found:
                    message = render("format_error.md", step=step, max_steps=config.max_steps).rstrip("\n")
                    if reply.finish_reason in ("length", "max_tokens"):
                        message += "\n" + render("truncated.md").rstrip("\n")
                    episode.write("format_error", step=step, response=reply.text, message=message)
                    memory.append(StepRecord(step, extraction.visible, None, None, message))
                    _notify(on_step, StepEvent(step=step, kind="format_error", reply=reply.text, message=message))
                    format_errors += 1
                    if format_errors >= config.max_format_errors:
                        return "format_errors", None, None
                    continue
                format_errors = 0
                code = extraction.code or ""
                _check_limits(episode, spending=False)  # the reply is paid for; its cell runs if there is time
                cell_started = time.perf_counter()
                result = kernel.execute(code, timeout=episode.clock.cap(config.cell_timeout_s))
                episode.cell_s += time.perf_counter() - cell_started
                with episode.lock:
                    stored = episode.writer.cell_result(result)
                episode.write("cell", step=step, code=code, result=stored)
                notes = []
                if extraction.ignored_blocks:
                    notes.append(
                        f"your reply had {extraction.ignored_blocks + 1} code blocks; only the first ran. Write one block per step."
                    )
                if extraction.truncated:
                    notes.append("your reply ended inside the code block (it was cut off); the code up to there ran.")
                text, images = observation_parts(
                    step, config.max_steps, result, config.observation_chars, config.max_image_side, notes
                )
                memory.append(StepRecord(step, extraction.visible, code, result, text, images))
                paths = [episode.writer.directory / "images" / f"{i.sha256}.png" for i in result.images]
                _notify(
                    on_step,
                    StepEvent(
                        step=step,
                        kind="cell",
                        reply=reply.text,
                        code=code,
                        result=result,
                        message=text,
                        image_paths=paths,
                    ),
                )
                if result.answered:
                    return "answered", result.answer, "cell"
                _check_limits(episode, spending=False)
            hit = LimitHit("steps", config.max_steps, config.max_steps)
        except LimitReached as reached:
            hit = reached.hit
            log.info("episode %s: %s", task.task_id, hit.describe())
        episode.limit = hit
        status = "timeout" if hit.kind == "time" else "budget"
        grace = config.limits.fallback_grace_s
        if not config.fallback or hit.kind in ("tokens", "cost") or (hit.kind == "time" and grace <= 0):
            return status, None, None
        if hit.kind == "steps":
            spent = f"You have used all {config.max_steps} steps"
        else:
            spent = f"The time limit of {hit.value:g} s for this question is reached after {episode.step} step(s)"
        question = fallback_prompt(task, spent)
        messages = build_messages(system, memory, final_note=question, **config.request_limits())
        try:
            reply = self._call(episode, messages, "fallback", grace_s=grace if hit.kind == "time" else None)
        except (LimitReached, ModelTimeoutError) as cut:  # the time left, or the grace, ran out during the fallback
            _notify(
                on_step, StepEvent(step=episode.step, kind="fallback", reply="", message=f"no direct answer: {cut}")
            )
            return status, None, None
        answer = parse_direct_answer(extract_cell(reply.text).visible or reply.text, task)
        _notify(
            on_step,
            StepEvent(
                step=episode.step,
                kind="fallback",
                reply=reply.text,
                message=f"{hit.describe()}; parsed answer: {answer!r}",
            ),
        )
        return status, answer, "fallback"

    def _call(
        self, episode: _Episode, messages: list[Message], purpose: str, grace_s: float | None = None
    ) -> ModelReply:
        """One logged model call (also used by the ``vlm`` side channel, from its server thread).

        The episode's limits are checked first (:class:`LimitReached` when one is spent) and the call gets
        the time left as its timeout; a call cut by that timeout raises :class:`LimitReached` too. With
        ``grace_s`` (a fallback after the time limit) the limits are not checked and the call gets
        ``grace_s`` seconds."""
        clock, params = episode.clock, dict(self.config.model_params)
        if grace_s is None:
            _check_limits(episode)
        timeout = clock.cap(None) if grace_s is None else grace_s
        # tokens and dollars held until the call settles, so calls made at once cannot all pass one check
        reservation, params = clock.reserve_call(self.model, purpose, messages, params, check=grace_s is None)
        if timeout is not None:  # a timeout_s in model_params still applies when it is shorter
            params["timeout_s"] = min(timeout, params.get("timeout_s") or timeout)
        logged: dict[str, Any] = {  # the model_call event's fields
            "step": episode.step,
            "purpose": purpose,
            "model": self.model.spec,
            "params": params,
            "messages": messages,
        }
        started, reply = time.perf_counter(), None
        try:
            reply = self.model.chat(messages, purpose=purpose, **params)
        except ModelError as failure:
            episode.model_s += time.perf_counter() - started
            episode.writer.model_call(**logged, error=str(failure), latency_s=time.perf_counter() - started)
            if isinstance(failure, ModelTimeoutError) and grace_s is None and clock.limits.time_s is not None:
                # The call was bounded by the time left: the time limit ends the episode.
                raise LimitReached(
                    LimitHit("time", float(clock.limits.time_s), round(clock.elapsed_s(), 3))
                ) from failure
            raise
        finally:  # release what the call held; count what it spent
            clock.settle(reservation, reply)
        episode.model_s += time.perf_counter() - started
        episode.account(reply)
        episode.writer.model_call(**logged, reply=reply)
        if clock.limits.cost_usd is not None and reply.cost_usd is None:
            raise ValueError(
                f"a cost limit of {clock.limits.cost_usd:g} USD is set but {self.model.spec} has no known price, so "
                "the cost cannot be counted; give the model a price (load_model(spec, prices=...) or "
                "$SPATIALCLAW_PRICES, see spatialclaw.models.pricing) or drop the cost limit"
            )
        return reply


def _tool_report(kernel: Any) -> dict[str, Any] | None:
    """Which learned tools can run where the cells run: the kernel's report, or (a notebook's own shell,
    which runs in this process) the report made when its namespace was built."""
    if hasattr(kernel, "tool_status"):
        report: dict[str, Any] | None = kernel.tool_status()
        return report
    from spatialclaw.primitives.perception.availability import last_report

    return last_report()


def _check_limits(episode: _Episode, spending: bool = True) -> None:
    """Raise :class:`LimitReached` when the episode's time (or, with ``spending``, its tokens or cost) is spent."""
    hit = episode.clock.time_hit()
    if hit is None and spending:
        with episode.lock:
            hit = episode.clock.spend_hit(episode.usage, episode.cost)
    if hit is not None:
        raise LimitReached(hit)


def _notify(on_step: Callable[[StepEvent], None] | None, event: StepEvent) -> None:
    if on_step is not None:
        on_step(event)
