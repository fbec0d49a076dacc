"""``RunConfig``: the settings of one benchmark run, what makes up its identity and what a resume may change.

See :mod:`spatialclaw.runner.run` for how a run and its resumes use these settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.runner.interfaces import INTERFACES

__all__ = ["DEFAULT_GENERATION", "RESUMABLE", "RunConfig", "comparable"]

#: The generation settings of a new run that names none: greedy decoding, the provider's token limit.
DEFAULT_GENERATION: dict[str, Any] = {"temperature": 0.0}

#: Settings a resume may change (all others must match the run's): they decide how fast and how
#: reliably the episodes run, not what an episode is.
RESUMABLE = (
    "workers",
    "executor",
    "endpoint URL (openai-compat URL or model_options.base_url)",
    "model_options.max_attempts (--model-retries)",
    "provider limits (--max-concurrency, --rate-limit)",
    "a larger limit",
)


@dataclass
class RunConfig:
    """Everything a run needs. ``interface``: how the model acts, one of :data:`~spatialclaw.runner.interfaces.INTERFACES`
    (``baseline="no-tools"`` is the older spelling of ``interface="no-tools"``). ``agent``: :class:`~spatialclaw.agent.config.AgentConfig` fields to override;
    ``model_options``: passed to :func:`~spatialclaw.models.load_model` (``max_attempts`` sets the retry
    policy); ``episode_timeout_s`` bounds each episode's wall-clock time: the local executor makes it the
    agent's time limit (the episode ends itself with status ``timeout``), the Ray executor cancels the
    episode's actor. Either way the row's status is ``timeout`` and ``--resume`` runs the task again.
    ``repeats``: episodes per task (one row each; None: 1 for a new run, the run's for a resume);
    ``cache``: answer requests already made from ``RUN/cache/`` (:mod:`spatialclaw.models.response_cache`).
    ``limit``: a whole number of tasks, or a fraction in (0, 1) of the benchmark's tasks, evenly spaced over
    its order (``0.1``: every tenth task). ``provider_limits``: provider -> :class:`~spatialclaw.models.throttle.ProviderLimit`
    (concurrency and rate of model requests, per process). ``judge``: the model spec of the judge of the rows
    a benchmark's rules leave to one (:mod:`spatialclaw.runner.judge`; None: no judge). ``command_config``:
    the command's effective options, recorded in the session's manifest stamp and ``RUN/config.toml``.
    ``scoring`` and ``kernel_frames``: see :func:`~spatialclaw.benchmarks.registry.load_benchmark`."""

    benchmark: str
    model: str
    out: Path
    limit: int | float | None = None
    seed: int = 0
    source: str | None = None
    media_root: str | None = None
    split: str | None = None
    workers: int = 1
    interface: str = "code"
    baseline: str | None = None
    executor: str = "local"
    ray_address: str | None = None
    resume: bool = False
    agent: dict[str, Any] = field(default_factory=dict)
    model_options: dict[str, Any] = field(default_factory=dict)
    episode_timeout_s: float | None = None
    ray_gpus_per_worker: float = 0.0
    perception_actors: int = 0
    perception_gpus: float = 1.0
    services: list[Any] = field(default_factory=list)  # --service: spatialclaw.services.ray_services.ServiceOption
    progress: bool = True
    frames: dict[str, Any] = field(default_factory=dict)  # fps / key_frames / long_side over the spec's policy
    generation: dict[str, Any] | None = None  # temperature, max_tokens, provider options; None: see the module
    repeats: int | None = None  # episodes per task (each its own attempt); None: 1, or the resumed run's
    cache: bool = True  # answer repeated requests from RUN/cache/ (see spatialclaw.models.response_cache)
    provider_limits: dict[str, Any] = field(default_factory=dict)
    judge: str | None = None
    command_config: dict[str, Any] | None = None
    scoring: str | None = None  # reference / lenient; None: reference for the paper's benchmarks, else lenient
    kernel_frames: str = "aspect_fit"  # the paper's benchmarks: the kernel's frames resized as shown, or "full"

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        if self.baseline not in (None, "no-tools"):
            raise ValueError(f"unknown baseline {self.baseline!r}; the only baseline is 'no-tools'")
        if self.baseline == "no-tools":
            if self.interface not in ("code", "no-tools"):
                raise ValueError(
                    f"--baseline no-tools and --interface {self.interface} contradict each other; give one"
                )
            self.interface = "no-tools"
        if self.interface not in INTERFACES:
            raise ValueError(f"unknown interface {self.interface!r}; choose one of {', '.join(INTERFACES)}")
        self.baseline = "no-tools" if self.interface == "no-tools" else None
        if self.executor not in ("local", "ray"):
            raise ValueError(f"unknown executor {self.executor!r}; use 'local' or 'ray'")
        if self.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {self.workers}")
        if isinstance(self.limit, float) and not 0 < self.limit < 1:
            raise ValueError(f"--limit as a fraction must be between 0 and 1, got {self.limit}")
        if self.repeats is not None and self.repeats < 1:
            raise ValueError(f"--repeats must be at least 1, got {self.repeats}")
        if self.episode_timeout_s is not None and not self.episode_timeout_s > 0:
            raise ValueError(f"--episode-timeout must be above 0 seconds, got {self.episode_timeout_s}")
        from spatialclaw.agent.config import AgentConfig

        AgentConfig(**self.agent)  # bad agent options (limits included) fail here, before any episode
        if self.perception_actors and self.executor != "ray":
            raise ValueError(
                "--perception-actors shares perception models between episodes on Ray actors; "
                "add --executor ray (the local executor loads the models in each kernel)"
            )
        if self.services and self.executor != "ray":
            raise ValueError(
                "--service runs a backend as a Ray actor of the run; add --executor ray (for a local run start it "
                "with `spatialclaw serve NAME --env DIR` and export the variable it prints)"
            )
        if self.perception_actors < 0 or self.perception_gpus < 0:
            raise ValueError(
                f"--perception-actors and --perception-gpus must be >= 0, got {self.perception_actors} "
                f"and {self.perception_gpus}"
            )

    def perception_setup(self) -> dict[str, Any] | None:
        """Where the learned perception models run, for the manifest (None: in each episode's kernel)."""
        if not self.perception_actors:
            return None
        return {"where": "ray-actors", "actors": self.perception_actors, "gpus_per_actor": self.perception_gpus}

    def identity(self) -> dict[str, Any]:
        """The settings that decide the results (hashed into the manifest); not workers, executor, paths or
        the URL of an OpenAI-compatible server."""
        model = (
            self.model.rsplit("@", 1)[0] if self.model.startswith("openai-compat:") else self.model
        )  # the server may move
        return {
            "benchmark": self.benchmark,
            "limit": self.limit,
            "seed": self.seed,
            "split": self.split,
            "model": model,
            "interface": self.interface,
            "agent": self.agent,
            "model_options": {k: v for k, v in self.model_options.items() if "key" not in k.lower()},
            **({"frames": self.frames} if self.frames else {}),  # only when set: older runs resume unchanged
            **({"scoring": self.scoring} if self.scoring else {}),
            **({"kernel_frames": self.kernel_frames} if self.kernel_frames != "aspect_fit" else {}),
            **({"generation": self.generation} if self.generation is not None else {}),
            **({"repeats": self.repeats} if (self.repeats or 1) > 1 else {}),  # only K > 1: older runs resume
            **({"judge": self.judge} if self.judge else {}),  # only when set: older runs resume unchanged
        }

    def agent_with_generation(self) -> dict[str, Any]:
        """The agent options the episodes run with: ``generation`` over the agent's ``model_params``."""
        if not self.generation:
            return self.agent
        return {**self.agent, "model_params": {**self.agent.get("model_params", {}), **self.generation}}

    def session(self) -> dict[str, Any]:
        """This session's settings that a resume may change, for the manifest's ``sessions`` list."""
        return {
            "workers": self.workers,
            "executor": self.executor,
            "model": self.model,
            "base_url": self.model_options.get("base_url"),
            "model_retries": self.model_options.get("max_attempts"),
            "limit": self.limit,
            "episode_timeout_s": self.episode_timeout_s,
            "perception": self.perception_setup(),
            **({"services": {o.name: o.as_dict() for o in self.services}} if self.services else {}),
            "sandbox": self.sandbox_setup(),
            "cache": self.cache,
            **(
                {"provider_limits": {k: vars(v) for k, v in self.provider_limits.items()}}
                if self.provider_limits
                else {}
            ),
            **({"options": self.command_config} if self.command_config is not None else {}),
        }

    def sandbox_setup(self) -> dict[str, Any]:
        """The kernel sandbox of this session's episodes: mode, whether it is active here, what is missing."""
        from spatialclaw.kernel.sandbox import describe

        return describe(self.agent.get("sandbox", "auto"))


def comparable(identity: dict[str, Any]) -> dict[str, Any]:
    """An identity without what a resume may change (``limit``, ``max_attempts``, ``base_url``); an older
    manifest's ``baseline`` read as its ``interface``."""
    data = {k: v for k, v in identity.items() if k not in ("limit", "baseline")}
    if "interface" not in data:
        data["interface"] = "no-tools" if identity.get("baseline") == "no-tools" else "code"
    data["model_options"] = {
        k: v for k, v in (identity.get("model_options") or {}).items() if k not in ("max_attempts", "base_url")
    }
    return data
