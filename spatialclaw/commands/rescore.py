"""``spatialclaw rescore``: recompute the scores of run directories from their recorded answers (no model calls but a judge's)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help="recompute scores of runs without calling a model",
        description="Recompute every row's score from its recorded answer and RUN/tasks.jsonl; "
        "rewrites RUN/results.jsonl atomically. Only a judge (the run's or --judge) is asked, and only about "
        "answers it has no verdict on in RUN/judge/.",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run directories")
    parser.add_argument(
        "--judge",
        default=None,
        metavar="MODEL",
        help="model spec of the judge for the rows the rules leave to one (default: the run's own judge, if any; "
        "verdicts kept in RUN/judge/ are reused)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from spatialclaw.models import ModelError
    from spatialclaw.runner.rescore import rescore_run

    status = 0
    for run in args.runs:
        problems: list[str] = []
        try:
            aggregate, changed = rescore_run(run, problems, judge=args.judge)
        except (FileNotFoundError, ValueError, ModelError) as failure:
            print(f"spatialclaw rescore: {failure}", file=sys.stderr)
            status = 2
            continue
        for problem in problems:  # every other row was rescored
            print(f"spatialclaw rescore: {problem}", file=sys.stderr)
        overall = "n/a" if aggregate.overall is None else f"{100 * aggregate.overall:.1f}%"
        print(f"{run}: overall {overall} ({aggregate.rule}, n={aggregate.n}); {changed} score(s) changed")
    return status
