"""The result of ``track``: ``Track``, one object followed through frames as per-frame ``Instance`` values
(absolute frame indices; boxes (x0, y0, x1, y1) and centroids (x, y) in pixels), with its readout and
its drawing for ``show``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spatialclaw.primitives.perception.instances import Instance, draw_instances

__all__ = ["Track"]


@dataclass(eq=False)
class Track:
    """One object followed through frames: ``instances[i]`` is where it is in the i-th input frame.

    Arrays (T = number of frames, in input order): ``frame_indices`` (T,) absolute frame numbers;
    ``boxes`` (T, 4) (x0, y0, x1, y1) pixels; ``centroids`` (T, 2) (x, y) pixels (mask centroid, else box
    centre); ``masks`` (T, H, W) bool or None for box tracks; ``visible`` (T,) bool (False where the
    object was lost or left the image: its box there is the last known one and its score 0).
    ``track.at(frame_index)`` gives the ``Instance`` at an absolute frame index. ``method`` names the
    backend; ``start_index`` is the frame the prompt was given in.
    """

    label: str
    instances: list[Instance]
    method: str
    start_index: int
    frames: Any = field(default=None, repr=False)

    def __len__(self) -> int:
        """The number of frames (T)."""
        return len(self.instances)

    def __iter__(self) -> Iterator[Instance]:
        return iter(self.instances)

    def __getitem__(self, position: int) -> Instance:
        """The ``Instance`` in the ``position``-th input frame (a position, not a frame index: see ``at``)."""
        return self.instances[position]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["frames"] = None
        return state

    @property
    def frame_indices(self) -> np.ndarray:
        """(T,) int absolute frame indices."""
        return np.array([item.frame_index for item in self.instances], dtype=np.int64)

    @property
    def boxes(self) -> np.ndarray:
        """(T, 4) float (x0, y0, x1, y1) pixels per frame."""
        return np.array([item.box for item in self.instances], dtype=np.float64).reshape(-1, 4)

    @property
    def centroids(self) -> np.ndarray:
        """(T, 2) float (x, y) pixels per frame (pixel-centre convention)."""
        return np.array([item.centroid for item in self.instances], dtype=np.float64).reshape(-1, 2)

    @property
    def masks(self) -> np.ndarray | None:
        """(T, H, W) bool masks, or None for a box track."""
        if any(item.mask is None for item in self.instances):
            return None
        return np.stack([item.mask for item in self.instances if item.mask is not None])

    @property
    def visible(self) -> np.ndarray:
        """(T,) bool: False where the object was lost or left the image."""
        return np.array([item.score > 0 for item in self.instances], dtype=bool)

    def at(self, index: int) -> Instance:
        """The instance at absolute frame ``index``."""
        for item in self.instances:
            if item.frame_index == index:
                return item
        raise KeyError(f"frame {index} is not in this track; it covers frames {self.frame_indices.tolist()}")

    @property
    def image(self) -> Any:
        """The start frame with the object's centroid path drawn over it (a PIL image), for ``show``."""
        if self.frames is None:
            raise ValueError("this track has no frames attached; draw it with draw_instances(frame, [track.at(i)])")
        from PIL import ImageDraw

        position = int(np.flatnonzero(self.frame_indices == self.start_index)[0])
        image = draw_instances(self.frames[position], [self.instances[position]])
        pen = ImageDraw.Draw(image)
        path = [tuple(c) for c, seen in zip(self.centroids.tolist(), self.visible, strict=True) if seen]
        if len(path) > 1:
            pen.line(path, fill=(255, 255, 0), width=max(1, round(max(image.size) / 320)))
        return image

    @property
    def array(self) -> np.ndarray:
        """``image`` as an (H, W, 3) uint8 array (what ``show`` draws)."""
        return np.asarray(self.image)

    def __repr__(self) -> str:
        lines = [
            f"Track({self.label!r}, {len(self)} frames {self.frame_indices.min()}..{self.frame_indices.max()}, "
            f"start frame {self.start_index}, via {self.method}; boxes (x0, y0, x1, y1) and centres in pixels):"
        ]
        rows = list(range(len(self)))
        if len(rows) > 12:
            rows = sorted(set(np.linspace(0, len(self) - 1, 12).round().astype(int).tolist()))
        for i in rows:
            item = self.instances[i]
            x0, y0, x1, y1 = item.box
            cx, cy = item.centroid
            state = f"score {item.score:.2f}" if item.score > 0 else "LOST"
            lines.append(
                f"  frame {item.frame_index}: box ({x0:.0f}, {y0:.0f}, {x1:.0f}, {y1:.0f}) "
                f"centre ({cx:.1f}, {cy:.1f}) {state}"
            )
        if len(rows) < len(self):
            lines.append(f"  ({len(self) - len(rows)} more frames: use track.boxes / track.centroids / track.at(i))")
        return "\n".join(lines)
