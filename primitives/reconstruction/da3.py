"""The Depth Anything 3 adapter: a ``MultiViewBackend`` that asks a DA3 service in its own environment.

The ``depth-anything-3`` package pins numpy<2, xformers and moviepy==1.0.3, so it cannot live in this
environment. It runs in its own virtual environment as a small service
(``python -m spatialclaw.primitives.reconstruction.da3_service --socket PATH --model ID``) on a Unix socket;
this adapter talks to it with the perception relay's wire format (``perception.remote``): each message is
8 bytes of big-endian length, then JSON with arrays as ``{"__ndarray__": [dtype, shape, base64]}``; neither
side ever unpickles.

Request (``encode_request("da3", "run", [inputs])``), ``inputs``:
    ``images``: N (H, W, 3) uint8 RGB arrays; ``intrinsics``: (N, 3, 3) float64 pixels or None;
    ``process_res``: longest side of the model's processing resolution, pixels.
Reply (``encode_request("da3", "reply", [value])``), ``value``:
    ``{"ok": true, "model": str, "metric": bool, "depth": (N, h, w) float32 metres, "conf": (N, h, w) float32
    (DA3's raw confidence, >= 1), "extrinsics": (N, 3, 4) float32 world-to-camera (OpenCV), "intrinsics":
    (N, 3, 3) float32 pixels at (h, w)}`` or ``{"ok": false, "error": str}``.

:func:`from_da3` converts a reply into a :class:`MultiViewOutput`: world-to-camera inverted to
camera-to-world, DA3's confidence mapped to [0, 1] as ``1 - 1 / conf``.
"""

from __future__ import annotations

import os
import socket
from typing import Any, cast

import numpy as np

from spatialclaw.primitives.perception.remote import (
    MAX_FRAME_BYTES,
    decode_request,
    encode_request,
    read_frame,
    write_frame,
)
from spatialclaw.primitives.reconstruction.multiview import MultiViewOutput

__all__ = ["DEFAULT_PROCESS_RES", "SOCKET_ENV_VAR", "Da3Backend", "MultiViewServiceError", "from_da3", "pack", "unpack"]

SOCKET_ENV_VAR = "SPATIALCLAW_MULTIVIEW_SOCKET"
"""Environment variable naming the Unix socket of the DA3 service; when set, ``reconstruct`` uses it."""
DEFAULT_PROCESS_RES = 504
_TIMEOUT_S = 600.0


class MultiViewServiceError(RuntimeError):
    """The multi-view model service cannot be reached or reported an error."""


def pack(method: str, value: Any) -> bytes:
    """One message of the DA3 wire format (JSON; arrays as typed bytes)."""
    return encode_request("da3", method, [value])


def unpack(data: bytes) -> tuple[str, Any]:
    """``(method, value)`` of a message made by :func:`pack`; ``ValueError`` when malformed."""
    _, method, args = decode_request(data)
    if len(args) != 1:
        raise ValueError("malformed multi-view message: expected one value")
    return method, args[0]


def from_da3(reply: dict[str, Any]) -> MultiViewOutput:
    """A DA3 reply (see the module docstring) as a :class:`MultiViewOutput` (camera-to-world poses)."""
    extrinsics = np.asarray(reply["extrinsics"], dtype=np.float64)
    count = len(extrinsics)
    w2c = np.tile(np.eye(4), (count, 1, 1))
    w2c[:, :3, :] = extrinsics[:, :3, :]
    poses = np.full((count, 4, 4), np.nan)
    for i in range(count):
        if np.isfinite(w2c[i]).all() and abs(np.linalg.det(w2c[i][:3, :3])) > 1e-9:
            poses[i] = np.linalg.inv(w2c[i])
    conf = np.asarray(reply["conf"], dtype=np.float32)
    unit = np.clip(1.0 - 1.0 / np.maximum(conf, 1.0), 0.0, 1.0)
    return MultiViewOutput(
        depth=[np.asarray(d, dtype=np.float32) for d in reply["depth"]],
        intrinsics=np.asarray(reply["intrinsics"], dtype=np.float64),
        poses=poses,
        confidence=list(unit),
        metric=bool(reply["metric"]),
        model=str(reply["model"]),
    )


class Da3Backend:
    """Depth Anything 3 through its service at ``socket_path`` (default ``$SPATIALCLAW_MULTIVIEW_SOCKET``).

    ``process_res``: longest side of DA3's processing resolution in pixels (its default 504)."""

    name = "da3"

    def __init__(self, socket_path: str | os.PathLike[str] | None = None, process_res: int = DEFAULT_PROCESS_RES):
        path = os.fspath(socket_path) if socket_path is not None else os.environ.get(SOCKET_ENV_VAR, "")
        if not path:
            raise MultiViewServiceError(
                f"no DA3 service: set {SOCKET_ENV_VAR} to its Unix socket (start it in its own environment with "
                "`python -m spatialclaw.primitives.reconstruction.da3_service --socket PATH --model ID`)"
            )
        self.socket_path = path
        self.process_res = int(process_res)

    def call(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Send one request, return the service's reply value (``MultiViewServiceError`` when it failed)."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(_TIMEOUT_S)
                sock.connect(self.socket_path)
                write_frame(sock, pack("run", inputs))
                method, value = unpack(read_frame(sock, MAX_FRAME_BYTES))
        except (OSError, ConnectionError) as error:
            raise MultiViewServiceError(f"the DA3 service at {self.socket_path} does not answer ({error})") from None
        if method != "reply" or not isinstance(value, dict):
            raise MultiViewServiceError("the DA3 service sent a malformed reply")
        if not value.get("ok"):
            raise MultiViewServiceError(f"the DA3 service failed: {value.get('error', 'no reason given')}")
        return cast(dict[str, Any], value)

    def run(self, images: list[np.ndarray], intrinsics: np.ndarray | None = None) -> MultiViewOutput:
        """Depth, intrinsics, camera-to-world poses and confidence of ``images`` ((H, W, 3) uint8 RGB)."""
        inputs = {
            "images": [np.ascontiguousarray(image, dtype=np.uint8) for image in images],
            "intrinsics": None if intrinsics is None else np.asarray(intrinsics, dtype=np.float64),
            "process_res": self.process_res,
        }
        return from_da3(self.call(inputs))

    def __repr__(self) -> str:
        return f"Da3Backend(socket_path={self.socket_path!r}, process_res={self.process_res})"
