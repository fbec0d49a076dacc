"""``spatialclaw doctor``: one table of every perception and reconstruction backend's state here.

Per backend: the tool that uses it, the model it would load, whether its packages are installed (found,
not imported), whether its weights are on this machine (local folder, ``$SPATIALCLAW_MODELS`` or the
Hugging Face cache; nothing is downloaded), the device it would run on, and the resulting state. The
learned multi-view backend (DA3) runs as a service in its own environment: its row says whether
``$SPATIALCLAW_MULTIVIEW_SOCKET`` is set and the service answers.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["Backend", "backends", "register"]


@dataclass(frozen=True)
class Backend:
    """One row of the table. ``ready``: the backend can run here as configured."""

    name: str
    tool: str
    model: str
    package: str
    weights: str
    device: str
    ready: bool
    state: str


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="the state of every perception backend (package, weights, device)",
        description="One table: each learned and classical backend, its package, weights and device, and "
        "whether it can run here. Nothing is downloaded or loaded.",
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.set_defaults(handler=handle)


def _device() -> tuple[str, str | None]:
    """(device, problem): the device learned models would use, without importing torch."""
    requested = os.environ.get("SPATIALCLAW_DEVICE", "")
    gpu = Path("/dev/nvidiactl").exists() or Path("/dev/nvidia0").exists()
    if requested:
        if requested.startswith("cuda") and not gpu:
            return requested, f"SPATIALCLAW_DEVICE={requested} but this machine has no NVIDIA GPU"
        return requested, None
    return ("cuda" if gpu else "cpu"), None


def _learned(name: str, tool: str, model_id: Callable[[], str], packages: tuple[str, ...], device: str) -> Backend:
    from spatialclaw.primitives.perception.availability import weights_status

    try:
        model = model_id()
    except Exception as error:  # a broken setting is a row, not a crash
        return Backend(name, tool, "?", "-", "-", device, False, f"invalid model setting ({error})")
    missing = [package for package in packages if importlib.util.find_spec(package) is None]
    package = "missing: " + ", ".join(missing) if missing else "ok (" + ", ".join(packages) + ")"
    problem = weights_status(model)
    weights = "ok" if problem is None else "missing"
    ready = not missing and problem is None
    state = "ready" if ready else (f"pip install {' '.join(missing)}" if missing else str(problem))
    return Backend(name, tool, model, package, weights, device, ready, state)


def _da3_row() -> Backend:
    from spatialclaw.primitives.reconstruction.da3 import SOCKET_ENV_VAR

    path = os.environ.get(SOCKET_ENV_VAR, "")
    if not path:
        return Backend(
            "da3", "reconstruct", "-", "own environment", "in the service", "-", False,
            f"not configured: start da3_service and set {SOCKET_ENV_VAR}; reconstruct uses the classical path",
        )  # fmt: skip
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2.0)
            sock.connect(path)
    except OSError as error:
        return Backend("da3", "reconstruct", "-", "own environment", "in the service", "-", False,
                       f"the service at {path} does not answer ({error.strerror or error})")  # fmt: skip
    return Backend("da3", "reconstruct", "-", "own environment", "in the service", "service", True,
                   f"ready: service at {path}")  # fmt: skip


def _sam3_row(device: str) -> Backend:
    from spatialclaw.primitives.perception.backends import sam3_id, sam3_problem

    problem = sam3_problem()
    state = "ready" if problem is None else f"{problem}; detect, segment and track use their fallbacks"
    return Backend("sam3", "detect, segment, track", sam3_id(None), "torch, transformers",
                   "ok" if problem is None else "?", device, problem is None, state)  # fmt: skip


def _classical(name: str, tool: str, packages: tuple[str, ...]) -> Backend:
    missing = [package for package in packages if importlib.util.find_spec(package) is None]
    package = "missing: " + ", ".join(missing) if missing else "ok (" + ", ".join(packages) + ")"
    state = "ready" if not missing else f"pip install {' '.join(missing)}"
    return Backend(name, tool, "classical", package, "none needed", "cpu", not missing, state)


def backends() -> list[Backend]:
    """Every backend's row, checked without loading any model or touching the network."""
    from spatialclaw.primitives.perception import depth, detect, sam2_tracking, segment

    device, problem = _device()
    served = os.environ.get("SPATIALCLAW_PERCEPTION")
    depth_id = lambda: os.environ.get("SPATIALCLAW_DEPTH_MODEL") or depth.DEFAULT_MODEL  # noqa: E731
    track_id = lambda: os.environ.get("SPATIALCLAW_TRACK_MODEL") or sam2_tracking.DEFAULT_TRACK_MODEL  # noqa: E731
    torch_hf = ("torch", "transformers")
    rows = [
        _learned("depth (default)", "depth, reconstruct", depth_id, torch_hf, device),
        _learned("depth-pro", "depth(model='depth-pro')", lambda: depth.MODEL_ALIASES["depth-pro"], torch_hf, device),
        _learned("detector", "detect", lambda: detect.detector_id(None), torch_hf, device),
        _learned("sam", "segment (points, boxes)", lambda: segment.sam_id(None), torch_hf, device),
        _sam3_row(device),
        _learned("sam2", "track(method='sam2')", track_id, torch_hf, device),
    ]
    if served or problem:
        note = f"served by the perception service ({served})" if served else str(problem)
        rows = [Backend(r.name, r.tool, r.model, r.package, r.weights, r.device, bool(served), note) for r in rows]
    rows.append(_da3_row())
    rows.append(_classical("sfm / rgbd", "reconstruct (classical)", ("pycolmap", "cv2")))
    rows.append(_classical("stereo sgbm", "stereo_depth", ("cv2",)))
    rows.append(_classical("optical flow", "track(method='flow'), motion", ("cv2",)))
    return rows


def format_table(rows: list[Backend]) -> str:
    """The rows as a fixed-width text table."""
    header = ("backend", "tool", "model", "package", "weights", "device", "state")
    cells = [header] + [(r.name, r.tool, r.model, r.package, r.weights, r.device, r.state) for r in rows]
    widths = [max(len(row[i]) for row in cells[:-1] + [cells[-1]]) for i in range(len(header) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
             for row in cells]  # fmt: skip
    ready = sum(r.ready for r in rows)
    return "\n".join(lines + [f"{ready} of {len(rows)} backends ready"])


def handle(args: argparse.Namespace) -> int:
    rows = backends()
    print(json.dumps([asdict(r) for r in rows], indent=2) if args.json else format_table(rows))
    return 0
