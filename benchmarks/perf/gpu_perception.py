"""Device check of the learned backends: throughput per backend inside a sandboxed kernel, and N concurrent episodes
sharing one perception service against one model per kernel.

Tiny randomly initialised models (Depth Anything V2, Depth Pro, SAM 3, Grounding DINO; the builders the tests use,
saved with ``save_pretrained`` into a temporary ``$SPATIALCLAW_MODELS``) are loaded by kernels started as the
agent starts them (sandboxed where bubblewrap is available; on a CUDA host the sandbox passes ``/dev/nvidia*``
through, so this is the first run of that path). No network is needed: nothing comes from the hub.

1. per backend: one kernel, the model loaded by a first call, then ``--calls`` timed calls inside one cell
   (the cache off, so every call computes): calls per second and ms per call;
2. N concurrent episodes (``--episodes``): N kernels run the same timed cell on tiny Depth Anything at once,
   (a) each loading its own copy of the model, (b) all forwarding to one shared Ray perception actor
   (``SPATIALCLAW_PERCEPTION``, through the sandbox's perception relay): aggregate calls per second.

Without CUDA everything runs on the CPU and the output says so. Random weights: the figures are the cost of the
machinery around models of realistic input size but tiny depth, never a real model's inference time.

Run: ``python benchmarks/perf/gpu_perception.py [--quick] [--episodes N] [--calls N]``. The last line is one JSON
object with the figures. Meant to finish in well under 5 minutes (``--quick``: a small CPU run, ~1 minute).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the tiny-model builders shared with the tests

# backend -> (tool call in the kernel, builder module, builder function)
BACKENDS: dict[str, tuple[str, str, str]] = {
    "depth-anything": ("depth(img, model=M)", "tiny_depth_models", "save_tiny_depth_anything"),
    "depth-pro": ("depth(img, model=M)", "tiny_depth_models", "save_tiny_depth_pro"),
    "sam3": ("detect(img, ['chair', 'cup'], model=M, threshold=0.0)", "tiny_instance_models", "build_sam3"),
    "grounding-dino": ("detect(img, ['chair', 'cup'], model=M)", "tiny_instance_models", "build_grounding_dino"),
}

CELL = """
import json as _json, time as _time, numpy as _np
img = _np.random.default_rng(0).integers(0, 256, ({height}, {width}, 3), dtype=_np.uint8)
M = {model!r}
_first = _time.perf_counter(); _out = {call}; _load_s = _time.perf_counter() - _first
_start = _time.perf_counter()
for _ in range({calls}):
    _out = {call}
_elapsed = _time.perf_counter() - _start
try:
    import torch as _torch
    _cuda = _torch.cuda.is_available()
except ImportError:
    _cuda = False
print(_json.dumps({{"load_s": _load_s, "elapsed_s": _elapsed, "backend": _out.backend, "cuda_in_kernel": _cuda}}))
"""


def build_models(root: Path) -> dict[str, str]:
    """Each backend's tiny model saved under ``root`` (the kernels' ``$SPATIALCLAW_MODELS``)."""
    import importlib

    folders = {}
    for name, (_, module, function) in BACKENDS.items():
        folders[name] = str(getattr(importlib.import_module(module), function)(root / name))
    return folders


def timed_cell(kernel: Any, model: str, call: str, calls: int, size: tuple[int, int]) -> dict[str, Any]:
    """Run the timed cell in ``kernel``; its JSON line, or the error."""
    code = CELL.format(model=model, call=call, calls=calls, width=size[0], height=size[1])
    result = kernel.execute(code)
    if result.error is not None:
        raise RuntimeError(f"{result.error.type}: {result.error.message}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def kernel_env(root: Path, device: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"SPATIALCLAW_MODELS": str(root), "SPATIALCLAW_DEVICE": device, "SPATIALCLAW_CACHE": "off"}
    env["HF_HUB_OFFLINE"] = "1"
    return {**env, **(extra or {})}


def per_backend(root: Path, models: dict[str, str], device: str, calls: int, size: tuple[int, int]) -> dict[str, Any]:
    from spatialclaw import Kernel

    out: dict[str, Any] = {}
    for name, (call, _, _) in BACKENDS.items():
        with Kernel(env=kernel_env(root, device)) as kernel:
            figures = timed_cell(kernel, models[name], call, calls, size)
            figures["sandboxed"] = kernel.sandboxed
        figures["calls_per_s"] = calls / figures["elapsed_s"]
        figures["ms_per_call"] = 1000.0 * figures["elapsed_s"] / calls
        out[name] = figures
    return out


def concurrent(kernels: list[Any], model: str, calls: int, size: tuple[int, int]) -> dict[str, Any]:
    """All kernels (warmed first) run the timed depth cell at once; aggregate calls per second over the wall time."""
    call = BACKENDS["depth-anything"][0]
    # warm every kernel first (its own load, or the actor's once): the wall time below is steady state only
    loads = [timed_cell(kernel, model, call, 1, size)["load_s"] for kernel in kernels]
    start = time.perf_counter()
    with ThreadPoolExecutor(len(kernels)) as pool:
        results = list(pool.map(lambda k: timed_cell(k, model, call, calls, size), kernels))
    wall = time.perf_counter() - start
    return {
        "episodes": len(kernels),
        "wall_s": round(wall, 3),
        "calls_per_s": round(len(kernels) * calls / wall, 2),
        "first_call_s_per_kernel": [round(load, 3) for load in loads],  # model load (own copy, or the actor's)
        "ms_per_call_in_kernel": round(1000.0 * sum(r["elapsed_s"] for r in results) / (len(results) * calls), 1),
    }


def sharing(
    root: Path, models: dict[str, str], device: str, episodes: int, calls: int, size: tuple[int, int]
) -> dict[str, Any]:
    """One model per kernel against one shared Ray perception actor, N episodes each."""
    import ray

    from spatialclaw import Kernel
    from spatialclaw.services.perception import start_perception_service

    model = models["depth-anything"]
    kernels = [Kernel(env=kernel_env(root, device)) for _ in range(episodes)]
    try:
        own = concurrent(kernels, model, calls, size)
    finally:
        for kernel in kernels:
            kernel.shutdown()
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
    ray.init(num_cpus=max(2, episodes), include_dashboard=False, log_to_driver=False)
    service = start_perception_service(actors=1, num_gpus=1 if device == "cuda" else 0)
    try:
        env = kernel_env(root, device, service.env)
        kernels = [Kernel(env=env) for _ in range(episodes)]
        try:
            shared = concurrent(kernels, model, calls, size)
        finally:
            for kernel in kernels:
                kernel.shutdown()
        shared["actor_runs"] = service.stats()[0]["calls"].get("run:depth", 0)
    finally:
        service.close()
        ray.shutdown()
    return {"one_model_per_kernel": own, "one_shared_actor": shared}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small CPU run (2 episodes, 3 calls, 320x240)")
    parser.add_argument("--episodes", type=int, default=None, help="concurrent episodes (default 4; quick 2)")
    parser.add_argument("--calls", type=int, default=None, help="timed calls per cell (default 20; quick 3)")
    args = parser.parse_args()
    import torch

    cuda = torch.cuda.is_available() and not args.quick
    device = "cuda" if cuda else "cpu"
    note = "" if cuda else ("--quick: CPU run" if args.quick else "no CUDA here: CPU run, the GPU path is NOT tested")
    episodes = args.episodes or (2 if args.quick else 4)
    calls = args.calls or (3 if args.quick else 20)
    size = (320, 240) if args.quick else (640, 480)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="spatialclaw-models-") as folder:
        root = Path(folder)
        models = build_models(root)
        backends = per_backend(root, models, device, calls, size)
        shared = sharing(root, models, device, episodes, calls, size)
    print(f"device: {device}{f' ({note})' if note else ''}; frames {size[0]}x{size[1]}, {calls} calls per cell")
    print(f"{'backend':<16}{'answered by':<16}{'load s':>8}{'ms/call':>10}{'calls/s':>9}  sandboxed  cuda")
    for name, row in backends.items():
        print(
            f"{name:<16}{row['backend']:<16}{row['load_s']:>8.2f}{row['ms_per_call']:>10.1f}{row['calls_per_s']:>9.1f}"
            f"  {row['sandboxed']!s:<9}  {row['cuda_in_kernel']}"
        )
    for label, row in shared.items():
        print(f"{episodes} episodes, {label.replace('_', ' ')}: {row['calls_per_s']} calls/s (wall {row['wall_s']} s)")
    summary = {
        "benchmark": "gpu_perception",
        "device": device,
        "note": note,
        "frame": list(size),
        "calls": calls,
        "backends": {
            k: {m: round(v, 3) if isinstance(v, float) else v for m, v in r.items()} for k, r in backends.items()
        },
        "sharing": shared,
        "total_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
