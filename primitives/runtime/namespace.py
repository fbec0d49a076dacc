"""The kernel namespace (docs/design.md, "The kernel namespace"), built in one place.

``build_namespace`` returns the dict that is merged into the user namespace of a kernel (the agent's,
or a person's own notebook via ``%spatial_load``). Heavy entries are lazy (see :mod:`.lazy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image

from spatialclaw.primitives.answers import keeps_text
from spatialclaw.primitives.display.show import Answerer, show
from spatialclaw.primitives.runtime.lazy import LazyCallable, LazyInstance, LazyModule

__all__ = ["NAMESPACE_NAMES", "Meta", "build_namespace", "parse_primitives"]

_P = "spatialclaw.primitives"

NAMESPACE_NAMES: tuple[str, ...] = (
    "frames",
    "videos",
    "meta",
    "show",
    "answer",
    "depth",
    "stereo_depth",
    "reconstruct",
    "motion",
    "change_map",
    "detect",
    "segment",
    "track",
    "geom",
    "scene",
    "zoom",
    "draw",
    "find_color",
    "vlm",
    "manual",
    "np",
    "scipy",
    "plt",
    "Image",
)
"""Every name the kernel namespace provides; the prompt documents exactly these."""

RESULT_TYPES: dict[str, str] = {
    "Frame": "frames.frame",
    "Frames": "frames.frame",
    "DepthResult": "perception.depth",
    "Reconstruction": "reconstruction.result",
    "FrameStatus": "reconstruction.result",
    "Orbit": "reconstruction.orbit",
    "FocalReport": "reconstruction.focal",
    "Motion": "motion.result",
    "CameraStep": "motion.result",
    "ObjectStep": "motion.result",
    "RegionStep": "motion.regions",
    "HeadingSweep": "motion.headings",
    "ChangeMap": "motion.change_map",
    "Detections": "perception.instances",
    "Instance": "perception.instances",
    "Track": "perception.track_result",
    "Location": "perception.vlm",
    "Direction": "geometry.relate",
    "Plane": "geometry.plane",
    "OrientedBox": "geometry.box",
    "Rectified": "geometry.rectify",
    "Measurement": "geometry.plane_measure",
    "PlanePoint": "geometry.plane_measure",
    "KnownScale": "geometry.scale",
    "FloorPoint": "geometry.floor",
    "CameraTilt": "geometry.tilt",
    "WallDirection": "geometry.wall",
    "FloorCamera": "geometry.floor_camera",
    "SceneObject": "scene.objects",
    "Relation": "scene.readouts",
    "Readout": "scene.readouts",
    "Perspective": "scene.perspective",
    "CompassReading": "scene.compass",
    "Bearing": "scene.bearings",
    "Zoom": "display.look",
    "Blob": "display.color",
    "ColorBlobs": "display.color",
    "AnswerError": "answers",
}
"""Result types the manual shows by name -> their primitives module. Each is a name in the kernel
(``Frame.from_image(img)``, ``isinstance(x, Blob)``, ``except AnswerError``), imported on first use."""

NAMESPACE_NAMES = NAMESPACE_NAMES + tuple(RESULT_TYPES)


def parse_primitives(primitives: Mapping[str, str] | None) -> dict[str, tuple[str, str]]:
    """Your own primitives, ``{"name": "package.module:function"}``, checked and split into
    ``{"name": ("package.module", "function")}``. Raises ``ValueError`` for a name that is not an identifier,
    starts with ``_`` or is already a kernel name, or a target that is not ``module:attribute``."""
    parsed: dict[str, tuple[str, str]] = {}
    for name, target in (primitives or {}).items():
        if not name.isidentifier() or name.startswith("_"):
            raise ValueError(f"primitive name {name!r} must be a Python identifier not starting with '_'")
        if name in NAMESPACE_NAMES or name in {"np", "scipy", "plt", "Image"}:
            raise ValueError(f"primitive name {name!r} is already a kernel name; choose another")
        module, _, attribute = str(target).partition(":")
        if not module or not attribute or not all(part.isidentifier() for part in [*module.split("."), attribute]):
            raise ValueError(f"primitive {name!r}: {target!r} is not 'package.module:function'")
        parsed[name] = (module, attribute)
    return parsed


class Meta(dict[str, Any]):
    """Task metadata with attribute access: ``meta.question``, ``meta.choices``, ``meta.answer_type``,
    ``meta.fps``, ``meta.duration`` (seconds), ``meta.num_frames``, ``meta.sources`` (input paths as the user
    gave them), ``meta.tools`` (which learned tools can run here, and why not)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"meta has no {name!r}; it has: {', '.join(sorted(self))}") from None


def _result_types() -> dict[str, Any]:
    """The classes of :data:`RESULT_TYPES`: the class itself when its module is already imported (so
    ``except`` works), else a lazy stand-in that imports it on first use."""
    import sys

    from spatialclaw.primitives.runtime.lazy_type import LazyType

    bound: dict[str, Any] = {}
    for name, module in RESULT_TYPES.items():
        loaded = sys.modules.get(f"{_P}.{module}")
        # a module another thread is still importing is in sys.modules without its classes yet
        cls = getattr(loaded, name, None) if loaded is not None else None
        bound[name] = cls if cls is not None else LazyType(f"{_P}.{module}", name)
    return bound


def _load_inputs(specs: list[dict[str, Any]]) -> list[Any]:
    from spatialclaw.primitives.frames.load import load_frames

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
    check_tools: bool = True,
    primitives: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Build the namespace for one episode.

    ``frames`` is one ``FrameSpec`` dict or a list of them (several videos or image sets: ``frames`` is
    the first, ``videos`` all of them). ``meta`` carries the question, choices and answer type.
    ``vlm`` configures the side channel to the host (``None``: ``vlm`` calls raise a clear error).
    With ``check_tools`` each learned tool reports whether it can run here
    (:func:`~spatialclaw.primitives.perception.availability.tool_status`, well under a second, no network); one
    that cannot is replaced by a stand-in that fails at once with the reason, and the report is kept
    in ``meta.tools``. ``primitives`` binds your own functions, ``{"name": "package.module:function"}``
    (see :func:`parse_primitives`), imported on first call like the built-in ones.
    """
    specs = [] if frames is None else ([frames] if isinstance(frames, dict) else list(frames))
    inputs = _load_inputs(specs)
    info = Meta({"question": None, "choices": None, "answer_type": "text"})
    info.update(_frames_meta(inputs))
    info.update(meta or {})
    if inputs:
        first = inputs[0]
    else:
        from spatialclaw.primitives.frames.frame import Frames

        first = Frames([])

    def make_scene() -> Any:
        from spatialclaw.primitives.scene.memory import Scene

        return Scene()

    def make_vlm() -> Any:
        from spatialclaw.primitives.perception.vlm import VLMClient

        return VLMClient(vlm)

    namespace = {
        "frames": first,
        "videos": inputs,
        "meta": info,
        "show": show,
        "answer": Answerer(
            info.get("choices"),
            info.get("answer_type"),
            info.get("option_labels"),
            info.get("allowed_answers"),
            keeps_text(info),
        ),
        "depth": LazyCallable(f"{_P}.perception.depth", "depth"),
        "stereo_depth": LazyCallable(f"{_P}.reconstruction.stereo", "stereo_depth"),
        "reconstruct": LazyCallable(f"{_P}.reconstruction.reconstruct", "reconstruct"),
        "detect": LazyCallable(f"{_P}.perception.detect", "detect"),
        "segment": LazyCallable(f"{_P}.perception.segment", "segment"),
        "track": LazyCallable(f"{_P}.perception.track", "track"),
        "motion": LazyCallable(f"{_P}.motion.estimate", "motion"),
        "change_map": LazyCallable(f"{_P}.motion.change_map", "change_map"),
        "geom": LazyModule(f"{_P}.geometry.geom"),
        "scene": LazyInstance(make_scene, "scene memory"),
        "zoom": LazyCallable(f"{_P}.display.look", "zoom"),
        "draw": LazyCallable(f"{_P}.display.overlay", "draw"),
        "find_color": LazyCallable(f"{_P}.display.color", "find_color"),
        "vlm": LazyInstance(make_vlm, "side channel to the vision-language model"),
        "manual": LazyCallable(f"{_P}.runtime.manual", "manual"),
        "np": np,
        "scipy": LazyModule("scipy"),
        "plt": LazyModule("matplotlib.pyplot"),
        "Image": Image,
        **_result_types(),
    }
    for name, (module, attribute) in parse_primitives(primitives).items():
        namespace[name] = LazyCallable(module, attribute)
    if check_tools:
        _apply_tool_status(namespace, info)
    return namespace


def _apply_tool_status(namespace: dict[str, Any], info: Meta) -> None:
    """Replace learned tools that cannot run here by stand-ins that say why; record the report."""
    from spatialclaw.primitives.perception.availability import UnavailableTool, tool_status

    report = tool_status()
    for name, status in report.items():
        if not status.available and name in namespace:
            namespace[name] = UnavailableTool(name, status.reason, namespace[name])  # a LazyCallable: docs stay
    info["tools"] = {name: status.to_dict() for name, status in report.items()}
