"""``report``: tables and a chart for one or more run directories.

Writes into ``out_dir``: ``report.md`` (markdown tables), ``summary.csv`` (one line per run: overall
score, statuses, tokens, cost, time), ``categories.csv`` (one line per run and category), ``report.json``
(all of it) and ``chart.png`` (a grouped bar chart of the per-category scores, runs side by side).

Scores are in percent. The overall number follows each benchmark's own rule (see
:mod:`spatialclaw.benchmarks.scoring.aggregation`). The tool gain of a run is its score minus the score of the
``no-tools`` run of the same benchmark and model among the runs given, per category and overall, computed
on the tasks both runs have a row for (when either has tasks the other lacks, ``report`` warns, naming the
counts). Each overall score and each gain carries ``n`` and a seeded bootstrap interval
(:mod:`spatialclaw.runner.report_stats`: 95 %, 1000 resamples, seed 0). When
the runs of a benchmark use several interfaces (:mod:`spatialclaw.runner.interfaces`), ``report.md``
also compares them side by side: one column per interface, in the order no-tools, single-pass,
tool-calls, code, per category and overall, each with its tool gain. Runs of the paper's benchmarks (a
suite folder from ``bench --suite paper`` may be given for its runs) get the paper's table first
(:mod:`spatialclaw.runner.paper_report`).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatialclaw.runner.interfaces import INTERFACES
from spatialclaw.runner.markdown_text import md
from spatialclaw.runner.report_stats import Interval, compare, score_interval
from spatialclaw.runner.run import aggregate_rows
from spatialclaw.trajectories.results import mean_over_repeats
from spatialclaw.trajectories.run_dir import RunDir

__all__ = ["RunReport", "load_run_report", "write_report"]


@dataclass
class RunReport:
    """One run's numbers (scores in [0, 1])."""

    label: str
    path: Path
    benchmark: str
    model: str
    baseline: str | None
    interface: str
    overall: float | None
    categories: dict[str, float]
    counts: dict[str, int]
    statuses: dict[str, int]
    tasks: int
    rows: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    mean_duration_s: float | None
    mean_steps: float | None
    rule: str
    gain: dict[str, float] = field(default_factory=dict)
    gain_overall: float | None = None
    unreadable: list[str] = field(default_factory=list)  # lines of results.jsonl not counted, one message each
    interval: Interval | None = None  # bootstrap interval of ``overall``
    gain_interval: Interval | None = None  # bootstrap interval of ``gain_overall`` (paired, shared tasks)
    gain_n: int | None = None  # the shared tasks the gain compares
    warnings: list[str] = field(default_factory=list)
    repeats: int = 1  # episodes per task; with K > 1 a task's score is the mean over its K rows
    judged: dict[str, list[str]] = field(default_factory=dict)  # judge spec -> the task ids it scored
    by_task: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    task_index: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k not in ("by_task", "task_index")}
        data["path"] = str(self.path)
        return data


def load_run_report(path: str | Path) -> RunReport:
    run_dir = RunDir(path)
    manifest = run_dir.manifest()
    tasks = {t.task_id: t for t in run_dir.tasks()}
    by_key, unreadable = run_dir.results.read()
    rows = list(by_key.values())  # every (task, repeat) row: statuses, tokens, cost and time count them all
    by_task = {row["task_id"]: row for row in mean_over_repeats(rows)}  # scores: the mean over repeats
    agg = aggregate_rows(list(by_task.values()), tasks, manifest["aggregation"])
    config = manifest["config"]
    repeats = int(config.get("repeats", 1))
    statuses: dict[str, int] = {}
    for row in rows:
        statuses[row["status"]] = statuses.get(row["status"], 0) + 1
    usage = [r.get("usage") or {} for r in rows]
    costs = [r["cost_usd"] for r in rows if r.get("cost_usd") is not None]
    durations = [r["duration_s"] for r in rows if r.get("duration_s") is not None]
    steps = [r["steps"] for r in rows if r.get("steps") is not None]
    judged: dict[str, list[str]] = {}
    for row in rows:
        if isinstance(row.get("judge"), dict):
            judged.setdefault(str(row["judge"].get("model")), []).append(str(row["task_id"]))
    interface = config.get("interface") or ("no-tools" if config.get("baseline") == "no-tools" else "code")
    baseline = "no-tools" if interface == "no-tools" else None
    label = f"{Path(path).name} ({config['model']}, {interface}{f', mean of {repeats} repeats' if repeats > 1 else ''})"
    return RunReport(
        label=label,
        path=Path(path),
        benchmark=manifest["benchmark"],
        model=config["model"],
        baseline=baseline,
        interface=interface,
        overall=agg.overall,
        categories=agg.categories,
        counts=agg.counts,
        statuses=statuses,
        tasks=manifest["task_count"],
        rows=len(rows),
        prompt_tokens=sum(u.get("prompt_tokens", 0) for u in usage),
        completion_tokens=sum(u.get("completion_tokens", 0) for u in usage),
        cost_usd=sum(costs) if costs else None,
        mean_duration_s=sum(durations) / len(durations) if durations else None,
        mean_steps=sum(steps) / len(steps) if steps else None,
        rule=agg.rule,
        unreadable=unreadable,
        interval=score_interval(by_task, tasks, manifest["aggregation"]),
        repeats=repeats,
        judged=judged,
        by_task=by_task,
        task_index=tasks,
    )


def _attach_gains(reports: list[RunReport]) -> None:
    for report in reports:
        if report.interface == "no-tools":
            continue
        base = next(
            (
                b
                for b in reports
                if b.interface == "no-tools" and b.benchmark == report.benchmark and b.model == report.model
            ),
            None,
        )
        if base is None:
            continue
        comparison = compare(report.by_task, base.by_task, {**base.task_index, **report.task_index}, report.rule)
        report.gain_overall, report.gain_interval = comparison.gain, comparison.gain_interval
        report.gain_n, report.gain = comparison.shared, comparison.category_gain
        if comparison.partial:
            report.warnings.append(comparison.warning(report.label, base.label))


def _with_interval(value: float | None, interval: Interval | None, signed: bool = False) -> str:
    """``value`` in percent, with its bootstrap interval in brackets when there is one."""
    text = _signed(value) if signed else _pct(value)
    if value is None or interval is None:
        return text
    low, high = (_signed(v) if signed else _pct(v) for v in interval)
    return f"{text} [{low}, {high}]"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f}"


def write_report(paths: list[str | Path], out_dir: str | Path) -> dict[str, Path]:
    """Write the report files for the runs in ``paths`` into ``out_dir``; returns their paths by kind."""
    if not paths:
        raise ValueError("give at least one run directory")
    from spatialclaw.runner.paper_report import expand_runs, load_paper_runs, paper_table

    paths = list(expand_runs(paths))  # a suite folder (bench --suite paper) stands for its runs
    reports = [load_run_report(p) for p in paths]
    _attach_gains(reports)
    import logging

    for warning in (w for r in reports for w in r.warnings):
        logging.getLogger(__name__).warning("%s", warning)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "markdown": out / "report.md",
        "summary_csv": out / "summary.csv",
        "categories_csv": out / "categories.csv",
        "json": out / "report.json",
        "chart": out / "chart.png",
    }
    paper = paper_table(paths) + "\n" if load_paper_runs(paths) else ""  # the paper's layout first
    files["markdown"].write_text(paper + _markdown(reports), encoding="utf-8")
    with open(files["summary_csv"], "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "run",
                "benchmark",
                "model",
                "interface",
                "rule",
                "overall",
                "tool_gain",
                "tasks",
                "rows",
                "ok",
                "budget",
                "timeout",
                "error",
                "prompt_tokens",
                "completion_tokens",
                "cost_usd",
                "mean_duration_s",
                "mean_steps",
                "overall_ci_low",
                "overall_ci_high",
                "tool_gain_n",
                "tool_gain_ci_low",
                "tool_gain_ci_high",
                "repeats",
            ]
        )
        for r in reports:
            writer.writerow(
                [
                    r.label,
                    r.benchmark,
                    r.model,
                    r.interface,
                    r.rule,
                    r.overall,
                    r.gain_overall,
                    r.tasks,
                    r.rows,
                    *(r.statuses.get(s, 0) for s in ("ok", "budget", "timeout", "error")),
                    r.prompt_tokens,
                    r.completion_tokens,
                    r.cost_usd,
                    r.mean_duration_s,
                    r.mean_steps,
                    *(r.interval or (None, None)),
                    r.gain_n,
                    *(r.gain_interval or (None, None)),
                    r.repeats,
                ]
            )
    with open(files["categories_csv"], "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["run", "benchmark", "category", "score", "n", "tool_gain"])
        for r in reports:
            for category, score in r.categories.items():
                writer.writerow(
                    [r.label, r.benchmark, category, score, r.counts.get(category, ""), r.gain.get(category, "")]
                )
    files["json"].write_text(
        json.dumps({"runs": [r.to_dict() for r in reports]}, indent=2, default=str) + "\n", encoding="utf-8"
    )
    _chart(reports, files["chart"])
    return files


def _markdown(reports: list[RunReport]) -> str:
    lines = [
        "# Benchmark report",
        "",
        "Scores in percent; overall by each benchmark's own rule, n = tasks with a row; tool gain = run minus "
        "its no-tools baseline (same benchmark and model) on the tasks both have a row for (gain n). "
        "In brackets: 95 % bootstrap interval (1000 resamples of the tasks, seed 0; the gain's paired).",
        *(
            ["", "A run with K repeats (named in its label) scores each task by the mean over its K episodes."]
            if any(r.repeats > 1 for r in reports)
            else []
        ),
        "",
        *(f"**Warning:** {md(w)}." for r in reports for w in r.warnings),
        *(
            f"**Judge-scored:** {md(r.label)}: {len(ids)} row(s) scored by the judge {md(judge)} (the rows with "
            "`judge` in its results.jsonl; their ids in report.json)."
            for r in reports
            for judge, ids in r.judged.items()
        ),
        "",
        "## Runs",
        "",
        "| run | benchmark | overall | n | tool gain | gain n | ok | budget | timeout | error | tokens in/out | cost (USD) | mean s | mean steps |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in reports:
        cost = "–" if r.cost_usd is None else f"{r.cost_usd:.4f}"
        duration = "–" if r.mean_duration_s is None else f"{r.mean_duration_s:.2f}"
        steps = "–" if r.mean_steps is None else f"{r.mean_steps:.1f}"
        lines.append(
            f"| {md(r.label)} | {md(r.benchmark)} | {_with_interval(r.overall, r.interval)} | {len(r.by_task)} | "
            f"{_with_interval(r.gain_overall, r.gain_interval, signed=True)} | {r.gain_n if r.gain_n is not None else '–'} | "
            + " | ".join(str(r.statuses.get(s, 0)) for s in ("ok", "budget", "timeout", "error"))
            + f" | {r.prompt_tokens}/{r.completion_tokens} | {cost} | {duration} | {steps} |"
        )
    for benchmark in dict.fromkeys(r.benchmark for r in reports):
        group = [r for r in reports if r.benchmark == benchmark]
        categories = list(dict.fromkeys(c for r in group for c in r.categories))
        lines += [
            "",
            f"## {md(benchmark)}: per category",
            "",
            "| category | " + " | ".join(md(r.label) for r in group) + " |",
            "|---|" + "---:|" * len(group),
        ]
        for category in categories:
            cells = []
            for r in group:
                cell = _pct(r.categories.get(category))
                if category in r.gain:
                    cell += f" ({_signed(r.gain[category])})"
                cells.append(cell)
            lines.append(f"| {md(category)} | " + " | ".join(cells) + " |")
        lines.append("| **overall** | " + " | ".join(f"**{_pct(r.overall)}**" for r in group) + " |")
        lines += _interfaces_table(benchmark, group, categories)
    unreadable = [problem for r in reports for problem in r.unreadable]
    if unreadable:
        lines += ["", "## Unreadable lines (not counted)", "", *(f"- {md(problem)}" for problem in unreadable)]
    return "\n".join(lines) + "\n"


def _interfaces_table(benchmark: str, group: list[RunReport], categories: list[str]) -> list[str]:
    """The side-by-side comparison of a benchmark's interfaces (the first run of each interface per
    model), or nothing when its runs use one interface."""
    if len({r.interface for r in group}) < 2:
        return []
    lines: list[str] = []
    for model in dict.fromkeys(r.model for r in group):
        runs: dict[str, RunReport] = {}
        for r in group:
            if r.model == model:
                runs.setdefault(r.interface, r)
        if len(runs) < 2:
            continue
        columns = [runs[i] for i in INTERFACES if i in runs]
        lines += [
            "",
            f"## {md(benchmark)}: interfaces ({md(model)})",
            "",
            "Score per interface; in parentheses the tool gain over no-tools.",
            "",
            "| category | " + " | ".join(md(r.interface) for r in columns) + " |",
            "|---|" + "---:|" * len(columns),
        ]
        for category in categories:
            cells = [
                _pct(r.categories.get(category)) + (f" ({_signed(r.gain[category])})" if category in r.gain else "")
                for r in columns
            ]
            lines.append(f"| {md(category)} | " + " | ".join(cells) + " |")
        lines.append(
            "| **overall** | "
            + " | ".join(
                f"**{_pct(r.overall)}**" + (f" ({_signed(r.gain_overall)})" if r.gain_overall is not None else "")
                for r in columns
            )
            + " |"
        )
    return lines


def _chart(reports: list[RunReport], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    categories = list(dict.fromkeys(c for r in reports for c in r.categories)) + ["overall"]
    width = 0.8 / len(reports)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(categories) * max(1, len(reports)) / 1.5), 4.5))
    x = np.arange(len(categories))
    for i, r in enumerate(reports):
        scores = {**r.categories, "overall": np.nan if r.overall is None else r.overall}
        values = [100 * scores.get(c, np.nan) for c in categories]
        ax.bar(x + (i - (len(reports) - 1) / 2) * width, values, width, label=r.label)
    ax.set_xticks(x, categories, rotation=30, ha="right")
    ax.set_ylabel("score (%)")
    ax.set_ylim(0, 100)
    ax.set_title(", ".join(dict.fromkeys(r.benchmark for r in reports)))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
