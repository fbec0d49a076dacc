"""The process side of a kernel: start, liveness, interrupt, restart and shutdown of one ipykernel,
with its Jupyter channels. Nothing here knows about cells or observations."""

from __future__ import annotations

import signal
from pathlib import Path

from jupyter_client import BlockingKernelClient, KernelManager

__all__ = ["KernelProcess", "KernelStartError"]


class KernelStartError(RuntimeError):
    """The kernel process could not be started or did not become ready in time."""


class KernelProcess:
    """One ipykernel process (``python -m ipykernel_launcher``) and a blocking client for its channels.

    The connection file lives in ``state_dir`` (``WORKDIR/.spatialclaw``), the working directory is
    ``workdir`` and the environment is exactly ``env`` (already scrubbed of secrets by the caller).
    """

    def __init__(self, workdir: Path, state_dir: Path, env: dict[str, str], startup_timeout_s: float = 60.0) -> None:
        self.workdir = workdir
        self.state_dir = state_dir
        self.env = env
        self.startup_timeout_s = startup_timeout_s
        self.manager: KernelManager | None = None
        self.client: BlockingKernelClient | None = None

    @property
    def connection_file(self) -> Path:
        return self.state_dir / "kernel.json"

    @property
    def log_file(self) -> Path:
        """Where the process's own stdout/stderr go (start-up warnings, fatal errors before a crash)."""
        return self.state_dir / "kernel.log"

    def log_tail(self, lines: int = 3) -> str:
        """The last lines of the kernel log that look like a fatal error, joined; empty when none."""
        try:
            text = self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        fatal = [l for l in text.splitlines() if "Fatal" in l or "Error" in l or "Killed" in l]
        return " | ".join(fatal[-lines:])

    @property
    def pid(self) -> int | None:
        process = getattr(getattr(self.manager, "provisioner", None), "process", None)
        return getattr(process, "pid", None)

    def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        manager = KernelManager(kernel_name="python3", connection_file=str(self.connection_file))
        try:
            with open(self.log_file, "ab") as log:
                manager.start_kernel(env=self.env, cwd=str(self.workdir), stdout=log, stderr=log)
            client = manager.client()
            client.start_channels()
            client.wait_for_ready(timeout=self.startup_timeout_s)
        except Exception as exc:
            try:
                manager.shutdown_kernel(now=True)
            except Exception:
                pass
            raise KernelStartError(
                f"the IPython kernel did not start within {self.startup_timeout_s:.0f} s ({type(exc).__name__}: {exc}); "
                "check that ipykernel is installed in this environment (pip install ipykernel)"
            ) from exc
        self.manager, self.client = manager, client

    def is_alive(self) -> bool:
        return self.manager is not None and self.manager.is_alive()

    def exit_description(self) -> str:
        """How the process ended: ``exit code 1`` or ``signal 11 (SIGSEGV)``; empty while it runs."""
        process = getattr(getattr(self.manager, "provisioner", None), "process", None)
        code = process.poll() if process is not None else None
        if code is None:
            return ""
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "unknown signal"
            hint = " (likely killed for using too much memory)" if name == "SIGKILL" else ""
            return f"signal {-code} ({name}){hint}"
        return f"exit code {code}"

    def interrupt(self) -> None:
        if self.manager is not None and self.is_alive():
            self.manager.interrupt_kernel()

    def shutdown(self) -> None:
        """Stop the process immediately and close the channels. Safe to call twice."""
        if self.client is not None:
            self.client.stop_channels()
            self.client = None
        if self.manager is not None:
            try:
                self.manager.shutdown_kernel(now=True)
            except Exception:
                pass
            self.manager = None

    def restart(self) -> None:
        """Replace the process with a fresh one (same working directory and environment)."""
        self.shutdown()
        self.start()
