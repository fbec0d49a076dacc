"""The real RGB-D clip of the test data (``rgbd-redwood``) as the kernel sees it: five colour frames at
absolute indices 10 to 50."""

from __future__ import annotations

from pathlib import Path

from spatialclaw import FrameSpec, Task

INDICES = [10, 20, 30, 40, 50]


def redwood_task(test_data: Path, question: str, answer_type: str) -> Task:
    """A task asking ``question`` about the clip's colour frames, shown at :data:`INDICES`."""
    colour = sorted(str(p) for p in (test_data / "rgbd-redwood" / "color").glob("*.jpg"))
    return Task(question=question, inputs=[FrameSpec.images(colour, indices=INDICES)], answer_type=answer_type)
