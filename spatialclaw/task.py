"""A spatial question about one or more image sets or videos."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["HOST_ONLY_META", "AnswerType", "FrameSpec", "Task"]

AnswerType = Literal["multiple_choice", "number", "text", "yes_no"]


@dataclass
class FrameSpec:
    """Where one input's frames come from.

    Frame indices are absolute indices in the source, never positions in the loaded selection:
    ``kind="images"``: ``paths`` are image files; image ``i`` has index ``indices[i]`` when given (key frames
    of a longer video or image list: their frame numbers there) and otherwise ``i``, its position in the
    task's full image list; for key frames taken from a video, ``times[i]`` is its time (seconds in it).
    ``kind="video"``: ``paths[0]`` is a video; ``fps`` samples at that rate (frames per second of video
    time), ``count`` samples that many frames evenly, ``indices`` keeps those frame numbers (key frames);
    with none of them, every frame is kept. Indices are the video's absolute frame numbers (from 0).
    ``aspect_fit`` (a long side in pixels): the kernel holds the paper's copies of the frames (centre-cropped to
    the nearest paper aspect and resized, :mod:`spatialclaw.primitives.frames.aspect_fit`); None: full resolution.
    """

    kind: Literal["images", "video"]
    paths: list[str]
    fps: float | None = None
    count: int | None = None
    indices: list[int] | None = None
    times: list[float] | None = None
    aspect_fit: int | None = None

    @classmethod
    def images(
        cls, paths: Sequence[str | Path], indices: list[int] | None = None, times: list[float] | None = None
    ) -> FrameSpec:
        return cls(kind="images", paths=[str(Path(p).resolve()) for p in paths], indices=indices, times=times)

    @classmethod
    def video(
        cls, path: str | Path, fps: float | None = None, count: int | None = None, indices: list[int] | None = None
    ) -> FrameSpec:
        """A video sampled at ``fps`` (frames per second of video time), as ``count`` evenly spread frames, or
        as the key frames ``indices`` (absolute frame numbers, from 0); at most one of the three."""
        chosen = [name for name, value in (("fps", fps), ("count", count), ("indices", indices)) if value is not None]
        if len(chosen) > 1:
            raise ValueError(f"give only one of fps, count or indices for a video (got {' and '.join(chosen)})")
        picked = [int(i) for i in indices] if indices is not None else None
        return cls(kind="video", paths=[str(Path(path).resolve())], fps=fps, count=count, indices=picked)

    @classmethod
    def coerce(cls, value: Any) -> FrameSpec:
        """Accept a FrameSpec, its dict form, a video path, or a list of image paths."""
        if isinstance(value, FrameSpec):
            return value
        if isinstance(value, dict):
            return cls(**value)
        if isinstance(value, (str, Path)):
            suffix = Path(value).suffix.lower()
            if suffix in VIDEO_SUFFIXES:
                return cls.video(value)
            return cls.images([value])
        if isinstance(value, (list, tuple)) and all(isinstance(v, (str, Path)) for v in value):
            return cls.images(list(value))
        raise TypeError(
            f"cannot use {type(value).__name__} as frames: give a FrameSpec, a video path or a list of image paths"
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["aspect_fit"] is None:  # full resolution: the form that predates the paper's geometry
            del data["aspect_fit"]
        return data


VIDEO_SUFFIXES = {".mp4", ".mov", ".avi", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg"}


#: ``Task.meta`` keys that never reach the kernel.
HOST_ONLY_META = frozenset({"ground_truth", "truth"})


@dataclass
class Task:
    """One question for the agent.

    ``inputs`` holds one :class:`FrameSpec` per image set or video; the first becomes ``frames`` in the
    kernel and all of them ``videos``. ``choices`` are option texts for multiple choice (answers are
    letters ``A``, ``B``, ... in this order, or by ``option_labels`` when the question numbers its options:
    ``["0", "1", "2"]``, answered by the number). ``allowed_answers`` lists the values a text answer must
    be one of ("Choose from N, NE, E, ..."). ``ground_truth`` is optional and never shown to the model.
    ``inferred`` holds one sentence per thing :func:`spatialclaw.agent.question.parse_question` inferred
    (options read from the text, the answer type); the prompt states them.
    """

    question: str
    inputs: list[FrameSpec] = field(default_factory=list)
    choices: list[str] | None = None
    answer_type: AnswerType = "text"
    ground_truth: Any = None
    task_id: str = "task"
    benchmark: str | None = None
    category: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    inferred: list[str] = field(default_factory=list)
    option_labels: list[str] | None = None
    allowed_answers: list[str] | None = None

    def __post_init__(self) -> None:
        self.inputs = [FrameSpec.coerce(i) for i in self.inputs]
        if self.choices and self.answer_type == "text":
            self.answer_type = "multiple_choice"

    def kernel_meta(self) -> dict[str, Any]:
        """The ``meta`` the kernel sees: everything except the ground truth and ``meta["truth"]`` (host-only
        facts about how the answer was made, e.g. a dev set's construction)."""
        return {
            "task_id": self.task_id,
            "question": self.question,
            "choices": list(self.choices) if self.choices else None,
            "answer_type": self.answer_type,
            "option_labels": list(self.option_labels) if self.option_labels else None,
            "allowed_answers": list(self.allowed_answers) if self.allowed_answers else None,
            "benchmark": self.benchmark,
            "category": self.category,
            **{k: v for k, v in self.meta.items() if k not in HOST_ONLY_META},
        }

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["inputs"] = [i.to_dict() for i in self.inputs]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})
