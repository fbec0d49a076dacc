"""Choosing where learned models run: CUDA, then Apple MPS, then CPU, unless the user says otherwise."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["default_dtype", "select_device"]


def select_device(preferred: str | None = None) -> str:
    """Return a torch device string. ``preferred`` or ``SPATIALCLAW_DEVICE`` overrides the automatic choice."""
    import torch

    choice = preferred or os.environ.get("SPATIALCLAW_DEVICE")
    if choice:
        if choice.startswith("cuda") and not torch.cuda.is_available():
            raise RuntimeError(
                f"device {choice!r} was requested but CUDA is not available; use 'cpu' or unset SPATIALCLAW_DEVICE"
            )
        return choice
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def default_dtype(device: str) -> torch.dtype:
    """bfloat16 on CUDA devices that support it, float16 on MPS, float32 on CPU."""
    import torch

    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device == "mps":
        return torch.float16
    return torch.float32
