"""``KernelPool``: kernels for many episodes, so that an episode does not wait for a kernel to start.

Two ways to hand them out:

* ``fresh=True`` (benchmarks and RL): every episode gets a process no episode has used. ``spares`` kernels
  are started ahead, in the background; ``acquire`` takes one (or starts one when none is ready) and loads
  the episode into it; ``release`` shuts it down and a new spare starts in its place. Nothing a cell does
  (patched modules, builtins or ``Answerer``, threads, files in ``/tmp``) can reach the next episode.
* ``fresh=False`` (interactive use): kernels are reused; ``acquire`` resets an idle one in place (see
  :meth:`Kernel.reset`: no variable, figure or history survives, but the process is the same).

Either way at most ``size`` kernels are handed out at once; ``acquire`` blocks when all are busy. Thread-safe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spatialclaw.kernel.kernel import Kernel

__all__ = ["KernelPool"]

log = logging.getLogger(__name__)


class KernelPool:
    """At most ``size`` kernels in use at once.

    ``fresh``: a new process per episode, from ``spares`` pre-started kernels (default ``min(size, 2)``).
    Without ``fresh``, kernels are created lazily and reset in place (``prestart=True`` starts all now).
    ``kernel_options`` are passed to every :class:`Kernel` (``sandbox``, memory limit, timeouts, ...).
    """

    def __init__(
        self,
        size: int = 2,
        *,
        prestart: bool = False,
        fresh: bool = False,
        spares: int | None = None,
        **kernel_options: Any,
    ) -> None:
        if size < 1:
            raise ValueError(f"a kernel pool needs size >= 1, got {size}")
        spares = min(size, 2) if spares is None else spares
        if spares < 0:
            raise ValueError(f"a kernel pool needs spares >= 0, got {spares}")
        self.size = size
        self.fresh = fresh
        self.spares = spares if fresh else 0
        self.kernel_options = kernel_options
        self._idle: list[Kernel] = []
        self._busy: set[int] = set()
        self._count = 0  # kernels handed out (fresh) or existing (reused)
        self._starting = 0
        self._closed = False
        self._condition = threading.Condition()
        self._filler: threading.Thread | None = None
        if fresh and self.spares:
            self._filler = threading.Thread(target=self._keep_spares, name="spatialclaw-kernel-spares", daemon=True)
            self._filler.start()
        elif prestart and not fresh:
            self._idle.extend(Kernel(**kernel_options) for _ in range(size))
            self._count = size

    # -- handing kernels out -------------------------------------------------------------------------
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
        """A kernel loaded for a new episode (an empty namespace when no frames or meta are given). Blocks up
        to ``timeout`` seconds when all are busy."""
        with self._condition:
            if self._closed:
                raise RuntimeError("this KernelPool is closed")
            ready = (lambda: self._count < self.size) if self.fresh else (lambda: self._idle or self._count < self.size)
            if not self._condition.wait_for(ready, timeout=timeout):
                raise TimeoutError(f"no kernel became free within {timeout} s (pool size {self.size})")
            kernel = self._idle.pop(0) if self._idle else None
            self._count += 1 if (self.fresh or kernel is None) else 0
            self._condition.notify_all()  # the spare filler starts a replacement
        episode = frames is not None or meta is not None or videos is not None or vlm is not None or workdir is not None
        if kernel is None:
            try:
                kernel = Kernel(frames, meta, workdir, videos=videos, vlm=vlm, **self.kernel_options)
            except BaseException:
                self._free_slot()
                raise
        elif episode or not self.fresh:
            try:
                kernel.reset(frames, meta, workdir, videos=videos, vlm=vlm)
            except BaseException:
                kernel.shutdown()
                self._free_slot()
                raise
        with self._condition:
            self._busy.add(id(kernel))
        return kernel

    def release(self, kernel: Kernel) -> None:
        """Give a kernel back. With ``fresh`` it is shut down (a spare takes its place); otherwise it is kept
        for the next episode, unless it died."""
        with self._condition:
            self._busy.discard(id(kernel))
            dispose = self.fresh or self._closed or not kernel.is_alive()
            if dispose:
                self._count -= 1
            else:
                self._idle.append(kernel)
            self._condition.notify_all()
        if dispose:
            kernel.shutdown()

    def _free_slot(self) -> None:
        with self._condition:
            self._count -= 1
            self._condition.notify_all()

    # -- spares (fresh pools) --------------------------------------------------------------------------
    def _keep_spares(self) -> None:
        backoff = 0.0
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._closed or len(self._idle) + self._starting < self.spares)
                if self._closed:
                    return
                self._starting += 1
            if backoff:
                time.sleep(backoff)
            try:
                kernel: Kernel | None = Kernel(**self.kernel_options)
                backoff = 0.0
            except Exception as error:  # acquire starts its own kernel and reports the error there
                log.warning("a spare kernel could not be started: %s", error)
                kernel, backoff = None, min(max(backoff * 2, 1.0), 30.0)
            with self._condition:
                self._starting -= 1
                closed = self._closed
                if kernel is not None and not closed:
                    self._idle.append(kernel)
                self._condition.notify_all()
            if kernel is not None and closed:
                kernel.shutdown()

    def wait_for_spares(self, timeout: float = 60.0) -> bool:
        """Block until ``spares`` kernels are ready (True) or ``timeout`` seconds pass (False)."""
        with self._condition:
            return self._condition.wait_for(lambda: len(self._idle) >= self.spares, timeout=timeout)

    # -- closing ---------------------------------------------------------------------------------------
    def close(self) -> None:
        """Shut down the idle kernels now; busy ones are shut down when released."""
        with self._condition:
            self._closed = True
            idle, self._idle = self._idle, []
            if not self.fresh:
                self._count -= len(idle)
            self._condition.notify_all()
        for kernel in idle:
            kernel.shutdown()
        if self._filler is not None:
            self._filler.join(timeout=120)

    def __enter__(self) -> KernelPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
