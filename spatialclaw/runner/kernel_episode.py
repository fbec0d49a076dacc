"""What the ``single-pass`` and ``tool-calls`` interfaces share: one logged episode with a kernel.

:class:`KernelInterface` writes the trajectory (``header`` with ``interface``, ``task``, each
``model_call`` and ``cell``, ``answer``, ``end``), sets up the kernel (a given one is ``reset`` for the
task and left running; otherwise one is started and shut down), bounds model calls and cells by the
episode's time limit (:class:`~spatialclaw.agent.limits.Limits`), and turns failures into an ended episode
with a reason, as :class:`~spatialclaw.agent.loop.Agent` does. A subclass implements :meth:`KernelInterface.play`.
These interfaces run without the ``vlm`` side channel: a cell that calls ``vlm`` gets its error.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from spatialclaw import __version__
from spatialclaw.agent.config import AgentConfig, sandbox_record
from spatialclaw.agent.limits import LimitClock, LimitHit, LimitReached
from spatialclaw.agent.result import EpisodeResult, episode_error, finish_episode
from spatialclaw.agent.task_inputs import checked_inputs
from spatialclaw.chat import Message, ModelReply, Usage
from spatialclaw.kernel.cell import CellResult
from spatialclaw.models import Model, ModelError, ModelTimeoutError
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import EPISODE_FILE, FORMAT_VERSION, TrajectoryWriter, config_hash

__all__ = ["EpisodeContext", "KernelInterface"]


class EpisodeContext:
    """The running episode handed to :meth:`KernelInterface.play`: ``call`` a model, ``execute`` a cell."""

    def __init__(
        self, model: Model, config: AgentConfig, task: Task, kernel: Any, writer: TrajectoryWriter, clock: LimitClock
    ) -> None:
        self.model = model
        self.config = config
        self.task = task
        self.kernel = kernel
        self.writer = writer
        self.clock = clock
        self.usage = Usage()
        self.cost: float | None = None
        self.step = 0
        self.model_s = 0.0
        self.cell_s = 0.0
        self.limit: LimitHit | None = None

    def _check_time(self) -> None:
        hit = self.clock.time_hit()
        if hit is None:
            hit = self.clock.spend_hit(self.usage, self.cost)
        if hit is not None:
            raise LimitReached(hit)

    def call(self, messages: list[Message], purpose: str = "step", **extra: Any) -> ModelReply:
        """One logged model call bounded by the time left (``extra``: e.g. ``tools``); raises
        :class:`LimitReached` when a limit is spent, :class:`ModelError` when the call fails."""
        self._check_time()
        params = dict(self.config.model_params)
        timeout = self.clock.cap(None)
        if timeout is not None:
            params["timeout_s"] = min(timeout, params.get("timeout_s") or timeout)
        logged: dict[str, Any] = {  # the model_call event's fields
            "step": self.step,
            "purpose": purpose,
            "model": self.model.spec,
            "params": params,
            "messages": messages,
        }
        started = time.perf_counter()
        try:
            reply = self.model.chat(messages, purpose=purpose, **params, **extra)
        except ModelError as failure:
            self.model_s += time.perf_counter() - started
            self.writer.model_call(**logged, error=str(failure), latency_s=time.perf_counter() - started)
            if isinstance(failure, ModelTimeoutError) and self.clock.limits.time_s is not None:
                raise LimitReached(
                    LimitHit("time", self.clock.limits.time_s, round(self.clock.elapsed_s(), 3))
                ) from failure
            raise
        self.model_s += time.perf_counter() - started
        self.usage = self.usage + reply.usage
        if reply.cost_usd is not None:
            self.cost = (self.cost or 0.0) + reply.cost_usd
        self.writer.model_call(**logged, reply=reply)
        return reply

    def execute(self, code: str, **fields: Any) -> CellResult:
        """Run ``code`` in the kernel (bounded by ``cell_timeout_s`` and the time left) and log the
        ``cell`` event (``fields`` are added to it, e.g. the tool call it came from)."""
        self._check_time()
        started = time.perf_counter()
        result: CellResult = self.kernel.execute(code, timeout=self.clock.cap(self.config.cell_timeout_s))
        self.cell_s += time.perf_counter() - started
        self.writer.write("cell", step=self.step, code=code, result=self.writer.cell_result(result), **fields)
        return result


class KernelInterface(ABC):
    """An interface whose episodes run cells in a kernel; ``run`` mirrors :meth:`spatialclaw.agent.loop.Agent.run`."""

    #: The interface's name, recorded in every trajectory header.
    interface: str = ""
    #: The version of the interface's own prompt text.
    prompt_version: str = ""

    def __init__(self, model: Model, config: AgentConfig | None = None) -> None:
        self.model = model
        self.config = config or AgentConfig()

    @abstractmethod
    def play(self, episode: EpisodeContext) -> tuple[str, Any, str | None]:
        """Play the episode; returns ``(status, answer, answer_source)`` (status as in
        :class:`~spatialclaw.agent.result.EpisodeResult`). May raise :class:`LimitReached` or :class:`ModelError`."""

    def run(self, task: Task, out_dir: str | Path, kernel: Any = None) -> EpisodeResult:
        started = time.perf_counter()
        out_dir = Path(out_dir)
        if (out_dir / EPISODE_FILE).exists() and (out_dir / EPISODE_FILE).stat().st_size > 0:
            raise FileExistsError(f"{out_dir} already holds an episode; give an empty or new directory")
        config = self.config
        settings = {**config.to_dict(), "interface": self.interface}
        status, answer, source, error, setup_s = "error", None, None, None, 0.0
        own_kernel = kernel is None
        with TrajectoryWriter(out_dir, fsync=config.fsync) as writer:
            writer.write(
                "header",
                format_version=FORMAT_VERSION,
                package_version=__version__,
                prompt_version=self.prompt_version,
                interface=self.interface,
                model=self.model.describe(),
                sandbox=sandbox_record(config, kernel),
                config=settings,
                config_hash=config_hash({"model": self.model.spec, **settings, "prompt_version": self.prompt_version}),
            )
            files, unreadable = checked_inputs(task)  # before the kernel or a preview reads one
            writer.write("task", task=task.to_dict(), files=files)
            episode = EpisodeContext(
                self.model, config, task, kernel, writer, LimitClock(config.limits, time.monotonic())
            )
            try:
                if unreadable is not None:
                    raise unreadable
                setup_started = time.perf_counter()
                # the kernel works in its own private directory, never inside ``out_dir``: nothing a cell
                # writes can appear in the episode's tree (see docs/security.md)
                if own_kernel:
                    from spatialclaw.kernel.kernel import Kernel

                    kernel = Kernel(
                        videos=task.inputs,
                        meta=task.kernel_meta(),
                        **{"sandbox": config.sandbox, **config.kernel_options},
                    )
                else:
                    kernel.reset(videos=task.inputs, meta=task.kernel_meta())
                episode.kernel = kernel
                setup_s = time.perf_counter() - setup_started
                status, answer, source = self.play(episode)
            except LimitReached as reached:
                episode.limit = reached.hit
                status = "timeout" if reached.hit.kind == "time" else "budget"
            except Exception as failure:  # the episode ends with a recorded reason instead of a traceback
                error = episode_error(failure, task.task_id)
            finally:
                if own_kernel and kernel is not None:
                    kernel.shutdown()
            return finish_episode(
                writer.write,
                episode,
                status=status,
                answer=answer,
                source=source,
                error=error,
                started=started,
                kernel_setup_s=setup_s,
                out_dir=out_dir,
            )
