"""A sandboxed kernel's host side: its private directories, its channels (vlm, perception, multi-view), the process
started inside them, and what an episode's spec must say to reach them from inside.

See :mod:`spatialclaw.kernel.sandbox` for the policy itself and docs/security.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from spatialclaw.kernel.channels import PerceptionRelay, ServiceRelay, UnixForwarder
from spatialclaw.kernel.process import KernelProcess
from spatialclaw.kernel.sandbox import ResourceLimits
from spatialclaw.kernel.sandbox_dirs import SandboxDirs

__all__ = ["KernelSandbox"]


class KernelSandbox:
    """The private directories and host-side channels of one sandboxed kernel (``close`` removes them)."""

    def __init__(self) -> None:
        self.dirs = SandboxDirs()
        self.vlm_forwarder = UnixForwarder(self.dirs.channels / "vlm.sock")
        self.perception_relay: PerceptionRelay | None = None
        self.service_relay: ServiceRelay | None = None

    def process(
        self,
        environment: dict[str, str],
        workdir: Path,
        snapshot_dir: Path,
        limits: ResourceLimits,
        startup_timeout_s: float,
        readable: list[Path],
        required: bool = False,
    ) -> KernelProcess:
        """The process, its private directories and its host-side channels (vlm, perception); with
        ``required`` its start fails where a guarantee of the sandbox does not hold (:class:`KernelProcess`)."""
        from spatialclaw.primitives.perception.remote import ENV_VAR, SOCKET_ENV_VAR

        dirs = self.dirs
        if environment.get(ENV_VAR):
            self.perception_relay = PerceptionRelay(
                dirs.channels / "perception.sock", environment[ENV_VAR], environment.get("RAY_ADDRESS")
            )
            environment = {**environment, SOCKET_ENV_VAR: str(self.perception_relay.path)}
        from spatialclaw.primitives.reconstruction.da3 import SOCKET_ENV_VAR as MULTIVIEW

        if environment.get(MULTIVIEW):  # the backend service's socket is outside; the kernel gets a relay
            self.service_relay = ServiceRelay(dirs.channels / "multiview.sock", environment[MULTIVIEW])
            environment = {**environment, MULTIVIEW: str(self.service_relay.path)}
        policy = dirs.policy(environment, workdir, [snapshot_dir], limits, readable)
        return KernelProcess(
            workdir,
            dirs.connection,
            environment,
            startup_timeout_s=startup_timeout_s,
            sandbox=policy,
            channel_dir=dirs.channels,
            required=required,
        )

    def stage(
        self, inputs: list[dict[str, Any]], vlm: dict[str, Any] | None
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """An episode's inputs and vlm configuration as the sandbox sees them: its own links to this
        episode's files (nothing around them), and the vlm channel's socket."""
        return self.dirs.stage(inputs), self.route_vlm(vlm)

    def route_vlm(self, vlm: dict[str, Any] | None) -> dict[str, Any] | None:
        """Point the sandbox's ``vlm.sock`` at this episode's VLM server; the kernel gets the socket path."""
        if not vlm or not (vlm.get("url") or vlm.get("socket")):
            self.vlm_forwarder.target = None
            return vlm
        if vlm.get("socket"):  # the server's private Unix socket (outside the sandbox)
            self.vlm_forwarder.target = str(vlm["socket"])
        else:
            address = urlsplit(vlm["url"])
            self.vlm_forwarder.target = (address.hostname or "127.0.0.1", address.port or 80)
        routed = {key: value for key, value in vlm.items() if key not in ("url", "socket")}
        return {**routed, "socket": str(self.vlm_forwarder.path)}

    def close(self) -> None:
        for channel in (self.vlm_forwarder, self.perception_relay, self.service_relay):
            if channel is not None:
                channel.close()
        self.perception_relay = self.service_relay = None
        self.dirs.remove()
