"""The run directory: its manifest (what produced the run), its tasks, and where episodes go."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import time
from pathlib import Path
from typing import Any, cast

from spatialclaw import __version__, jsonl
from spatialclaw.task import Task
from spatialclaw.trajectories.episode_log import config_hash
from spatialclaw.trajectories.results import ResultsStore

__all__ = ["PRIVATE_FILE", "PRIVATE_FOLDER", "RunDir", "git_commit"]

MANIFEST = "manifest.json"
TASKS = "tasks.jsonl"
RESULTS = "results.jsonl"
EPISODES = "episodes"
PRIVATE_FOLDER = 0o700
"""The mode of a run directory and the folders in it: ``tasks.jsonl`` holds the ground truth, ``results.jsonl``
the scores, ``cache/`` the model's replies; no other local user reads them, whatever the umask."""
PRIVATE_FILE = 0o600
"""The mode of every file the run writes (:data:`spatialclaw.jsonl.PRIVATE` for its JSONL files)."""


def git_commit() -> dict[str, Any]:
    """The git commit of the spatialclaw source tree (``commit``, ``dirty``), or nulls outside a checkout."""
    source = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return {"commit": None, "dirty": None}
        status = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE), "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(tmp, path)


class RunDir:
    """A run directory (see :mod:`spatialclaw.runner`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.results = ResultsStore(self.path / RESULTS)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def manifest(self) -> dict[str, Any]:
        if not self.exists():
            raise FileNotFoundError(
                f"{self.path} is not a run directory (no {MANIFEST}); run `spatialclaw bench` first"
            )
        return cast(dict[str, Any], json.loads(self.manifest_path.read_text(encoding="utf-8")))

    def create(
        self,
        config: dict[str, Any],
        tasks: list[Task],
        aggregation: str,
        benchmark: str,
        session: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Write the manifest and the task list of a new run; ``session``: this session's changeable
        settings (workers, endpoint, retries, ...), the first entry of the manifest's ``sessions``."""
        self.path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)
        os.chmod(self.path, PRIVATE_FOLDER)  # whatever the umask, or the mode of a folder given empty
        (self.path / EPISODES).mkdir(exist_ok=True, mode=PRIVATE_FOLDER)
        manifest = {
            "spatialclaw_version": __version__,
            "git": git_commit(),
            "config": config,
            "config_hash": config_hash(config),
            "benchmark": benchmark,
            "aggregation": aggregation,
            "task_count": len(tasks),
            "tasks_hash": tasks_hash(tasks),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": platform.python_version(),
            "host": platform.node(),
            "sessions": [_stamp("created", session)],
        }
        jsonl.write_atomic(self.path / TASKS, (t.to_dict() for t in tasks), default=str)
        _write_atomic(self.manifest_path, json.dumps(manifest, indent=2, default=str) + "\n")
        return manifest

    def record_resume(self, session: dict[str, Any] | None = None) -> None:
        """Append this session's stamp (version, commit, time) to the manifest's ``resumed`` list, and the
        stamp with this session's changeable settings (``session``) to its ``sessions`` list."""
        manifest = self.manifest()
        manifest.setdefault("resumed", []).append(
            {
                "spatialclaw_version": __version__,
                "git": git_commit(),
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
        manifest.setdefault("sessions", []).append(_stamp("resumed", session))
        _write_atomic(self.manifest_path, json.dumps(manifest, indent=2, default=str) + "\n")

    def extend_tasks(self, more: list[Task], limit: int) -> None:
        """Append ``more`` tasks to the run (a resume with a larger ``limit``): ``tasks.jsonl``, then the
        manifest's task count, tasks hash and configured limit."""
        tasks = self.tasks() + list(more)
        jsonl.write_atomic(self.path / TASKS, (t.to_dict() for t in tasks), default=str)
        manifest = self.manifest()
        manifest["config"]["limit"] = limit
        manifest["config_hash"] = config_hash(manifest["config"])
        manifest.update(task_count=len(tasks), tasks_hash=tasks_hash(tasks))
        manifest.setdefault("extended", []).append(
            {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "added": len(more), "task_count": len(tasks)}
        )
        _write_atomic(self.manifest_path, json.dumps(manifest, indent=2, default=str) + "\n")

    def record_perception(self, setup: dict[str, Any] | None) -> None:
        """Record where this session's perception models run (``setup``, e.g. shared Ray actors) in the
        manifest: as ``perception`` for the session that created the run, in the latest ``resumed`` stamp
        for a resumed one. ``None`` (models in each kernel, the default) records nothing."""
        if setup is None:
            return
        manifest = self.manifest()
        stamp = manifest["resumed"][-1] if manifest.get("resumed") else manifest
        stamp["perception"] = setup
        _write_atomic(self.manifest_path, json.dumps(manifest, indent=2, default=str) + "\n")

    def tasks(self) -> list[Task]:
        """The run's tasks; a line of ``tasks.jsonl`` that cannot be read is an error naming it."""
        path = self.path / TASKS
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing; the run directory is incomplete")
        found = jsonl.read(path)
        if found.bad or found.torn:
            problems = found.problems() or [f"{path}: last line is incomplete"]
            raise ValueError("; ".join(problems) + "; the run's task list is corrupt")
        tasks = []
        for number, record in zip(found.numbers, found.records, strict=True):
            try:
                tasks.append(Task.from_dict(record))
            except (KeyError, TypeError, ValueError) as error:
                raise ValueError(f"{path}: line {number} is not a task ({type(error).__name__}: {error})") from None
        return tasks

    def episode_dir(self, task_id: str) -> Path:
        """A new, unused attempt directory for ``task_id``: ``episodes/<safe id>/attempt-<n>``."""
        base = self.path / EPISODES / safe_name(task_id)
        base.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)
        n = 1
        while (base / f"attempt-{n}").exists():
            n += 1
        path = base / f"attempt-{n}"
        path.mkdir(mode=PRIVATE_FOLDER)
        return path


def _stamp(kind: str, session: dict[str, Any] | None) -> dict[str, Any]:
    """One entry of the manifest's ``sessions``: who ran it (pid, host, version, commit), when, and how."""
    return {
        "kind": kind,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pid": os.getpid(),
        "host": platform.node(),
        "spatialclaw_version": __version__,
        **(session or {}),
    }


def safe_name(task_id: str) -> str:
    """A file-system-safe folder name for a task id (with a short hash when characters were replaced)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id).strip("._") or "task"
    if cleaned != task_id:
        cleaned += "-" + hashlib.sha256(task_id.encode()).hexdigest()[:8]
    return cleaned


def tasks_hash(tasks: list[Task]) -> str:
    """A hash of the tasks' ids, questions, choices and ground truths (not of file paths, which move)."""
    digest = hashlib.sha256()
    for t in tasks:
        digest.update(json.dumps([t.task_id, t.question, t.choices, t.ground_truth], default=str).encode())
    return digest.hexdigest()[:16]
