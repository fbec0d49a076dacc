"""One task to one result row: run the episode with the run's interface, score the answer, log the score.

:class:`EpisodeWorker` is what each local thread or Ray actor holds: one model, one agent, and a kernel
from the pool for each episode. ``run`` never raises; every failure becomes a row with status ``error``.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.scoring.score import score_answer
from spatialclaw.runner.interfaces import make_runner, needs_kernel
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import TrajectoryWriter

__all__ = ["RETRY_STATUSES", "STATUSES", "EpisodeJob", "EpisodeWorker", "score_row"]

#: Row statuses: ``ok`` (answered), ``budget`` (steps, format retries, the token or the cost limit ran out),
#: ``timeout`` (a model call or the episode ran out of time), ``error`` (anything else failed).
STATUSES = ("ok", "budget", "timeout", "error")
#: Statuses that ``--resume`` runs again.
RETRY_STATUSES = ("error", "timeout")
_FROM_AGENT = {"answered": "ok", "budget": "budget", "format_errors": "budget", "timeout": "timeout", "error": "error"}


@dataclass
class EpisodeJob:
    """A task to run, its attempt number, the (new, empty) directory for its trajectory, which of the
    run's repeats of the task it is (0 to K-1), and whether it retries an attempt that failed (a retry asks
    the model anew: replaying the cached replies would replay the failure)."""

    task: Task
    out_dir: Path
    attempt: int
    repeat: int = 0
    retry: bool = False


def score_row(task: Task, answer: Any) -> dict[str, Any]:
    """``score``, ``metric``, ``extracted``, ``ground_truth`` and ``scoring`` (``reference`` or ``lenient``, from
    ``task.meta["scoring"]``, default lenient) for an answer (score None without ground truth)."""
    scoring = str(task.meta.get("scoring", "lenient"))
    if task.ground_truth is None:
        return {"score": None, "metric": None, "extracted": None, "ground_truth": None, "scoring": scoring}
    result = score_answer(
        answer,
        task.ground_truth,
        task.answer_type,
        task.choices,
        metric=task.meta.get("metric"),
        unit=task.meta.get("unit"),
        scoring=scoring,
    )
    return {
        "score": result.value,
        "metric": result.metric,
        "extracted": result.extracted,
        "ground_truth": result.details.get("ground_truth", task.ground_truth),
        "scoring": scoring,
    }


class EpisodeWorker:
    """Runs episodes with one model through ``interface`` (see :mod:`spatialclaw.runner.interfaces`;
    ``baseline="no-tools"`` is the older spelling of ``interface="no-tools"``). ``no-tools`` answers
    without a kernel; the other interfaces run with a kernel the worker takes from ``pool`` (a :class:`~spatialclaw.kernel.pool.KernelPool`) on its first
    episode and gives back on :meth:`close` (without a pool, the agent starts a kernel per episode).
    ``episode_timeout_s`` becomes the agent's time limit (the smaller one wins when the agent config sets
    one too), so an episode that runs longer ends with status ``timeout``. With ``cache`` (and a
    ``run_dir``) the model is wrapped in a :class:`~spatialclaw.models.response_cache.ResponseCache` keyed
    by each job's task and repeat, and each row counts its hits and misses (``cache``)."""

    def __init__(
        self,
        model_spec: str,
        agent_config: dict[str, Any] | None = None,
        baseline: str | None = None,
        pool: Any = None,
        model_options: dict[str, Any] | None = None,
        run_dir: Path | None = None,
        episode_timeout_s: float | None = None,
        interface: str = "code",
        cache: bool = False,
        provider_limits: dict[str, Any] | None = None,
        judge: str | None = None,
    ) -> None:
        from spatialclaw.agent.config import AgentConfig

        self.model_spec = model_spec
        self.config = AgentConfig(**(agent_config or {}))
        if episode_timeout_s is not None:
            limits = self.config.limits
            time_s = episode_timeout_s if limits.time_s is None else min(limits.time_s, episode_timeout_s)
            self.config = replace(self.config, limits=replace(limits, time_s=time_s))
        self.interface = "no-tools" if baseline == "no-tools" else interface
        self.baseline = "no-tools" if self.interface == "no-tools" else None
        self.pool = pool
        self.model_options = dict(model_options or {})
        self.run_dir = run_dir
        self.cache = cache
        self.provider_limits = dict(provider_limits or {})
        self.judge_spec = judge
        self._judge: Any = None  # the Judge, built on the first row that needs one
        self._cached: Any = None  # the ResponseCache around the model, when caching
        self._runner: Any = None
        self._kernel: Any = None

    def _episode_runner(self) -> Any:
        if self._runner is None:
            from spatialclaw.models import RetryPolicy, limit_model, load_model

            options = dict(self.model_options)
            if "max_attempts" in options:
                options["retry"] = RetryPolicy(max_attempts=int(options.pop("max_attempts")))
            model = limit_model(load_model(self.model_spec, **options), self.provider_limits)
            if self.cache and self.run_dir is not None:
                from spatialclaw.models.response_cache import ResponseCache

                model = self._cached = ResponseCache(model, self.run_dir)
            self._runner = make_runner(self.interface, model, self.config)
        return self._runner

    def run(self, job: EpisodeJob) -> dict[str, Any]:
        """The result row of ``job`` (never raises); with the cache on, its ``cache`` counts."""
        row = self._run(job)
        if self._cached is not None:
            row["cache"] = self._cached.take_counts()
        return row

    def _run(self, job: EpisodeJob) -> dict[str, Any]:
        started = time.time()
        task = job.task
        base = {
            "task_id": task.task_id,
            "benchmark": task.benchmark,
            "category": task.category,
            "attempt": job.attempt,
            "repeat": job.repeat,
            "trajectory_dir": self._relative(job.out_dir),
            "interface": self.interface,
            "baseline": self.baseline,
        }
        try:
            runner = self._episode_runner()
            if self._cached is not None:
                self._cached.scope = {"task_id": task.task_id, "repeat": job.repeat}
                self._cached.refresh = job.retry
                self._cached.take_counts()
            if not needs_kernel(self.interface):
                result = runner.run(task, job.out_dir)
            elif self.pool is not None and self.pool.fresh:
                # Episodes never share a process: a fresh kernel (a pre-started spare) per episode, shut down after.
                kernel = self.pool.acquire()
                try:
                    result = runner.run(task, job.out_dir, kernel=kernel)
                finally:
                    self.pool.release(kernel)
            else:
                # The worker keeps one kernel from the pool for all its episodes: the agent resets it per task
                # (and restarts it if it died), so acquiring per episode would only add a second reset.
                if self._kernel is None and self.pool is not None:
                    self._kernel = self.pool.acquire()
                result = runner.run(task, job.out_dir, kernel=self._kernel)
        except Exception as failure:  # the row records it; the run goes on
            return {
                **base,
                "status": "error",
                "end_reason": "error",
                "answer": None,
                "score": None,
                "usage": None,
                "cost_usd": None,
                "duration_s": time.time() - started,
                "steps": 0,
                "error": f"{type(failure).__name__}: {failure}",
                "traceback": traceback.format_exc(limit=5),
                "finished_at": time.time(),
            }
        status = _FROM_AGENT.get(result.status, "error")
        if (
            status == "error"
            and result.error
            and ("timed out" in result.error.lower() or "timeout" in result.error.lower())
        ):
            status = "timeout"
        row = {
            **base,
            "status": status,
            "end_reason": result.status,
            "answer": result.answer,
            "answer_source": result.answer_source,
            "usage": asdict(result.usage),
            "cost_usd": result.cost_usd,
            "duration_s": result.duration_s,
            "steps": result.steps,
            "error": result.error,
            "timing": result.timing,
            "limit": result.limit.to_dict() if result.limit is not None else None,
            "finished_at": time.time(),
        }
        try:
            row.update(score_row(task, result.answer))
        except ValueError as failure:  # a task whose ground truth cannot be scored: say so, keep the answer
            row.update({"score": None, "score_error": str(failure)})
        if self.judge_spec is not None and self.run_dir is not None and "score_error" not in row:
            self._judged(task, row, job.out_dir)
        if row.get("score") is not None:
            with TrajectoryWriter(job.out_dir, fsync=False) as writer:
                writer.write(
                    "score",
                    score=row["score"],
                    ground_truth=row.get("ground_truth"),
                    details={"metric": row.get("metric"), "extracted": row.get("extracted")},
                )
        return row

    def _judged(self, task: Task, row: dict[str, Any], trajectory: Path) -> None:
        """Hand ``row`` to the run's judge when its rules leave it to one; a judge that fails leaves the rule's
        score and says why in ``judge_error`` (``rescore`` asks again)."""
        from spatialclaw.models import ModelError
        from spatialclaw.runner.judge import Judge

        try:
            if self._judge is None:
                self._judge = Judge(str(self.judge_spec), Path(str(self.run_dir)), self.provider_limits)
            self._judge.judge_row(task, row, trajectory)
        except (ModelError, OSError) as failure:
            row["judge_error"] = f"{type(failure).__name__}: {failure}"

    def _relative(self, path: Path) -> str:
        if self.run_dir is not None:
            try:
                return str(Path(path).resolve().relative_to(Path(self.run_dir).resolve()))
            except ValueError:
                pass
        return str(path)

    def close(self) -> None:
        """Give the kernel back to the pool and close the model client (and the judge's)."""
        if self._judge is not None:
            self._judge.close()
        if self._kernel is not None:
            self.pool.release(self._kernel)
            self._kernel = None
        if self._runner is not None and hasattr(self._runner, "model"):
            self._runner.model.close()
