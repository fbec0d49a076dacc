"""``run_benchmark``: run (or resume) a benchmark into a run directory.

A new run loads the benchmark's tasks, stamps ``manifest.json`` and writes ``tasks.jsonl``. A resumed run
reads both back (no dataset needed), checks that the configuration is the same one, keeps the rows whose
status is ``ok`` or ``budget``, rewrites ``results.jsonl`` with exactly those, and runs every other task
(errored, timed out, or missing because the run was killed). So each task ends up with exactly one row,
and an attempt never overwrites an earlier attempt's trajectory.

The whole session holds the run's exclusive lock (:mod:`spatialclaw.runner.lock`): a second process on
the same run directory fails at once with :class:`~spatialclaw.runner.lock.RunLockedError` naming the
holder. What a resume may change (:data:`RESUMABLE`): the workers, the executor, the model's endpoint
URL, the attempts per model request (``model_options["max_attempts"]``) and a larger ``limit``, which
appends the benchmark's next tasks to the run (the tasks already in it must be the new list's first
ones). Every session (the first and each resume) is stamped in the manifest's ``sessions`` list with
those settings, and each row it writes names it (``session``: its 1-based number in that list), so
every attempt can be traced to the retries, workers and endpoint it ran with.

Generation settings (``RunConfig.generation``: ``temperature``, ``max_tokens`` and provider-specific
options) go to every model call of every episode and are part of the run's identity, so they are in the
manifest's ``config.generation``. A new run's settings are the given ones over :data:`DEFAULT_GENERATION`
(temperature 0, the provider's own token limit); a resume's are the given ones over the run's (an older
run without the key has none), so a resume that changes one is refused like any other change.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.aggregation import Aggregate, ScoredRow, aggregate
from spatialclaw.runner.episode import RETRY_STATUSES, EpisodeJob
from spatialclaw.runner.interfaces import INTERFACES
from spatialclaw.runner.lock import RunLock
from spatialclaw.trajectories.run_dir import RunDir, tasks_hash

__all__ = ["DEFAULT_GENERATION", "RESUMABLE", "RunConfig", "RunSummary", "aggregate_rows", "run_benchmark"]

#: The generation settings of a new run that names none: greedy decoding, the provider's token limit.
DEFAULT_GENERATION: dict[str, Any] = {"temperature": 0.0}

#: Settings a resume may change (all others must match the run's): they decide how fast and how
#: reliably the episodes run, not what an episode is.
RESUMABLE = (
    "workers",
    "executor",
    "endpoint URL (openai-compat URL or model_options.base_url)",
    "model_options.max_attempts (--model-retries)",
    "a larger limit",
)


@dataclass
class RunConfig:
    """Everything a run needs. ``interface``: how the model acts, one of :data:`~spatialclaw.runner.interfaces.INTERFACES`
    (``baseline="no-tools"`` is the older spelling of ``interface="no-tools"``). ``agent``: :class:`~spatialclaw.agent.config.AgentConfig` fields to override;
    ``model_options``: passed to :func:`~spatialclaw.models.load_model` (``max_attempts`` sets the retry
    policy); ``episode_timeout_s`` bounds each episode's wall-clock time: the local executor makes it the
    agent's time limit (the episode ends itself with status ``timeout``), the Ray executor cancels the
    episode's actor. Either way the row's status is ``timeout`` and ``--resume`` runs the task again."""

    benchmark: str
    model: str
    out: Path
    limit: int | None = None
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
    progress: bool = True
    frames: dict[str, Any] = field(default_factory=dict)  # fps / key_frames / long_side over the spec's policy
    generation: dict[str, Any] | None = None  # temperature, max_tokens, provider options; None: see the module

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
        if self.episode_timeout_s is not None and not self.episode_timeout_s > 0:
            raise ValueError(f"--episode-timeout must be above 0 seconds, got {self.episode_timeout_s}")
        from spatialclaw.agent.config import AgentConfig

        AgentConfig(**self.agent)  # bad agent options (limits included) fail here, before any episode
        if self.perception_actors and self.executor != "ray":
            raise ValueError(
                "--perception-actors shares perception models between episodes on Ray actors; "
                "add --executor ray (the local executor loads the models in each kernel)"
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
            **({"generation": self.generation} if self.generation is not None else {}),
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
            "sandbox": self.sandbox_setup(),
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


@dataclass
class RunSummary:
    """What a run (or resume) did: ``ran`` episodes this session, ``kept`` rows from before, the status
    counts over all rows, the aggregate, and the wall time in seconds."""

    run_dir: Path
    ran: int
    kept: int
    statuses: dict[str, int]
    aggregate: Aggregate
    duration_s: float
    unreadable: list[str] = field(default_factory=list)  # results lines not kept: their tasks ran again

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["run_dir"] = str(self.run_dir)
        return data


def aggregate_rows(rows: list[dict[str, Any]], tasks_by_id: dict[str, Any], rule: str) -> Aggregate:
    """Aggregate result rows by the benchmark's rule (rows without a score count as 0)."""
    scored = [
        ScoredRow(
            r["task_id"],
            r.get("category"),
            r.get("score"),
            dict(tasks_by_id[r["task_id"]].meta) if r["task_id"] in tasks_by_id else {},
        )
        for r in rows
    ]
    return aggregate(scored, rule)


def run_benchmark(config: RunConfig) -> RunSummary:
    """Run or resume ``config`` (see the module docstring). Returns the summary; raises on bad setup."""
    started = time.perf_counter()
    run_dir = RunDir(config.out)
    if run_dir.exists() and not config.resume:  # checked before the lock: a finished run is not "in use"
        raise FileExistsError(
            f"{config.out} already holds a run; pass --resume to continue it, or choose another --out"
        )
    created = not config.out.exists()
    lock = RunLock(config.out)
    try:
        with lock:
            return _run_locked(config, run_dir, started)
    except BaseException:
        if (
            created and config.out.is_dir() and [p.name for p in config.out.iterdir()] == [lock.path.name]
        ):  # bad setup leaves nothing behind
            lock.path.unlink()
            config.out.rmdir()
        raise


def _run_locked(config: RunConfig, run_dir: RunDir, started: float) -> RunSummary:
    # a new run: the given settings over the default; a resume: over the run's (an older run's: none)
    base = run_dir.manifest()["config"].get("generation") if run_dir.exists() else DEFAULT_GENERATION
    if config.generation is None:
        config.generation = None if base is None else dict(base)
    else:
        config.generation = {**(base or {}), **config.generation}
    identity = config.identity()
    if run_dir.exists():
        manifest = run_dir.manifest()
        if not config.resume:
            raise FileExistsError(
                f"{config.out} already holds a run; pass --resume to continue it, or choose another --out"
            )
        stored, now = comparable(manifest["config"]), comparable(identity)
        changed = sorted(k for k in set(stored) | set(now) if stored.get(k) != now.get(k))
        if changed:
            raise ValueError(
                f"cannot resume {config.out}: the configuration differs in {', '.join(changed)} "
                f"(run has {[stored.get(k) for k in changed]}, now {[now.get(k) for k in changed]}); "
                f"a resume may change only {', '.join(RESUMABLE)}"
            )
        tasks = run_dir.tasks()
        rule = manifest["aggregation"]
        tasks = _extend(config, run_dir, manifest, tasks)
        run_dir.record_resume(config.session())
    else:
        from spatialclaw.benchmarks.registry import load_benchmark

        loaded = load_benchmark(
            config.benchmark,
            source=config.source,
            media_root=config.media_root,
            limit=config.limit,
            seed=config.seed,
            split=config.split,
            frames=config.frames,
        )
        tasks, rule = loaded.tasks, loaded.aggregation
        if not tasks:
            raise ValueError(f"benchmark {config.benchmark!r} produced no tasks")
        run_dir.create(identity, tasks, rule, loaded.name, session=config.session())
    by_id = {t.task_id: t for t in tasks}
    session = len(run_dir.manifest()["sessions"])  # this session's number (1-based) in the manifest's list
    previous, unreadable = run_dir.results.read()  # the rewrite below keeps unreadable lines aside
    kept = [
        previous[t.task_id]
        for t in tasks
        if t.task_id in previous and previous[t.task_id]["status"] not in RETRY_STATUSES
    ]
    run_dir.results.rewrite(kept)
    done = {row["task_id"] for row in kept}
    pending = [t for t in tasks if t.task_id not in done]
    jobs = []
    for task in pending:
        out_dir = run_dir.episode_dir(task.task_id)
        jobs.append(EpisodeJob(task, out_dir, int(out_dir.name.split("-")[-1])))
    worker_args = {
        "model_spec": config.model,
        "agent_config": config.agent_with_generation(),
        "interface": config.interface,
        "model_options": config.model_options,
        "run_dir": run_dir.path,
    }
    executor: Any
    if config.executor == "ray":
        from spatialclaw.runner.executors import RayExecutor

        executor = RayExecutor(
            config.workers,
            worker_args,
            address=config.ray_address,
            episode_timeout_s=config.episode_timeout_s,
            ray_num_gpus=config.ray_gpus_per_worker,
            perception_actors=config.perception_actors,
            perception_gpus=config.perception_gpus,
        )
        run_dir.record_perception(config.perception_setup())
    else:
        from spatialclaw.runner.executors import LocalExecutor

        executor = LocalExecutor(config.workers, worker_args, episode_timeout_s=config.episode_timeout_s)
    counts: Counter[str] = Counter()
    progress = _progress(len(jobs), config)

    def on_row(row: dict[str, Any]) -> None:
        path = Path(str(row.get("trajectory_dir", "")))
        if path.is_absolute():
            try:
                row["trajectory_dir"] = str(path.resolve().relative_to(run_dir.path.resolve()))
            except ValueError:
                pass
        row["session"] = session
        run_dir.results.append(row)
        counts[row["status"]] += 1
        if progress is not None:
            progress.set_postfix(
                {k: counts[k] for k in ("ok", "budget", "timeout", "error") if counts[k]}, refresh=False
            )
            progress.update(1)

    try:
        if jobs:
            executor.run(jobs, on_row)
    finally:
        if progress is not None:
            progress.close()
    rows = list(run_dir.results.load().values())
    statuses = Counter(r["status"] for r in rows)
    return RunSummary(
        run_dir.path,
        len(jobs),
        len(kept),
        dict(statuses),
        aggregate_rows(rows, by_id, rule),
        time.perf_counter() - started,
        [f"{problem}; kept in {run_dir.results.unreadable_path.name}" for problem in unreadable],
    )


def _extend(config: RunConfig, run_dir: RunDir, manifest: dict[str, Any], tasks: list[Any]) -> list[Any]:
    """The run's tasks, extended to ``config.limit`` when a resume asks for more than the run holds."""
    if config.limit is None or config.limit == len(tasks):
        return tasks
    if config.limit < len(tasks):
        raise ValueError(
            f"cannot resume {config.out} with --limit {config.limit}: the run already holds {len(tasks)} tasks "
            f"(a resume can only grow a run; drop --limit to keep its {len(tasks)})"
        )
    from spatialclaw.benchmarks.registry import load_benchmark

    loaded = load_benchmark(
        config.benchmark,
        source=config.source,
        media_root=config.media_root,
        limit=config.limit,
        seed=config.seed,
        split=config.split,
        frames=config.frames,
    )
    head = loaded.tasks[: len(tasks)]
    if [t.task_id for t in head] != [t.task_id for t in tasks] or tasks_hash(head) != manifest.get(
        "tasks_hash", tasks_hash(tasks)
    ):
        raise ValueError(
            f"cannot extend {config.out} to {config.limit} tasks: the benchmark's first {len(tasks)} tasks are not "
            "the run's (the dataset, --source or --seed changed); start a new run with --out"
        )
    if len(loaded.tasks) > len(tasks):
        run_dir.extend_tasks(loaded.tasks[len(tasks) :], config.limit)
    return run_dir.tasks()


def _progress(total: int, config: RunConfig) -> Any:
    if not config.progress or total == 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=config.benchmark, unit="episode", file=sys.stderr, dynamic_ncols=True)
