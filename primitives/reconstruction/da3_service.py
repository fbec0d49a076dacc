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
"""

from __future__ import annotations

import argparse
import os
import socketserver
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from spatialclaw.primitives.perception.remote import MAX_REQUEST_BYTES, read_frame, write_frame
from spatialclaw.primitives.reconstruction.da3 import pack, unpack

__all__ = ["Da3Server", "Prediction", "StandInDA3", "handle", "load_model", "main"]

PATCH = 14


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
    """A stand-in with RANDOM weights for ``DepthAnything3`` (never a real model): a 3x3 convolution gives
    depth (softplus + 0.5 m) and confidence (1 + exp), a linear head on pooled features gives each camera a
    small rotation and translation, and a focal length near 0.9 x width. Same ``inference`` contract as DA3."""

    model_id = "stand-in"
    metric = True

    def __init__(self, seed: int = 0) -> None:
        import torch

        generator = torch.Generator().manual_seed(seed)
        self.conv = torch.nn.Conv2d(3, 2, 3, padding=1)
        self.head = torch.nn.Linear(2, 7)
        with torch.no_grad():
            for parameter in (*self.conv.parameters(), *self.head.parameters()):
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)

    def inference(self, image: list[np.ndarray], process_res: int = 504, **_: Any) -> Prediction:
        import torch

        height, width = image[0].shape[:2]
        w, h = processing_size(width, height, process_res)
        batch = torch.stack(
            [torch.from_numpy(np.ascontiguousarray(rgb)).permute(2, 0, 1).float() / 255 for rgb in image]
        )
        batch = torch.nn.functional.interpolate(batch, size=(h, w), mode="bilinear", align_corners=False)
        with torch.no_grad():
            features = self.conv(batch)
            depth = torch.nn.functional.softplus(features[:, 0]) + 0.5
            conf = 1.0 + torch.exp(features[:, 1].clamp(max=10))
            head = self.head(features.mean(dim=(2, 3)))
        extrinsics, intrinsics = [], []
        for i, row in enumerate(head.numpy().astype(np.float64)):
            import cv2

            rotation, _ = cv2.Rodrigues(row[:3] * 0.1 * i)
            extrinsics.append(np.hstack([rotation, (row[3:6] * 0.1 * i)[:, None]]))
            focal = w * (0.9 + 0.05 * np.tanh(row[6]))
            intrinsics.append([[focal, 0, (w - 1) / 2], [0, focal, (h - 1) / 2], [0, 0, 1]])
        processed = (batch.permute(0, 2, 3, 1).numpy() * 255).round().astype(np.uint8)
        return Prediction(
            processed_images=processed,
            depth=depth.numpy().astype(np.float32),
            conf=conf.numpy().astype(np.float32),
            extrinsics=np.asarray(extrinsics, dtype=np.float32),
            intrinsics=np.asarray(intrinsics, dtype=np.float32),
        )


def load_model(model_id: str, device: str = "cpu") -> Any:
    """``StandInDA3`` for "stand-in", else ``DepthAnything3.from_pretrained(model_id)`` on ``device``."""
    if model_id == "stand-in":
        return StandInDA3()
    from depth_anything_3.api import DepthAnything3  # only in the service's own environment

    model = DepthAnything3.from_pretrained(model_id).to(device=device).eval()
    model.model_id = model_id
    model.metric = "metric" in model_id.lower() or "nested" in model_id.lower()
    return model


def handle(model: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """The reply value for one request (module docstring of ``reconstruction.da3``); errors become replies."""
    try:
        images = inputs["images"]
        if not images or any(np.asarray(i).ndim != 3 or np.asarray(i).dtype != np.uint8 for i in images):
            raise ValueError("images must be a non-empty list of (H, W, 3) uint8 arrays")
        prediction = model.inference(list(images), process_res=int(inputs.get("process_res") or 504))
        return {
            "ok": True,
            "model": str(getattr(model, "model_id", type(model).__name__)),
            "metric": bool(getattr(model, "metric", False)),
            "depth": np.asarray(prediction.depth, dtype=np.float32),
            "conf": np.asarray(prediction.conf, dtype=np.float32),
            "extrinsics": np.asarray(prediction.extrinsics, dtype=np.float32),
            "intrinsics": np.asarray(prediction.intrinsics, dtype=np.float32),
        }
    except Exception as error:  # the client gets the reason instead of a dropped connection
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}


class Da3Server:
    """``model`` served on the Unix socket ``path`` (one request per connection, one model call at a time)
    from a background thread; ``close()`` stops it and removes the socket."""

    def __init__(self, path: str, model: Any) -> None:
        lock = threading.Lock()

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    method, value = unpack(read_frame(self.request, MAX_REQUEST_BYTES))
                    if method != "run" or not isinstance(value, dict):
                        raise ValueError(f"unknown request {method!r}")
                    with lock:
                        reply = handle(model, value)
                except (ValueError, ConnectionError) as error:
                    reply = {"ok": False, "error": str(error)}
                write_frame(self.request, pack("reply", reply))

        if os.path.exists(path):
            os.unlink(path)
        self.path = path
        self.server = socketserver.ThreadingUnixStreamServer(path, Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

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
