"""The kernel namespace of DESIGN.md, built in one place.

``build_namespace`` returns the dict that is merged into the user namespace of a kernel (the agent's,
or a person's own notebook via ``%spatial_load``). Heavy entries are lazy (see :mod:`.lazy`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image

from spatialclaw.primitives.display import Answerer, show
from spatialclaw.primitives.lazy import LazyCallable, LazyInstance, LazyModule

__all__ = ["Meta", "build_namespace", "NAMESPACE_NAMES"]

_P = "spatialclaw.primitives"

NAMESPACE_NAMES = (
    "frames", "videos", "meta", "show", "answer", "depth", "stereo_depth", "reconstruct", "motion", "detect", "segment",
    "track",
    "geom", "scene", "zoom", "draw", "find_color", "vlm", "np", "scipy", "plt", "Image",
)
"""Every name the kernel namespace provides; the prompt documents exactly these."""


class Meta(dict):
    """Task metadata with attribute access: ``meta.question``, ``meta.choices``, ``meta.answer_type``,
    ``meta.fps``, ``meta.duration`` (seconds), ``meta.num_frames``, ``meta.sources`` (input paths)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"meta has no {name!r}; it has: {', '.join(sorted(self))}") from None


def _load_inputs(specs: list[dict[str, Any]]) -> list[Any]:
    from spatialclaw.primitives.frames import load_frames

    return [load_frames(spec) for spec in specs]


def _frames_meta(inputs: list[Any]) -> dict[str, Any]:
    if not inputs:
        return {"num_frames": 0, "fps": None, "duration": None, "sources": []}
    first = inputs[0]
    return {
        "num_frames": len(first),
        "fps": first.fps,
        "duration": first.duration,
        "sources": [frames.sources for frames in inputs] if len(inputs) > 1 else first.sources,
    }


def build_namespace(
    frames: dict[str, Any] | list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    vlm: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the namespace for one episode.

    ``frames`` is one ``FrameSpec`` dict or a list of them (several videos or image sets: ``frames`` is
    the first, ``videos`` all of them). ``meta`` carries the question, choices and answer type.
    ``vlm`` configures the side channel to the host (``None``: ``vlm`` calls raise a clear error).
    """
    specs = [] if frames is None else ([frames] if isinstance(frames, dict) else list(frames))
    inputs = _load_inputs(specs)
    info = Meta({"question": None, "choices": None, "answer_type": "text"})
    info.update(_frames_meta(inputs))
    info.update(meta or {})
    if inputs:
        first = inputs[0]
    else:
        from spatialclaw.primitives.frames import Frames

        first = Frames([])

    def make_scene() -> Any:
        from spatialclaw.primitives.scene import Scene

        return Scene()

    def make_vlm() -> Any:
        from spatialclaw.primitives.vlm import VLMClient

        return VLMClient(vlm)

    return {
        "frames": first,
        "videos": inputs,
        "meta": info,
        "show": show,
        "answer": Answerer(info.get("choices"), info.get("answer_type")),
        "depth": LazyCallable(f"{_P}.depth", "depth"),
        "stereo_depth": LazyCallable(f"{_P}.stereo", "stereo_depth"),
        "reconstruct": LazyCallable(f"{_P}.reconstruct", "reconstruct"),
        "detect": LazyCallable(f"{_P}.detect", "detect"),
        "segment": LazyCallable(f"{_P}.segment", "segment"),
        "track": LazyCallable(f"{_P}.track", "track"),
        "motion": LazyCallable(f"{_P}.motion", "motion"),
        "geom": LazyModule(f"{_P}.geom"),
        "scene": LazyInstance(make_scene, "scene memory"),
        "zoom": LazyCallable(f"{_P}.look", "zoom"),
        "draw": LazyCallable(f"{_P}.look", "draw"),
        "find_color": LazyCallable(f"{_P}.look", "find_color"),
        "vlm": LazyInstance(make_vlm, "side channel to the vision-language model"),
        "np": np,
        "scipy": LazyModule("scipy"),
        "plt": LazyModule("matplotlib.pyplot"),
        "Image": Image,
    }
