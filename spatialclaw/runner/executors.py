"""Where episodes run: threads in this process (``local``) or actors on a Ray cluster (``ray``).

Both take the same jobs and hand each finished row to ``on_row`` in the driver, which alone writes the
results file, so the run directory format does not depend on the executor.

``local``: ``workers`` threads, each with its own :class:`EpisodeWorker` (model client and agent), sharing
one :class:`~spatialclaw.kernel.pool.KernelPool` of ``workers`` kernels. With ``episode_timeout_s`` each episode
runs under that time limit (:class:`~spatialclaw.agent.limits.Limits`): its cells and model calls are cut at
the time left and it ends with status ``timeout``; the thread and its kernel go on to the next episode.
On Ctrl-C (``KeyboardInterrupt`` in the driver) no new episode starts, the running ones finish, and the
row of every finished episode is handed to ``on_row`` before the interrupt goes on, so a finished,
scored episode is never lost and ``--resume`` does not run it again.

``ray``: ``workers`` actors (``ray_num_cpus`` CPUs and ``ray_num_gpus`` GPUs each), each with its own
worker and a one-kernel pool; one job in flight per actor. A fractional ``ray_num_gpus`` (e.g. 0.25) puts
several episodes on one GPU node's GPU: Ray sets ``CUDA_VISIBLE_DEVICES`` for the actor, and the
actor's kernel inherits it, so the perception models an episode loads run on that GPU. With ``episode_timeout_s`` an episode that runs longer is cancelled by
killing its actor (a fresh actor takes its place) and recorded with status ``timeout``. Without
``ray_address`` a local Ray instance is started for the run and stopped afterwards; ``auto`` or
``ray://HOST:PORT`` joins a cluster (the run directory must be on a file system the workers share).
With ``perception_actors`` N > 0 the learned perception models (depth, detect, segment) run on N shared
actors (``perception_gpus`` GPUs each) instead of in every episode's kernel: the service is started once
for the run (:mod:`spatialclaw.services.perception`), each kernel gets ``SPATIALCLAW_PERCEPTION`` in
its environment (:mod:`spatialclaw.primitives.perception.remote`), and the actors are stopped when the run ends.
With ``services`` (``--service NAME=DIR[,gpus=G]``) each backend runs as an actor in its own environment
(:mod:`spatialclaw.services.ray_services`), started before the episodes and stopped after them; each episode
actor opens a proxy socket to it and names that to its kernels, whose host relay is their only way to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any

from spatialclaw.runner.episode import EpisodeJob, EpisodeWorker
from spatialclaw.runner.interfaces import needs_kernel

__all__ = ["LocalExecutor", "RayExecutor"]

OnRow = Callable[[dict[str, Any]], None]


class LocalExecutor:
    """Episodes on ``workers`` threads sharing a kernel pool."""

    def __init__(
        self,
        workers: int,
        worker_args: dict[str, Any],
        kernel_options: dict[str, Any] | None = None,
        episode_timeout_s: float | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be at least 1, got {workers}")
        self.workers = workers
        self.worker_args = worker_args
        self.kernel_options = kernel_options or {}
        self.episode_timeout_s = episode_timeout_s

    def run(self, jobs: list[EpisodeJob], on_row: OnRow) -> None:
        pool = None
        if needs_kernel(self.worker_args.get("interface", "code")):
            from spatialclaw.kernel.pool import KernelPool

            pool = KernelPool(size=self.workers, fresh=True, **pool_options(self.worker_args, self.kernel_options))
        local = threading.local()
        made: list[EpisodeWorker] = []
        made_lock = threading.Lock()

        def work(job: EpisodeJob) -> dict[str, Any]:
            worker = getattr(local, "worker", None)
            if worker is None:
                worker = local.worker = EpisodeWorker(
                    pool=pool, episode_timeout_s=self.episode_timeout_s, **self.worker_args
                )
                with made_lock:
                    made.append(worker)
            return worker.run(job)

        executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="episode")
        futures: list[Future[dict[str, Any]]] = []
        written: set[int] = set()
        try:
            futures = [executor.submit(work, job) for job in jobs]
            for future in as_completed(futures):
                on_row(future.result())
                written.add(id(future))
        except BaseException:  # Ctrl-C: start no new episode, but keep every one that finished
            for future in futures:
                future.cancel()
            executor.shutdown(wait=True, cancel_futures=True)  # the running episodes end first
            for future in futures:
                finished = future.done() and not future.cancelled()
                if id(future) not in written and finished and future.exception() is None:
                    on_row(future.result())
            raise
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
            for worker in made:
                worker.close()
            if pool is not None:
                pool.close()


class _RayEpisodeActor:
    """A Ray actor: one :class:`EpisodeWorker` with its own one-kernel pool."""

    def __init__(
        self, worker_args: dict[str, Any], kernel_options: dict[str, Any], services: dict[str, Any] | None = None
    ) -> None:
        self.proxies: list[Any] = []
        if services:  # backend actors: a proxy socket each, named to the kernels in the backend's variable
            from spatialclaw.services.ray_services import ServiceProxy
            from spatialclaw.services.toolshed import BACKENDS

            self.proxies = [ServiceProxy(name, handle) for name, handle in services.items()]
            routes = {BACKENDS[proxy.name].socket_env: proxy.path for proxy in self.proxies}
            kernel_options = {**kernel_options, "env": {**kernel_options.get("env", {}), **routes}}
        pool = None
        if needs_kernel(worker_args.get("interface", "code")):
            from spatialclaw.kernel.pool import KernelPool

            pool = KernelPool(size=1, fresh=True, spares=1, **pool_options(worker_args, kernel_options))
        self.pool = pool
        self.worker = EpisodeWorker(pool=pool, **worker_args)

    def run(self, job: EpisodeJob) -> dict[str, Any]:
        return self.worker.run(job)

    def close(self) -> bool:
        self.worker.close()
        if self.pool is not None:
            self.pool.close()
        for proxy in self.proxies:
            proxy.close()
        return True


class RayExecutor:
    """Episodes on Ray actors (see the module docstring)."""

    def __init__(
        self,
        workers: int,
        worker_args: dict[str, Any],
        kernel_options: dict[str, Any] | None = None,
        address: str | None = None,
        episode_timeout_s: float | None = None,
        ray_num_cpus: float = 1.0,
        ray_num_gpus: float = 0.0,
        perception_actors: int = 0,
        perception_gpus: float = 1.0,
        perception_cpus: float = 1.0,
        services: list[Any] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be at least 1, got {workers}")
        if perception_actors < 0:
            raise ValueError(f"--perception-actors must be >= 0, got {perception_actors}")
        self.workers = workers
        self.worker_args = worker_args
        self.kernel_options = kernel_options or {}
        self.address = address
        self.episode_timeout_s = episode_timeout_s
        self.ray_num_cpus = ray_num_cpus
        self.ray_num_gpus = ray_num_gpus
        self.perception_actors = perception_actors
        self.perception_gpus = perception_gpus
        self.perception_cpus = perception_cpus
        self.services = services or []  # ServiceOption each (spatialclaw.services.ray_services)

    def run(self, jobs: list[EpisodeJob], on_row: OnRow) -> None:
        try:
            import ray
        except ImportError:
            raise RuntimeError("--executor ray needs Ray: pip install 'spatialclaw[ray]'") from None
        started_here = not ray.is_initialized()
        if started_here:
            if self.address:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            else:
                import os

                needed = self.workers * self.ray_num_cpus + self.perception_actors * self.perception_cpus
                needed += sum(option.cpus for option in self.services)
                ray.init(
                    num_cpus=max(int(needed + 0.999), os.cpu_count() or 1), include_dashboard=False, log_to_driver=False
                )
        perception = services = None
        kernel_options = self.kernel_options
        try:
            if self.services:
                from spatialclaw.services.ray_services import start_service_actors

                services = start_service_actors(self.services, fail_fast=started_here and not self.address)
            if self.perception_actors:
                from spatialclaw.services.perception import start_perception_service

                perception = start_perception_service(
                    self.perception_actors,
                    self.perception_gpus,
                    self.perception_cpus,
                    fail_fast=started_here and not self.address,
                )
                kernel_options = {**kernel_options, "env": {**kernel_options.get("env", {}), **perception.env}}
            self._run_episodes(ray, jobs, on_row, kernel_options, services.handles if services else None)
        finally:
            if perception is not None:
                perception.close()
            if services is not None:
                services.close()
            if started_here:
                ray.shutdown()

    def _run_episodes(
        self,
        ray: Any,
        jobs: list[EpisodeJob],
        on_row: OnRow,
        kernel_options: dict[str, Any],
        services: dict[str, Any] | None = None,
    ) -> None:
        actor_class = ray.remote(num_cpus=self.ray_num_cpus, num_gpus=self.ray_num_gpus)(_RayEpisodeActor)

        def new_actor() -> Any:
            return actor_class.remote(self.worker_args, kernel_options, services)

        actors = [new_actor() for _ in range(min(self.workers, max(len(jobs), 1)))]
        idle = list(actors)
        queue = list(jobs)
        pending: dict[Any, tuple[Any, EpisodeJob, float]] = {}
        try:
            while queue or pending:
                while queue and idle:
                    actor, job = idle.pop(), queue.pop(0)
                    pending[actor.run.remote(job)] = (actor, job, time.monotonic())
                done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
                for ref in done:
                    actor, job, _ = pending.pop(ref)
                    try:
                        on_row(ray.get(ref))
                    except ray.exceptions.RayError as failure:  # the actor died: record, replace it
                        on_row(_failed_row(job, "error", f"the Ray worker failed: {failure}"))
                        actor = new_actor()
                        actors.append(actor)
                    idle.append(actor)
                if self.episode_timeout_s is not None:
                    now = time.monotonic()
                    for ref, (actor, job, since) in list(pending.items()):
                        if now - since > self.episode_timeout_s:
                            pending.pop(ref)
                            ray.kill(actor, no_restart=True)
                            on_row(
                                _failed_row(
                                    job,
                                    "timeout",
                                    f"the episode ran longer than {self.episode_timeout_s} s and was cancelled",
                                )
                            )
                            replacement = new_actor()
                            actors.append(replacement)
                            idle.append(replacement)
        finally:
            for actor in actors:
                try:
                    ray.get(actor.close.remote(), timeout=30)
                except Exception:  # a killed or dead actor has nothing left to close
                    pass
                ray.kill(actor, no_restart=True)


def pool_options(worker_args: dict[str, Any], kernel_options: dict[str, Any]) -> dict[str, Any]:
    """Options of the run's kernels: the agent's ``kernel_options`` and ``sandbox`` mode, then the executor's own."""
    agent = worker_args.get("agent_config") or {}
    return {**agent.get("kernel_options", {}), "sandbox": agent.get("sandbox", "auto"), **kernel_options}


def _failed_row(job: EpisodeJob, status: str, error: str) -> dict[str, Any]:
    task = job.task
    return {
        "task_id": task.task_id,
        "benchmark": task.benchmark,
        "category": task.category,
        "attempt": job.attempt,
        "trajectory_dir": str(job.out_dir),
        "status": status,
        "end_reason": status,
        "answer": None,
        "score": None,
        "usage": None,
        "cost_usd": None,
        "duration_s": None,
        "steps": None,
        "error": error,
        "finished_at": time.time(),
    }
