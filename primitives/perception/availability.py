"""Which learned tools can run here, decided in well under a second and without touching the network.

For each learned backend the check looks at what a load would need, without loading anything: the
packages (``torch``, ``transformers``: found, not imported), the weights (a local folder, a folder under
``$SPATIALCLAW_MODELS``, or the model's ``config.json`` in the local Hugging Face cache), and an
explicitly requested CUDA device (``SPATIALCLAW_DEVICE=cuda`` on a machine without an NVIDIA driver).
When ``$SPATIALCLAW_PERCEPTION`` names a perception service, the models run there and the tools count
as available. Weights that are neither local nor cached count as unavailable: a download is attempted
only when the user asked for it by calling the tool with a hub id that is not cached, never behind the
model's back.

The kernel runs this once when it builds the namespace; a tool whose backend cannot run is replaced by
a stand-in that fails at once with the reason, and the system prompt lists it as unavailable.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from spatialclaw.primitives.perception.backends import (
    BACKEND_NOTES,
    backend_family,
    depth_family,
    sam3_id,
    sam3_problem,
    track_backend,
    weights_status,
)
from spatialclaw.primitives.runtime.lazy import LazyCallable

__all__ = ["ToolStatus", "ToolUnavailableError", "UnavailableTool", "last_report", "tool_status", "weights_status"]

_last: dict[str, dict[str, Any]] | None = None


class ToolUnavailableError(RuntimeError):
    """A learned tool cannot run in this installation; the message says why and what works instead."""


@dataclass(frozen=True)
class ToolStatus:
    """Whether a tool can run here. ``available`` False: calling it fails at once with ``reason``.
    ``note``: what works although a learned part is missing (e.g. track's optical-flow method), and which
    backend answers and what it is good for. ``backend``: the model that answers by default."""

    name: str
    available: bool
    reason: str = ""
    note: str = ""
    backend: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _missing_packages(*names: str) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def _device_problem() -> str | None:
    requested = os.environ.get("SPATIALCLAW_DEVICE", "")
    if requested.startswith("cuda") and not (Path("/dev/nvidiactl").exists() or Path("/dev/nvidia0").exists()):
        return f"SPATIALCLAW_DEVICE={requested} but this machine has no NVIDIA GPU"
    return None


def _learned(
    name: str, model_id: Callable[[], str], packages: tuple[str, ...] = ("torch", "transformers")
) -> str | None:
    missing = _missing_packages(*packages)
    if missing:
        return f"the package(s) {', '.join(missing)} are not installed (`pip install 'spatialclaw[perception]'`)"
    problem = _device_problem()
    if problem:
        return problem
    try:
        return weights_status(model_id())
    except Exception as error:  # a broken model setting must not break the kernel's start
        return f"its model setting is invalid ({type(error).__name__}: {error})"


def _depth_id() -> str:
    from spatialclaw.primitives.perception.depth import DEFAULT_MODEL

    return os.environ.get("SPATIALCLAW_DEPTH_MODEL") or DEFAULT_MODEL


def _detect_id() -> str:
    from spatialclaw.primitives.perception.detect import detector_id

    return detector_id(None)


def _sam_id() -> str:
    from spatialclaw.primitives.perception.segment import sam_id

    return sam_id(None)


def _safe(model_id: Callable[[], str]) -> str:
    try:
        return model_id()
    except Exception:  # a broken setting is reported by _learned
        return ""


def tool_status() -> dict[str, ToolStatus]:
    """The status of every learned tool of the namespace (``depth``, ``detect``, ``segment``, ``track``,
    ``reconstruct``), keyed by name. Classical tools are always available and not listed."""
    if os.environ.get("SPATIALCLAW_PERCEPTION") or os.environ.get("SPATIALCLAW_PERCEPTION_SOCKET"):
        served = "served by the perception service ($SPATIALCLAW_PERCEPTION)"
        return {
            name: ToolStatus(name, True, note=served) for name in ("depth", "detect", "segment", "track", "reconstruct")
        }
    depth = _learned("depth", _depth_id)
    detect = _learned("detect", _detect_id)
    sam = _learned("segment", _sam_id)
    detector, sam3 = _safe(_detect_id), sam3_problem("text")
    sam3_prompts = sam3_problem("prompts")
    family = backend_family(detector) if detector else "grounding-dino"
    detect_note = f"answered by {detector}: {BACKEND_NOTES[family]}" + (
        f"; SAM 3 would answer where its weights are ({sam3})" if sam3 and family != "sam3" else ""
    )
    text_note = (
        f"text prompts: {BACKEND_NOTES['sam3']} ({sam3_id()})"
        if sam3 is None
        else f"text prompts: {BACKEND_NOTES['detect+sam']} (SAM 3 is not here: {sam3})"
    )
    depth_backend = depth_family(_safe(_depth_id))
    depth_note = f"answered by {_safe(_depth_id)}: {BACKEND_NOTES.get(depth_backend, 'a depth model')}"
    if sam3_prompts is None:
        prompt_note = f"point/box prompts: {BACKEND_NOTES['sam3-tracker']} ({sam3_id()})"
    elif sam is None:
        prompt_note = f"point/box prompts: {BACKEND_NOTES['sam']} ({_safe(_sam_id)}; SAM 3 is not here: {sam3_prompts})"
    else:
        prompt_note = f"point/box prompts unavailable (SAM: {sam}; SAM 3: {sam3_prompts})"
    segment_note = f"{text_note}; {prompt_note}"
    segment_ok = sam is None or sam3 is None or sam3_prompts is None
    status = {
        "depth": ToolStatus("depth", depth is None, depth or "", depth_note if depth is None else "", depth_backend),
        "detect": ToolStatus("detect", detect is None, detect or "", detect_note if detect is None else "", family),
        "segment": ToolStatus(
            "segment",
            segment_ok,
            "" if segment_ok else f"SAM: {sam}",
            segment_note if segment_ok else "",
            "sam3" if sam3 is None or sam3_prompts is None else "detect+sam",
        ),
        "track": _track_status(),
        "reconstruct": ToolStatus(
            "reconstruct",
            True,
            note=(
                "its learned depth is unavailable (see depth): pass RGB-D depth maps or depth=None (arbitrary scale)"
                if depth
                else f"classical geometry (RGB-D / SfM); metric scale from {depth_note.removeprefix('answered by ')}"
            ),
            backend="classical" if depth else f"classical + {depth_backend}",
        ),
    }
    global _last
    _last = {name: item.to_dict() for name, item in status.items()}
    return status


def _track_status() -> ToolStatus:
    """``track``: always available (optical flow needs no weights); which backend follows objects here."""
    try:
        backend, model, why = track_backend()
    except Exception as error:  # a broken model setting must not break the kernel's start
        backend, model, why = "flow", "", f"its model setting is invalid ({type(error).__name__}: {error})"
    if backend == "sam3":
        note = f"answered by {model}: {BACKEND_NOTES['sam3-video']}"
    elif backend == "sam2":
        note = f"answered by {model}: {BACKEND_NOTES['sam2-video']}; points need SAM 3 ({why})"
    else:
        note = (
            f"method='flow' (optical flow) works: {BACKEND_NOTES['flow']}; masks and boxes (text: segmented in "
            f"the start frame); SAM 3 and SAM 2 video are unavailable ({why})"
        )
    return ToolStatus("track", True, note=note, backend=backend)


def last_report() -> dict[str, dict[str, Any]] | None:
    """The report of the last :func:`tool_status` call in this process (the kernel's, made when its
    namespace was built), as plain dicts; None before the first."""
    return None if _last is None else {name: dict(item) for name, item in _last.items()}


class UnavailableTool(LazyCallable):
    """Stands in for a learned tool whose default model cannot run here: calling it raises
    :class:`ToolUnavailableError` at once with the reason (no import of torch, no hub round trip). A
    call that names its own model (``model=``/``text_model=`` a local folder or hub id) goes to the
    real tool, which then loads exactly that model. ``help()`` shows the real documentation, headed by
    the reason."""

    def __init__(
        self, name: str, reason: str, tool: LazyCallable, model_arguments: tuple[str, ...] = ("model", "text_model")
    ) -> None:
        super().__init__(tool._module, tool._attribute)
        self.name = name
        self.reason = reason
        self.model_arguments = model_arguments

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if any(kwargs.get(name) is not None for name in self.model_arguments):
            return super().__call__(*args, **kwargs)
        raise ToolUnavailableError(
            f"{self.name}() is not available here: {self.reason}. Use a classical method instead "
            "(stereo_depth, reconstruct(frames, depth=None), find_color, zoom, geom), or pass model= "
            "a local folder."
        )

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return f"UNAVAILABLE here: {self.reason}.\n\n{self._load().__doc__ or ''}"

    def __repr__(self) -> str:
        return f"<{self.name}: unavailable ({self.reason})>"
