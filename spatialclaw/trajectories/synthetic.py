"""Synthetic episodes in the native trajectory format, for tests and the export speed benchmark.

:func:`write_synthetic_episode` writes, with :class:`~spatialclaw.trajectories.episode_log.TrajectoryWriter`, what the
agent loop writes: a header, the task, and for every step a main-loop ``model_call`` (the full request
history as sent: a system prompt, a user turn with the question and the frames, then alternating
assistant outputs and user observations), the ``cell`` with its :class:`~spatialclaw.kernel.cell.CellResult`,
and at the end the answer, the score and the ``end`` event. Images are real PNGs with known solid
colours so that tests can find them again (in exports, HTML screenshots, notebooks).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from spatialclaw.chat import ImagePart, Message, TextPart
from spatialclaw.kernel.cell import CellError, CellImage, CellResult
from spatialclaw.task import FrameSpec, Task
from spatialclaw.trajectories.episode_log import TrajectoryWriter, config_hash

__all__ = ["SyntheticEpisode", "solid_png", "write_synthetic_episode"]

SYSTEM_PROMPT = "You answer spatial questions by writing one Python cell per step. Call answer(value) when done."


def solid_png(rgb: tuple[int, int, int], size: tuple[int, int] = (64, 48)) -> bytes:
    """A PNG of ``size`` (width, height) pixels filled with ``rgb`` (0-255 each)."""
    buffer = io.BytesIO()
    Image.new("RGB", size, rgb).save(buffer, format="PNG")
    return buffer.getvalue()


def _colour(seed: int, k: int) -> tuple[int, int, int]:
    """A deterministic colour for image ``k`` of episode ``seed``, distinct across k within an episode."""
    value = (seed * 7919 + k * 104729 + 12345) & 0xFFFFFF
    return ((value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF)


@dataclass
class SyntheticEpisode:
    """What was written, so tests can check exports against it.

    ``frames`` are the PNGs of the task's input frames (in the first user turn); ``cell_images[i]`` the
    PNGs step ``i``'s cell showed; ``assistant_texts`` the model outputs in order.
    """

    directory: Path
    task: Task
    frames: list[bytes]
    cell_images: list[list[bytes]] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    format_error_steps: list[int] = field(default_factory=list)
    error_steps: list[int] = field(default_factory=list)

    @property
    def image_count(self) -> int:
        """Images in the final conversation: the frames plus every observation's images except the last step's."""
        return len(self.frames) + sum(len(images) for images in self.cell_images[:-1])


def write_synthetic_episode(
    directory: str | Path,
    *,
    steps: int = 3,
    seed: int = 0,
    frame_count: int = 2,
    images_per_step: int = 1,
    image_size: tuple[int, int] = (64, 48),
    benchmark: str = "synthetic",
    question: str | None = None,
    correct: bool = True,
    complete: bool = True,
    format_error_steps: tuple[int, ...] = (),
    error_steps: tuple[int, ...] = (),
    fsync: bool = False,
) -> SyntheticEpisode:
    """Write one synthetic multiple-choice episode of ``steps`` steps (the last one answers) to ``directory``.

    ``format_error_steps`` are steps whose output had no code (a ``format_error`` event, no cell);
    ``error_steps`` are steps whose cell raised ``ZeroDivisionError``. ``complete=False`` stops before
    the answer, score and ``end`` events, as a killed process would. Image sizes are in pixels.
    """
    directory = Path(directory)
    question = question or f"Synthetic question {seed}: is the red cube left or right of the chair?"
    choices = ["left", "right"]
    truth = "A"
    task = Task(
        question=question,
        inputs=[FrameSpec.images([f"/data/synthetic/{seed}/frame_{i}.png" for i in range(frame_count)])],
        choices=choices,
        answer_type="multiple_choice",
        ground_truth=truth,
        task_id=f"synthetic-{seed}",
        benchmark=benchmark,
        category="relative_direction",
    )
    frames = [solid_png(_colour(seed, k), image_size) for k in range(frame_count)]
    config = {"model": "scripted:synthetic", "max_steps": steps}
    written = SyntheticEpisode(directory=directory, task=task, frames=frames)
    history = [
        Message.text("system", SYSTEM_PROMPT),
        Message(
            role="user",
            content=[TextPart(f"{question}\nA. left\nB. right")]
            + [ImagePart(png, *image_size, label=f"frame {i}") for i, png in enumerate(frames)],
        ),
    ]
    with TrajectoryWriter(directory, fsync=fsync) as log:
        log.write(
            "header",
            format_version=1,
            package_version="0.1.0",
            prompt_version="synthetic-1",
            model="scripted:synthetic",
            config=config,
            config_hash=config_hash(config),
        )
        log.write("task", task=task.to_dict(), files={p: f"sha-{i}" for i, p in enumerate(task.inputs[0].paths)})
        for step in range(steps):
            last = step == steps - 1
            answer = truth if correct else "B"
            if step in format_error_steps:
                text = f"Step {step}: I think the cube is on the left."
            elif last:
                text = f"Step {step}: the evidence says left.\n```python\nprint('done')\nanswer({answer!r})\n```"
            elif step in error_steps:
                text = f"Step {step}: divide.\n```python\nx = 1 / 0\n```"
            else:
                text = f"Step {step}: look at frame {step}.\n```python\nshow(frames[{step % frame_count}])\nprint('step {step}')\n```"
            reasoning = f"Thinking about step {step}."
            log.write(
                "model_call",
                step=step,
                purpose="step",
                model="scripted:synthetic",
                params={"temperature": 0.0},
                request={"messages": log.messages(history)},
                response={"text": text, "reasoning": reasoning, "finish_reason": "stop", "raw": None},
                usage={"prompt_tokens": 100 + step, "completion_tokens": 20, "reasoning_tokens": 5, "cached_tokens": 0},
                cost_usd=0.001,
                latency_s=0.5,
                error=None,
            )
            history.append(Message.text("assistant", text))
            written.assistant_texts.append(text)
            if step in format_error_steps:
                shown = "Your reply had no ```python``` code block. Write exactly one cell."
                log.write("format_error", step=step, response=text, message=shown)
                history.append(Message.text("user", shown))
                written.format_error_steps.append(step)
                written.cell_images.append([])
                continue
            code = text.split("```python\n", 1)[1].split("```", 1)[0]
            images = [solid_png(_colour(seed, 100 + step * 10 + j), image_size) for j in range(images_per_step)]
            if last:
                images = []
                result = CellResult(code=code, stdout="done\n", answer=answer, answered=True, duration_s=0.1)
            elif step in error_steps:
                images = []
                result = CellResult(
                    code=code,
                    status="error",
                    duration_s=0.1,
                    error=CellError(type="ZeroDivisionError", message="division by zero", line=1, source="x = 1 / 0"),
                )
                written.error_steps.append(step)
            else:
                result = CellResult(
                    code=code,
                    stdout=f"step {step}\n",
                    duration_s=0.2,
                    images=[
                        CellImage(png, label=f"frame {step}", origin="show", width=image_size[0], height=image_size[1])
                        for png in images
                    ],
                )
            written.cell_images.append(images)
            log.write("cell", step=step, code=code, result=log.cell_result(result))
            history.append(
                Message(
                    role="user", content=[TextPart(result.to_text())] + [ImagePart(png, *image_size) for png in images]
                )
            )
            if last and complete:
                log.write("answer", value=answer, source="cell")
                log.write(
                    "score",
                    score=1.0 if correct else 0.0,
                    ground_truth=truth,
                    details={"correct": correct, "method": "exact_choice"},
                )
                log.write(
                    "end",
                    reason="answered",
                    steps=steps,
                    usage={"prompt_tokens": 100 * steps, "completion_tokens": 20 * steps},
                    cost_usd=0.001 * steps,
                    duration_s=1.0,
                )
            if not complete and step == steps - 2:
                break
    return written
