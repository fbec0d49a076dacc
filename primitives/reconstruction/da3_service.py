"""The Depth Anything 3 service: serves a DA3-style model on a Unix socket for ``reconstruction.da3``.

Run it in the environment that has the ``depth-anything-3`` package (it pins numpy<2, xformers and
moviepy==1.0.3, so it gets a virtual environment of its own, with ``pip install --no-deps`` of spatialclaw
for this module and the wire format)::

    python -m spatialclaw.primitives.reconstruction.da3_service --socket /tmp/da3.sock \\
        --model depth-anything/DA3METRIC-LARGE --device cuda

and point the kernel at it with ``SPATIALCLAW_MULTIVIEW_SOCKET=/tmp/da3.sock``. ``--model stand-in`` serves
:class:`StandInDA3` instead: a small network with RANDOM weights that keeps DA3's ``inference`` contract
(same inputs, same output names, shapes and conventions). Its depth and poses are meaningless; it exists to
test the service, the wire format and the adapter end to end without the real package or its weights.

Model contract (``DepthAnything3.inference``): ``inference(images, process_res=...)`` with N (H, W, 3)
uint8 RGB arrays returns an object with ``depth`` (N, h, w) float32, ``conf`` (N, h, w) float32 >= 1,
``extrinsics`` (N, 3, 4) world-to-camera (OpenCV axes), ``intrinsics`` (N, 3, 3) pixels at (h, w), and
``processed_images`` (N, h, w, 3) uint8, where (h, w) is the input resized so that its longest side is
about ``process_res`` (multiples of 14).

The service is shared by every kernel of a run, and a request's cost grows with its image count and the
square of ``process_res``, so each request is bounded before it is queued (:func:`request_problem`):
``process_res`` in [14, :data:`MAX_PROCESS_RES`], at most :data:`MAX_IMAGES` images of one size, at most
:data:`MAX_PROCESSED_PIXELS` pixels processed in all. A request past a bound gets an error reply naming it.
(Each kernel's host relay keeps at most one of its requests at the service at once, so the queue serves
kernels in turn: :class:`spatialclaw.kernel.channels.ServiceRelay`.)
"""

from __future__ import annotations

import argparse
import os
import queue
import socketserver
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.perception.remote import MAX_REQUEST_BYTES, read_frame, write_frame
from spatialclaw.primitives.reconstruction.da3 import pack, unpack

__all__ = [
    "MAX_IMAGES",
    "MAX_PROCESSED_PIXELS",
    "MAX_PROCESS_RES",
    "Batcher",
    "Da3Server",
    "Prediction",
    "StandInDA3",
    "answer",
    "handle",
    "handle_batch",
    "load_model",
    "main",
    "request_problem",
]

PATCH = 14
MAX_PROCESS_RES = 1022
"""The largest ``process_res`` a request may ask for (DA3's default is 504)."""
MAX_IMAGES = 64
"""The most images one request may hold."""
MAX_PROCESSED_PIXELS = 16_000_000
"""The most pixels one request may make the model process (images x processing size)."""


@dataclass
class Prediction:
    """DA3's prediction fields (see the module docstring for shapes and conventions)."""

    processed_images: np.ndarray
    depth: np.ndarray
    conf: np.ndarray
    extrinsics: np.ndarray
    intrinsics: np.ndarray


def processing_size(width: int, height: int, process_res: int) -> tuple[int, int]:
    """(w, h): the image resized so its longest side is ``process_res``, both rounded to multiples of 14."""
    scale = process_res / max(width, height)
    return max(PATCH, round(width * scale / PATCH) * PATCH), max(PATCH, round(height * scale / PATCH) * PATCH)


class StandInDA3:
    """A stand-in with RANDOM weights for ``DepthAnything3`` (never a real model), in numpy only (its service
    environment needs numpy and pillow, nothing else): a 3x3 convolution gives depth (softplus + 0.5 m) and
    confidence (1 + exp), a linear head on pooled features gives each camera a small rotation and
    translation, and a focal length near 0.9 x width. Same ``inference`` contract as DA3, plus
    ``inference_batch`` (several scenes of one size in one pass), which the service uses for batching."""

    model_id = "stand-in"
    metric = True

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.kernel = rng.normal(0.0, 0.1, (2, 3, 3, 3))  # (out, in, dy, dx)
        self.bias = rng.normal(0.0, 0.1, 2)
        self.head = rng.normal(0.0, 0.1, (7, 2))
        self.head_bias = rng.normal(0.0, 0.1, 7)

    def inference(self, image: list[np.ndarray], process_res: int = 504, **_: Any) -> Prediction:
        return self.inference_batch([image], process_res)[0]

    def inference_batch(self, scenes: list[list[np.ndarray]], process_res: int = 504) -> list[Prediction]:
        """One :class:`Prediction` per scene; the convolution runs once over every image of every scene."""
        from PIL import Image

        height, width = scenes[0][0].shape[:2]
        w, h = processing_size(width, height, process_res)
        frames = [rgb for scene in scenes for rgb in scene]
        if any(rgb.shape[:2] != (height, width) for rgb in frames):
            raise ValueError("every image of one request must have the same size")
        batch = np.stack([np.asarray(Image.fromarray(rgb).resize((w, h), Image.Resampling.BILINEAR)) for rgb in frames])
        padded = np.pad(batch.astype(np.float32) / 255, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="constant")
        features = np.zeros((len(frames), 2, h, w), np.float32)
        for dy in range(3):
            for dx in range(3):
                features += np.einsum("nhwc,oc->nohw", padded[:, dy : dy + h, dx : dx + w], self.kernel[:, :, dy, dx])
        features += self.bias[None, :, None, None].astype(np.float32)
        depth = np.logaddexp(0.0, features[:, 0]) + 0.5
        conf = 1.0 + np.exp(np.minimum(features[:, 1], 10.0))
        heads = features.mean(axis=(2, 3)).astype(np.float64) @ self.head.T + self.head_bias
        predictions, first = [], 0
        for scene in scenes:
            extrinsics, intrinsics = [], []
            for i, row in enumerate(heads[first : first + len(scene)]):
                extrinsics.append(np.hstack([_rodrigues(row[:3] * 0.1 * i), (row[3:6] * 0.1 * i)[:, None]]))
                focal = w * (0.9 + 0.05 * np.tanh(row[6]))
                intrinsics.append([[focal, 0, (w - 1) / 2], [0, focal, (h - 1) / 2], [0, 0, 1]])
            part = slice(first, first + len(scene))
            predictions.append(
                Prediction(
                    processed_images=batch[part],
                    depth=depth[part].astype(np.float32),
                    conf=conf[part].astype(np.float32),
                    extrinsics=np.asarray(extrinsics, dtype=np.float32),
                    intrinsics=np.asarray(intrinsics, dtype=np.float32),
                )
            )
            first += len(scene)
        return predictions


def _rodrigues(vector: np.ndarray) -> np.ndarray:
    """The rotation matrix of an axis-angle ``vector`` (radians)."""
    angle = float(np.linalg.norm(vector))
    if angle < 1e-12:
        return np.eye(3)
    x, y, z = vector / angle
    cross = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    rotation: np.ndarray = np.eye(3) + np.sin(angle) * cross + (1 - np.cos(angle)) * cross @ cross
    return rotation


def load_model(model_id: str, device: str = "cpu") -> Any:
    """``StandInDA3`` for "stand-in", else ``DepthAnything3.from_pretrained(model_id)`` on ``device``."""
    if model_id == "stand-in":
        return StandInDA3()
    from depth_anything_3.api import DepthAnything3  # only in the service's own environment

    model = DepthAnything3.from_pretrained(model_id).to(device=device).eval()
    model.model_id = model_id
    model.metric = "metric" in model_id.lower() or "nested" in model_id.lower()
    return model


def request_problem(inputs: Any) -> str | None:
    """Why the request ``inputs`` may not be served (its images, ``process_res`` or total size), or None."""
    images = inputs.get("images") if isinstance(inputs, dict) else None
    if not isinstance(images, list) or not images:
        return "images must be a non-empty list of (H, W, 3) uint8 arrays"
    arrays = [np.asarray(i) for i in images]
    if any(a.ndim != 3 or a.shape[2] != 3 or a.dtype != np.uint8 or 0 in a.shape for a in arrays):
        return "images must be a non-empty list of (H, W, 3) uint8 arrays"
    if len(arrays) > MAX_IMAGES:
        return f"a request may hold at most {MAX_IMAGES} images, got {len(arrays)}"
    if any(a.shape != arrays[0].shape for a in arrays):
        return "every image of one request must have the same size"
    res = inputs.get("process_res") or 504
    if isinstance(res, bool) or not isinstance(res, int | np.integer) or not PATCH <= res <= MAX_PROCESS_RES:
        return f"process_res must be a whole number of pixels from {PATCH} to {MAX_PROCESS_RES}, got {res!r}"
    w, h = processing_size(arrays[0].shape[1], arrays[0].shape[0], int(res))
    if w * h * len(arrays) > MAX_PROCESSED_PIXELS:
        return (
            f"{len(arrays)} images at process_res={res} are {w * h * len(arrays):,} processed pixels, over the "
            f"service's limit of {MAX_PROCESSED_PIXELS:,}; send fewer images or a smaller process_res"
        )
    return None


def handle(model: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """The reply value for one request (module docstring of ``reconstruction.da3``); errors become replies."""
    return handle_batch(model, [inputs])[0]


def handle_batch(model: Any, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reply values of several requests: one ``model.inference_batch`` pass for the valid ones of one image
    size and ``process_res`` when the model has it, else one ``inference`` each; errors become replies."""
    replies: list[dict[str, Any] | None] = [None] * len(requests)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, inputs in enumerate(requests):
        problem = request_problem(inputs)
        if problem is not None:
            replies[index] = {"ok": False, "error": f"ValueError: {problem}"}
            continue
        key = (np.asarray(inputs["images"][0]).shape, int(inputs.get("process_res") or 504))
        groups.setdefault(key if hasattr(model, "inference_batch") else (index,), []).append(index)
    for members in groups.values():
        res = int(requests[members[0]].get("process_res") or 504)
        try:
            if hasattr(model, "inference_batch"):
                predictions = model.inference_batch([list(requests[i]["images"]) for i in members], process_res=res)
            else:
                predictions = [model.inference(list(requests[members[0]]["images"]), process_res=res)]
            for index, prediction in zip(members, predictions, strict=True):
                replies[index] = _value(model, prediction)
        except Exception as error:  # the client gets the reason instead of a dropped connection
            for index in members:
                replies[index] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    return [reply or {"ok": False, "error": "no reply"} for reply in replies]


def _value(model: Any, prediction: Any) -> dict[str, Any]:
    return {
        "ok": True,
        "model": str(getattr(model, "model_id", type(model).__name__)),
        "metric": bool(getattr(model, "metric", False)),
        "depth": np.asarray(prediction.depth, dtype=np.float32),
        "conf": np.asarray(prediction.conf, dtype=np.float32),
        "extrinsics": np.asarray(prediction.extrinsics, dtype=np.float32),
        "intrinsics": np.asarray(prediction.intrinsics, dtype=np.float32),
    }


class Batcher:
    """Answers requests from concurrent callers in batches: one worker thread runs ``model``. Requests that
    arrive within ``batch_window_s`` seconds of the first waiting one are answered from one
    :func:`handle_batch` call, at most ``max_batch`` at once. ``counts``: requests, batches, the largest batch
    and this process's id. Shared by :class:`Da3Server` (a Unix socket) and the Ray actor of
    ``spatialclaw.services.service_actor`` (concurrent actor calls)."""

    def __init__(self, model: Any, batch_window_s: float = 0.005, max_batch: int = 8) -> None:
        self.model = model
        self.batch_window_s = batch_window_s
        self.max_batch = max_batch
        self.counts = {"requests": 0, "batches": 0, "largest_batch": 0, "pid": os.getpid()}
        self._queue: queue.Queue[tuple[dict[str, Any], queue.Queue[dict[str, Any]]]] = queue.Queue()
        self.worker = threading.Thread(target=self._work, daemon=True)
        self.worker.start()

    def submit(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The reply value for ``inputs``, computed in the next batch (blocks until then)."""
        answer: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=1)
        self._queue.put((inputs, answer))
        return answer.get()

    def _work(self) -> None:
        while True:
            waiting = [self._queue.get()]
            deadline = time.monotonic() + self.batch_window_s
            while len(waiting) < self.max_batch and (left := deadline - time.monotonic()) > 0:
                try:
                    waiting.append(self._queue.get(timeout=left))
                except queue.Empty:
                    break
            replies = handle_batch(self.model, [inputs for inputs, _ in waiting])
            self.counts["requests"] += len(waiting)
            self.counts["batches"] += 1
            self.counts["largest_batch"] = max(self.counts["largest_batch"], len(waiting))
            for (_, answer), reply in zip(waiting, replies, strict=True):
                answer.put(reply)


def answer(batcher: Batcher, request: bytes) -> bytes:
    """The reply message to one request message: ``run`` (through ``batcher``) or ``stats`` (its counts)."""
    try:
        method, value = unpack(request)
        if method == "stats":
            reply: dict[str, Any] = {"ok": True, **batcher.counts}
        elif method != "run" or not isinstance(value, dict):
            raise ValueError(f"unknown request {method!r}")
        else:
            reply = batcher.submit(value)
    except (ValueError, ConnectionError) as error:
        reply = {"ok": False, "error": str(error)}
    return pack("reply", reply)


class Da3Server:
    """``model`` served on the Unix socket ``path`` (one request per connection) from background threads;
    ``close()`` stops it and removes the socket.

    Batching: a :class:`Batcher` (``batch_window_s``, ``max_batch``) answers the requests of concurrent
    episodes together. ``stats`` (a request with method ``"stats"``) counts requests and batches."""

    def __init__(self, path: str, model: Any, batch_window_s: float = 0.005, max_batch: int = 8) -> None:
        self.batcher = Batcher(model, batch_window_s, max_batch)
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    reply = answer(server.batcher, read_frame(self.request, MAX_REQUEST_BYTES))
                except (ValueError, ConnectionError) as error:
                    reply = pack("reply", {"ok": False, "error": str(error)})
                write_frame(self.request, reply)

        if os.path.exists(path):
            os.unlink(path)
        self.path = path
        self.server = socketserver.ThreadingUnixStreamServer(path, Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def counts(self) -> dict[str, int]:
        return self.batcher.counts

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if os.path.exists(self.path):
            os.unlink(self.path)


def main(argv: list[str] | None = None) -> None:
    """Command line: serve ``--model`` on ``--socket`` until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", required=True, help="Unix socket path to serve on")
    parser.add_argument("--model", default="stand-in", help="DA3 hub id or folder, or 'stand-in' (random weights)")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    server = Da3Server(args.socket, load_model(args.model, args.device))
    print(f"serving {args.model} on {args.socket}", flush=True)
    try:
        server.thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


if __name__ == "__main__":
    main()
