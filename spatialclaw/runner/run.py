"""``run_benchmark``: run (or resume) a benchmark into a run directory.

A new run loads the benchmark's tasks, stamps ``manifest.json`` and writes ``tasks.jsonl``. A resumed run
reads both back (no dataset needed), checks that the configuration is the same one, keeps the rows whose
status is ``ok`` or ``budget``, rewrites ``results.jsonl`` with exactly those, and runs every other task
(errored, timed out, or missing because the run was killed). So each task ends up with exactly one row,
and an attempt never overwrites an earlier attempt's trajectory. With ``repeats`` K > 1 every task runs K
times, each its own episode and attempt folder, and the same holds per ``(task, repeat)``: K rows per
task (``repeat`` 0 to K-1), and a resume runs only the repeats without a kept row. K is part of the run's
identity (a resume keeps the run's K unless told otherwise, and refuses another).

Unless ``cache`` is off, every model reply is kept in ``RUN/cache/`` under a hash of the exact request
and the ``(task, repeat)`` it belongs to (:mod:`spatialclaw.models.response_cache`), so a resumed
episode that sends a request again is answered from disk instead of paying for it twice; each row's
``cache`` field counts its hits, misses and corrupt entries.

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

from spatialclaw.benchmarks.scoring.aggregation import Aggregate, ScoredRow, aggregate
from spatialclaw.runner.config import DEFAULT_GENERATION, RESUMABLE, RunConfig, comparable
from spatialclaw.runner.episode import RETRY_STATUSES, EpisodeJob
from spatialclaw.runner.lock import RunLock
from spatialclaw.trajectories.results import mean_over_repeats, row_key
from spatialclaw.trajectories.run_dir import PRIVATE_FILE, RunDir, tasks_hash

__all__ = ["RunSummary", "aggregate_rows", "fraction_of", "run_benchmark"]


@dataclass
class RunSummary:
    """What a run (or resume) did: ``ran`` episodes this session, ``kept`` rows from before, the status
    counts over all rows, the aggregate, the wall time in seconds, and how many tasks lack media files."""

    run_dir: Path
    ran: int
    kept: int
    statuses: dict[str, int]
    aggregate: Aggregate
    duration_s: float
    unreadable: list[str] = field(default_factory=list)  # results lines not kept: their tasks ran again
    missing_media: int = 0  # tasks kept without some or all of their media (missing files; the paper keeps them)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["run_dir"] = str(self.run_dir)
        return data


def aggregate_rows(rows: list[dict[str, Any]], tasks_by_id: dict[str, Any], rule: str) -> Aggregate:
    """Aggregate result rows by the benchmark's rule (rows without a score count as 0). A row its judge
    scored counts even where the rules alone leave its question out (``paper_scored``)."""
    scored = [
        ScoredRow(
            r["task_id"],
            r.get("category"),
            r.get("score"),
            {
                **(dict(tasks_by_id[r["task_id"]].meta) if r["task_id"] in tasks_by_id else {}),
                **({"paper_scored": True} if r.get("judge") else {}),
            },
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
    if config.repeats is None:  # a new run: 1; a resume: the run's
        config.repeats = int(run_dir.manifest()["config"].get("repeats", 1)) if run_dir.exists() else 1
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

        if isinstance(config.limit, float) and config.benchmark == "synthetic":
            raise ValueError("synthetic generates --limit N tasks; a fraction of tasks needs a dataset")
        loaded = load_benchmark(
            config.benchmark,
            source=config.source,
            media_root=config.media_root,
            limit=None if isinstance(config.limit, float) else config.limit,
            seed=config.seed,
            split=config.split,
            frames=config.frames,
            scoring=config.scoring,
            kernel_frames=config.kernel_frames,
        )
        tasks, rule = loaded.tasks, loaded.aggregation
        if isinstance(config.limit, float):
            tasks = fraction_of(tasks, config.limit)
        if not tasks:
            raise ValueError(f"benchmark {config.benchmark!r} produced no tasks")
        run_dir.create(identity, tasks, rule, loaded.name, session=config.session())
    if config.command_config is not None:
        from spatialclaw.runner.config_file import CONFIG_NAME, to_toml
        from spatialclaw.trajectories.safe_files import write_file

        write_file(
            run_dir.path / CONFIG_NAME, to_toml(config.command_config), inside=run_dir.path, permissions=PRIVATE_FILE
        )
    by_id = {t.task_id: t for t in tasks}
    session = len(run_dir.manifest()["sessions"])  # this session's number (1-based) in the manifest's list
    previous, unreadable = run_dir.results.read()  # the rewrite below keeps unreadable lines aside
    wanted = [(t, repeat) for t in tasks for repeat in range(config.repeats)]  # one row each
    kept = [
        previous[(t.task_id, repeat)]
        for t, repeat in wanted
        if (t.task_id, repeat) in previous and previous[(t.task_id, repeat)]["status"] not in RETRY_STATUSES
    ]
    run_dir.results.rewrite(kept)
    done = {row_key(row) for row in kept}
    jobs = []
    for task, repeat in wanted:
        if (task.task_id, repeat) not in done:
            out_dir = run_dir.episode_dir(task.task_id)
            retry = (task.task_id, repeat) in previous  # its row was a failure: ask the model anew
            jobs.append(EpisodeJob(task, out_dir, int(out_dir.name.split("-")[-1]), repeat, retry))
    worker_args = {
        "model_spec": config.model,
        "agent_config": config.agent_with_generation(),
        "interface": config.interface,
        "model_options": config.model_options,
        "run_dir": run_dir.path,
        "cache": config.cache,
        "provider_limits": config.provider_limits,
        "judge": config.judge,
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
            services=config.services,
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
        aggregate_rows(mean_over_repeats(rows), by_id, rule),
        time.perf_counter() - started,
        [f"{problem}; kept in {run_dir.results.unreadable_path.name}" for problem in unreadable],
        sum(1 for task in tasks if task.meta.get("missing_media")),
    )


def _extend(config: RunConfig, run_dir: RunDir, manifest: dict[str, Any], tasks: list[Any]) -> list[Any]:
    """The run's tasks, extended to ``config.limit`` when a resume asks for more than the run holds."""
    if config.limit is None or config.limit == len(tasks) or config.limit == manifest["config"].get("limit"):
        return tasks
    if isinstance(config.limit, float):
        raise ValueError(
            f"cannot resume {config.out} with --limit {config.limit}: the run took a fraction "
            f"{manifest['config'].get('limit')!r} of the tasks; a resume grows a run by a whole --limit N"
        )
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
        scoring=config.scoring,
        kernel_frames=config.kernel_frames,
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


def fraction_of(tasks: list[Any], fraction: float) -> list[Any]:
    """``fraction`` of ``tasks`` (rounded, at least one), evenly spaced over their order: the same tasks every
    time for the same list (a ``--seed`` other than 0 shuffled it already)."""
    count = min(len(tasks), max(1, int(fraction * len(tasks) + 0.5)))
    return [tasks[i * len(tasks) // count] for i in range(count)] if tasks else []


def _progress(total: int, config: RunConfig) -> Any:
    if not config.progress or total == 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=config.benchmark, unit="episode", file=sys.stderr, dynamic_ncols=True)
