"""``spatialclaw rescore``: recompute the scores of run directories from their recorded answers (no model calls)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help="recompute scores of runs without calling a model",
        description="Recompute every row's score from its recorded answer and RUN/tasks.jsonl; "
        "rewrites RUN/results.jsonl atomically.",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run directories")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from spatialclaw.runner.rescore import rescore_run

    status = 0
    for run in args.runs:
        problems: list[str] = []
        try:
            aggregate, changed = rescore_run(run, problems)
        except (FileNotFoundError, ValueError) as failure:
            print(f"spatialclaw rescore: {failure}", file=sys.stderr)
            status = 2
            continue
        for problem in problems:  # every other row was rescored
            print(f"spatialclaw rescore: {problem}", file=sys.stderr)
        overall = "n/a" if aggregate.overall is None else f"{100 * aggregate.overall:.1f}%"
        print(f"{run}: overall {overall} ({aggregate.rule}, n={aggregate.n}); {changed} score(s) changed")
    return status
