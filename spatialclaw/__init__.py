"""spatialclaw: spatial reasoning with vision-language models, with code as the action interface.

Importing the package is cheap: the public names below are resolved on first use, so that the kernel
side (``spatialclaw.primitives``) can be imported without loading the host side.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "Kernel": "spatialclaw.kernel.kernel",
    "KernelDied": "spatialclaw.kernel.errors",
    "KernelPool": "spatialclaw.kernel.pool",
    "CellResult": "spatialclaw.kernel.cell",
    "CellError": "spatialclaw.kernel.cell",
    "CellImage": "spatialclaw.kernel.cell",
    "Task": "spatialclaw.task",
    "FrameSpec": "spatialclaw.task",
    "Message": "spatialclaw.chat",
    "Agent": "spatialclaw.agent.loop",
    "AgentConfig": "spatialclaw.agent.config",
    "EpisodeResult": "spatialclaw.agent.result",
    "Limits": "spatialclaw.agent.limits",
    "load_model": "spatialclaw.models",
    "load_episode": "spatialclaw.trajectories.episode_log",
    "export_episodes": "spatialclaw.export.runner",
    "SpatialEnv": "spatialclaw.runner.rl_env",
    "Session": "spatialclaw.interactive.session_client",
    "start_session": "spatialclaw.interactive.session",
}

__all__ = ["__version__", *sorted(_PUBLIC)]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'spatialclaw' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext spatialclaw``: register the notebook magics (see :mod:`spatialclaw.interactive.notebook`)."""
    from spatialclaw.interactive.notebook import load_ipython_extension as load

    load(ipython)
