"""How an episode runs: :class:`AgentConfig` (steps, images, timeouts, limits, sandbox, API detail) and the
trajectory header's record of the sandbox that a config's kernel gets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from spatialclaw.agent.limits import Limits

__all__ = ["AgentConfig", "sandbox_record"]


@dataclass
class AgentConfig:
    """How an episode runs. Times in seconds, image sizes in pixels.

    ``max_images_per_request`` and ``max_image_mb_per_request`` (PNG megabytes, before base64) default
    to a budget that both OpenAI (500 images, 50 MB per request) and Anthropic (100 images, 32 MB per request)
    accept: 100 images, 22 MB (about 29 MB as base64), room for the paper's 32 key frames of a video at a 768 px
    long side (about 0.4 to 0.8 MB each as PNG; see docs/benchmarks.md); vLLM servers need
    ``--limit-mm-per-prompt`` at least as high. ``max_image_side`` bounds each observation image (larger ones
    are downscaled for the model; the trajectory keeps the originals in its ``cell`` events). The frames that
    go with the question follow the task's benchmark frame policy (``meta["key_frames"]`` per input at
    ``meta["frame_long_side"]``, set when a benchmark is loaded); a task without one gets ``preview_images``
    frames in all, evenly spread, downscaled to ``preview_max_side``. ``model_params`` go to every model call
    (``max_tokens``, ``temperature``, ``reasoning_effort``, ``thinking_budget``, ``extra_body``...).
    ``kernel_options`` go to :class:`~spatialclaw.kernel.kernel.Kernel` when the agent starts its own kernel
    (``memory_limit_mb``, ``startup_timeout_s``, ...). ``fsync`` makes every trajectory event durable
    on disk before the loop goes on. ``limits`` (a :class:`~spatialclaw.agent.limits.Limits`, or a dict of its
    fields) bound the episode's wall-clock time, tokens and cost; ``max_steps`` is the step budget.
    ``api_detail`` is ``"core"`` (the default: every name of the kernel with its signature and one line,
    under 12,000 characters; the kernel's ``manual(name)`` gives the rest), ``"brief"`` (signatures and
    one-paragraph summaries) or ``"full"`` (whole docstrings, about 47,000 characters).
    ``sandbox`` is the kernel sandbox mode (``"auto"``, ``"required"``, ``"off"``; see docs/security.md) of a
    kernel the agent starts; the trajectory header records it and whether the sandbox was active.
    """

    max_steps: int = 30
    max_format_errors: int = 3
    cell_timeout_s: float = 120.0
    max_images_per_request: int = 100
    max_image_mb_per_request: float = 22.0
    max_image_side: int = 1568
    preview_images: int = 8
    preview_max_side: int = 768
    observation_chars: int = 8000
    condense_errors: bool = True
    plan: bool = False
    fallback: bool = True
    vlm_side_channel: bool = True
    model_params: dict[str, Any] = field(default_factory=dict)
    kernel_options: dict[str, Any] = field(default_factory=dict)
    fsync: bool = True
    limits: Limits = field(default_factory=Limits)
    api_detail: str = "core"
    sandbox: str = "auto"

    def __post_init__(self) -> None:
        self.limits = Limits.coerce(self.limits)
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")
        if self.api_detail not in ("core", "brief", "full"):
            raise ValueError(f"api_detail must be 'core', 'brief' or 'full', got {self.api_detail!r}")
        from spatialclaw.kernel.sandbox import check_mode

        check_mode(self.sandbox)
        if self.max_format_errors < 1:
            raise ValueError(f"max_format_errors must be at least 1, got {self.max_format_errors}")
        if self.max_images_per_request < 0 or self.max_image_mb_per_request <= 0:
            raise ValueError(
                f"max_images_per_request must be >= 0 and max_image_mb_per_request > 0, got "
                f"{self.max_images_per_request} and {self.max_image_mb_per_request}"
            )

    def request_limits(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~spatialclaw.agent.context.build_messages` that this config sets."""
        return {
            "max_images": self.max_images_per_request,
            "max_image_bytes": int(self.max_image_mb_per_request * 1e6),
            "condense_errors": self.condense_errors,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sandbox_record(config: AgentConfig, kernel: Any) -> dict[str, Any]:
    """The header's ``sandbox``: the given kernel's own record (mode, active, limits), else what a kernel
    started in ``config.sandbox`` mode gets on this host."""
    record = getattr(kernel, "sandbox", None)
    if isinstance(record, dict):
        return record
    from spatialclaw.kernel.sandbox import describe

    return describe(config.kernel_options.get("sandbox", config.sandbox))
