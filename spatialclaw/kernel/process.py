"""The process side of a kernel: start, liveness, interrupt, restart and shutdown of one ipykernel,
with its Jupyter channels. Nothing here knows about cells or observations.

With a :class:`~spatialclaw.kernel.sandbox.SandboxPolicy` the process runs inside the sandbox
(:func:`spatialclaw.kernel.sandbox.launch_argv`), its channels use Jupyter's ``ipc`` transport (Unix sockets in a
directory bound into the sandbox: the sandbox has no shared loopback) and interrupts travel as messages.
Shutting it down kills the sandbox's PID namespace, so nothing the kernel started outlives it; nor does
it outlive its owner: the process that becomes bwrap gets SIGKILL when the launching thread (which lives
as long as the host process) ends, and bwrap's own ``--die-with-parent`` takes the sandbox with it."""

from __future__ import annotations

import signal
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import KernelManager

from spatialclaw.kernel.sandbox import SandboxPolicy, SandboxUnavailable, host_caps, launch_argv
from spatialclaw.kernel.sandbox_holds import failures, sandbox_holds
from spatialclaw.kernel.sandbox_limits import HostCaps, die_with_owner

__all__ = ["KernelProcess", "KernelStartError"]


# bwrap --die-with-parent kills the sandbox when the *thread* that started it ends (PR_SET_PDEATHSIG follows
# the parent thread): every sandbox is started from this one thread, which lives as long as the process.
_LAUNCHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spatialclaw-kernel-launcher")


class KernelStartError(RuntimeError):
    """The kernel process could not be started or did not become ready in time."""


class KernelProcess:
    """One ipykernel process (``python -m ipykernel_launcher``) and a blocking client for its channels.

    The connection file lives in ``state_dir`` (``WORKDIR/.spatialclaw``), the working directory is
    ``workdir`` and the environment is exactly ``env`` (already scrubbed of secrets by the caller).
    With ``sandbox`` (a policy) the ``ipc`` sockets live in ``channel_dir`` and the policy's environment
    is the kernel's (``state_dir`` must then be readable inside the sandbox). Once it is ready, ``holds``
    says which of the sandbox's guarantees hold (:func:`~spatialclaw.kernel.sandbox_holds.sandbox_holds`);
    with ``required`` a start where one does not raises :class:`SandboxUnavailable` (the process is ended).
    """

    def __init__(
        self,
        workdir: Path,
        state_dir: Path,
        env: dict[str, str],
        startup_timeout_s: float = 60.0,
        sandbox: SandboxPolicy | None = None,
        channel_dir: Path | None = None,
        required: bool = False,
    ) -> None:
        if sandbox is not None and channel_dir is None:
            raise ValueError("a sandboxed kernel process needs a channel_dir bound into the sandbox")
        self.workdir = workdir
        self.state_dir = state_dir
        self.env = env
        self.startup_timeout_s = startup_timeout_s
        self.sandbox = sandbox
        self.channel_dir = channel_dir
        self.required = required
        self.holds: dict[str, bool] | None = None
        self.manager: KernelManager | None = None
        self.client: BlockingKernelClient | None = None
        self._cap: HostCaps | None = None
        self._uid: int | None = None  # the sandbox's own uid, kept across restarts (its files stay its own)

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
        fatal = [line for line in text.splitlines() if "Fatal" in line or "Error" in line or "Killed" in line]
        return " | ".join(fatal[-lines:])

    @property
    def pid(self) -> int | None:
        process = getattr(getattr(self.manager, "provisioner", None), "process", None)
        return getattr(process, "pid", None)

    @property
    def process_cap(self) -> str | None:
        """How the sandbox's process count is capped (``pids-cgroup``, ``rlimit-nproc (uid N)``,
        ``rlimit-nproc``, or ``none (why)``); None unsandboxed or not running."""
        return self._cap.process_cap if self._cap is not None else None

    @property
    def memory_cap(self) -> str | None:
        """How the sandbox's memory is capped (``memory-cgroup`` or ``rlimit-data``); None as above."""
        return self._cap.memory_cap if self._cap is not None else None

    def _manager(self) -> KernelManager:
        if self.sandbox is None:
            return KernelManager(kernel_name="python3", connection_file=str(self.connection_file))
        assert self.channel_dir is not None
        manager = KernelManager(
            kernel_name="",
            transport="ipc",
            ip=str(self.channel_dir / "kernel"),
            connection_file=str(self.connection_file),
        )
        self._cap = host_caps(self.sandbox, f"kernel-{uuid.uuid4().hex[:12]}", self._uid)
        self._uid = self._cap.uid
        manager.write_connection_file()  # now, so that a sandbox with its own uid can be given it
        self._cap.give(*self.sandbox.owned, self.connection_file)
        command = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        # jupyter-client 8 takes the command from the kernel spec only (kernel_cmd is ignored); inside a PID
        # namespace the kernel's parent is pid 1, so JPY_PARENT_PID must not reach it (bwrap --clearenv).
        manager._kernel_spec = KernelSpec(
            argv=launch_argv(self.sandbox, command, self._cap),
            language="python",
            display_name="spatialclaw (sandboxed)",
            interrupt_mode="message",
        )
        return manager

    def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        manager = self._manager()
        try:
            with open(self.log_file, "ab") as log:
                if self.sandbox is None:
                    manager.start_kernel(env=self.env, cwd=str(self.workdir), stdout=log, stderr=log)
                else:
                    launch_env = {"PATH": self.env.get("PATH", "/usr/bin:/bin")}
                    _LAUNCHER.submit(
                        manager.start_kernel,
                        env=launch_env,
                        cwd=str(self.workdir),
                        stdout=log,
                        stderr=log,
                        preexec_fn=die_with_owner,
                        pass_fds=tuple(self._cap.fds.values()) if self._cap is not None else (),
                    ).result()
                    if self._cap is not None:
                        self._cap.close_fds()
            client = manager.client()
            client.start_channels()
            client.wait_for_ready(timeout=self.startup_timeout_s)
        except Exception as exc:
            try:
                manager.shutdown_kernel(now=True)
            except Exception:
                pass
            self._remove_cap()
            raise KernelStartError(
                f"the IPython kernel did not start within {self.startup_timeout_s:.0f} s ({type(exc).__name__}: {exc}); "
                "check that ipykernel is installed in this environment (pip install ipykernel)"
            ) from exc
        self.manager, self.client = manager, client
        if self.sandbox is not None:
            self._check_holds(self.sandbox)

    def _check_holds(self, policy: SandboxPolicy) -> None:
        self.holds = sandbox_holds(self.pid, policy.writable)
        if self.required and not all(self.holds.values()):
            self.shutdown()
            raise SandboxUnavailable(f"sandbox='required' but {'; '.join(failures(self.holds, policy.writable))}")

    def is_alive(self) -> bool:
        return self.manager is not None and self.manager.is_alive()

    def exit_description(self) -> str:
        """How the process ended: ``exit code 1`` or ``signal 11 (SIGSEGV)``; empty while it runs."""
        process = getattr(getattr(self.manager, "provisioner", None), "process", None)
        code = process.poll() if process is not None else None
        if code is None:
            return ""
        if self.sandbox is not None and code > 128:  # bwrap reports a child killed by signal N as 128 + N
            code = 128 - code
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
        self._remove_cap()

    def _remove_cap(self) -> None:
        if self._cap is not None:
            self._cap.remove()
            self._cap = None

    def restart(self) -> None:
        """Replace the process with a fresh one (same working directory and environment)."""
        self.shutdown()
        self.start()
