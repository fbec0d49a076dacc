"""The paper's table: one row per model, one column per paper benchmark, the average, then the breakdowns.

Runs are found in the folders given: a run directory, or a suite folder (``bench --suite paper --out SUITE``
writes ``SUITE/<paper name>/``, one run each). A run belongs to the paper's table when its benchmark's spec
has a ``paper_name``. Scores are in percent: each benchmark's overall by its own rule, the average over the
benchmarks a row has, and each spec's ``breakdowns`` (``category``: the aggregate's categories, by the rule;
any other task field or meta key: the mean score per value, unscored rows counted as 0).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.names import PAPER_NAMES
from spatialclaw.benchmarks.registry import find_spec
from spatialclaw.runner.markdown_text import md
from spatialclaw.runner.run import aggregate_rows
from spatialclaw.trajectories.run_dir import RunDir

__all__ = ["PaperRun", "expand_runs", "load_paper_runs", "paper_table"]


@dataclass
class PaperRun:
    """One paper benchmark's numbers in one run (scores in [0, 1])."""

    path: Path
    paper_name: str
    model: str
    interface: str
    overall: float | None
    n: int
    breakdowns: dict[str, dict[str, float]] = field(default_factory=dict)  # key -> value -> score

    @property
    def row_label(self) -> str:
        return f"{self.model} ({self.interface})"


def expand_runs(paths: list[str | Path]) -> list[Path]:
    """``paths`` with each suite folder replaced by the runs directly inside it (sorted); other paths as given."""
    runs: list[Path] = []
    for given in paths:
        path = Path(given)
        inside = (
            []
            if RunDir(path).exists() or not path.is_dir()
            else sorted(p for p in path.iterdir() if p.is_dir() and RunDir(p).exists())
        )
        runs += inside or [path]  # not a run nor a folder of runs: reading it says what is wrong
    return runs


def _value(task: Any, key: str) -> str | None:
    value = getattr(task, key, None) if key in ("category", "benchmark", "answer_type") else None
    if value is None:
        value = task.meta.get(key)
    return None if value is None else str(value)


def _load(path: Path) -> PaperRun | None:
    run_dir = RunDir(path)
    manifest = run_dir.manifest()
    spec = find_spec(str(manifest["benchmark"]))
    if spec is None or not spec.paper_name:
        return None
    tasks = {t.task_id: t for t in run_dir.tasks()}
    rows = list(run_dir.results.load().values())
    agg = aggregate_rows(rows, tasks, manifest["aggregation"])
    config = manifest["config"]
    interface = config.get("interface") or ("no-tools" if config.get("baseline") == "no-tools" else "code")
    breakdowns: dict[str, dict[str, float]] = {}
    for key in spec.breakdowns:
        if key == "category":
            breakdowns[key] = dict(agg.categories)
            continue
        groups: dict[str, list[float]] = defaultdict(list)
        for row in rows:
            task = tasks.get(row["task_id"])
            value = _value(task, key) if task is not None else None
            if value is not None:
                groups[value].append(float(row.get("score") or 0.0))
        breakdowns[key] = {value: sum(scores) / len(scores) for value, scores in sorted(groups.items())}
    return PaperRun(path, spec.paper_name, str(config["model"]), interface, agg.overall, agg.n, breakdowns)


def load_paper_runs(paths: list[str | Path]) -> list[PaperRun]:
    """The paper benchmarks' runs among ``paths`` (runs or suite folders)."""
    found = [_load(path) for path in expand_runs(paths)]
    return [run for run in found if run is not None]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def paper_table(paths: list[str | Path]) -> str:
    """Markdown: the paper's table (rows: model and interface; columns: the 20 benchmarks in the paper's
    order, then the average over the benchmarks the row has), then one breakdown table per benchmark."""
    runs = load_paper_runs(paths)
    if not runs:
        return "No runs of the paper's benchmarks found."
    columns = [name for name in PAPER_NAMES if any(r.paper_name == name for r in runs)]
    labels = list(dict.fromkeys(r.row_label for r in runs))
    cell = {(r.row_label, r.paper_name): r for r in runs}
    lines = [
        "## The paper's benchmarks",
        "",
        f"Scores in percent, each by its benchmark's own rule; Avg = the mean over the benchmarks a row has "
        f"({len(columns)} of {len(PAPER_NAMES)} here).",
        "",
        "| model (interface) | " + " | ".join(columns) + " | Avg |",
        "|---|" + "---:|" * (len(columns) + 1),
    ]
    for label in labels:
        scores = [cell[(label, c)].overall if (label, c) in cell else None for c in columns]
        present = [s for s in scores if s is not None]
        average = sum(present) / len(present) if present else None
        lines.append(f"| {md(label)} | " + " | ".join(_pct(s) for s in scores) + f" | {_pct(average)} |")
    lines += ["", "n (scored questions): " + ", ".join(f"{c} {_n(runs, c)}" for c in columns), ""]
    lines += ["## Breakdowns", ""]
    for column in columns:
        own = [r for r in runs if r.paper_name == column]
        for key in dict.fromkeys(k for r in own for k in r.breakdowns):
            values = list(dict.fromkeys(v for r in own for v in r.breakdowns.get(key, {})))
            if not values:
                continue
            header = "| " + md(key) + " | " + " | ".join(md(r.row_label) for r in own) + " |"
            lines += [f"### {column} by {md(key)}", "", header]
            lines.append("|---|" + "---:|" * len(own))
            for value in values:
                lines.append(
                    f"| {md(value)} | " + " | ".join(_pct(r.breakdowns.get(key, {}).get(value)) for r in own) + " |"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _n(runs: list[PaperRun], column: str) -> str:
    return "/".join(str(r.n) for r in runs if r.paper_name == column)
