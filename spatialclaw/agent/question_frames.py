"""Frame numbers and times a question names, matched to the frames the kernel loaded.

A question may say "frame 16 of 32" (position 16 in a 32-frame sampling of the whole video), "frame 120"
(a frame number of the source) or "at 4.5 s", while the kernel holds other frames: six key frames, a
sampling by count. :func:`frame_notes` says, per input, which loaded frame each reference is when the
inputs say how (source frame indices, times, an even sampling of the whole video), and warns plainly
when they do not, so that no one reads "frame 16" as ``frames[16]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spatialclaw.task import FrameSpec, Task

__all__ = ["FrameRef", "frame_notes", "frame_refs", "time_refs"]

_RANGE = r"(?:\s*(?:-|–|to|through|and)\s*(?:frame\s+)?#?(\d+))?"
_FRAME_OF = re.compile(rf"\bframes?\s+#?(\d+){_RANGE}\s*(?:of|out of|/)\s*(?:the\s+)?(\d+)\b", re.I)
_FRAME = re.compile(rf"\bframes?\s+#?(\d+){_RANGE}", re.I)
_SECONDS = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b(?!\w)", re.I)


@dataclass(frozen=True)
class FrameRef:
    """One frame the question names: ``number`` (as written), ``of`` the N of "frame X of N" (None for a
    plain "frame X", a frame number of the source)."""

    number: int
    of: int | None = None


def frame_refs(question: str) -> list[FrameRef]:
    """The frames ``question`` names, in order, each once ("frames 3 to 9 of 32" gives 3 of 32, 9 of 32)."""
    refs: list[FrameRef] = []
    covered: list[tuple[int, int]] = []
    for match in _FRAME_OF.finditer(question):
        covered.append(match.span())
        of = int(match.group(3))
        refs += [FrameRef(int(n), of) for n in (match.group(1), match.group(2)) if n is not None]
    for match in _FRAME.finditer(question):
        if not any(start <= match.start() < end for start, end in covered):
            refs += [FrameRef(int(n)) for n in (match.group(1), match.group(2)) if n is not None]
    return list(dict.fromkeys(refs))


def time_refs(question: str) -> list[float]:
    """The moments ``question`` names in seconds ("at 4.5 s", "12 seconds in"), in order, each once."""
    return list(dict.fromkeys(float(m.group(1)) for m in _SECONDS.finditer(question)))


def _nearest(values: list[float], target: float) -> int:
    return min(range(len(values)), key=lambda i: (abs(values[i] - target), i))


def _by_source_index(ref: FrameRef, name: str, indices: list[int]) -> str:
    """Frame number ``ref.number`` of the source among the loaded key frames' source indices."""
    x = ref.number
    if x in indices:
        return f"frame {x} is `{name}[{indices.index(x)}]`"
    if indices[0] < x < indices[-1]:
        after = next(i for i, v in enumerate(indices) if v > x)
        return (
            f"frame {x} was not loaded; it lies between `{name}[{after - 1}]` (source frame {indices[after - 1]}) "
            f"and `{name}[{after}]` (source frame {indices[after]})"
        )
    return f"frame {x} is outside the loaded frames (source frames {indices[0]} to {indices[-1]})"


def _of_n(ref: FrameRef, first: int, name: str, spec: FrameSpec) -> str:
    """ "Frame X of N" for one input (X counted from ``first``, 0 or 1): the loaded frame at that point of
    the video, when the input says."""
    assert ref.of is not None
    fraction = min(max((ref.number - first) / max(ref.of - 1, 1), 0.0), 1.0)
    count = spec.count if spec.kind == "video" else None
    said = f"frame {ref.number} of {ref.of} (counted from {first}: {fraction:.0%} of the way through the video)"
    if spec.kind == "video" and spec.indices is None and count:  # an even sampling of the whole video
        position = fraction * (count - 1)
        if abs(position - round(position)) < 0.05:
            return f"{said} is `{name}[{round(position)}]`"
        low = int(position)
        return f"{said} lies between `{name}[{low}]` and `{name}[{low + 1}]`, nearer `{name}[{round(position)}]`"
    if spec.kind == "video" and spec.indices is None:  # every frame, or a sampling by fps
        return f"{said} is `{name}[round({fraction:.4f} * (len({name}) - 1))]`"
    if spec.indices:
        return (
            f"{said} is video frame ~{fraction:.4f} * (F - 1) for a video of F frames; the loaded frames are "
            f"source frames {', '.join(map(str, spec.indices[:12]))}{', ...' if len(spec.indices) > 12 else ''}: "
            f"take the one nearest to it (`{name}[i].index`)"
        )
    if spec.times:
        return (
            f"{said} is ~{fraction:.4f} of the video's duration; the loaded frames carry times "
            f"(`{name}[i].time`): take the one nearest to it"
        )
    n = len(spec.paths)
    return (
        f"WARNING: {said} cannot be matched to the loaded frames: the {n} images carry no source frame "
        f"numbers or times; `{name}[i]` is image i (0 to {n - 1}), not the question's frame numbering (only if "
        f"the images are spread evenly over the whole video is it nearest `{name}[{round(fraction * (n - 1))}]`)"
    )


def _plain(ref: FrameRef, name: str, spec: FrameSpec) -> str | None:
    """ "Frame X" for one input (a frame number of the source), or None when the conventions already say it."""
    if spec.indices:
        return _by_source_index(ref, name, list(spec.indices))
    if spec.kind == "video":
        return None  # frames[i].index is the video's frame number, as the conventions say
    n = len(spec.paths)
    if ref.number < n:
        return (
            f"frame {ref.number}: the images carry no source frame numbers, so `{name}[{ref.number}]` is image "
            f"{ref.number} counting from 0 (if the question counts from 1, its frame {ref.number} is "
            f"`{name}[{ref.number - 1}]`)"
            if ref.number > 0
            else f"frame 0 is `{name}[0]`"
        )
    return (
        f"WARNING: frame {ref.number} cannot be matched to the loaded frames: there are {n} images (0 to "
        f"{n - 1}) and they carry no source frame numbers or times"
    )


def _at_time(seconds: float, name: str, times: list[float]) -> str:
    nearest = _nearest(times, seconds)
    return f"{seconds:g} s is nearest `{name}[{nearest}]` (at {times[nearest]:g} s)"


def frame_notes(task: Task) -> list[str]:
    """One line per input and named frame or time: which loaded frame it is, or a plain warning that it
    cannot be matched (see the module docstring). Empty when the question names no frame or time."""
    refs = frame_refs(task.question)
    seconds = time_refs(task.question)
    if not refs and not seconds:
        return []
    first = 0 if any(r.number == 0 for r in refs if r.of is not None) else 1  # "frame X of N" counts from 1
    several = len(task.inputs) > 1
    lines: list[str] = []
    for number, spec in enumerate(task.inputs):
        name = f"videos[{number}]" if several else "frames"
        found = [_of_n(ref, first, name, spec) if ref.of is not None else _plain(ref, name, spec) for ref in refs]
        if spec.times:
            found += [_at_time(s, name, list(spec.times)) for s in seconds]
        prefix = f"In `{name}`: " if several else ""
        lines += [f"{prefix}{line}." for line in found if line]
    return lines
