"""``KernelPool``: kernels reused between episodes, so an episode does not pay a kernel start.

``acquire`` hands out an idle kernel reset for the new episode (see :meth:`Kernel.reset`: nothing of
the previous episode survives), starting a new one while fewer than ``size`` exist; it blocks when all
are busy. ``release`` returns a kernel; a dead one is discarded and replaced on demand. Thread-safe.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterable

from spatialclaw.kernel import Kernel

__all__ = ["KernelPool"]


class KernelPool:
    """At most ``size`` kernels, created lazily (``prestart=True`` starts them all now).

    ``kernel_options`` are passed to every :class:`Kernel` (memory limit, timeouts, ...).
    """

    def __init__(self, size: int = 2, *, prestart: bool = False, **kernel_options: Any) -> None:
        if size < 1:
            raise ValueError(f"a kernel pool needs size >= 1, got {size}")
        self.size = size
        self.kernel_options = kernel_options
        self._idle: list[Kernel] = []
        self._busy: set[int] = set()
        self._count = 0
        self._closed = False
        self._condition = threading.Condition()
        if prestart:
            self._idle.extend(Kernel(**kernel_options) for _ in range(size))
            self._count = size

    def acquire(
        self,
        frames: Any = None,
        meta: dict[str, Any] | None = None,
        workdir: str | Path | None = None,
        *,
        videos: Iterable[Any] | None = None,
        vlm: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Kernel:
        """A kernel loaded for a new episode. Blocks up to ``timeout`` seconds when all are busy."""
        with self._condition:
            if self._closed:
                raise RuntimeError("this KernelPool is closed")
            if not self._condition.wait_for(lambda: self._idle or self._count < self.size, timeout=timeout):
                raise TimeoutError(f"no kernel became free within {timeout} s (pool size {self.size})")
            kernel = self._idle.pop() if self._idle else None
            if kernel is None:
                self._count += 1
        if kernel is None:
            try:
                kernel = Kernel(frames, meta, workdir, videos=videos, vlm=vlm, **self.kernel_options)
            except BaseException:
                with self._condition:
                    self._count -= 1
                    self._condition.notify()
                raise
        else:
            try:
                kernel.reset(frames, meta, workdir, videos=videos, vlm=vlm)
            except BaseException:
                self._discard(kernel)
                raise
        with self._condition:
            self._busy.add(id(kernel))
        return kernel

    def release(self, kernel: Kernel) -> None:
        """Give a kernel back; a dead kernel is shut down and its slot freed."""
        with self._condition:
            self._busy.discard(id(kernel))
            if self._closed or not kernel.is_alive():
                self._count -= 1
                self._condition.notify()
                dispose = True
            else:
                self._idle.append(kernel)
                self._condition.notify()
                dispose = False
        if dispose:
            kernel.shutdown()

    def _discard(self, kernel: Kernel) -> None:
        kernel.shutdown()
        with self._condition:
            self._count -= 1
            self._condition.notify()

    def close(self) -> None:
        """Shut down the idle kernels now; busy ones are shut down when released."""
        with self._condition:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        for kernel in idle:
            kernel.shutdown()

    def __enter__(self) -> KernelPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
