"""An RL environment over the spatialclaw kernel: the policy writes cells, the environment runs them.

::

    env = SpatialEnv(max_steps=8)
    obs = env.reset(task)                      # starts (or resets) the kernel with the task's frames
    while True:
        cell = policy(obs)                     # Python code, one cell
        obs, done, reward, info = env.step(cell)
        if done:
            break                              # reward = the benchmark score of the answer in [0, 1]
    env.close()

Observations are the agent's own (:mod:`spatialclaw.agent.prompting`, :func:`spatialclaw.agent.context.observation_parts`),
and ``env.system_prompt`` is its system prompt, so a policy trained here sees what the agent shows a
model, and exports of agent episodes are in-distribution. The reward is 0 on every step but the last; when the cell calls ``answer(...)`` it is the benchmark
score of that answer (:func:`spatialclaw.benchmarks.scoring.score_answer` with the task's answer type,
choices and ``meta["metric"]``/``meta["unit"]``: option-letter accuracy for multiple choice, mean
relative accuracy for numbers). Running out of ``max_steps`` ends the episode with reward 0 and
``info["truncated"] = True``. With ``record_dir`` every episode is also logged in the native trajectory
format (cells, answer, score, end), so rollouts can be replayed and viewed; pass the policy's full reply
as ``step(cell, output=reply)`` and the log also holds a ``model_call`` per step whose request is the
conversation so far (system prompt, task, earlier replies and observations), so rewarded rollouts export
as fine-tuning data like agent episodes.

For TRL's ``GRPOTrainer`` (``environment_factory``, TRL >= 1.x), :class:`TRLSpatialEnvironment` wraps
one ``SpatialEnv`` per rollout: ``reset(task_json=...)`` starts the task from the dataset row
(:func:`grpo_dataset` builds the rows), the model calls its one tool ``run_cell(code)``, and
``get_reward()`` is the host-side score of the answer. The ground truth never enters the kernel
(:meth:`Task.kernel_meta` leaves it out), so a cell can only choose its answer, not its reward.
"""

from __future__ import annotations

import io
import json
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.kernel.cell import CellResult
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import EPISODE_FILE, TrajectoryWriter, config_hash

__all__ = ["EXTERNAL_POLICY", "Observation", "SpatialEnv", "TRLSpatialEnvironment", "grpo_dataset"]

EXTERNAL_POLICY = "external-policy"
"""The model name logged for rollouts: the policy lives outside the environment."""


@dataclass
class Observation:
    """What the policy sees, rendered exactly as the agent renders it for a model: ``text`` (the task
    prompt at reset, the step's observation after a cell), ``images`` (PNG bytes, in order: the frame
    previews at reset, the cell's images, downscaled like the agent's), the number of cells run so far
    (``step``) and the raw ``result`` of the cell."""

    text: str
    images: list[bytes] = field(default_factory=list)
    step: int = 0
    result: CellResult | None = None

    def to_message(self) -> Message:
        """The observation as a user message for a chat model."""
        return Message(role="user", content=[TextPart(self.text)] + [ImagePart(png) for png in self.images])


def _coerce_task(task: Task | dict[str, Any] | str) -> Task:
    if isinstance(task, Task):
        return task
    if isinstance(task, str):
        task = json.loads(task)
    if isinstance(task, dict):
        return Task.from_dict(task)
    raise TypeError(f"reset() takes a Task, its dict or its JSON (verl's task_json), not {type(task).__name__}")


class SpatialEnv:
    """``reset(task) -> Observation``; ``step(cell) -> (Observation, done, reward, info)``.

    ``max_steps`` bounds cells per episode; ``cell_timeout_s`` bounds each cell (seconds);
    ``observation_chars`` is the text budget of an observation (:meth:`CellResult.to_text`);
    ``max_image_side``, ``preview_images`` and ``preview_max_side`` (pixels) size the images as
    :class:`spatialclaw.agent.config.AgentConfig` does;
    ``record_dir``: log each episode under a new ``record_dir/<task_id>-<n>``; ``kernel_kwargs`` go to
    :class:`spatialclaw.Kernel` (e.g. ``memory_limit_mb``, ``sandbox``). Every episode gets a fresh kernel
    process, started ahead as a spare (``spares``), so that nothing a policy's cell changes in one episode
    (patched modules, files in ``/tmp``) reaches the next.
    """

    def __init__(
        self,
        max_steps: int = 16,
        cell_timeout_s: float = 120.0,
        observation_chars: int = 8000,
        max_image_side: int = 1568,
        preview_images: int = 8,
        preview_max_side: int = 768,
        record_dir: str | Path | None = None,
        spares: int = 1,
        **kernel_kwargs: Any,
    ) -> None:
        self.max_steps = max_steps
        self.cell_timeout_s = cell_timeout_s
        self.observation_chars = observation_chars
        self.max_image_side = max_image_side
        self.preview_images = preview_images
        self.preview_max_side = preview_max_side
        self.record_dir = Path(record_dir) if record_dir is not None else None
        self._kernel_kwargs = kernel_kwargs
        self._spares = spares
        self._pool: Any = None
        self._kernel: Any = None
        self._task: Task | None = None
        self._steps = 0
        self._done = True
        self._episodes = 0
        self._log: TrajectoryWriter | None = None
        self._history: list[Message] = []
        self._started = 0.0

    def __enter__(self) -> SpatialEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def system_prompt(self) -> str:
        """The agent's system prompt for this step budget (the manual of the kernel namespace)."""
        from spatialclaw.agent.prompting import system_prompt

        return system_prompt(self.max_steps)

    @property
    def episode_dir(self) -> Path | None:
        """Where the current episode is being recorded (``None`` without ``record_dir``)."""
        return self._log.directory if self._log is not None else None

    def reset(self, task: Task | dict[str, Any] | str) -> Observation:
        """Start an episode of ``task`` (a :class:`Task`, its dict, or its JSON). The task must have a
        ground truth, since the reward is its score."""
        from spatialclaw.kernel.pool import KernelPool

        task = _coerce_task(task)
        if task.ground_truth is None:
            raise ValueError(
                f"task {task.task_id!r} has no ground truth; the environment needs it to compute the reward"
            )
        self._finish_log("interrupted")
        if self._pool is None:
            self._pool = KernelPool(size=1, fresh=True, spares=self._spares, **self._kernel_kwargs)
        if self._kernel is not None:
            self._pool.release(self._kernel)
            self._kernel = None
        self._kernel = self._pool.acquire(videos=task.inputs, meta=task.kernel_meta())
        self._task, self._steps, self._done = task, 0, False
        self._episodes += 1
        self._started = time.time()
        from spatialclaw.agent.prompting import prompt_version, task_prompt
        from spatialclaw.agent.task_inputs import preview_frames

        preview, preview_text = preview_frames(task, self.preview_images, self.preview_max_side)
        observation = Observation(text=task_prompt(task, preview_text), images=[p.png for p in preview], step=0)
        self._history = [
            Message.text("system", self.system_prompt),
            Message("user", [TextPart(observation.text), *preview]),
        ]
        if self.record_dir is not None:
            config = {"env": "SpatialEnv", "max_steps": self.max_steps, "cell_timeout_s": self.cell_timeout_s}
            self._log = TrajectoryWriter(self._new_episode_dir(task.task_id))
            self._log.write(
                "header",
                format_version=1,
                package_version=_version(),
                prompt_version=prompt_version(),
                model=EXTERNAL_POLICY,
                config=config,
                config_hash=config_hash(config),
            )
            self._log.write("task", task=task.to_dict(), files={})
        return observation

    def step(self, cell: str, output: str | None = None) -> tuple[Observation, bool, float, dict[str, Any]]:
        """Run one cell. ``output`` is the policy's whole reply the cell came from (logged as the step's
        model call when recording). Returns the observation, whether the episode is over, the reward and
        an info dict (``status``, ``step``; at the end ``answer``, ``score``, ``score_details``, ``truncated``)."""
        if self._done or self._task is None:
            raise RuntimeError("the episode is over (or was never started): call reset(task) first")
        step = self._steps + 1  # 1-based, as the agent numbers steps
        if self._log is not None and output is not None:
            self._log.write(
                "model_call",
                step=step,
                purpose="step",
                model=EXTERNAL_POLICY,
                params={},
                request={"messages": self._log.messages(self._history)},
                response={"text": output, "reasoning": None, "finish_reason": None, "raw": None},
                usage={},
                cost_usd=None,
                latency_s=None,
                error=None,
            )
        result: CellResult = self._kernel.execute(cell, timeout=self.cell_timeout_s)
        self._steps = step
        if self._log is not None:
            self._log.write("cell", step=step, code=cell, result=self._log.cell_result(result))
        info: dict[str, Any] = {"status": result.status, "step": step}
        reward = 0.0
        if result.answered:
            score = self._score(result.answer)
            reward = score.value
            info.update(answer=result.answer, score=score.value, score_details=score.to_dict(), truncated=False)
            if self._log is not None:
                self._log.write("answer", value=result.answer, source="cell")
                self._log.write(
                    "score", score=score.value, ground_truth=self._task.ground_truth, details=score.to_dict()
                )
            self._done = True
            self._finish_log("answered")
        elif self._steps >= self.max_steps:
            info.update(answer=None, score=0.0, truncated=True)
            self._done = True
            self._finish_log("budget")
        from spatialclaw.agent.context import observation_parts

        text, images = observation_parts(
            self._steps, self.max_steps, result, self.observation_chars, self.max_image_side, []
        )
        reply = output if output is not None else f"```python\n{cell}\n```"
        self._history += [Message.text("assistant", reply), Message("user", [TextPart(text), *images])]
        observation = Observation(text=text, images=[image.png for image in images], step=self._steps, result=result)
        return observation, self._done, reward, info

    def close(self) -> None:
        """Close the current episode's log (as interrupted if it was not over) and stop the kernel."""
        self._finish_log("interrupted")
        if self._kernel is not None:
            self._pool.release(self._kernel)
            self._kernel = None
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _new_episode_dir(self, task_id: str) -> Path:
        assert self.record_dir is not None
        number = self._episodes
        while (self.record_dir / f"{task_id}-{number}" / EPISODE_FILE).exists():
            number += 1
        return self.record_dir / f"{task_id}-{number}"

    def _score(self, answer: Any) -> Any:
        from spatialclaw.benchmarks.scoring.score import score_answer

        task = self._task
        assert task is not None  # scoring follows a reset
        return score_answer(
            answer,
            task.ground_truth,
            task.answer_type,
            task.choices,
            metric=task.meta.get("metric"),
            unit=task.meta.get("unit"),
        )

    def _finish_log(self, reason: str) -> None:
        if self._log is None:
            return
        self._log.write(
            "end",
            reason=reason,
            steps=self._steps,
            usage={},
            cost_usd=None,
            duration_s=round(time.time() - self._started, 3),
        )
        self._log.close()
        self._log = None


TOOL_NOTE = (
    "\n\nIn this environment each cell runs through the `run_cell` tool: call it with the code of one cell "
    "(instead of writing a ```python block```) and read its output in the tool's reply."
)


class TRLSpatialEnvironment:
    """A TRL ``GRPOTrainer`` environment (``environment_factory=TRLSpatialEnvironment`` or a
    ``functools.partial`` of it with :class:`SpatialEnv` arguments): one kernel per instance, reused
    across the rollouts TRL gives it.

    TRL exposes every public method but ``reset``/``get_reward`` as a tool, so there is one: ``run_cell``.
    ``reset`` receives the dataset row's columns and needs ``task_json`` (see :func:`grpo_dataset`);
    its return value (the task prompt) is appended to the row's last user message. With
    ``tool_images=True``, ``run_cell`` returns the cell's images too (content blocks, for VLM policies).
    Call :meth:`close_all` after training to stop the kernels.
    """

    _instances: ClassVar[weakref.WeakSet[TRLSpatialEnvironment]] = weakref.WeakSet()

    def __init__(self, tool_images: bool = False, **env_kwargs: Any) -> None:
        self.env = SpatialEnv(**env_kwargs)
        self.tool_images = tool_images
        self.reward = 0.0
        self.done = True
        self.last_info: dict[str, Any] = {}
        TRLSpatialEnvironment._instances.add(self)

    def reset(self, task_json: str, **row: Any) -> str:
        """Start the row's task (its other columns are ignored); returns the task prompt text."""
        observation = self.env.reset(task_json)
        self.reward, self.done, self.last_info = 0.0, False, {}
        return observation.text

    def run_cell(self, code: str) -> Any:
        """Run one Python cell in the spatialclaw kernel (frames, perception and geometry tools are preloaded;
        call answer(value) in a cell to give the final answer).

        Args:
            code: The Python source of one cell.

        Returns:
            The cell's output as the agent shows it: printed text, the last value, errors, images.
        """
        if self.done:
            return "The episode is over: the answer was given or the step budget is spent. Stop calling tools."
        observation, self.done, reward, self.last_info = self.env.step(code)
        if self.done:
            self.reward = reward
        if not self.tool_images or not observation.images:
            return observation.text
        from PIL import Image

        return [{"type": "text", "text": observation.text}] + [
            {"type": "image", "image": Image.open(io.BytesIO(png)).convert("RGB")} for png in observation.images
        ]

    def get_reward(self) -> float:
        """The benchmark score of the answer in [0, 1], computed on the host; 0 without an answer."""
        return self.reward

    @classmethod
    def close_all(cls) -> None:
        """Stop the kernel of every instance (TRL keeps them in a pool for the whole run)."""
        for instance in list(cls._instances):
            instance.env.close()


def grpo_dataset(tasks: list[Task], max_steps: int = 16, system: str | None = None) -> Any:
    """A ``datasets.Dataset`` for ``GRPOTrainer`` with :class:`TRLSpatialEnvironment`: per task a
    conversational ``prompt`` (the system prompt, default the compact manual for ``max_steps`` plus how
    to call ``run_cell``; then an empty user turn that ``reset`` fills with the task), the ``task_json``
    and the ``task_id``. Tasks must have a ground truth."""
    import datasets

    from spatialclaw.export.system import compact_system_prompt

    system = system if system is not None else compact_system_prompt(max_steps) + TOOL_NOTE
    rows = []
    for task in tasks:
        if task.ground_truth is None:
            raise ValueError(f"task {task.task_id!r} has no ground truth; the reward needs it")
        rows.append(
            {
                "prompt": [{"role": "system", "content": system}, {"role": "user", "content": ""}],
                "task_json": json.dumps(task.to_dict()),
                "task_id": task.task_id,
            }
        )
    return datasets.Dataset.from_list(rows)


def _version() -> str:
    from spatialclaw import __version__

    return __version__
