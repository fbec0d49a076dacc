"""How the model acts in an episode: the four interfaces that ``bench --interface`` compares.

- ``no-tools``: one call; the model answers from the question and the preview frames
  (:mod:`spatialclaw.runner.direct`).
- ``single-pass``: the model writes one cell without seeing any output, the cell runs, then one more
  call answers from that output (:mod:`spatialclaw.runner.single_pass`).
- ``tool-calls``: the kernel's primitives as structured function calls (the provider's tool-call wire
  format, JSON-schema from their signatures and docstrings), results as JSON with images attached
  (:mod:`spatialclaw.runner.tool_calls`).
- ``code``: the agent loop, one cell per step with every output seen (:class:`spatialclaw.agent.loop.Agent`).

Each runner has ``run(task, out_dir, kernel=None) -> EpisodeResult`` (``no-tools`` takes no kernel) and
writes ``interface`` into its trajectory header.
"""

from __future__ import annotations

from typing import Any

__all__ = ["INTERFACES", "make_runner", "needs_kernel"]

INTERFACES = ("no-tools", "single-pass", "tool-calls", "code")


def needs_kernel(interface: str) -> bool:
    """Whether episodes of ``interface`` run cells (and so take a kernel from the pool)."""
    return interface != "no-tools"


def make_runner(interface: str, model: Any, config: Any) -> Any:
    """The episode runner of ``interface`` for ``model`` (a :class:`~spatialclaw.models.Model`) and
    ``config`` (an :class:`~spatialclaw.agent.config.AgentConfig`)."""
    if interface == "no-tools":
        from spatialclaw.runner.direct import DirectAnswerer

        return DirectAnswerer(model, config)
    if interface == "single-pass":
        from spatialclaw.runner.single_pass import SinglePassAgent

        return SinglePassAgent(model, config)
    if interface == "tool-calls":
        from spatialclaw.runner.tool_calls import ToolCallAgent

        return ToolCallAgent(model, config)
    if interface == "code":
        from spatialclaw.agent.loop import Agent

        return Agent(model, config)
    raise ValueError(f"unknown interface {interface!r}; choose one of {', '.join(INTERFACES)}")
