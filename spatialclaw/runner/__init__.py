"""The benchmark runner: parallel, resumable, rescorable runs with reports.

A run directory (``RUN/``) holds::

    manifest.json     package version, git commit, config and its hash, benchmark, aggregation rule
    tasks.jsonl       the tasks of the run (local JSONL format), so rescoring needs no dataset
    results.jsonl     one row per task and repeat (the last row of a (task, repeat) wins; a resume rewrites
                      the file atomically)
    episodes/<task>/attempt-<n>/   one trajectory per attempt (see spatialclaw.trajectories.episode_log)
    cache/<sha256>.json            model replies by exact request (see spatialclaw.models.response_cache)

Modules: :mod:`.store` (results file), :mod:`.rundir` (manifest, stamping), :mod:`.episode` (one task
to one row), :mod:`.direct` (the no-tools baseline), :mod:`.executors` (local threads or Ray),
:mod:`.config` (``RunConfig``), :mod:`.run` (``run_benchmark``), :mod:`.rescore`, :mod:`.report`.
"""

from __future__ import annotations

from spatialclaw.runner.config import RunConfig
from spatialclaw.runner.run import RunSummary, run_benchmark

__all__ = ["RunConfig", "RunSummary", "run_benchmark"]
