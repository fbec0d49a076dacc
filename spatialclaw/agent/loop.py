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
``end`` event and in :attr:`EpisodeResult.limit`. Everything is logged to the episode directory in the
format of :mod:`spatialclaw.trajectories.episode_log`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from spatialclaw import __version__
from spatialclaw.kernel.cell import CellResult
from spatialclaw.chat import ImagePart, Message, ModelReply, Usage
from spatialclaw.agent.context import PlanRecord, StepRecord, TaskRecord, build_messages, observation_parts
from spatialclaw.agent.extraction import extract_cell
from spatialclaw.agent.limits import LimitClock, LimitHit, LimitReached, Limits
from spatialclaw.models import Model, ModelError, ModelTimeoutError, load_model
from spatialclaw.agent.prompting import fallback_prompt, prompt_version, render, system_prompt, task_prompt
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import EPISODE_FILE, FORMAT_VERSION, TrajectoryWriter, config_hash

__all__ = ["Agent", "AgentConfig", "EpisodeResult", "Limits", "StepEvent", "parse_direct_answer", "preview_frames"]

log = logging.getLogger(__name__)


@dataclass
class AgentConfig:
    """How an episode runs. Times in seconds, image sizes in pixels.

    ``max_images_per_request`` and ``max_image_mb_per_request`` (PNG megabytes, before base64) default
    to a budget that OpenAI, Anthropic and common vLLM settings accept; ``max_image_side`` bounds each
    observation image (larger ones are downscaled for the model;
    the trajectory keeps the originals in its ``cell`` events). ``preview_images`` frames, evenly spread,
    go with the question (downscaled to ``preview_max_side``). ``model_params`` go to every model call
    (``max_tokens``, ``temperature``, ``reasoning_effort``, ``thinking_budget``, ``extra_body``...).
    ``kernel_options`` go to :class:`~spatialclaw.kernel.kernel.Kernel` when the agent starts its own kernel
    (``memory_limit_mb``, ``startup_timeout_s``, ...). ``fsync`` makes every trajectory event durable
    on disk before the loop goes on. ``limits`` (a :class:`~spatialclaw.agent.limits.Limits`, or a dict of its
    fields) bound the episode's wall-clock time, tokens and cost; ``max_steps`` is the step budget.
    ``api_detail`` is ``"core"`` (the default: every name of the kernel with its signature and one line,
    under 12,000 characters; the kernel's ``manual(name)`` gives the rest), ``"brief"`` (signatures and
    one-paragraph summaries) or ``"full"`` (whole docstrings, about 47,000 characters).
    ``sandbox`` is the kernel sandbox mode (``"auto"``, ``"required"``, ``"off"``; see docs/security.md) of a
    kernel the agent starts; the trajectory header records it and whether the sandbox was active.
    """

    max_steps: int = 30
    max_format_errors: int = 3
    cell_timeout_s: float = 120.0
    max_images_per_request: int = 20
    max_image_mb_per_request: float = 20.0
    max_image_side: int = 1568
    preview_images: int = 8
    preview_max_side: int = 768
    observation_chars: int = 8000
    condense_errors: bool = True
    plan: bool = False
    fallback: bool = True
    vlm_side_channel: bool = True
    model_params: dict[str, Any] = field(default_factory=dict)
    kernel_options: dict[str, Any] = field(default_factory=dict)
    fsync: bool = True
    limits: Limits = field(default_factory=Limits)
    api_detail: str = "core"
    sandbox: str = "auto"

    def __post_init__(self) -> None:
        self.limits = Limits.coerce(self.limits)
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")
        if self.api_detail not in ("core", "brief", "full"):
            raise ValueError(f"api_detail must be 'core', 'brief' or 'full', got {self.api_detail!r}")
        from spatialclaw.kernel.sandbox import check_mode

        check_mode(self.sandbox)
        if self.max_format_errors < 1:
            raise ValueError(f"max_format_errors must be at least 1, got {self.max_format_errors}")
        if self.max_images_per_request < 0 or self.max_image_mb_per_request <= 0:
            raise ValueError(
                f"max_images_per_request must be >= 0 and max_image_mb_per_request > 0, got "
                f"{self.max_images_per_request} and {self.max_image_mb_per_request}"
            )

    def request_limits(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~spatialclaw.agent.context.build_messages` that this config sets."""
        return {
            "max_images": self.max_images_per_request,
            "max_image_bytes": int(self.max_image_mb_per_request * 1e6),
            "condense_errors": self.condense_errors,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EpisodeResult:
    """How an episode ended. ``status``: ``answered`` (a cell called ``answer``), ``budget`` (the steps,
    the token limit or the cost limit ran out; after the steps, ``answer`` is parsed from the fallback
    reply, possibly None), ``timeout`` (the time limit ran out; ``answer`` is None unless
    ``Limits.fallback_grace_s`` allowed a fallback), ``format_errors`` (too many replies without code in a
    row) or ``error`` (``error`` says what failed). ``limit`` names the limit that ended the episode
    (``budget`` and ``timeout`` only). ``steps`` counts model
    steps including format errors. ``cost_usd`` is None when no call had a known price. ``timing``
    splits ``duration_s`` (seconds) into ``model_s`` (inside ``Model.chat``), ``cell_s`` (inside
    ``Kernel.execute``), ``kernel_setup_s`` (starting or resetting the kernel) and ``loop_s`` (the rest:
    the agent's own overhead)."""

    answer: Any
    status: str
    steps: int
    usage: Usage
    cost_usd: float | None
    duration_s: float
    trajectory_dir: Path
    answer_source: str | None = None
    error: str | None = None
    timing: dict[str, float] = field(default_factory=dict)
    limit: LimitHit | None = None


@dataclass
class StepEvent:
    """What ``on_step`` receives after each step: ``kind`` is ``plan``, ``cell``, ``format_error`` or
    ``fallback``; ``image_paths`` are the observation's images as stored in the trajectory."""

    step: int
    kind: str
    reply: str
    code: str | None = None
    result: CellResult | None = None
    message: str | None = None
    image_paths: list[Path] = field(default_factory=list)


def parse_direct_answer(text: str, task: Task) -> Any:
    """The answer in a fallback reply (``ANSWER: ...`` or free text), normalised for ``task.answer_type``:
    an option letter, a float, ``"yes"``/``"no"``, or the text; None when nothing fits."""
    from spatialclaw.benchmarks.scoring import extract_choice, extract_number

    match = re.findall(r"ANSWER\s*[:=]\s*(.+)", text, flags=re.IGNORECASE)
    value = match[-1].strip().strip("`*").strip() if match else text.strip()
    if task.answer_type == "multiple_choice" and task.choices:
        return extract_choice(value, task.choices) or extract_choice(text, task.choices)
    if task.answer_type == "number":
        number = extract_number(value)
        return number if number is not None else extract_number(text)
    if task.answer_type == "yes_no":
        words = re.findall(r"[a-z]+", value.lower())
        return next((w for w in words if w in ("yes", "no")), None)
    return value or None


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
        return self._vlm_server.open_channel(lambda messages, purpose: self._call(episode, messages, purpose))

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
            try:
                files, unreadable = _file_hashes(task), None
            except FileNotFoundError as failure:  # logged, then ends the episode with status "error"
                files, unreadable = {}, failure
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
                workdir = out_dir / "workdir"
                setup_started = time.perf_counter()
                if own_kernel:
                    from spatialclaw.kernel.kernel import Kernel

                    kernel = Kernel(videos=task.inputs, meta=task.kernel_meta(), workdir=workdir, vlm=vlm,
                                    **{"sandbox": config.sandbox, **config.kernel_options})
                else:
                    kernel.reset(videos=task.inputs, meta=task.kernel_meta(), workdir=workdir, vlm=vlm)
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
            if source is not None:
                episode.write("answer", value=answer, source=source)
            duration = time.perf_counter() - started
            kernel_s = episode.cell_s + episode.kernel_setup_s
            timing = {
                "model_s": episode.model_s,
                "cell_s": episode.cell_s,
                "kernel_setup_s": episode.kernel_setup_s,
                "loop_s": max(duration - episode.model_s - kernel_s, 0.0),
            }
            episode.write(
                "end",
                reason=status,
                steps=episode.step,
                usage=asdict(episode.usage),
                cost_usd=episode.cost,
                duration_s=duration,
                error=error,
                timing=timing,
                limit=episode.limit.to_dict() if episode.limit is not None else None,
            )
        if interrupted:  # logged as an ended episode; the caller still sees the interrupt
            raise KeyboardInterrupt
        return EpisodeResult(
            answer=answer,
            status=status,
            steps=episode.step,
            usage=episode.usage,
            cost_usd=episode.cost,
            duration_s=duration,
            trajectory_dir=out_dir,
            answer_source=source,
            error=error,
            timing=timing,
            limit=episode.limit,
        )

    def _loop(self, task: Task, kernel: Any, episode: _Episode, on_step: Callable[[StepEvent], None] | None) -> tuple[str, Any, str | None]:
        config = self.config
        system = system_prompt(config.max_steps, config.api_detail, _tool_report(kernel))
        preview, preview_text = preview_frames(task, config.preview_images, config.preview_max_side)
        memory: list[TaskRecord | PlanRecord | StepRecord] = [TaskRecord(task_prompt(task, preview_text), preview)]
        try:
            if config.plan:
                plan_messages = [Message.text("system", system), Message.text("user", task_prompt(task, "") + "\n" + render("plan.md"))]
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
                    notes.append(f"your reply had {extraction.ignored_blocks + 1} code blocks; only the first ran. Write one block per step.")
                if extraction.truncated:
                    notes.append("your reply ended inside the code block (it was cut off); the code up to there ran.")
                text, images = observation_parts(step, config.max_steps, result, config.observation_chars, config.max_image_side, notes)
                memory.append(StepRecord(step, extraction.visible, code, result, text, images))
                paths = [episode.writer.directory / "images" / f"{i.sha256}.png" for i in result.images]
                _notify(on_step, StepEvent(step=step, kind="cell", reply=reply.text, code=code, result=result, message=text, image_paths=paths))
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
            _notify(on_step, StepEvent(step=episode.step, kind="fallback", reply="", message=f"no direct answer: {cut}"))
            return status, None, None
        answer = parse_direct_answer(extract_cell(reply.text).visible or reply.text, task)
        _notify(on_step, StepEvent(step=episode.step, kind="fallback", reply=reply.text,
                                   message=f"{hit.describe()}; parsed answer: {answer!r}"))
        return status, answer, "fallback"

    def _call(self, episode: _Episode, messages: list[Message], purpose: str, grace_s: float | None = None) -> ModelReply:
        """One logged model call (also used by the ``vlm`` side channel, from its server thread).

        The episode's limits are checked first (:class:`LimitReached` when one is spent) and the call gets
        the time left as its timeout; a call cut by that timeout raises :class:`LimitReached` too. With
        ``grace_s`` (a fallback after the time limit) the limits are not checked and the call gets
        ``grace_s`` seconds."""
        clock = episode.clock
        if grace_s is None:
            _check_limits(episode)
            timeout = clock.cap(None)
        else:
            timeout = grace_s
        params = dict(self.config.model_params)
        if timeout is not None:  # a timeout_s in model_params still applies when it is shorter
            params["timeout_s"] = min(timeout, params.get("timeout_s") or timeout)
        logged = {"step": episode.step, "purpose": purpose, "model": self.model.spec, "params": params, "messages": messages}
        started = time.perf_counter()
        try:
            reply = self.model.chat(messages, purpose=purpose, **params)
        except ModelError as failure:
            episode.model_s += time.perf_counter() - started
            episode.writer.model_call(**logged, error=str(failure), latency_s=time.perf_counter() - started)
            if isinstance(failure, ModelTimeoutError) and grace_s is None and clock.limits.time_s is not None:
                # The call was bounded by the time left: the time limit ends the episode.
                raise LimitReached(LimitHit("time", clock.limits.time_s, round(clock.elapsed_s(), 3))) from failure
            raise
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
        return kernel.tool_status()
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


def episode_error(failure: Exception, task_id: str) -> str:
    """The recorded reason of an episode that ``failure`` ended, logged: a model error as its one-line
    message, anything else with its traceback (call it inside the ``except`` block)."""
    if isinstance(failure, ModelError):
        log.error("episode %s ended by a model error: %s", task_id, failure)
        return str(failure)
    log.exception("episode %s failed", task_id)
    return f"{type(failure).__name__}: {failure}"


def sandbox_record(config: AgentConfig, kernel: Any) -> dict[str, Any]:
    """The header's ``sandbox``: the given kernel's own record (mode, active, limits), else what a kernel
    started in ``config.sandbox`` mode gets on this host."""
    record = getattr(kernel, "sandbox", None)
    if isinstance(record, dict):
        return record
    from spatialclaw.kernel.sandbox import describe

    return describe(config.kernel_options.get("sandbox", config.sandbox))


def _file_hashes(task: Task) -> dict[str, str]:
    """sha256 of every input file (so a trajectory names exactly the data it saw)."""
    hashes: dict[str, str] = {}
    for spec in task.inputs:
        for path in spec.paths:
            try:
                stat = os.stat(path)
            except OSError as error:
                raise FileNotFoundError(f"input file {path} of task {task.task_id!r} cannot be read ({error})") from None
            hashes[path] = _sha256_file(path, stat.st_size, stat.st_mtime_ns)
    return hashes


@functools.lru_cache(maxsize=4096)
def _sha256_file(path: str, size: int, mtime_ns: int) -> str:
    """Hash of a file, remembered per (path, size, modification time): benchmarks reuse videos."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def preview_frames(task: Task, count: int, max_side: int) -> tuple[list[ImagePart], str]:
    """Up to ``count`` frames in all, shared among the inputs and evenly spread within each, with lines
    saying which they are (absolute frame indices, as the kernel's ``frames``/``videos`` hold them)."""
    if count <= 0 or not task.inputs:
        return [], ""
    from spatialclaw.primitives.frames.frame import load_frames

    several = len(task.inputs) > 1
    per_input = max(1, count // len(task.inputs))
    images: list[ImagePart] = []
    lines: list[str] = []
    for number, spec in enumerate(task.inputs):
        name = f"`videos[{number}]`" if several else "`frames`"
        frames = load_frames(spec.to_dict())
        total = len(frames)
        if total == 0:
            lines.append(f"{name} holds no frames.")
            continue
        shown_count = min(per_input, total)
        positions = sorted({round(i * (total - 1) / max(shown_count - 1, 1)) for i in range(shown_count)})
        downscaled = False
        for position in positions:
            frame = frames[position]
            image = frame.image
            if max(image.size) > max_side:
                scale = max_side / max(image.size)
                image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
                downscaled = True
            label = f"input {number + 1} frame {frame.index}" if several else f"frame {frame.index}"
            images.append(ImagePart.from_pil(image, label=label))
        shown = ", ".join(str(frames[p].index) for p in positions)
        lines.append(
            f"{name} holds {total} frame(s) (absolute indices {frames[0].index} to {frames[total - 1].index}); "
            f"attached below: frame(s) {shown}{', downscaled' if downscaled else ''}."
        )
    return images, "\n".join(lines)
