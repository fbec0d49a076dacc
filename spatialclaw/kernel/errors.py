"""Exceptions a :class:`~spatialclaw.kernel.kernel.Kernel` raises for its own operations (not for what a cell does)."""

from __future__ import annotations

__all__ = ["KernelDied", "PreloadError"]


class PreloadError(RuntimeError):
    """The episode's namespace could not be loaded (for example a missing or corrupt frame file)."""


class KernelDied(RuntimeError):
    """The kernel died during an internal operation (preload, reset) and could not be brought back."""
